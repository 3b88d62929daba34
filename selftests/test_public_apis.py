"""The project uses its dependencies through their public interfaces: no module of the
project (tests included, the selftests' hostile submissions aside) imports a dependency's
private internals (a module path with an ``_underscored`` part, such as ``_pytest.*``, or an
``internal`` one), read from the source with ``ast``. The standard library's own underscored
modules are the interpreter's, not a dependency's. The one exception is named with its reason."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("harness", "sandbox", "grader", "mutants", "reference", "tests", "bench", "student")
IMPORTERS = {"import_module", "importorskip", "__import__"}  # calls taking a module name
# module -> why; the test fails on any other private import, and when a listed one is gone
KNOWN = {
    "hypothesis.internal.conjecture": "harness/plugin.py: Hypothesis has no public "
    "setting to stop drawing constants from the local modules imported so far (in-process and "
    "isolated runs would get different examples); guarded, skipped where it moved",
    "_pytest.assertion": "harness/bounded.py: pytest runs its own explanation of a failed comparison "
    "beside ours and has no public way to skip it; on 26 MB of lines or a million items it takes 6-12 s "
    "(pytest 9.2, measured in CI). Guarded: any layout it cannot read gets pytest's own, slower, message",
}


def is_private(module: str) -> bool:
    parts = module.split(".")
    if parts[0] in OURS or parts[0] in sys.stdlib_module_names:
        return False
    return any(p == "internal" or (p.startswith("_") and not p.startswith("__")) for p in parts)


def imported_names(path: Path) -> list[tuple[str, int]]:
    """(module, line) of every import in a file: statements, and calls of ``import_module``,
    ``importorskip`` or ``__import__`` with a constant name."""
    found = []
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in IMPORTERS and isinstance(node.args[0].value, str):
                found.append((node.args[0].value, node.lineno))
    return found


def private_imports(root: Path, folders: tuple[str, ...] = OURS) -> dict[str, list[str]]:
    """Private module -> "file:line" of each import of it under the given folders."""
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            for module, line in imported_names(path):
                if is_private(module):
                    found.setdefault(module, []).append(f"{path.relative_to(root)}:{line}")
    return found


def test_no_module_imports_a_dependencys_private_internals():
    found = private_imports(ROOT)
    unknown = {m: where for m, where in found.items() if m not in KNOWN}
    assert not unknown, f"private internals of dependencies imported: {unknown}"
    assert set(KNOWN) <= set(found), f"listed as known but no longer imported (remove): {set(KNOWN) - set(found)}"


@pytest.mark.parametrize("source", [
    "import _pytest.config",
    "from _pytest.assertion import util",
    "from hypothesis.internal.conjecture import providers",
    "import importlib\nimportlib.import_module('_pytest.config')",
    "import pytest\npytest.importorskip('_pytest.assertion.util')",
])
def test_checker_flags_a_planted_private_import(tmp_path, source):
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "planted.py").write_text(source + "\n", encoding="utf-8")
    assert list(private_imports(tmp_path, ("harness",)).values()) == [[f"harness/planted.py:{source.count(chr(10)) + 1}"]]


@pytest.mark.parametrize("source", ["import _thread", "from __future__ import annotations",
                                    "import pytest", "from harness import _private_helper"])
def test_checker_accepts_the_standard_library_and_public_modules(tmp_path, source):
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "fine.py").write_text(source + "\n", encoding="utf-8")
    assert private_imports(tmp_path, ("harness",)) == {}
