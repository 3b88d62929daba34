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


def namespace_pids(init: int) -> set[int] | None:
    """Every process of the pid namespace whose process 1 is ``init`` (host pids; ``init``
    itself left out): its descendants, read from ``/proc/<pid>/task/<tid>/children``. Inside a
    pid namespace nothing can leave the tree (an orphan is adopted by ``init``), so a process
    that left its group (``setsid``) or double-forked is found too. None where the kernel has no
    ``children`` files, or ``init`` is gone."""
    if not os.path.exists(f"/proc/{init}/task/{init}/children"):
        return None
    found: set[int] = set()
    todo = [init]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # ended meanwhile
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    kids = [int(k) for k in f.read().split()]
            except (OSError, ValueError):
                continue
            for kid in kids:
                if kid not in found:
                    found.add(kid)
                    todo.append(kid)
    return found


def submission_pids(leader: int, uid: int | None = None, init: int | None = None) -> set[int]:
    """Every live process belonging to the worker ``leader``: the processes of its pid
    namespace (``init``: its process 1, which is the harness's and left out), else its
    process group, its descendants and (when ``uid`` is the worker's own user id) every
    process of that user. Zombies are left out; the trusted process itself never is in the set."""
    if init is not None:
        inside = namespace_pids(init)
        if inside is not None:
            return {pid for pid in inside if (_stat(pid) or ("X",))[0] not in ("Z", "X")}
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
def frozen(leader: int, uid: int | None = None, rounds: int = 50, init: int | None = None) -> Iterator[int]:
    """Every process of the worker ``leader`` stopped (SIGSTOP) inside the block, continued
    (SIGCONT) after it; yields how many were stopped. Stopping is repeated until a pass finds
    nothing new and nothing running, so a process forked (or continued by a sibling) while the
    first signals went out is caught too. A stopped process cannot run, catch or ignore it.
    ``init``: process 1 of the worker's pid namespace (see :func:`submission_pids`)."""
    stopped: set[int] = set()
    try:
        for _ in range(rounds):
            pids = submission_pids(leader, uid, init)
            fresh = pids - stopped
            _signal_all(pids, signal.SIGSTOP)
            stopped |= pids
            time.sleep(0.002)
            if not fresh and all(_stopped(pid) for pid in pids):
                break
        yield len({pid for pid in stopped if _stat(pid) is not None})
    finally:
        _signal_all(stopped | submission_pids(leader, uid, init), signal.SIGCONT)


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
    largest total seen and ``processes`` how many distinct ones were seen. Children are
    sampled, so a spike shorter than ``period`` can be missed, but a child holding a whole
    input cannot. The worker's own resident size is sampled too (``own_peak``, bytes): the
    caller reads its exact peak (``VmHWM``), but the worker can reset that one where the
    kernel lets it write its own ``/proc/self/clear_refs`` (an ordinary user's grader without
    Landlock); a sample cannot be undone."""

    def __init__(self, leader: int, uid: int | None = None, period: float = 0.02, init: int | None = None) -> None:
        self.leader, self.uid, self.period, self.init = leader, uid, period, init
        self.peak = 0
        self.own_peak = 0
        self.seen: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bpe-tree-memory", daemon=True)

    @property
    def processes(self) -> int:
        return len(self.seen)

    def sample(self) -> None:
        self.own_peak = max(self.own_peak, (status_kb(self.leader, "VmRSS") or 0) * 1024)
        others = submission_pids(self.leader, self.uid, self.init) - {self.leader}
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


def _held(pid: int, precise: bool) -> int:
    """Bytes of memory ``pid`` holds that no file backs (anonymous and shared memory):
    cheaply from ``/proc/<pid>/status`` (a page shared after a fork counts in each process),
    or, ``precise``, its proportional share from ``/proc/<pid>/smaps_rollup``."""
    fields = ("Pss_Anon:", "Pss_Shmem:") if precise else ("RssAnon:", "RssShmem:")
    total, pss = 0, 0
    try:
        with open(f"/proc/{pid}/smaps_rollup" if precise else f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(fields):
                    total += int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total or pss  # kernels before 5.8 give Pss alone: file pages then count too


class TreeLimit:
    """Whole-tree accounting: every ``period`` seconds, the memory all processes of the worker
    ``leader`` hold together (:func:`submission_pids`, with ``uid`` and ``init``); past
    ``limit`` bytes (confirmed with proportional shares, so pages shared after a fork count
    once), every one of them is killed (the whole pid namespace when ``init`` is its process
    1), once, why is kept in :attr:`over` and the watch ends. Per-process ``RLIMIT_AS`` bounds
    what one process can add between two samples."""

    def __init__(self, leader: int, uid: int | None, init: int | None, limit: int, period: float = 0.1) -> None:
        self.leader, self.uid, self.init, self.limit, self.period = leader, uid, init, limit, period
        self.over: str | None = None  # why the worker was stopped, once it was
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bpe-tree-limit", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self.period):
            pids = submission_pids(self.leader, self.uid, self.init)
            if len(pids) < 2 or sum(_held(pid, False) for pid in pids) <= self.limit:
                continue  # one process alone is bounded by RLIMIT_AS
            held = sum(_held(pid, True) for pid in pids)
            if held > self.limit and not self._done.is_set():
                self._stop(
                    f"its {len(pids)} processes together held {held >> 20} MB, more than the memory limit "
                    f"of {self.limit >> 20} MB for all of them (grading.yaml isolation.memory_mb)"
                )
                return

    def _stop(self, why: str) -> None:
        """Kill every process of the worker now (its own thread); the call in progress then
        fails with ``why``."""
        self.over = why
        pids = submission_pids(self.leader, self.uid, self.init)
        if self.init is not None:
            pids.add(self.init)  # the kernel then kills the whole namespace
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def close(self) -> None:
        self._done.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
