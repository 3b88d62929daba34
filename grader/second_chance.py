"""The second chance: the tests the circuit breaker refused for a slow function, run again.

The breaker (:mod:`harness.breaker`) stops calling a function that ran into limits on tests
in a row, or in tests that took a fifth of the budget in all, so that the tests of the other
functions keep their time. Correct but slow code then lost tests it would have passed: an
encoder applying every GPT-2 merge to every pre-token timed out on two large inputs, and 25
tests were refused, 24 of them of small inputs it passes in seconds each, with 204 s of the
budget left unused (94.52 of 100; 97.03 with the second chance).

So once every other test has run, a tripped function that had returned in some test (slow,
not stuck: :meth:`harness.breaker.Breaker.pardon`) is called again: its refused tests run in
their order, each with its limit cut to :data:`grader.budget.SECOND_CHANCE` seconds (the
first of each test file keeps its own: it sets up fixtures again), under the deadline as
ever, and the breaker's rule of tests in a row still holds. Each case starts over, its
``second_chance`` property naming why it was refused
(:func:`grader.report.breaker_notes` sums them up). A function that never returned is not
called again: code stuck everywhere costs no more time than before.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import pytest

from .budget import SECOND_CHANCE
from .report import Case


def start_over(items: Sequence[pytest.Item], tests: dict[str, Case], refused: dict[str, str],
               pardoned: dict[str, str]) -> list[pytest.Item]:
    """The ``items`` whose calls were refused (``refused``: node id -> function) for a function
    now ``pardoned`` (function -> the summary it was tripped with), in order: each one's case
    in ``tests`` made anew, saying why, and its time limit cut to :data:`SECOND_CHANCE`, but for
    the first of each test file, which sets up the file's fixtures again (the first pass tore
    every fixture down at its end: a GPT-2 tokenizer made again under load took more than 4 s)."""
    again = [item for item in items if refused.get(item.nodeid) in pardoned]
    files = set()
    for item in again:
        old = tests[item.nodeid]
        why = pardoned[refused.pop(item.nodeid)]
        tests[item.nodeid] = Case(old.nodeid, old.group, old.weight, old.visibility, properties={"second_chance": why})
        file = item.nodeid.split("::")[0]
        if file not in files:  # the first of its file sets up its fixtures anew (all were torn down): its own limit
            files.add(file)
            continue
        marker = item.get_closest_marker("timeout")
        limit = marker.args[0] if marker is not None and marker.args else None
        if not isinstance(limit, (int, float)) or limit > SECOND_CHANCE:
            item.add_marker(pytest.mark.timeout(SECOND_CHANCE), append=False)
    if again:
        print(f"[grade] {len(again)} tests refused after {', '.join(sorted(pardoned))} ran into limits: run again, "
              f"{SECOND_CHANCE:g} s each at most", file=sys.stderr, flush=True)
    return again


def say_done(again: Sequence[pytest.Item], tests: dict[str, Case]) -> None:
    """The progress line once the tests run again have ended."""
    passed = sum(tests[item.nodeid].outcome == "passed" for item in again)
    print(f"[grade] run again: {passed}/{len(again)} cases passed", file=sys.stderr, flush=True)
