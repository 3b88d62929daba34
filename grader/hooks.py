"""Hooks the grading plugin declares (``pytest_addhooks`` of :mod:`grader.grading_plugin`)."""

from __future__ import annotations

import pytest


@pytest.hookspec(firstresult=True)
def pytest_bpe_known_bug(item: pytest.Item, records: list, until: float | None) -> str | None:
    """The description of the known bug a failed test's recorded calls into the submission
    show, or None; the failure then says ``this matches a known bug: <description>``
    (:func:`grader.report.known_bug_line`) and its case carries it (``Case.known_bug``).
    ``records``: the test's calls and their outcomes (``item.stash[harness.keys.RECORDS]``);
    ``until``: the ``time.monotonic()`` past which the answer is None (a grading's deadline),
    or None. ``mutants.plugin`` implements it and sets ``harness.keys.RECORD_CALLS`` so that
    the calls are recorded."""
