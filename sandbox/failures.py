"""How a call into an isolated worker can fail (shared by :mod:`sandbox.process`,
:mod:`sandbox.backend` and :mod:`sandbox.stream`; the tests see them as assertion failures)."""

from __future__ import annotations

import signal

from harness.breaker import TimeLost

from .limits import IsolationLimits


class WorkerFailure(AssertionError):
    """The worker running the submission timed out, died or broke the protocol."""


class WorkerTimeout(WorkerFailure, TimeLost):
    """A call over the per-call deadline: the worker was stopped."""


class WorkerDied(WorkerFailure):
    pass


class WorkerOverLimit(WorkerDied, TimeLost):
    """The worker was killed by a limit (CPU time, file size; SIGKILL: the kernel's, out of memory)."""

    limit_kind = "was stopped by a limit"


class StudentExit(AssertionError):
    """The submission raised SystemExit, KeyboardInterrupt or another non-Exception."""


def died_of(code: int | None, stopped_by_guard: bool, message: str) -> WorkerDied:
    """How a worker's death is told: :class:`WorkerOverLimit` when a limit killed it (the
    guard of its memory, or the kernel's SIGXCPU, SIGXFSZ or SIGKILL), else :class:`WorkerDied`."""
    limit = stopped_by_guard or (code is not None and -code in (signal.SIGXCPU, signal.SIGXFSZ, signal.SIGKILL))
    return (WorkerOverLimit if limit else WorkerDied)(message)


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def signal_hint(sig: int, limits: IsolationLimits) -> str:
    """What a worker killed by ``sig`` ran into (under ``limits``), told after the signal's
    name: ``": segmentation fault"``."""
    if sig == signal.SIGXCPU:
        return f": CPU time limit of {limits.cpu_seconds} s"
    if sig == signal.SIGXFSZ:
        return f": file size limit of {limits.file_bytes} bytes"
    if sig == signal.SIGSEGV:
        return ": segmentation fault"
    return ""
