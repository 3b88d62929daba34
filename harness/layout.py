"""A submission's layout: where its adapters file is, and which of its folders is the code graded.

Layouts (:func:`detect_layout`):

* ``stubs``: ``adapters.py`` and the ``student/`` package, as handed out;
* ``own package``: ``adapters.py`` edited to call the student's own package(s);
* ``adapters only``: ``adapters.py`` and nothing else it imports;
* ``CS336``: no top-level ``adapters.py`` but ``tests/adapters.py`` beside a package such as
  ``cs336_basics/`` (Stanford CS336's assignment repositories); adapters it lacks count as
  not implemented.

The code graded is what the adapters file imports (``import cs336_basics``, ``from student
import X``, ``importlib.import_module("student")``: read from its source, never run) among the
submission's top-level folders, ``src/`` packages and modules: a repository's other folders of
Python files (``scripts/``, ``data/``, ``docs/``) are not taken for it. When the adapters name
none of them, the folders that can be the solution are the candidates, named as such when
there are several.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

from .printable import printable

PACKAGES_SHOWN = 8  # packages named in a layout's description
SKIP_DIRS = frozenset({  # left out of the copy graded and of every walk of a submission (harness.submission)
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".ipynb_checkpoints", "node_modules", "__MACOSX", ".eggs", ".idea", ".vscode", "wandb",
    ".hypothesis",  # the examples and Unicode tables Hypothesis keeps where the student ran the public tests
})
# folders a repository keeps beside its solution: never a candidate unless the adapters import them
NOT_SOLUTION = frozenset({
    "tests", "test", "scripts", "script", "bin", "tools", "data", "datasets", "docs", "doc", "notebooks", "examples",
    "benchmarks", "bench", "experiments", "configs", "outputs", "logs", "checkpoints", "results", "assets", "figures",
    "fixtures", "writeup", "runs", "src",
})
NOT_MODULES = frozenset({"adapters", "conftest", "setup", "noxfile", "tasks"})  # top-level files never the solution


@dataclass(frozen=True)
class Layout:
    """Where a submission's ``adapters.py`` is and what it looks like: ``packages``, every
    top-level folder of Python files; ``graded``, the folders (``src/x``) and modules (``x.py``)
    it grades (None: ``packages``); ``told``: whether the adapters name them (else they are the
    candidates)."""

    kind: str  # "stubs", "own package", "adapters only", "CS336"
    adapters: str  # path of the adapters file, relative to the submission ("tests/adapters.py")
    packages: tuple[str, ...] = ()  # top-level packages beside it
    graded: tuple[str, ...] | None = None
    told: bool = True

    def describe(self) -> str:
        """``CS336 layout (tests/adapters.py, package cs336_basics/)`` and the like."""
        graded = self.packages if self.graded is None else self.graded
        if not graded:
            return f"{self.kind} layout ({self.adapters})"
        shown = [printable(p, 60) + ("" if p.endswith(".py") else "/") for p in graded[:PACKAGES_SHOWN]]
        more = len(graded) - PACKAGES_SHOWN
        names = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
        if not self.told:
            return f"{self.kind} layout ({self.adapters}, which imports none of its folders by name: candidates {names})"
        modules = all(p.endswith(".py") for p in graded)
        noun = ("module" if modules else "package") + ("" if len(graded) == 1 else "s")
        return f"{self.kind} layout ({self.adapters}, {noun} {names})"


def packages(root: Path) -> tuple[str, ...]:
    """The top-level folders of ``root`` holding Python files (``tests/`` and caches aside)."""
    names = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return ()
    for entry in entries:
        if entry.name in SKIP_DIRS or entry.name.startswith(".") or entry.name == "tests":
            continue
        try:
            if entry.is_dir(follow_symlinks=False) and (
                os.path.isfile(os.path.join(entry.path, "__init__.py"))
                or any(n.endswith(".py") for n in os.listdir(entry.path))
            ):
                names.append(entry.name)
        except OSError:
            continue
    return tuple(names)


def _importable(root: Path, folders: tuple[str, ...]) -> dict[str, str]:
    """Top-level import name -> how the layout shows it: ``root``'s folders (``mycode``), its
    ``src/`` packages (``src/cs336_basics``) and its modules (``bpe.py``)."""
    found = {name: name for name in folders if name.isidentifier()}
    src = root / "src"
    if src.is_dir() and not src.is_symlink():
        for name in packages(src):
            if name.isidentifier() and (src / name / "__init__.py").is_file():
                found.setdefault(name, f"src/{name}")
    for path in sorted(root.glob("*.py")):
        if path.stem.isidentifier() and path.stem not in NOT_MODULES and not path.is_symlink():
            found.setdefault(path.stem, path.name)
    return found


def statement_imports(node: ast.AST) -> list[str]:
    """The top-level names an ``import`` or absolute ``from ... import`` statement imports
    (``import a.b, c``: ``a``, ``c``); nothing for any other node."""
    if isinstance(node, ast.Import):
        return [alias.name.partition(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module.partition(".")[0]]
    return []


def imported_names(adapters: Path) -> list[str]:
    """The top-level names the adapters file imports, in order: absolute ``import`` and ``from``
    statements, and the string constants given to ``importlib.import_module`` or
    ``__import__`` (``import_module(os.environ.get("BPE_IMPL", "student"))``: ``student``).
    Read from its source (1 MB at most), never run; nothing if it cannot be read."""
    try:
        if adapters.stat().st_size > 1_000_000:
            return []
        tree = ast.parse(adapters.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        names += statement_imports(node)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("import_module", "__import__"):
            names += [c.value.partition(".")[0] for arg in node.args for c in ast.walk(arg)
                      if isinstance(c, ast.Constant) and type(c.value) is str]
    return list(dict.fromkeys(names))


def graded_code(root: Path, adapters: str, folders: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """``(graded, told)``: what of ``root`` the adapters file ``adapters`` imports, told; else
    the folders that can be the solution (not :data:`NOT_SOLUTION`'s), as candidates when
    several (told when one)."""
    importable = _importable(root, folders)
    imported = [importable[n] for n in imported_names(root / adapters) if n in importable]
    if imported:
        return tuple(sorted(imported)), True
    candidates = tuple(f for f in folders if f not in NOT_SOLUTION)
    return candidates, len(candidates) <= 1


def detect_layout(root: Path | str) -> Layout | None:
    """The layout of the submission in ``root``; None when it has no adapters file at all
    (neither ``adapters.py`` nor ``tests/adapters.py``). Links are not followed."""
    root = Path(root)
    folders = packages(root)
    if (root / "adapters.py").is_file() and not (root / "adapters.py").is_symlink():
        graded, told = graded_code(root, "adapters.py", folders)
        kind = "stubs" if "student" in graded and told else "own package" if graded else "adapters only"
        return Layout(kind, "adapters.py", folders, graded, told)
    tests = root / "tests"
    if tests.is_dir() and not tests.is_symlink() and (tests / "adapters.py").is_file() and not (tests / "adapters.py").is_symlink():
        graded, told = graded_code(root, "tests/adapters.py", folders)
        return Layout("CS336", "tests/adapters.py", folders, graded, told)
    return None
