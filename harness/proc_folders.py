"""Folders a process keeps for its own lifetime, that outlive no process for long.

A folder made by :func:`own_folder` is named after its process (pid and start time) and
removed when the process exits; a process that ends without running ``atexit`` (killed, or a
forked one ending with ``os._exit``) leaves it, and the next :func:`own_folder` of the same
prefix in that parent removes the folders of this user whose process is gone. In a grading,
the folder is made in the grading's own temporary folder (:data:`STATE_ENV`), which ``grade``
removes however the test process ended, killed too.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

STATE_ENV = "BPE_GRADER_STATE"  # the grading's own temporary folder, set by grade for its test run


def start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def remove_orphans(parent: Path, prefix: str) -> None:
    """Remove the folders ``prefix<pid>-<start>-*`` in ``parent`` of this user whose process is gone."""
    for folder in parent.glob(prefix + "*-*-*"):
        pid, start = folder.name.removeprefix(prefix).split("-")[:2]
        try:
            if folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.geteuid() \
                    and str(start_time(int(pid))) != start:
                shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue


def _remove(folder: Path, pid: int) -> None:
    """``folder`` removed, by its own process only (a forked child that exits normally runs
    the ``atexit`` functions it inherited: the folder is still its parent's)."""
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def own_folder(prefix: str, parent: str | None = None) -> Path:
    """A new folder ``prefix<pid>-<start>-<random>`` in ``parent`` (default: the grading's own
    temporary folder, :data:`STATE_ENV`, in a grading; else TMPDIR), removed at exit; the
    orphans of that prefix there are removed first."""
    where = Path(parent or os.environ.get(STATE_ENV) or tempfile.gettempdir())
    remove_orphans(where, prefix)
    pid = os.getpid()
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{pid}-{start_time(pid)}-", dir=where))
    atexit.register(_remove, folder, pid)
    return folder


_kept: dict[str, tuple[int, Path]] = {}  # prefix -> (pid, folder) of process_folder


def process_folder(prefix: str) -> Path:
    """This process's one folder of ``prefix`` (:func:`own_folder`), made at the first call,
    and again in a forked child (the folder it inherited is its parent's) or once it is gone."""
    kept = _kept.get(prefix)
    if kept is None or kept[0] != os.getpid() or not kept[1].is_dir():
        kept = _kept[prefix] = (os.getpid(), own_folder(prefix))
    return kept[1]


def made_folder(prefix: str) -> Path | None:
    """:func:`process_folder`'s folder of ``prefix``, if this process has made one."""
    kept = _kept.get(prefix)
    return kept[1] if kept is not None and kept[0] == os.getpid() else None
