"""pytest-timeout's failure told for a student: the limit, the submission's call in progress.

pytest-timeout ends a test over its limit with ``Failed: Timeout (>3.0s) from pytest-timeout.``
raised wherever the test happened to be: its traceback runs through the harness (and, when
grading, ends in the wait for the isolated worker). :func:`timeout_message` turns it into
``Timeout (>3.0s): the test took longer than its limit of 3.0 s while your code was running
adapters.run_merge(...)``: the call the failure interrupted, as :mod:`harness.impl` marked it
(:mod:`harness.in_progress`); then the submission's own frames, as ``file:line in function``
relative to it: run in-process, from the traceback; isolated, from the stack the worker dumped
before it was stopped (:mod:`sandbox.stacks`).
"""

from __future__ import annotations

import functools
import os
import re
import signal
import threading
import traceback
from pathlib import Path
from types import TracebackType

import pytest

from . import dispatch, in_progress
from .breaker import TimeLost

PYTEST_TIMEOUT = re.compile(r"Timeout \(>([0-9.]+)s\) from pytest-timeout")
STACK_DUMP = re.compile(r"\++ Timeout \++\n.*?\++ Timeout \++\n?", re.S)  # pytest-timeout's dump of other threads
OWN = str(Path(__file__).resolve().parent) + os.sep  # this package's files: never the submission's
HANDOVER = os.path.realpath(dispatch.__file__)  # where a call enters the submission's code in this process
MAX_FRAMES = 8  # the innermost frames of the submission shown


class TestTimeout(BaseException, TimeLost):
    """A test over its time limit, raised by :class:`SignalTimer` with pytest-timeout's own
    text. Not an ``Exception`` nor pytest's ``Failed``, which Hypothesis takes for a failing
    example and replays (each replay hanging again, with no second alarm): it ends the test
    at once, and pytest reports it as failed. The circuit breaker counts it against the
    submission's call in progress (:mod:`harness.breaker`). ``limit``: the test's limit,
    seconds, as its settings gave it."""

    limit: float | None = None


class FixtureTimeout(pytest.fail.Exception, TimeLost):
    """A test over its time limit while its fixtures were being set up or torn down: pytest's
    own failure (which pytest caches as the fixture's error, so each later test that needs the
    fixture fails at once with it), not :class:`TestTimeout`, which pytest's fixture
    machinery does not expect (the fixture is left half made and every later test using it
    errors with an internal ``assert not self._finalizers``). ``limit`` as for :class:`TestTimeout`."""

    limit: float | None = None


_CANCEL = pytest.StashKey[object]()  # the cancel of the timer SignalTimer set for an item


def _debugging() -> bool:
    """pytest-timeout's check for a debugger in use (False where it has none)."""
    try:
        from pytest_timeout import is_debugging

        return bool(is_debugging())
    except Exception:
        return False


class SignalTimer:
    """pytest-timeout's ``signal`` method (its default on Linux) raising :class:`TestTimeout`
    in a test's call, :class:`FixtureTimeout` in its setup and teardown; registered only where
    pytest-timeout is loaded, whose hooks (public, ``firstresult``) these are: the timer is set
    and cancelled here, through both hooks, so nothing depends on how pytest-timeout keeps its
    own. Its other methods, settings it does not describe as expected, and runs off the main
    thread are left to pytest-timeout."""

    def __init__(self) -> None:
        self.in_call = False

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        self.in_call = True
        try:
            return (yield)
        finally:
            self.in_call = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings) -> bool | None:
        method, limit = getattr(settings, "method", None), getattr(settings, "timeout", None)
        if method != "signal" or not isinstance(limit, (int, float)) or limit <= 0:
            return None
        if threading.current_thread() is not threading.main_thread():
            return None
        detect = not getattr(settings, "disable_debugger_detection", False)

        def alarm(signum, frame) -> None:
            __tracebackhide__ = True
            if detect and _debugging():
                return  # a student at a breakpoint is never timed out, as with pytest-timeout
            timeout = (TestTimeout if self.in_call else FixtureTimeout)(f"Timeout (>{limit}s) from pytest-timeout.")
            timeout.limit = limit
            raise timeout

        def cancel() -> None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)

        if isinstance(getattr(item, "stash", None), pytest.Stash):
            item.stash[_CANCEL] = cancel
        item.cancel_timeout = cancel  # where pytest-timeout's own cancel looks, should it run
        signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
        return True

    @pytest.hookimpl(tryfirst=True)
    def pytest_timeout_cancel_timer(self, item: pytest.Item) -> bool | None:
        stash = getattr(item, "stash", None)
        cancel = stash.get(_CANCEL, None) if isinstance(stash, pytest.Stash) else None
        if cancel is None:
            return None  # not set here: pytest-timeout's own
        del stash[_CANCEL]
        cancel()
        return True


