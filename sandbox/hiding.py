"""Which folders an isolated worker must not see: the harness, the submission's original, their
neighbours and ``/autograder`` (covered with empty mounts in its private root, or closed by file
permissions where there is none)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from harness.impl import ROOT

# directories never hidden whole: the system needs them (a repository directly inside one of
# them gets only its own folder hidden)
_SYSTEM_DIRS = {Path(p) for p in ("/", "/usr", "/etc", "/var", "/tmp", "/opt", "/lib", "/lib64", "/bin", "/sbin", "/proc", "/dev", "/sys", "/run", "/home", "/root", "/srv", "/mnt", "/media")}


def keep_out(source_root: Path, extra: Iterable[Path]) -> list[Path]:
    """Folders whose contents the worker must never see (see :func:`hide_paths`)."""
    found = [ROOT, ROOT.parent, source_root, source_root.parent, Path("/autograder"), *extra]
    return [p for p in found if p.resolve() not in _SYSTEM_DIRS]


def hide_paths(source_root: Path, extra: Iterable[Path], sandbox: Path, python_dirs: Iterable[str]) -> list[str]:
    """Directories the worker must not see: the harness checkout and the folder it sits
    in (sibling checkouts hold the same tests and reference), the submission's original
    folder (``source_root``) and the one holding it (other students' submissions, in a batch)
    and /autograder. Covered with empty mounts inside the private root, or closed by file
    permissions where there is none. A directory holding something the worker needs (the
    sandbox, Python itself, ``python_dirs``) is not hidden whole: its other sub-directories
    are, two levels down; what it needs is never hidden, nor anything in its sandbox (which
    sits in the grader's TMPDIR: a submission there has that folder as its parent)."""
    candidates = [ROOT, source_root, source_root.parent, Path("/autograder"), *extra]
    if ROOT.parent.resolve() not in _SYSTEM_DIRS:
        candidates.insert(0, ROOT.parent)
    own = Path(sandbox).resolve()
    needed = [Path(p).resolve() for p in (sandbox, sys.executable, *python_dirs)]
    out: list[str] = []

    def add(c: Path, depth: int) -> None:
        c = c.resolve()
        if not c.is_dir() or c in _SYSTEM_DIRS or any(c == Path(o) or Path(o) in c.parents for o in out):
            return
        if c in needed or own in c.parents:
            return  # shown whole: covering its contents would hide the worker's own code or Python
        if not any(n == c or c in n.parents for n in needed):
            out.append(str(c))
        elif depth > 0:
            try:
                children = sorted(p for p in c.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                return
            for child in children:
                add(child, depth - 1)

    for c in candidates:
        if c is not None:
            add(Path(c), 2)
    return out
