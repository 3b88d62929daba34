"""Folders closed to other users during a grading get their modes back when it ends.

Where the worker has no private root (a container refusing mount namespaces), a root grader
keeps the worker (another user id) out of the folders it must not see by taking their
"other" permissions off (:func:`sandbox.confine.close_to_others`, in the worker before it
drops root). Those folders are the machine's (sibling checkouts, the folder holding the
submissions), so the change must not outlive the grading. Before a worker starts, the
trusted side holds each folder it will close (:meth:`ClosedFolders.hold`): a shared
``flock`` on a lock file named after the folder, machine-wide, and a record of the folder's
mode as it was before any grading closed it (written once, by whoever holds it first). When
the grading ends (:meth:`ClosedFolders.release`), the one that can take the lock exclusively
(no other grading still needs the folder closed) gives the folder its recorded mode back,
unless someone changed its mode meanwhile, and removes the record and the lock file. A grading killed
outright leaves its folders closed and their records; the next grading to close them gives
them back.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from .uids import lock_file, root_only_dir

LOCK_DIR = Path("/run/bpe-grader/closed")


def _files(lock_dir: Path, path: str) -> tuple[Path, Path]:
    """The lock file and the mode record of a folder, named after its path."""
    key = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return lock_dir / f"{key}.lock", lock_dir / f"{key}.mode"


def held(path: str, lock_dir: Path = LOCK_DIR) -> bool:
    """Whether a grading holds ``path`` now (its lock file is there): the last to let go of
    it gives the folder its mode back."""
    return _files(lock_dir, path)[0].exists()


class ClosedFolders:
    """The folders one grading's workers may close, held until :meth:`release`."""

    def __init__(self, lock_dir: Path = LOCK_DIR) -> None:
        self.lock_dir = lock_dir
        self.held: dict[str, int] = {}  # folder -> its lock file's descriptor (shared lock)

    def hold(self, paths: Iterable[str]) -> None:
        """Hold each directory of ``paths`` (before a worker may close it): a shared lock,
        and its present mode recorded unless a record of it exists already."""
        root_only_dir(self.lock_dir)
        for path in paths:
            if path in self.held:
                continue
            try:
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    continue
                lock, record = _files(self.lock_dir, path)
                fd = lock_file(lock, fcntl.LOCK_SH)  # blocking: never None
            except OSError:
                continue
            self.held[path] = fd
            self._record(record, path)

    @staticmethod
    def _record(record: Path, path: str) -> None:
        """The folder's mode before any grading closed it; kept if recorded already."""
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:  # recorded already (another grading, or one that was killed), or gone
            return
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(f"{mode:o}\n")

    def release(self) -> list[str]:
        """Let go of every folder held; those no other grading holds get their recorded mode
        back (if they are still exactly as closing left them). Returns the folders given back."""
        given_back = []
        for path, fd in list(self.held.items()):
            lock, record = _files(self.lock_dir, path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another grading still keeps it closed: the last one gives it back
                pass
            else:
                if self._give_back(record, path):
                    given_back.append(path)
                lock.unlink(missing_ok=True)
            finally:
                os.close(fd)
                del self.held[path]
        return given_back

    @staticmethod
    def _give_back(record: Path, path: str) -> bool:
        try:
            mode = int(record.read_text(encoding="utf-8").strip(), 8)
            record.unlink()
            st = os.lstat(path)
        except (OSError, ValueError):
            return False
        if stat.S_ISDIR(st.st_mode) and mode & 0o007 and stat.S_IMODE(st.st_mode) == mode & ~0o007:
            os.chmod(path, mode)
            return True
        return False