@functools.lru_cache(maxsize=4096)
def _real_path(filename: str) -> str:
    return os.path.realpath(filename)


def handed_over_frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` after the harness handed a call to the submission in this process
    (:mod:`harness.dispatch`; none when it ran in a worker), none of this package's, innermost
    last, each ``filename`` its real path (their lines read: :func:`traceback.extract_tb`).
    Only the frames after the hand-over are summarized (their lines read), each file's real
    path found once: every failure of an isolated run asks, and has none."""
    while tb is not None and _real_path(tb.tb_frame.f_code.co_filename) != HANDOVER:
        tb = tb.tb_next
    if tb is None:
        return []
    frames = []
    for frame in traceback.extract_tb(tb.tb_next):
        path = _real_path(frame.filename)
        if not path.startswith(OWN):
            frame.filename = path
            frames.append(frame)
    return frames


def student_frames(excinfo: pytest.ExceptionInfo, root: Path) -> list[str]:
    """The traceback's frames in files of the submission at ``root`` (of
    :func:`handed_over_frames`), innermost last, as ``path:line in function`` relative to ``root``."""
    root_dir = str(root.resolve()) + os.sep
    shown = [f"{os.path.relpath(f.filename, root_dir)}:{f.lineno} in {f.name}"
             for f in handed_over_frames(excinfo.tb) if f.filename.startswith(root_dir)]
    return shown[-MAX_FRAMES:]


def timeout_limit(excinfo: pytest.ExceptionInfo) -> str | None:
    """The limit (``"3.0"``) of a pytest-timeout failure, else None: the one :class:`SignalTimer`
    raised carries it; pytest-timeout's own (its other methods) says it in its message."""
    if excinfo.errisinstance((TestTimeout, FixtureTimeout)) and excinfo.value.limit is not None:
        return str(excinfo.value.limit)
    if not excinfo.errisinstance((TestTimeout, pytest.fail.Exception)):
        return None
    found = PYTEST_TIMEOUT.search(str(excinfo.value))
    return found.group(1) if found else None


def timeout_message(excinfo: pytest.ExceptionInfo, root: Path) -> str | None:
    """The failure of a test stopped by pytest-timeout told in a line (and, in-process, the
    submission's frames at that moment, from ``root``), else None for any other failure."""
    limit = timeout_limit(excinfo)
    if limit is None:
        return None
    call = in_progress.interrupted(excinfo.value)
    if call is None:
        where = "while the test itself was running"
    elif call.running:
        where = f"while your code was running {call.name}"
    else:
        where = f"while the harness was checking what your {call.name} returned"
    line = f"Timeout (>{limit}s): the test took longer than its limit of {limit} s {where}"
    if call is not None and call.running:  # in-process, the traceback has them; isolated, the worker told them
        line += in_progress.told_frames(student_frames(excinfo, root) or in_progress.frames_at(excinfo.value))
    return line


def without_stack_dump(text: str) -> str:
    """``text`` (a captured output) without pytest-timeout's dump of the other threads' stacks."""
    return STACK_DUMP.sub("", text)
