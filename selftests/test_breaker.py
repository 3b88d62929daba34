"""The circuit breaker (:mod:`harness.breaker`): a function that runs into a limit on several
tests in a row is no longer called, so the rest of the grading keeps its time."""

from __future__ import annotations

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
