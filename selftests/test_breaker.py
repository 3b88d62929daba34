"""The circuit breaker (:mod:`harness.breaker`): a function that runs into a limit on several
tests in a row is no longer called, so the rest of the grading keeps its time."""

from __future__ import annotations

import json

import pytest

from harness.breaker import Breaker, NotCalled


def test_a_function_that_runs_out_of_memory_on_three_tests_in_a_row_is_no_longer_called():
    # a trainer filling memory up to the worker's limit (MemoryError raised inside the call,
    # not a kill) spent 478 s of the 540 s budget on Part 4's tests, one after the other; the
    # hidden tests of its correct encoder were never reached (60.29/100)
    breaker = Breaker(3)
    for _ in range(3):
        breaker.check("run_train_bpe")
        breaker.ended("run_train_bpe", MemoryError())
        breaker.end_test()
    with pytest.raises(NotCalled) as info:
        breaker.check("run_train_bpe")
    assert info.value.summary == "run_train_bpe ran out of memory on 3 tests in a row"


def test_a_function_that_raises_other_errors_is_still_called():
    breaker = Breaker(3)
    for _ in range(5):
        breaker.ended("run_merge", ValueError("wrong"))
        breaker.end_test()
    breaker.check("run_merge")


def _test(breaker: Breaker, function: str, seconds: float, timed_out: bool) -> None:
    """One test calling ``function``: it ran into its limit (``timed_out``) or returned."""
    from harness.timeouts import TestTimeout

    breaker.check(function)
    breaker.ended(function, TestTimeout("Timeout (>60.0s)") if timed_out else None)
    breaker.end_test(seconds)


def test_a_function_whose_timeouts_took_a_fifth_of_the_budget_is_no_longer_called_though_not_in_a_row():
    # a correct encoder applying every GPT-2 merge to every pre-token passes the tests of
    # small inputs and times out at 60 s on large ones, between them: "in a row" never came,
    # and its timeouts spent the budget (the hidden tests of Parts 1 to 4 never reached)
    breaker = Breaker(3, lost_limit=108)
    for seconds, timed_out in [(60, True), (0.5, False), (60, True)]:
        _test(breaker, "get_tokenizer(...).encode", seconds, timed_out)
    with pytest.raises(NotCalled) as info:
        breaker.check("get_tokenizer(...).encode")
    assert info.value.summary == "get_tokenizer(...).encode ran into limits in tests that took 120 s in all"
    assert "or in tests of 108 s in all" in str(info.value)


@pytest.mark.parametrize("after, lost_limit", [(3, None), (0, 108)], ids=["no_lost_limit", "timeouts_in_a_row_0"])
def test_without_a_lost_limit_or_with_the_breaker_off_timeouts_apart_keep_a_function_called(after, lost_limit):
    breaker = Breaker(after, lost_limit=lost_limit)
    for seconds, timed_out in [(60, True), (0.5, False), (60, True), (0.5, False), (60, True)]:
        _test(breaker, "get_tokenizer(...).encode", seconds, timed_out)
    breaker.check("get_tokenizer(...).encode")


def test_a_tripped_function_that_returned_in_some_test_is_pardoned_and_the_lost_seconds_no_longer_trip_it():
    breaker = Breaker(3, lost_limit=108)
    for seconds, timed_out in [(0.5, False), (60, True), (60, True)]:
        _test(breaker, "get_tokenizer(...).encode", seconds, timed_out)
    assert breaker.pardon() == {"get_tokenizer(...).encode": "get_tokenizer(...).encode ran into limits in tests that took 120 s in all"}
    _test(breaker, "get_tokenizer(...).encode", 10, True)  # 130 s lost now: called again all the same
    breaker.check("get_tokenizer(...).encode")
    for _ in range(2):  # three in a row still trip it
        _test(breaker, "get_tokenizer(...).encode", 10, True)
    with pytest.raises(NotCalled) as info:
        breaker.check("get_tokenizer(...).encode")
    assert info.value.summary == "get_tokenizer(...).encode timed out on 3 tests in a row"
    assert info.value.function == "get_tokenizer(...).encode"


