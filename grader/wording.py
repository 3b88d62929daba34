"""Counts as read aloud, for ``compare``'s text and page: ``its only case``, ``both cases``,
``all 3 cases``, ``1 of 3 cases``; a verb that agrees with its count (``1 of 3 cases
fails``, ``2 of 3 cases fail``). Never ``1 of 1 cases``."""

from __future__ import annotations


def count(n: int, noun: str) -> str:
    """``1 case``, ``3 cases``, ``no cases``."""
    return f"{n or 'no'} {noun}{'' if n == 1 else 's'}"


def share(k: int, n: int, noun: str) -> str:
    """``k`` of ``n`` things: ``its only case``, ``both cases``, ``all 3 cases``, ``none of
    its 3 cases``, ``1 of 3 cases``."""
    if n == 0:
        return count(0, noun)
    if k == n:
        return f"its only {noun}" if n == 1 else f"both {noun}s" if n == 2 else f"all {n} {noun}s"
    if k == 0:
        return f"none of its {count(n, noun)}"
    return f"{k} of {n} {noun}s"


def failing(k: int, n: int, noun: str) -> str:
    """A clause of ``k`` failing of ``n`` things: ``its only case fails``, ``1 of 3 cases
    fails``, ``all 3 cases fail``; none failing: ``its only case passes``, ``all 3 cases pass``."""
    if n == 0:
        return f"{count(0, noun)} ran"
    if k == 0:
        return share(n, n, noun) + (" passes" if n == 1 else " pass")
    return share(k, n, noun) + (" fails" if k == 1 else " fail")


def outcome(cases_failing: int, cases: int, tests_failing: int, tests: int) -> str:
    """A submission's cases and tests in one phrase: ``fails 2 of 43 cases, in 2 of 3 tests``,
    ``fails its only case, in its only test``, ``passes all 43 cases (3 tests)``."""
    if cases == 0:
        return "no case graded"
    if cases_failing == 0:
        return f"passes {share(cases, cases, 'case')} ({count(tests, 'test')})"
    return f"fails {share(cases_failing, cases, 'case')}, in {share(tests_failing, tests, 'test')}"
