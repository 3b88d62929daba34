"""Module set-ups prefetched: the heavy fixtures of the selftests (whole gradings, pytest runs,
handouts) run in background threads (``BACKGROUND``) from the start of the session, while the
session's own thread runs the tests before them, so that the run keeps both cores busy.

A set-up is a plain function of a :class:`Prefetch` (for its temporary folders and the results
of other set-ups); :func:`prefetched` makes it the module-scoped fixture of its name. When the
session starts (``selftests/conftest.py``), the set-ups some selected test uses are queued in
the reverse order of their first use: the background threads work from the end of the run
while the session's thread works from its beginning. A fixture whose set-up has not started
yet runs it at once in the session's thread (never waiting behind others); one that is under
way is waited for; one that is done is read. Each set-up runs once a session, whoever runs it."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from harness.proc_folders import own_folder

from .support import run_grade

Setup = Callable[["Prefetch"], Any]
# (module, fixture name) -> its set-up: a module's own fixtures, and the conftest's session ones
SETUPS: dict[tuple[str, str], Setup] = {}


CONFTEST = "conftest"  # the module of the set-ups any selftest may use
# set-ups run at once in the background: most of a set-up's time is spent waiting (on a
# grading's time limits, a worker's replies, pytest's start-up), so two keep the machine's 2
# cores busier than one did (the slow tier took 1.1 cores on average with one)
BACKGROUND = 2


def prefetched(setup: Setup):
    """Register ``setup`` and return the module-scoped fixture named after it, whose value is
    ``setup(prefetch)`` (run once a session, in the background when the session started it)."""
    module = CONFTEST if setup.__module__.rpartition(".")[2] == CONFTEST else setup.__module__
    SETUPS[module, setup.__name__] = setup

    @pytest.fixture(scope="module", name=setup.__name__)
    def fixture(prefetch: Prefetch):
        return prefetch.get(setup)

    fixture.__doc__ = setup.__doc__
    fixture.setup = setup  # for another set-up: prefetch.get(fixture.setup)
    return fixture


def wanted(items: Iterable[pytest.Item]) -> list[Setup]:
    """The registered set-ups the ``items`` use, in the order of first use."""
    order: dict[Setup, None] = {}
    for item in items:
        module = getattr(getattr(item, "module", None), "__name__", None)
        for name in getattr(item, "fixturenames", ()):
            setup = SETUPS.get((module, name)) or SETUPS.get((CONFTEST, name))
            if setup is not None:
                order.setdefault(setup)
    return list(order)


class Gradings:
    """Gradings run two at a time in the background (the grader waits on one worker most of
    the time, so two share the machine's cores well): ``start`` queues one under a name and
    returns at once, ``get`` waits for it (or runs it at once when it has not started). Queue
    every grading a module needs before waiting on the first."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gradings")
        self.futures: dict[str, Future] = {}
        self.work: dict[str, Callable[[], Any]] = {}
        self.lock = threading.Lock()

    def start(self, name: str, **request) -> None:
        """Queue :func:`run_grade` of ``request`` (its keyword arguments) under ``name``,
        writing to ``<tmp>/NAME``."""
        self.submit(name, lambda: run_grade(self.base / name, **request))

    def submit(self, name: str, work: Callable[[], Any]) -> None:
        """Queue any other work (a grading with its own set-up) under ``name``."""
        with self.lock:
            if name not in self.futures:
                self.work[name] = work
                self.futures[name] = self.pool.submit(work)

    def get(self, name: str) -> Any:
        with self.lock:
            future = self.futures[name]
            here = future.cancel()
            if here:
                future = self.futures[name] = Future()
                future.set_running_or_notify_cancel()  # running here: no other caller may cancel it
        if here:
            try:
                future.set_result(self.work[name]())
            except BaseException as err:
                future.set_exception(err)
                raise
        return future.result()

    def wait(self) -> None:
        """Wait for every grading queued so far (a set-up queuing gradings ends when they have,
        so that its background thread starts no other set-up meanwhile)."""
        with self.lock:
            futures = list(self.futures.values())
        for future in futures:
            future.exception()

    def start_whole_suite(self) -> None:
        """Queue the whole-suite gradings of the reference (with ``--report``) and of the
        untouched stubs (with ``--junit``), each once a session."""
        self.start("reference", impl="reference", report=True)
        self.start("stubs", junit=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class Prefetch:
    """The session's set-ups (:func:`prefetched`): ``BACKGROUND`` threads, and the session's
    thread taking any set-up it needs that the background has not started."""

    def __init__(self) -> None:
        # named after this process: a session killed before it could remove it leaves it, and
        # the next session removes it (harness.proc_folders)
        self.base = own_folder("bpe-selftests-")
        self.pool = ThreadPoolExecutor(max_workers=BACKGROUND, thread_name_prefix="prefetch")
        self.futures: dict[Setup, Future] = {}
        self.lock = threading.Lock()
        self.count = 0
        self.gradings = Gradings(self.base / "gradings")  # the session's gradings by name (its pool starts on the first)

    def start(self, setups: Iterable[Setup]) -> None:
        """Queue ``setups`` for the background threads, in this order."""
        with self.lock:
            for setup in setups:
                if setup not in self.futures:
                    self.futures[setup] = self.pool.submit(setup, self)

    def get(self, setup: Setup) -> Any:
        """``setup``'s value: run here when not started yet, else waited for."""
        with self.lock:
            future = self.futures.get(setup)
            here = future is None or future.cancel()
            if here:
                future = self.futures[setup] = Future()
                future.set_running_or_notify_cancel()  # running here: no other caller may cancel it
        if here:
            try:
                future.set_result(setup(self))
            except BaseException as err:  # a skip, a failed assertion: raised to every fixture using it
                future.set_exception(err)
                raise
        return future.result()

    def mktemp(self, name: str) -> Path:
        """A new folder ``NAME<n>`` (as ``tmp_path_factory.mktemp``)."""
        with self.lock:
            self.count += 1
            count = self.count
        folder = self.base / f"{name}{count}"
        folder.mkdir()
        return folder

    def close(self) -> None:
        """Drop what has not started, wait for what has, remove the folders."""
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.gradings.close()
        shutil.rmtree(self.base, ignore_errors=True)
