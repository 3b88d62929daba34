"""A failing ``assert`` under the project's plugins shows the values and the test's own
message under the pytest versions this project allows; a comparison of huge values is explained in bounded
time (harness.bounded, through the public ``pytest_assertrepr_compare`` hook alone: nothing
of pytest's private internals is touched, selftests/test_architecture.py)."""

from __future__ import annotations

import subprocess
import sys
import time

from harness.childenv import child_env

from .support import ROOT

FAILING = '''
def test_count_with_message():
    n = 3
    assert n == 4, f"expected 4 merges, got {n}"


def test_lists():
    assert [(1, 2), (3, 4), (5, 6)] == [(1, 2), (3, 4), (5, 7)]


def test_huge_strings():
    left = "ab" * 10_000_000
    right = left[:12_345_677] + "#" + left[12_345_678:]
    assert left == right
'''


def run_failing(tmp_path, name: str) -> tuple[str, float]:
    """pytest with the project's plugins (pyproject's addopts) on one test of FAILING; its
    output and how long it took."""
    path = tmp_path / "test_failing.py"
    path.write_text(FAILING, encoding="utf-8")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT),
         f"{path}::{name}", "-q", "-p", "no:randomly"],
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    took = time.monotonic() - start
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the test ran and failed
    return proc.stdout + proc.stderr, took


def test_failing_assert_shows_its_message_and_both_values(tmp_path):
    out, _ = run_failing(tmp_path, "test_count_with_message")
    assert "expected 4 merges, got 3" in out, out
    assert "assert 3 == 4" in out, out
    assert "TypeError" not in out and "INTERNALERROR" not in out, out


def test_failing_list_comparison_shows_the_differing_item(tmp_path):
    out, _ = run_failing(tmp_path, "test_lists")
    assert "(5, 6)" in out and "(5, 7)" in out, out
    assert "index 2" in out, out  # pytest's own explanation of a small comparison is kept
    assert "TypeError" not in out and "INTERNALERROR" not in out, out


def test_huge_string_comparison_is_explained_quickly_at_its_first_difference(tmp_path):
    out, took = run_failing(tmp_path, "test_huge_strings")
    assert "first difference at index 12345677" in out, out
    assert "left has 20000000 characters, right has 20000000" in out, out
    assert took < 60, f"explaining a 20 MB comparison took {took:.0f} s"  # a whole diff takes minutes
