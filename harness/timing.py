"""Speed limits relative to the reference, measured in the same run on the same inputs, and
speed verdicts that count only for correct results."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .values import short_repr


@dataclass(frozen=True)
class SpeedPolicy:
    """A submission may take ``multiple`` times the reference's time plus ``floor`` seconds
    (grading.yaml's ``speed:``; these defaults when it does not say, each declared here only,
    with its description)."""

    multiple: float = field(default=10.0, metadata={
        "policy": "a speed test passes when the submission's time is at most this many times the reference's "
                  "(timed in the same run, on the same inputs) ..."})
    floor: float = field(default=1.0, metadata={"policy": "... plus this many seconds"})

    def limit(self, reference_seconds: float) -> float:
        return reference_seconds * self.multiple + self.floor


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), seconds)`` by wall clock."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


class OverLimit(BaseException):
    """Raised inside a call :func:`timed_within` stops: not an ``Exception``, so that code
    catching those does not take it for an error of its own."""


def timed_within(fn: Callable[[], Any], limit: float) -> tuple[Any, float, bool]:
    """``(fn(), seconds, False)``, or ``(None, seconds, True)`` when ``fn`` was stopped after
    ``limit`` seconds (by wall clock: :class:`OverLimit` raised in it by ``SIGALRM``). The
    test's own timer (pytest-timeout's signal method), when it would fire sooner, is left
    alone; else it is put back, less the time spent, once the call ends or is stopped (code
    that swallows the stop still meets it). Off the main thread, or without interval timers
    (Windows), or where a handler set outside Python has the signal, ``fn`` runs unstopped."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return (*timed(fn), False)
    left, previous = signal.getitimer(signal.ITIMER_REAL)[0], signal.getsignal(signal.SIGALRM)
    if 0 < left <= limit or previous is None:
        return (*timed(fn), False)
    running = True
    start = time.perf_counter()

    def restore() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.perf_counter() - start), 1e-3))

    def alarm(signum, frame) -> None:
        if running:
            restore()
            raise OverLimit(f"stopped after {limit:g} s")

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        result, stopped = fn(), False
        running = False  # still in the try: an alarm before this line is caught below, one after is ignored
    except OverLimit:
        result, stopped = None, True
    finally:
        running = False
        if signal.getsignal(signal.SIGALRM) is alarm:
            restore()
    return result, time.perf_counter() - start, stopped


def best_time(fn: Callable[[], Any], repeat: int = 3) -> tuple[Any, float]:
    """The result of ``fn`` and its fastest time over ``repeat`` runs."""
    result, best = timed(fn)
    for _ in range(repeat - 1):
        result, seconds = timed(fn)
        best = min(best, seconds)
    return result, best


def speed_report(what: str, seconds: float, reference: float, policy: SpeedPolicy, *, stopped: int | None = None) -> str:
    """The speed line: both times, their ratio and the limit. ``stopped`` is how many of the
    submission's processes were stopped while the reference was timed (None: not said)."""
    ratio = seconds / reference if reference > 0 else float("inf")
    how = ""
    if stopped is not None:  # the reference timed while the submission's processes were stopped
        paused = "process was" if stopped == 1 else f"{stopped} processes were"
        how = f" (best of 3, timed while your code's {paused} paused)"
    return (
        f"{what}: {seconds:.3f} s, reference {reference:.3f} s{how}, {ratio:.1f}x; "
        f"limit {policy.multiple:g}x + {policy.floor:g} s = {policy.limit(reference):.2f} s"
    )


def result_difference(expected: Any, actual: Any, where: str = "result") -> str | None:
    """None when ``actual == expected`` with the same types throughout; otherwise one short
    line naming the first place they differ (never whole values)."""
    if type(expected) is not type(actual):
        return f"{where} should be {type(expected).__name__}, got {type(actual).__name__}"
    if expected == actual:
        return None
    if isinstance(expected, Mapping):
        for key in expected:
            if key not in actual:
                return f"{where} lacks the key {short_repr(key, 60)} ({len(expected)} keys expected, {len(actual)} returned)"
            inner = result_difference(expected[key], actual[key], f"{where}[{short_repr(key, 60)}]")
            if inner:
                return inner
        extra = next(k for k in actual if k not in expected)
        return f"{where} has the unexpected key {short_repr(extra, 60)}"
    if isinstance(expected, Sequence) and not isinstance(expected, (str, bytes)):
        for i, (e, a) in enumerate(zip(expected, actual)):
            inner = result_difference(e, a, f"{where}[{i}]")
            if inner:
                return inner
        return f"{where} has {len(actual)} items, {len(expected)} expected"
    return f"{where} is {short_repr(actual, 60)}, expected {short_repr(expected, 60)}"
