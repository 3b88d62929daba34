"""Known-bug diagnoses put off until every test of a grading has run.

A failed test's diagnosis (``pytest_bpe_known_bug``: :mod:`mutants.diagnose`) replays its
calls on the reference and on the catalogued bugs of its part: seconds of the test run's own
time. Made as each test fails, under a grading's deadline, that time came out of the later
tests' share of the budget: a slow submission could lose tests, not reached, to a feature of
the feedback. The grading plugin hands each failure's records to :class:`Deferred` instead,
and once every test has run (the second chance included) asks for the diagnoses in the order
the tests failed, with the time left before the deadline, less :data:`ROOM`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from harness import recording

ROOM = 20.0  # seconds before the deadline the diagnoses leave: one replay may run past its stop by its own limit
MAX_WEIGHT = 4 * recording.BUDGET  # items of recorded calls kept in all (harness.recording.weight)


class Deferred:
    """The failures whose diagnosis waits, with their records (exceptions without tracebacks,
    so no frame of the submission stays alive), up to :data:`MAX_WEIGHT` items in all: past
    it a failure goes without a diagnosis."""

    def __init__(self) -> None:
        self.pending: list[tuple[pytest.Item, list]] | None = None  # None: not deferring
        self.weight = 0

    def start(self) -> None:
        """From now on, :meth:`defer` takes failures (the grading's loop over its tests has begun)."""
        self.pending = []

    def defer(self, item: pytest.Item, records: list) -> bool:
        """Whether ``item``'s diagnosis was taken to be made later (or dropped, past the
        limit); False when not deferring: the caller diagnoses it now."""
        if self.pending is None:
            return False
        size = sum(recording.weight(call) + recording.weight(outcome) for call, outcome in records)
        if self.weight + size <= MAX_WEIGHT:
            self.pending.append((item, [(call, _without_traceback(outcome)) for call, outcome in records]))
            self.weight += size
        return True

    def diagnose(self, deadline: float) -> Iterator[tuple[str, str]]:
        """(node id, known bug) of each failure put off that matches one, in the order they
        failed, until :data:`ROOM` seconds before ``deadline`` (``time.monotonic()``)."""
        pending, self.pending, self.weight = self.pending or [], None, 0
        until = deadline - ROOM
        for item, records in pending:
            if time.monotonic() > until:
                return
            bug = item.config.hook.pytest_bpe_known_bug(item=item, records=records, until=until)
            if bug:
                yield item.nodeid, bug


def _without_traceback(outcome):
    """A recorded outcome as a diagnosis compares it: an exception without the frames it holds."""
    return outcome.with_traceback(None) if isinstance(outcome, BaseException) else outcome
