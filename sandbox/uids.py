"""Dedicated worker user ids, allocated machine-wide (never computed from a pid).

A root grader gives each worker its own user id from ``UID_BASE ..  UID_BASE + UID_COUNT``.
An id is taken by locking a file named after it (``flock``, exclusive, non-blocking) in a
root-owned directory; the lock is held for the worker's life and released when its lease
is closed (or by the kernel when the grading dies). Concurrent gradings on the machine
therefore never share an id, so stopping one worker (which kills every process of its id)
can never touch another grading's processes. An id whose lock was free but which still
has processes (left by a grading that was killed) is swept before it is handed out.
"""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import time
from pathlib import Path

UID_BASE = 1_900_000_000
UID_COUNT = 1 << 20
LOCK_DIR = Path("/run/bpe-grader/uids")


class UidsExhausted(RuntimeError):
    """Every dedicated user id is held by a running worker."""


def processes_of(uid: int) -> list[int]:
    """Pids of the live processes running as ``uid`` (read from ``/proc``; zombies, already
    dead and waiting to be reaped, are left out)."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and not _zombie(name):
                    pids.append(int(name))
            except OSError:
                pass
    return pids


def _zombie(pid: str) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"


def sweep(uid: int, rounds: int = 20) -> bool:
    """SIGKILL every process of ``uid`` until none is left; False if some survived."""
    for _ in range(rounds):
        pids = processes_of(uid)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
    return not processes_of(uid)


def root_only_dir(path: Path) -> Path:
    """``path``, created root-only; refused unless it is a real directory owned by root."""
    path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise PermissionError(f"{path} must be a directory owned by root and writable only by it")
    return path


class UidLease:
    """One allocated user id, held until :meth:`release`."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        """Give the id back (call after every process of it is gone)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.release()


def claim(uid: int, lock_dir: Path = LOCK_DIR) -> UidLease | None:
    """Lock the given id if no one holds it (to clean up after a dead grading); else None."""
    try:
        fd = os.open(root_only_dir(lock_dir) / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return UidLease(uid, fd)


def allocate(lock_dir: Path = LOCK_DIR, base: int = UID_BASE, count: int = UID_COUNT) -> UidLease:
    """The lowest free dedicated user id, locked for the caller (root only)."""
    folder = root_only_dir(lock_dir)
    for uid in range(base, base + count):
        fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if not sweep(uid):  # pragma: no cover - a process of a dead grading that cannot be killed
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise UidsExhausted(f"all {count} worker user ids from {base} are in use")
