"""The isolated worker runs from a private copy of whole packages (:mod:`sandbox.workercode`),
with nothing else of this project on its path: every module it can reach from its entry
(``sandbox.worker``), through an import at the top or inside a function, must be in those
packages or in the standard library; otherwise the worker fails to start, or fails on the
first request that reaches the import. The layers above (``grader``, ``mutants``), the graded
suite and the solution are never in the copy.
"""

from __future__ import annotations

import ast
import marshal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox import workercode

ROOT = Path(__file__).resolve().parent.parent
NEVER_SHIPPED = ("grader", "mutants", "reference", "tests", "student", "fixtures", "selftests")


def module_file(root: Path, module: str) -> Path | None:
    """The source of dotted ``module`` under ``root`` (a module or a package), else None."""
    base = root / Path(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_modules(root: Path, module: str, source: str) -> set[str]:
    """Dotted names of the modules ``source`` (the text of ``module``) imports anywhere, relative
    imports resolved; ``from pkg import name`` counts ``pkg.name`` when that is a module, else ``pkg``."""
    here = module.split(".") if module_file(root, module).name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            parts = [*here[: len(here) - node.level + 1], *(node.module or "").split(".")] if node.level else (node.module or "").split(".")
            base = ".".join(p for p in parts if p)
            modules = {f"{base}.{alias.name}" for alias in node.names if module_file(root, f"{base}.{alias.name}")}
            found |= modules or {base}  # ``from pkg import mod`` imports pkg.mod (and pkg before it)
    return found


def with_parents(module: str) -> list[str]:
    """``a.b.c`` and the packages importing it runs first: ``a``, ``a.b``."""
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts) + 1)]


def reachable(root: Path, entry: str, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Each module of ``packages`` the worker can reach from ``entry``, with what it imports."""
    graph: dict[str, set[str]] = {}
    todo = with_parents(entry)
    while todo:
        module = todo.pop()
        if module in graph or module.partition(".")[0] not in packages or module_file(root, module) is None:
            continue
        graph[module] = imported_modules(root, module, module_file(root, module).read_text(encoding="utf-8"))
        todo += [m for imported in graph[module] for m in with_parents(imported)]
    return graph


def unshipped_imports(root: Path, entry: str, packages: tuple[str, ...]) -> list[str]:
    """``module imports other, ...`` for each import the worker's copy cannot satisfy."""
    problems = []
    for module, imports in sorted(reachable(root, entry, packages).items()):
        for imported in sorted(imports):
            top = imported.partition(".")[0]
            if top in packages:
                if module_file(root, imported) is None:
                    problems.append(f"{module} imports {imported}, which is no module of {top}")
            elif (root / top).is_dir():
                problems.append(f"{module} imports {imported}, outside the packages the worker gets {packages}")
            elif top not in sys.stdlib_module_names and top != "__future__":
                problems.append(f"{module} imports {imported}, not in the standard library")
    return problems


WORKER_MODULES = sorted(reachable(ROOT, workercode.ENTRY, workercode.PACKAGES))


def test_the_worker_reaches_its_dispatcher_and_values_from_its_entry():
    # the walk itself: it must see through relative, absolute and function-level imports
    assert {"sandbox.worker", "sandbox.channel", "harness.dispatch", "harness.values", "harness.probes"} <= set(WORKER_MODULES)


@pytest.mark.parametrize("module", WORKER_MODULES)
def test_a_module_the_worker_reaches_imports_only_shipped_modules_or_the_standard_library(module):
    problems = [p for p in unshipped_imports(ROOT, workercode.ENTRY, workercode.PACKAGES) if p.startswith(module + " ")]
    assert problems == []


PLANTED_BAD = {
    "an upper layer, inside a function": ("def f():\n    import grader.config\n", "harness.b imports grader.config, outside"),
    "an upper layer, relative import": ("from ..grader import config\n", "harness.b imports grader.config, outside"),
    "an installed package": ("import yaml\n", "harness.b imports yaml, not in the standard library"),
    "a module that does not exist": ("from .gone import x\n", "harness.b imports harness.gone, which is no module"),
}


def _plant(root: Path, b_source: str) -> Path:
    files = {
        "sandbox/__init__.py": "",
        "sandbox/worker.py": "import os\nfrom harness import a\n",
        "sandbox/backend.py": "import pytest\nimport grader.config\n",  # shipped, never reached by the worker
        "harness/__init__.py": "from pathlib import Path\n",
        "harness/a.py": "from . import b\n",
        "harness/b.py": b_source,
        "grader/__init__.py": "",
        "grader/config.py": "import yaml\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.mark.parametrize("case", list(PLANTED_BAD))
def test_the_check_reports_a_worker_module_importing_what_the_worker_has_no_copy_of(tmp_path, case):
    source, message = PLANTED_BAD[case]
    problems = unshipped_imports(_plant(tmp_path, source), "sandbox.worker", ("harness", "sandbox"))
    assert len(problems) == 1 and problems[0].startswith(message), problems


def test_the_check_accepts_the_standard_library_and_ignores_modules_the_worker_never_reaches(tmp_path):
    root = _plant(tmp_path, "import json\nfrom .a import b\n")
    assert unshipped_imports(root, "sandbox.worker", ("harness", "sandbox")) == []


def test_whole_packages_are_shipped_and_none_of_the_layers_above_nor_the_suite_or_solution():
    shipped = {Path(p) for p in workercode.shipped_files()}
    every = {p.relative_to(ROOT) for package in workercode.PACKAGES for p in (ROOT / package).rglob("*.py")
             if "__pycache__" not in p.parts}
    assert shipped == every
    assert {p.parts[0] for p in shipped} == set(workercode.PACKAGES)
    assert not set(workercode.PACKAGES) & set(NEVER_SHIPPED)


def test_each_shipped_module_has_bytecode_checked_against_the_source_beside_it(tmp_path):
    from importlib.util import source_hash

    for dest in (tmp_path / "first", tmp_path / "again"):  # compiled, then copied from this process's cache
        workercode.ship(dest)
        for rel in workercode.shipped_files():
            pyc = workercode.bytecode_path(dest / rel).read_bytes()
            flags = int.from_bytes(pyc[4:8], "little")
            assert flags == 0b11, f"{rel}: not a checked-hash .pyc (flags {flags:#b})"
            source = (dest / rel).read_bytes()
            assert pyc[8:16] == source_hash(source), f"{rel}: its bytecode is not of the source shipped"
            assert marshal.loads(pyc[16:]) == compile(source, str(dest / rel), "exec", dont_inherit=True), \
                f"{rel}: its bytecode is not the code of the source beside it"


def test_the_shipped_copy_alone_imports_every_module_the_worker_reaches(tmp_path):
    # -I -S: no site-packages, no current folder; the copy is the only code of this project
    workercode.ship(tmp_path)
    probe = textwrap.dedent(f"""
        import importlib, sys
        sys.path.insert(0, {str(tmp_path)!r})
        for name in {WORKER_MODULES!r}:
            importlib.import_module(name)
        ours = [n for n, m in sys.modules.items() if n.partition(".")[0] in {workercode.PACKAGES!r}]
        print(sorted(n for n in ours if not (getattr(sys.modules[n], "__file__", "") or "").startswith({str(tmp_path)!r})))
        """)
    done = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
