"""Feedback that names the bug: a submission that behaves like a catalogued mutant gets
"this matches a known bug: <description>" in its failure output.

Each chosen mutant is built as a submission and pytest runs (in a subprocess, as a student
would) on the public test file of its part, stopping at the first failure.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.childenv import child_env
from mutants.build import build
from mutants.catalogue import by_name
from mutants.diagnose import PREFIX

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(900)  # the subprocess runs happen in a fixture

DIAGNOSED = {
    "merge_overlapping": "tests/public/test_primitives.py",
    "word_ids_sorted": "tests/public/test_warmup.py",
    "specials_shortest_first": "tests/public/test_special_tokens.py",
    "ties_smallest_pair": "tests/public/test_train_bpe.py",
    "decode_token_by_token": "tests/public/test_tokenizer.py",
    "byte_encode_code_points": "tests/public/test_warmup.py",
}


def run_public_tests(submission: Path, test_file: str) -> str:
    env = child_env(drop=("BPE_DIAGNOSIS",), keep=("PYTHONPATH",))
    env.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken_cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "--submission", str(submission), test_file],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("diagnosed")

    def run(name: str) -> str:
        return run_public_tests(build(by_name(name), where / name), DIAGNOSED[name])

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(DIAGNOSED, pool.map(run, DIAGNOSED)))


@pytest.mark.parametrize("name", DIAGNOSED)
def test_failure_output_names_the_known_bug(outputs, name):
    output = outputs[name]
    assert " failed" in output, f"mutant {name} was expected to fail {DIAGNOSED[name]}:\n{output[-2000:]}"
    expected = PREFIX + by_name(name).description
    assert expected in output, f"no diagnosis {expected!r} in the output of {name}:\n{output[-3000:]}"


def test_no_diagnosis_when_the_feature_is_off(tmp_path):
    env = child_env(keep=("PYTHONPATH",), BPE_DIAGNOSIS="0")
    submission = build(by_name("merge_overlapping"), tmp_path / "m")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "--submission", str(submission),
         "tests/public/test_primitives.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert " failed" in proc.stdout and PREFIX not in proc.stdout
