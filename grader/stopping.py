"""How ``grade`` is stopped: SIGTERM or SIGINT while it grades raise :class:`Stopped` (the
test run is then stopped and the results written from what it finished), and the test run's
end, at its time budget or by a signal, is told as :class:`RunStopped`."""

from __future__ import annotations

import signal
from dataclasses import dataclass

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@dataclass(frozen=True)
class RunStopped:
    """Why ``grade`` stopped the test run before it ended: at its time budget (``signal``
    None), or because ``grade`` got SIGTERM or SIGINT."""

    reason: str  # "grading stopped after 60 s, its time budget"
    signal: int | None = None

    @property
    def at_budget(self) -> bool:
        return self.signal is None


class Stopped(BaseException):
    """``grade`` got SIGTERM or SIGINT: the test run is stopped and the results are written
    from what it finished."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


def _stop_signal(signum, frame) -> None:
    for sig in STOP_SIGNALS:  # the first one stops the grading; the rest cannot break the wrap-up
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


class StopSignals:
    """SIGTERM and SIGINT raise :class:`Stopped` while the grading runs (in the main thread;
    elsewhere they keep their handlers); the previous handlers come back at the end."""

    def __enter__(self) -> None:
        self.previous = {}
        try:
            for sig in STOP_SIGNALS:
                self.previous[sig] = signal.signal(sig, _stop_signal)
        except ValueError:  # not the main thread
            pass

    def __exit__(self, *exc) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def hold_signals() -> None:
    """The test run is over: SIGTERM and SIGINT no longer interrupt the wrap-up (scoring and writing the results take
    a second); :class:`StopSignals` restores them at the end."""
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass
