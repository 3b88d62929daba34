"""What of this project the isolated worker runs: whole packages, copied into its sandbox.

The worker starts ``sandbox.worker`` (:data:`ENTRY`) from a private copy of the packages in
:data:`PACKAGES`, with nothing else of this checkout on its path. Whole packages, every
module in them, not a list of the modules the worker happens to import today: a new import
between modules of these packages can never leave the worker without a module. Only these
two layers: the layers above them (``grader``, ``mutants``), the graded suite (``tests``)
and the solution (``reference``) are never copied, and the hiding rules
(:mod:`sandbox.hiding`) keep their originals out of the worker's sight.
"""

from __future__ import annotations

import py_compile
import shutil
import sys
from pathlib import Path

CODE_DIR = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "sandbox")  # the student-side harness and the sandbox, nothing above
ENTRY = "sandbox.worker"  # the module the worker's bootstrap imports


def shipped_files(code_dir: Path = CODE_DIR) -> list[Path]:
    """Every Python module of :data:`PACKAGES` (sub-packages included, caches not), as paths
    relative to ``code_dir``."""
    return sorted(
        path.relative_to(code_dir)
        for package in PACKAGES
        for path in (code_dir / package).rglob("*.py")
        if "__pycache__" not in path.parts
    )


# each shipped module's bytecode, compiled once a process (rel path -> .pyc bytes)
_BYTECODE: dict[Path, bytes] = {}


def bytecode_path(module: Path) -> Path:
    """Where Python looks for ``module``'s bytecode when no pycache prefix is set (the worker's case)."""
    return module.parent / "__pycache__" / f"{module.stem}.{sys.implementation.cache_tag}.pyc"


def ship(dest: Path) -> None:
    """Copy :func:`shipped_files` into ``dest`` (the folder the worker puts on its path), each
    with its bytecode beside it: a checked-hash ``.pyc`` (the worker's import compares it with
    the source it lies beside, whatever the files' times), compiled once a process. The worker
    writes no bytecode (``-B``), so it compiled every module it imports at each start (0.04 s)."""
    for rel in shipped_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CODE_DIR / rel, target)
        cached = bytecode_path(target)
        if rel in _BYTECODE:
            cached.parent.mkdir(exist_ok=True)
            cached.write_bytes(_BYTECODE[rel])
            continue
        try:
            py_compile.compile(str(target), cfile=str(cached), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            _BYTECODE[rel] = cached.read_bytes()
        except (py_compile.PyCompileError, OSError):  # the worker compiles it itself, as before
            pass
