"""The isolated worker runs from private copies of a few modules (``WORKER_FILES``), with
nothing else of the harness on its path: whatever those modules import, at the top or
inside a function, must be one of those copies or in the standard library; otherwise the
worker fails to start, or fails on the first request that reaches the import."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from sandbox.process import WORKER_FILES

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = set(WORKER_FILES)
COPIED = {f"{package}.{name.removesuffix('.py')}" for package, names in WORKER_FILES.items() for name in names}


def imported_modules(package: str, source: str) -> set[str]:
    """Dotted names of the modules ``source`` (a module of ``package``) imports anywhere."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package if node.level else (node.module or "")
            if node.level and node.module:
                base = f"{package}.{node.module}"
            for alias in node.names:  # ``from pkg import mod`` imports a module, ``from mod import name`` a name
                candidate = f"{base}.{alias.name}"
                is_module = (ROOT / Path(*candidate.split("."))).with_suffix(".py").is_file()
                found.add(candidate if is_module else base)
    return found


@pytest.mark.parametrize("path", [f"{p}/{n}" for p, names in WORKER_FILES.items() for n in names])
def test_a_worker_module_imports_only_the_standard_library_and_other_worker_modules(path):
    package = path.split("/")[0]
    for module in imported_modules(package, (ROOT / path).read_text(encoding="utf-8")):
        top = module.partition(".")[0]
        if top in PACKAGES:
            assert module in COPIED or module in PACKAGES, f"{path} imports {module}, which the worker has no copy of"
        else:
            assert top in sys.stdlib_module_names or top == "__future__", f"{path} imports {module}, not in the standard library"
