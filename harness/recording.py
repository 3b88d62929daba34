"""The submission's calls during a test, kept so that a failure can be compared with known bugs."""

from __future__ import annotations

from typing import Any

KEEP = 20  # the last calls are kept: hypothesis replays the failing example last


class CallLog:
    """A recorder for :class:`harness.impl.Implementation`: while :attr:`records` is a list
    (the running test's, set by the harness plugin), each call and its outcome (result or
    exception) is appended to it, the oldest dropped beyond :data:`KEEP`; else nothing is kept."""

    def __init__(self) -> None:
        self.records: list[tuple[tuple, Any]] | None = None

    def __call__(self, call: tuple, outcome: Any) -> None:
        records = self.records
        if records is None:
            return
        if len(records) >= KEEP:
            del records[0]
        records.append((call, outcome))
