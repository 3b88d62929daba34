"""``batch``'s gradings side by side, and how they stop: SIGTERM or SIGINT to the batch stops
each ``grade`` command under way (which then writes its results from the tests it finished),
SIGKILL after ``STOP_WAIT`` seconds; no grading starts any more."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

STOP_WAIT = 15.0  # seconds the grade commands get to write their results when the batch is stopped


RUNNING: set[int] = set()  # process groups of the grade commands under way
STOPPING = threading.Event()  # the batch got SIGTERM or SIGINT: each grade command under way is stopped too


def kill_group(pid: int) -> None:
    signal_group(pid, signal.SIGKILL)


def signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


class _Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupted(signum, frame):
    raise _Interrupted(signum)


def stop_gradings(futures: list) -> None:
    """The batch was stopped: no grading starts any more; each one under way gets SIGTERM
    (its grade command writes its results from the tests it finished) and, after
    ``STOP_WAIT`` seconds, SIGKILL."""
    STOPPING.set()
    for future in futures:
        future.cancel()
    for pid in list(RUNNING):
        signal_group(pid, signal.SIGTERM)
    until = time.monotonic() + STOP_WAIT
    while RUNNING and time.monotonic() < until:
        time.sleep(0.1)
    for pid in list(RUNNING):
        kill_group(pid)


def grade_all(submissions: list, one, jobs: int, runner) -> list | int:
    """``one`` on every submission, ``jobs`` at a time: the rows by student; or, when SIGTERM
    or SIGINT stopped the batch, its exit status (128 + the signal) once the gradings under
    way were stopped (:func:`stop_gradings`)."""
    previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGTERM, signal.SIGINT)}
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = []
    try:
        futures = [pool.submit(one, sub) for sub in submissions]
        rows = sorted((f.result() for f in futures), key=lambda r: r.student)
    except _Interrupted as stop:  # stop: no grade process outlives the batch
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        stop_gradings(futures)
        pool.shutdown(wait=False, cancel_futures=True)
        print("batch: interrupted; the gradings under way were stopped and wrote their results from the tests they "
              "finished (a re-run grades them again); finished ones are kept (a re-run skips them)", file=sys.stderr)
        return 128 + stop.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if runner:
            runner.close()
    pool.shutdown()
    return rows
