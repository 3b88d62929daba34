"""The facts a finished case's failure text states, as fields of its case: the limits it ran
into and the line saying the submission did not load; and what a skipped test says."""

from __future__ import annotations

import pytest

from .report import CALL_TIME, TEST_TIME, TIME_BUDGET, Case

# (a limit of grader.report.LIMITS, the text of a failure that says the case ran into it)
LIMIT_MARKERS = (
    (TEST_TIME, "Timeout (>"),  # harness/timeouts.py
    (CALL_TIME, "timed out after"),  # sandbox/process.py: the per-call deadline
    ("CPU time limit", "CPU time limit of"),
    ("memory limit", "MemoryError"),
    ("file size limit", "file size limit of"),
    ("output limit", "[output truncated:"),
    ("reply limit", "sent a reply"),
    ("process limit", "processes and threads besides one per core"),  # sandbox/student_errors.py
    (TIME_BUDGET, "the grading's time budget of"),  # not reached, not finished (grader.grading_plugin)
    ("not called again", "; this test calls it, so it fails at once"),  # harness/breaker.py
    ("worker died", "the worker running your code died"),
    ("worker exited", "the worker running your code exited"),
    ("worker stopped answering", "the worker running your code stopped answering"),
)
LOAD_ERROR = "could not be imported"  # harness/impl: the submission's adapters.py did not load


def skip_reason(report: pytest.TestReport) -> str:
    """What a skipped test says: its reason alone. pytest keeps a skip as (path, line,
    "Skipped: reason"), whose text is that tuple's repr, with the test file's path."""
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ") or "skipped"
    return report.longreprtext or "skipped"


def note_failure(test: Case) -> None:
    """A finished case that did not pass gets the facts its failure text states: the limits
    it ran into (:data:`LIMIT_MARKERS`) and the line saying the submission did not load."""
    if test.outcome == "passed":
        return
    test.limits = [name for name, text in LIMIT_MARKERS if text in test.output]
    test.load_error = next((ln.strip().removeprefix("E").strip() for ln in test.output.splitlines() if LOAD_ERROR in ln), None)
