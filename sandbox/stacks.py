"""Where a worker's code was when its call ran too long: its stack, dumped on a signal.

The worker has :mod:`faulthandler` write every thread's stack to a pipe of its own on
:data:`SIGNAL` (:func:`register`, before any submission code runs). When a call passes its
time limit (the test's or the call's), the trusted side sends that signal before it stops the
worker (:func:`ask`) and keeps, from the thread that was running the call, the frames in the
submission's files (:func:`submission_frames`): ``path:line in function``, relative to the
submission, innermost last, as a timeout run in-process shows them (:mod:`harness.timeouts`).

The dump is the worker's word: code that takes the signal or the pipe for itself loses only
its own feedback, and the trusted side reads at most :data:`MAX_BYTES` for at most
:data:`WAIT` seconds.
"""

from __future__ import annotations

import os
import re
import select
import signal
import time

from harness.printable import printable

SIGNAL = signal.SIGUSR2
WAIT = 0.5  # seconds for the dump to begin (a worker that is stopped or busy in the kernel gives none)
QUIET = 0.05  # seconds without more of it that end it: faulthandler writes it all at once
MAX_BYTES = 1 << 16
DRAIN_BYTES = 1 << 24  # what ask() drops at most of what was in the pipe before
MAX_FRAMES = 8  # the innermost frames of the submission shown
FRAME = re.compile(r'\s*File "(?P<path>.*)", line (?P<line>\d+) in (?P<name>.*)')


def register(fd: int) -> None:
    """In the worker: dump every thread's stack to ``fd`` on :data:`SIGNAL`."""
    import faulthandler

    faulthandler.register(SIGNAL, file=fd, all_threads=True, chain=False)


def ask(pid: int, fd: int) -> str:
    """Signal the worker ``pid`` and read its dump from ``fd`` (non-blocking): what came within
    :data:`WAIT` seconds, ``""`` if nothing did. What was in the pipe before is dropped."""
    _drain(fd)
    try:
        os.kill(pid, SIGNAL)
    except OSError:
        return ""
    deadline, data = time.monotonic() + WAIT, b""
    while len(data) < MAX_BYTES:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], min(left, QUIET) if data else left)[0]:
            break
        chunk = _read(fd, MAX_BYTES - len(data))
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace")


def _drain(fd: int) -> None:
    """Empty the pipe: the worker may have widened it (``F_SETPIPE_SZ``, up to 1 MiB as
    ``fs.pipe-max-size`` ships) and filled it with a dump of its own making beforehand. At
    most :data:`DRAIN_BYTES`, should something keep writing to it meanwhile."""
    for _ in range(DRAIN_BYTES // MAX_BYTES):
        if len(_read(fd, MAX_BYTES)) < MAX_BYTES:
            return


def _read(fd: int, limit: int) -> bytes:
    try:
        return os.read(fd, limit)
    except OSError:  # nothing there yet (non-blocking), or the pipe is gone
        return b""


def submission_frames(dump: str, code_dir: str, harness_dir: str) -> list[str]:
    """The frames of ``dump`` in files under ``code_dir`` (the submission's copy), from the
    thread that was running the call (the one with frames of the worker's own code under
    ``harness_dir``; else the thread the dump calls current), innermost last."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) )", dump.strip())
    threads = [(block.startswith("Current thread"), [f for f in map(FRAME.fullmatch, block.splitlines()) if f])
               for block in blocks]
    running = [frames for _, frames in threads if any(f["path"].startswith(harness_dir + os.sep) for f in frames)]
    current = [frames for is_current, frames in threads if is_current]
    chosen = (running or current or [[]])[0]
    shown = [printable(f"{f['path'][len(code_dir) + 1:]}:{f['line']} in {f['name'].strip()}", 200)
             for f in reversed(chosen) if f["path"].startswith(code_dir + os.sep)]  # the dump lists the most recent call first
    return shown[-MAX_FRAMES:]