def test_a_tripped_function_that_never_returned_is_not_pardoned():
    breaker = Breaker(3)
    for _ in range(3):
        _test(breaker, "run_merge", 60, True)
    _test(breaker, "run_train_bpe", 0.5, False)  # another function's return pardons nothing
    assert breaker.pardon() == {}
    with pytest.raises(NotCalled):
        breaker.check("run_merge")


# Tokenizer.encode correct, but stuck on any text of more than 3,000 characters (the fixture files)
SLOW_ON_LARGE_INPUTS = """
_reference_encode = Tokenizer.encode


def _encode(self, text):
    if len(text) > 3000:
        import time

        time.sleep(600)
    return _reference_encode(self, text)


Tokenizer.encode = _encode
"""
SECOND_CHANCE_POLICY = """\
version: 1
timeout: 15
groups:
  - name: tokenizer
    points: 100
    select: ["tests/public/test_tokenizer.py::*", "tests/public/test_tiktoken_agreement.py::*"]
"""
# in this order: a call that returns, the fixture files (two time out: 30 s, the lost-seconds
# limit of a 150 s budget; the third refused), then the short texts (refused). Run again, the
# third fixture file (the first of its file: its own 15 s, to make the GPT-2 tokenizer again)
# times out, and the short texts (10 s each) pass.
SECOND_CHANCE_TESTS = [
    "tests/public/test_tokenizer.py::test_encode_of_empty_text_is_empty_list",
    "tests/public/test_tiktoken_agreement.py::test_ids_match_tiktoken_gpt2_on_fixture_file",
    "tests/public/test_tiktoken_agreement.py::test_ids_match_tiktoken_gpt2_on_targeted_text",
]


@pytest.mark.slow
def test_tests_refused_for_a_slow_function_run_again_once_every_other_test_has(tmp_path):
    # a correct encoder applying every GPT-2 merge to every pre-token timed out on two large
    # inputs, and the 24 tests of small inputs it passes in seconds each were refused, with
    # 204 s of the budget left unused
    from mutants.build import build
    from mutants.catalogue.model import Append, Mutant

    from .support import run_grade

    slow = Mutant("variant_slow_on_large_inputs", "tokenizer", "correct, but stuck on large inputs",
                  (Append("tokenizer.py", SLOW_ON_LARGE_INPUTS, ("Tokenizer",)),))
    (tmp_path / "grading.yaml").write_text(SECOND_CHANCE_POLICY, encoding="utf-8")
    run = run_grade(tmp_path / "out", submission=build(slow, tmp_path / "submission"), config=tmp_path / "grading.yaml",
                    tests=SECOND_CHANCE_TESTS, max_time=150, quiet=True, self_checked=True, report=True)
    cases = {t["nodeid"].split("::", 1)[1]: t for t in json.loads(run.report.read_text(encoding="utf-8"))["tests"]}
    assert cases, run.context()
    fixtures = {k: t for k, t in cases.items() if "fixture_file" in k}
    short = {k: t for k, t in cases.items() if "targeted_text" in k}
    assert len(fixtures) == 3 and len(short) > 20, run.context()
    assert all(t["outcome"] == "passed" for t in short.values()), run.context()  # refused at first, then run again
    assert cases["test_encode_of_empty_text_is_empty_list"]["outcome"] == "passed", run.context()
    assert all(t["outcome"] == "failed" for t in fixtures.values()), run.context()
    notes = run.results["output"]
    assert (f"get_tokenizer(...).encode ran into limits in tests that took 30 s in all; having returned in other tests, it was "
            f"called again once every other test had run: {len(short)} of the {len(short) + 1} tests refused meanwhile passed then") in notes, run.context()
    assert "time budget" not in notes, run.context()
