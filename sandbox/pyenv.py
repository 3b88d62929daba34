"""What of the grading environment's Python a confined worker may see.

The worker runs ``sys.executable -I`` inside a private root directory (:func:`sandbox.confine.
confine`). For the reference (and honest submissions) to import what this environment has
installed, that root must show the interpreter and every directory its ``sys.path`` takes
packages from (a venv's site-packages, the user site, directories added by ``.pth`` files),
wherever they live: under ``/tmp``, under ``/home``, inside the harness checkout (a ``.venv``).
It must show nothing else of their surroundings: never the checkout itself (an editable
install adds it to ``sys.path``), the submission, or a folder holding either.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from harness.childenv import child_env


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@functools.cache
def environment_path() -> tuple[str, ...]:
    """``sys.path`` of this environment's interpreter started on its own (no ``PYTHONPATH``,
    no script directory): the standard library, site-packages, the user site and whatever
    ``.pth`` files add. Asked of a fresh interpreter so the grade process, its pytest run and
    the start-up self-check all give the worker the same view."""
    env = child_env(drop=("PYTHONHOME", "PYTHONSTARTUP"), keep=("BPE_IMPL", "PYTEST_ADDOPTS"))
    try:
        out = subprocess.run(
            [sys.executable, "-c", "import sys,json;print(json.dumps(sys.path[1:]))"],
            cwd="/", env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=True,
        ).stdout
        entries = json.loads(out.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        entries = [p for p in sys.path[1:] if p]  # this process's view, less its script directory
    return tuple(str(p) for p in entries if isinstance(p, str) and p)


def prefixes() -> list[Path]:
    """The interpreter's installation folders (a venv's and the one it was made from)."""
    found = {_real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    return sorted(found)


def worker_python(keep_out: Iterable[Path], extra: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """``(path, dirs)``: the worker's ``sys.path`` entries taken from this environment, in
    order, then ``extra`` (packages installed for the submission alone, ``grade
    --install-declared``: plain entries, never site directories, so no ``.pth`` file in them is
    processed), and the directories its private root must show read-only (those entries, the
    installation folders and the interpreter's own directory).

    ``keep_out`` are folders whose contents the worker must not see (the harness checkout,
    the submission, the folders holding them). An entry that holds one of them is left out;
    an entry inside one is left out too, unless it lies inside an installation folder (a
    ``.venv`` in the checkout: its site-packages yes, the checkout's tests no). An entry
    that is itself a checkout of the harness (it holds ``grading.yaml`` or ``reference/``) is
    always left out."""
    keep = [_real(p) for p in keep_out]
    installs = prefixes()
    path: list[str] = []
    for entry in environment_path():
        real = _real(entry)
        if not real.exists() or str(real) in path:
            continue
        if any(_within(k, real) for k in keep):
            continue  # "/", a home directory, the checkout itself (editable installs)
        if (real / "grading.yaml").exists() or (real / "reference").is_dir():
            continue  # another checkout of the harness (an editable install of a sibling)
        if any(_within(real, k) for k in keep) and not any(_within(real, p) for p in installs):
            continue
        path.append(str(real))
    path += [str(_real(e)) for e in extra if str(_real(e)) not in path]
    exe = Path(sys.executable)
    dirs = {*(p for p in path if os.path.isdir(p)), *map(str, installs), str(exe.parent.resolve()), str(_real(exe).parent)}
    return path, sorted(dirs, key=len)
