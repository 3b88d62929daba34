"""A missing GPT-2 cache ends in one line naming TIKTOKEN_CACHE_DIR and the folder it
expected, for ``grade`` and for students' ``pytest``: never a urllib3 traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.childenv import child_env

from .support import ROOT, run_grade

CACHE_NAMES = ("6c7ea1a7e38e3a7f062df639a5b80947f075ffe6", "6d1cbeee0f20b3d9449abfede4726ed8212e3aee")


@pytest.fixture
def no_gpt2_env(tmp_path):
    """An empty cache folder, and downloads refused at once (a proxy nobody listens on)."""
    env = child_env(keep=("PYTHONPATH",), TIKTOKEN_CACHE_DIR=str(tmp_path / "empty_cache"), HTTPS_PROXY="http://127.0.0.1:9",
                    TMPDIR=str(tmp_path))
    (tmp_path / "empty_cache").mkdir()
    return env


def assert_one_line_naming_the_cache(text: str, folder: str) -> None:
    lines = [line for line in text.splitlines() if "GPT-2's BPE files are missing" in line]
    assert lines, f"no line about the missing GPT-2 files in:\n{text[-2000:]}"
    assert "TIKTOKEN_CACHE_DIR" in lines[0] and folder in lines[0] and CACHE_NAMES[0] in lines[0], lines[0]
    for noise in ("Traceback", "urllib3", "During handling"):
        assert noise not in text, f"{noise!r} in the output:\n{text[-2000:]}"


def test_grade_without_gpt2_files_ends_in_one_line(no_gpt2_env, tmp_path):
    run = run_grade(tmp_path / "out", impl="reference", env=no_gpt2_env, timeout=120)
    assert run.code == 1, run.stderr
    assert_one_line_naming_the_cache(run.stdout + run.stderr, no_gpt2_env["TIKTOKEN_CACHE_DIR"])
    output = run.results["output"]
    assert "TIKTOKEN_CACHE_DIR" in output and output.count("\n") <= 1, output


def test_pytest_without_gpt2_files_says_so_in_one_line(no_gpt2_env):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--impl", "reference", "-q", "-p", "no:cacheprovider",
         "tests/public/test_tokenizer_files.py::test_gpt2_from_files_decodes_every_byte_token",
         "tests/public/test_tokenizer.py::test_encode_of_empty_text_is_empty_list"],
        cwd=ROOT, env=no_gpt2_env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert_one_line_naming_the_cache(proc.stdout + proc.stderr, no_gpt2_env["TIKTOKEN_CACHE_DIR"])
