"""A failing ``assert`` under the project's plugins shows the values and the test's own
message, whichever pytest is installed; a comparison of huge values is explained in bounded
time (harness.bounded, through the public ``pytest_assertrepr_compare`` hook), and the
speed-up over pytest's private internals degrades to pytest's own message, never an error."""

from __future__ import annotations

import inspect
import subprocess
import sys
import time

import pytest

from harness import bounded
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


def original_like(*params: inspect.Parameter):
    """A stand-in for pytest's private comparison function with the given parameters: it
    records the arguments it gets and answers ``["pytest's own"]``."""
    calls = []

    def compare(*args, **kwargs):
        calls.append((args, kwargs))
        return ["pytest's own"]

    compare.__signature__ = inspect.Signature(list(params))
    return compare, calls


P = inspect.Parameter
OP, LEFT, RIGHT = (P(n, P.POSITIONAL_OR_KEYWORD) for n in ("op", "left", "right"))
CONFIG, VERBOSE = P("config", P.POSITIONAL_OR_KEYWORD), P("verbose", P.KEYWORD_ONLY)
A, B, OPERATOR = (P(n, P.POSITIONAL_OR_KEYWORD) for n in ("a", "b", "operator"))
# pytest's layouts (the values sit where the signature says); then ones it could move to
READABLE = {
    "config first (pytest 9.0)": ((CONFIG, OP, LEFT, RIGHT), lambda f, l, r: f(None, "==", l, r)),
    "keywords only (pytest 9.2)": ((OP, LEFT, RIGHT, VERBOSE), lambda f, l, r: f(op="==", left=l, right=r, verbose=0)),
}
UNREADABLE = {
    "renamed arguments": ((OPERATOR, A, B), lambda f, l, r: f("==", l, r)),
    "a call its signature does not bind": ((OP, LEFT, RIGHT), lambda f, l, r: f("==", l, r, "extra")),
    "a keyword it does not know": ((OP, LEFT, RIGHT), lambda f, l, r: f(op="==", left=l, right=r, style="new")),
}
SMALL, HUGE = ("ab", "ac"), ("a" * 50_000, "a" * 49_999 + "b")


@pytest.fixture
def private_compare(monkeypatch):
    """Install the speed-up over a stand-in for pytest's private function (restored after)."""
    util = pytest.importorskip("_pytest.assertion.util")

    def install(compare):
        monkeypatch.setattr(util, "assertrepr_compare", compare)
        bounded.install()
        return util.assertrepr_compare

    return install


def arguments(call, left, right):
    """The arguments ``call`` passes for a comparison of ``left`` and ``right``."""
    seen = []
    call(lambda *args, **kwargs: seen.append((args, kwargs)), left, right)
    return seen[0]


UNCHANGED = [(layout, SMALL) for layout in READABLE] + [(layout, v) for layout in UNREADABLE for v in (SMALL, HUGE)]


@pytest.mark.parametrize("layout, values", UNCHANGED, ids=[f"{l}-{'huge' if v is HUGE else 'small'}" for l, v in UNCHANGED])
def test_speed_up_passes_every_call_it_cannot_read_or_need_not_shrink_unchanged(private_compare, layout, values):
    params, call = (READABLE | UNREADABLE)[layout]
    original, calls = original_like(*params)
    assert call(private_compare(original), *values) == ["pytest's own"]
    assert calls == [arguments(call, *values)]


@pytest.mark.parametrize("layout", READABLE)
def test_speed_up_hands_pytest_stand_ins_for_values_explain_answers_for(private_compare, layout):
    params, call = READABLE[layout]
    original, calls = original_like(*params)
    assert call(private_compare(original), *HUGE) == ["pytest's own"]
    signature = inspect.signature(original)
    (args, kwargs), = calls
    expected_args, expected_kwargs = arguments(call, *(bounded._STAND_IN,) * 2)
    assert signature.bind(*args, **kwargs).arguments == signature.bind(*expected_args, **expected_kwargs).arguments
