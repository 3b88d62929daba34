"""Using more than one core: run the parts of a job in forked child processes.

``fork_map(work, n)`` returns ``[work(0), ..., work(n - 1)]`` (each a ``bytes``), computing
``work(0)`` in this process while forked children compute the others. Forking means the
children already hold everything ``work`` needs (the tokenizer's tables, the text), so
nothing is sent to them; each sends its ``bytes`` back through a pipe.

The result never depends on whether processes could be had: a child that cannot be started
(no ``os.fork``, a process limit) or that fails is redone here. Every child has ended and
been waited for when ``fork_map`` returns or raises.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity where known)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def fork_map(work: Callable[[int], bytes], n: int) -> list[bytes]:
    """``[work(i) for i in range(n)]``, with ``work(1..n-1)`` each in a forked child."""
    if n < 1:
        raise ValueError(f"fork_map: n must be at least 1, got {n!r}")
    children: dict[int, tuple[int, int]] = {}  # part -> (pid, read end of its pipe)
    try:
        # 1. start one child per part after the first; if forking fails, those parts run here
        for i in range(1, n if hasattr(os, "fork") else 1):
            started = _start_child(work, i)
            if started is None:
                break
            children[i] = started
        # 2. meanwhile, this process does the first part
        results = [work(0)]
        # 3. collect the others in order; a part whose child failed is computed here
        for i in range(1, n):
            data = _collect(*children.pop(i)) if i in children else None
            results.append(work(i) if data is None else data)
        return results
    finally:
        # an exception (or a timeout's signal) stopped us early: end the children still running
        for pid, fd in children.values():
            _end(pid, fd)


def _start_child(work: Callable[[int], bytes], i: int) -> tuple[int, int] | None:
    """Fork a child that writes ``work(i)`` to a pipe and exits; ``(pid, read fd)``, or
    ``None`` if no child could be started."""
    try:
        read_fd, write_fd = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:  # e.g. RLIMIT_NPROC reached
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the child: compute, send, and leave without running any clean-up of the parent's
        code = 1
        try:
            os.close(read_fd)
            data = memoryview(work(i))
            while data:
                data = data[os.write(write_fd, data) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> bytes | None:
    """Everything the child sent, once it has exited successfully; ``None`` if it failed."""
    chunks = []
    try:
        while chunk := os.read(read_fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None


def _end(pid: int, read_fd: int) -> None:
    """Kill a child that is no longer wanted and wait for it."""
    os.close(read_fd)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
