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
