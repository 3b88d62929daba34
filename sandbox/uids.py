"""Dedicated worker user ids, allocated machine-wide (never computed from a pid).

A root grader gives each worker its own user id from ``UID_BASE ..  UID_BASE + UID_COUNT``.
An id is taken by locking a file named after it (``flock``, exclusive, non-blocking) in a
root-owned directory; the lock is held for the worker's life and released when its lease
is closed, which removes the file (or by the kernel when the grading dies, which leaves the
file for the next allocation to reuse). Concurrent gradings on the machine
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

    def __init__(self, uid: int, fd: int, lock: Path) -> None:
        self.uid = uid
        self._fd: int | None = fd
        self._lock = lock

    def release(self) -> None:
        """Give the id back (call after every process of it is gone); its lock file is
        removed while still locked, so nothing of the lease is left."""
        if self._fd is not None:
            try:
                self._lock.unlink()
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.release()


def lock_file(lock: Path, operation: int = fcntl.LOCK_EX | fcntl.LOCK_NB) -> int | None:
    """A descriptor of the file ``lock`` (created if missing) holding the ``flock``
    ``operation`` on it, or None if that is non-blocking and another holds the file. A file
    its holder removed while this call opened it is not kept: locking is retried on the file
    that is there, so a lock is always on the file a later caller will open."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, operation)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def claim(uid: int, lock_dir: Path = LOCK_DIR) -> UidLease | None:
    """Lock the given id if no one holds it (to clean up after a dead grading); else None."""
    try:
        lock = root_only_dir(lock_dir) / str(uid)
        fd = lock_file(lock)
    except OSError:
        return None
    return None if fd is None else UidLease(uid, fd, lock)


def allocate(lock_dir: Path = LOCK_DIR, base: int = UID_BASE, count: int = UID_COUNT) -> UidLease:
    """The lowest free dedicated user id, locked for the caller (root only)."""
    folder = root_only_dir(lock_dir)
    for uid in range(base, base + count):
        lock = folder / str(uid)
        fd = lock_file(lock)
        if fd is None:
            continue
        if not sweep(uid):  # pragma: no cover - a process of a dead grading that cannot be killed
            os.close(fd)
            continue
        return UidLease(uid, fd, lock)
    raise UidsExhausted(f"all {count} worker user ids from {base} are in use")
