"""Top-level names a submission loaded in this process shares with the test process.

In-process (``--no-isolate``, ``pytest --submission``) the submission's folder goes first on
the test process's ``sys.path`` and both share one ``sys.modules``, so a top-level name both
have is one module for both. The isolated worker has the submission alone on its path: its
``regex.py`` is its ``regex`` there, and the tests' ``regex`` is the installed one.

:class:`SubmissionNames` decides who gets such a name in-process:

* this checkout's own packages (``harness``, ``tests``, ``fixtures``, ``reference``, ...:
  :func:`test_side_names`; a repository made from the handout holds its own ``harness/``,
  ``tests/`` and ``fixtures/``): always the test process's, imported from this checkout
  before the submission goes on the path, so that the hidden tests'
  ``from fixtures.generate import zipf_corpus`` never runs the submission's copy;
* a name the environment also provides (installed or standard: ``regex``, ``tiktoken``) that
  the submission's code does not import: the environment's, imported now, so that the tests'
  later import of it never finds the submission's file;
* one its code does import: whoever imports it first, as before; when that was not the
  submission, :meth:`SubmissionNames.not_its_own` names it, and grading says so in its notes
  (an isolated grading imports the submission's own).

:func:`forget_earlier_submissions` takes out of ``sys.modules`` only what an earlier
submission loaded in this process (or this checkout's ``student/`` stubs), never the test
process's own or installed modules.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

from . import ROOT
from .submission import SKIP_DIRS, package_imports

LOADED: set[str] = set()  # the submissions loaded in this process (their folders)
NOT_NAMES = frozenset({"adapters", "conftest", "setup"})  # top-level files that are no module of either side
# standard modules whose import does something (prints, opens a browser): never imported on a
# submission's behalf because it has a file of the name
LOUD_MODULES = frozenset({"this", "antigravity", "__hello__", "__phello__"})


def test_side_names(impl: str) -> set[str]:
    """This checkout's top-level packages and modules the test process imports itself: every
    one but ``impl``'s (the package graded, ``student``), ``adapters`` and the like."""
    names = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    names |= {p.stem for p in ROOT.glob("*.py")}
    return names - {impl} - NOT_NAMES


def top_level_names(root: Path) -> dict[str, str]:
    """The submission's top-level modules and regular packages (with an ``__init__.py``: a
    folder without one is a namespace package, which any module of its name anywhere on the path
    takes precedence over, isolated as in-process), each as a note shows it: ``regex.py``,
    ``harness/``; links, caches and ``adapters.py`` left out."""
    found: dict[str, str] = {}
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        try:
            if entry.is_symlink() or entry.name in SKIP_DIRS:
                continue
            if entry.is_file() and entry.name.endswith(".py") and entry.name[:-3].isidentifier():
                found.setdefault(entry.name[:-3], entry.name)
            elif entry.is_dir() and entry.name.isidentifier() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                found[entry.name] = entry.name + "/"
        except OSError:
            continue
    return {n: shown for n, shown in found.items() if n not in NOT_NAMES}


def _installed() -> tuple[str, ...]:
    """The folders of the standard library and of installed packages, as real paths."""
    paths = sysconfig.get_paths()
    return tuple(dict.fromkeys(os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths))


INSTALLED = _installed()


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(os.path.join(f, "")) for f in folders)


def _under(module: object, folder: str) -> bool:
    """Whether ``module`` was loaded from ``folder`` (its file, or a namespace package's path)."""
    file = getattr(module, "__file__", None)
    paths = [file] if file else list(getattr(module, "__path__", None) or ())
    return bool(paths) and all(_inside(p, (folder,)) for p in paths)


class SubmissionNames:
    """The top-level names of the submission in ``root`` (graded as package ``impl``) that the
    test process may share with it."""

    def __init__(self, root: Path, impl: str) -> None:
        self.root, self.impl = root, impl
        self.names = {n: s for n, s in top_level_names(root).items() if n != impl}
        self.own = test_side_names(impl)
        self.imports: set[str] = set()  # what its code imports: not read in its copies of this checkout's packages
        if self.names:
            mine = tuple(e for e in os.listdir(root) if e.removesuffix(".py") not in self.own)
            self.imports = {n for n, unguarded in package_imports(root, only=mine).items() if unguarded}

    def _environment_spec(self, name: str) -> importlib.machinery.ModuleSpec | None:
        """Where the environment (the standard library, the installed packages: never a folder
        a submission put on the path, its ``src/`` among them) has ``name``; None elsewhere."""
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, list(INSTALLED))
        except (ImportError, ValueError):
            return None
        return spec if spec is not None and spec.origin and _inside(spec.origin, INSTALLED) else None

    def keep_test_side(self) -> None:
        """Import now, from this checkout or the environment, each name the test process must
        keep (the module's docstring), before the submission goes on the path."""
        own = self.own
        for name in sorted(self.names):
            if name in sys.modules or (name not in own and (name in self.imports or name in LOUD_MODULES)):
                continue
            spec = (importlib.machinery.PathFinder.find_spec(name, [str(ROOT)]) if name in own
                    else self._environment_spec(name))
            inside = os.path.join(str(self.root), "")
            if spec is None or spec.loader is None or os.path.realpath(spec.origin or "").startswith(inside):
                continue
            module = sys.modules[name] = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(name, None)
                raise
        LOADED.add(str(self.root))

    def not_its_own(self) -> list[str]:
        """The submission's top-level modules its code imports (unguarded, outside its test
        files) that are not its own in this process (another module of that name was there
        first), as shown: ``regex.py``."""
        return [shown for name, shown in sorted(self.names.items())
                if name in self.imports and name in sys.modules and not _under(sys.modules[name], str(self.root))]


def forget_earlier_submissions(root: Path, packages: tuple[str, ...]) -> None:
    """Another submission's packages of the same names as ``root``'s (``packages``, and those
    of its ``src/``), loaded earlier in this process, and this checkout's own ``student``
    stubs: out of ``sys.modules``, so that ``root``'s are imported. Never the test process's
    own modules, nor installed or standard ones (a submission's ``regex/`` or ``harness/``
    folder took them away, and the test side's next import of them found the submission's)."""
    src = root / "src"  # a src layout's packages (harness.dispatch puts src/ on the path)
    own = {*packages, *(p.name for p in (src.iterdir() if src.is_dir() else ()) if (p / "__init__.py").is_file())}
    earlier = [str(ROOT / "student"), *(e for e in LOADED if e != str(root))]
    for name in [m for m in sys.modules if m.partition(".")[0] in own]:
        module = sys.modules[name]
        if not _under(module, str(root)) and any(_under(module, e) for e in earlier):
            del sys.modules[name]
