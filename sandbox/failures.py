"""How a call into an isolated worker can fail (shared by :mod:`sandbox.process`,
:mod:`sandbox.backend` and :mod:`sandbox.stream`; the tests see them as assertion failures)."""

from __future__ import annotations


class WorkerFailure(AssertionError):
    """The worker running the submission timed out, died or broke the protocol."""


class WorkerTimeout(WorkerFailure):
    pass


class WorkerDied(WorkerFailure):
    pass


class StudentExit(AssertionError):
    """The submission raised SystemExit, KeyboardInterrupt or another non-Exception."""
