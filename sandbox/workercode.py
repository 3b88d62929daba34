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

import importlib.machinery
import importlib.util
import marshal
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


# each shipped module's bytecode, made once a process (rel path -> .pyc bytes)
_BYTECODE: dict[Path, bytes] = {}
CHECKED_HASH = 0b11  # a .pyc's flags (PEP 552): validated by the hash of its source, checked at import


def bytecode_path(module: Path) -> Path:
    """Where Python looks for ``module``'s bytecode when no pycache prefix is set (the worker's case)."""
    return module.parent / "__pycache__" / f"{module.stem}.{sys.implementation.cache_tag}.pyc"


def checked_bytecode(rel: Path, code_dir: Path = CODE_DIR) -> bytes | None:
    """The checked-hash ``.pyc`` of ``code_dir/rel``: the hash of its source and the code
    object this process's import system gives for it, read from its bytecode cache when that
    is up to date (the modules the grader imports itself) and compiled otherwise. None when
    the source changed meanwhile or cannot be read (the worker then compiles it itself)."""
    source = code_dir / rel
    name = ".".join(rel.with_suffix("").parts)
    try:
        data = source.read_bytes()
        code = importlib.machinery.SourceFileLoader(name, str(source)).get_code(name)
        if source.read_bytes() != data:
            return None
    except (OSError, SyntaxError, ImportError):
        return None
    return importlib.util.MAGIC_NUMBER + CHECKED_HASH.to_bytes(4, "little") + importlib.util.source_hash(data) + marshal.dumps(code)


def ship(dest: Path) -> None:
    """Copy :func:`shipped_files` into ``dest`` (the folder the worker puts on its path), each
    with its bytecode beside it (:func:`checked_bytecode`, made once a process): the worker's
    import compares it with the source it lies beside, whatever the files' times. The worker
    writes no bytecode (``-B``), so without it it compiled every module it imports at each
    start (0.04 s); compiling them all here cost each grading process 0.11 s, reading the
    cache it imports from 0.02 s (2026-11-26)."""
    for rel in shipped_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CODE_DIR / rel, target)
        if rel not in _BYTECODE:
            pyc = checked_bytecode(rel)
            if pyc is None:
                continue
            _BYTECODE[rel] = pyc
        cached = bytecode_path(target)
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(_BYTECODE[rel])
