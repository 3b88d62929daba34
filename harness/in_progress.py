"""The call into the submission in progress, and which one a failure interrupted.

:mod:`harness.impl` makes each call into the submission inside a :class:`CallInProgress`
(``with CallInProgress("adapters.run_merge(...)"):``) and checks what came back inside one
marked ``running=False``. An exception leaving such a block is noted, in this thread, with the
innermost call it left; :func:`interrupted` gives that call back for the exception once it
has reached pytest, where :mod:`harness.timeouts` names it in a timeout's message, without
reading any frame's variables.
"""

from __future__ import annotations

import threading


class _Noted(threading.local):
    """The exception that left a call last (kept until the next call starts) and that call."""

    error: BaseException | None = None
    call: CallInProgress | None = None
    frames_of: BaseException | None = None  # the error the frames below were noted for
    frames: list[str] = []


_noted = _Noted()
FRAMES_HEADER = "your code was at (innermost last):"  # the line before a failure's frames


class CallInProgress:
    """A call into the submission (``running``), or the check of what it returned (not
    ``running``), named for a student: ``adapters.run_merge(...)``."""

    __slots__ = ("name", "running")

    def __init__(self, name: str, running: bool = True) -> None:
        self.name, self.running = name, running

    def __enter__(self) -> CallInProgress:
        _noted.error = _noted.call = None  # what an earlier call's failure left is told by now
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, tb: object) -> bool:
        if error is not None and _noted.error is not error:  # an inner block noted it first
            _noted.error, _noted.call = error, self
        return False

    def __repr__(self) -> str:
        return f"<{'running' if self.running else 'checking'} {self.name}>"


def interrupted(error: BaseException) -> CallInProgress | None:
    """The innermost call that ``error`` left, or None if it left none (the test's own code)."""
    return _noted.call if _noted.error is error else None


def note_frames(error: BaseException, frames: list[str]) -> None:
    """Where the submission's code was when ``error`` interrupted a call that ran elsewhere
    (an isolated worker's stack: :mod:`sandbox.stacks`), for :func:`frames_at`."""
    _noted.frames_of, _noted.frames = error, list(frames)


def frames_at(error: BaseException) -> list[str]:
    """The frames :func:`note_frames` noted for ``error`` (``path:line in function``, innermost last)."""
    return _noted.frames if _noted.frames_of is error else []


def told_frames(frames: list[str]) -> str:
    """``frames`` as a failure's text ends with them: ``""`` when there are none."""
    return f"\n{FRAMES_HEADER}\n" + "\n".join(f"  {f}" for f in frames) if frames else ""
