"""The processes of a running submission, found from outside it, and what is done to all of them.

A worker may fork, leave its process group (``setsid``) or double-fork so its parent is gone.
It is found here by three routes at once: its process group, its descendants (parent links in
``/proc``), and, when it runs under a user id of its own, every process of that user id. Used
to stop every submission process while the reference is timed (:func:`frozen`) and to measure
the memory of the whole tree during a probe (:class:`TreeMemory`); also the ``/proc`` reads
and the pid-namespace ending a worker's trusted side uses (:func:`status_kb`,
:func:`end_namespace`, :func:`own_namespaces`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _stat(pid: int) -> tuple[str, int, int] | None:
    """``(state, parent pid, process group)`` of ``pid`` from ``/proc/<pid>/stat``, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()  # the command name may hold spaces and ')'
    try:
        return fields[0].decode(), int(fields[1]), int(fields[2])
    except (IndexError, ValueError):
        return None


def _all_pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def submission_pids(leader: int, uid: int | None = None) -> set[int]:
    """Every live process belonging to the worker ``leader``: its process group, its
    descendants and (when ``uid`` is the worker's own user id) every process of that user.
    Zombies are left out; the trusted process itself never is in the set."""
    table: dict[int, tuple[str, int, int]] = {}
    owned: set[int] = set()
    for pid in _all_pids():
        info = _stat(pid)
        if info is None:
            continue
        table[pid] = info
        if uid is not None:
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    owned.add(pid)
            except OSError:
                pass
    found = {pid for pid, (_, _, pgrp) in table.items() if pgrp == leader} | owned
    if leader in table:
        found.add(leader)
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(found)
    while todo:  # descendants of anything found, whatever their group
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(os.getpid())
    return {pid for pid in found if table.get(pid, ("Z",))[0] not in ("Z", "X")}


def _signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _stopped(pid: int) -> bool:
    info = _stat(pid)
    return info is None or info[0] in ("T", "t", "Z", "X")


@contextmanager
def frozen(leader: int, uid: int | None = None, rounds: int = 50) -> Iterator[int]:
    """Every process of the worker ``leader`` stopped (SIGSTOP) inside the block, continued
    (SIGCONT) after it; yields how many were stopped. Stopping is repeated until a pass finds
    nothing new and nothing running, so a process forked (or continued by a sibling) while the
    first signals went out is caught too. A stopped process cannot run, catch or ignore it."""
    stopped: set[int] = set()
    try:
        for _ in range(rounds):
            pids = submission_pids(leader, uid)
            fresh = pids - stopped
            _signal_all(pids, signal.SIGSTOP)
            stopped |= pids
            time.sleep(0.002)
            if not fresh and all(_stopped(pid) for pid in pids):
                break
        yield len({pid for pid in stopped if _stat(pid) is not None})
    finally:
        _signal_all(stopped | submission_pids(leader, uid), signal.SIGCONT)


def private_bytes(pid: int) -> int:
    """Memory only ``pid`` holds (pages not shared with its parent after a fork), from
    ``/proc/<pid>/smaps_rollup``; 0 when it is gone."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


class TreeMemory:
    """While active, samples the private memory of every process of the worker except the
    worker itself (children doing work for it) every ``period`` seconds; ``peak`` is the
    largest total seen and ``processes`` how many distinct ones were seen. The worker's own
    peak is read exactly by the caller (``VmHWM``); children are sampled, so a spike shorter
    than ``period`` can be missed, but a child holding a whole input cannot."""

    def __init__(self, leader: int, uid: int | None = None, period: float = 0.02) -> None:
        self.leader, self.uid, self.period = leader, uid, period
        self.peak = 0
        self.seen: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bpe-tree-memory", daemon=True)

    @property
    def processes(self) -> int:
        return len(self.seen)

    def sample(self) -> None:
        others = submission_pids(self.leader, self.uid) - {self.leader}
        self.seen |= others
        self.peak = max(self.peak, sum(private_bytes(pid) for pid in others))

    def _run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(self.period)

    def __enter__(self) -> "TreeMemory":
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.sample()


def status_kb(pid: int, field: str) -> int | None:
    """The number of a ``/proc/<pid>/status`` field (kB for the memory ones), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def end_namespace(init: int) -> None:
    """Kill process 1 of a worker's pid namespace (the kernel then kills every process in it)
    and wait, up to 5 s, until it is gone or a zombie: nothing of the worker runs after that."""
    try:
        os.kill(init, signal.SIGKILL)
    except OSError:
        return
    for _ in range(500):
        try:
            with open(f"/proc/{init}/stat") as f:
                if f.read().rpartition(")")[2].split()[0] in ("Z", "X"):
                    return
        except OSError:
            return
        time.sleep(0.01)


def own_namespaces(pid: int, kinds: tuple[str, ...] = ("user", "mnt", "pid")) -> bool:
    """Whether ``pid`` is in namespaces of these kinds other than this process's."""
    try:
        return all(os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}") for ns in kinds)
    except OSError:
        return False
