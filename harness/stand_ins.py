"""Stand-ins for packages a submission imports but the grading environment lacks.

CS336-style ``adapters.py`` files import ``torch``, ``numpy`` or ``jaxtyping`` at the top for
adapters this assignment never calls. :func:`import_tolerating_missing` imports such a file
with a stand-in module for each missing top-level package (one that is neither in the
submission nor installed): while the submission is being imported anything may be read,
subscripted, called or subclassed from it (annotations, decorators, base classes); once
it is imported, calling anything of it raises ``ModuleNotFoundError`` naming the package.
So a tokenizer that never touches ``torch`` is graded normally, and one that does fails
with one readable line. Used by the isolated worker and by in-process runs alike; in-process
(``scoped``) the stand-ins serve the submission's import only and never stay where the test
process's own imports would find them (``pytest.approx`` looks for ``numpy`` in
``sys.modules``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import Any

MAX_MISSING = 16  # different missing packages tolerated in one submission


def missing_message(package: str) -> str:
    return (
        f"No module named '{package}': your code uses '{package}', which is neither in your "
        "submission nor installed where grading runs"
    )


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self.packages: list[str] = []
        self.importing = True  # while the submission is imported, stand-ins may be called

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname.partition(".")[0] in self.packages:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StandInModule(spec.name)
        module.__path__ = []
        module.__finder__ = self
        return module

    def exec_module(self, module) -> None:
        pass


FINDER = _Finder()


class _StandIn:
    """Any name read from a stand-in module."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> "_StandIn":
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _StandIn(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> "_StandIn":
        if not FINDER.importing:
            raise ModuleNotFoundError(missing_message(self._name.partition(".")[0]), name=self._name.partition(".")[0])
        return _StandIn(f"{self._name}()")

    def __getitem__(self, key: Any) -> "_StandIn":
        return self

    def __or__(self, other: Any) -> "_StandIn":
        return self

    __ror__ = __or__

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (object,)

    def __repr__(self) -> str:
        return f"<stand-in for {self._name}: not installed>"


class _StandInModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _StandIn(f"{self.__name__}.{attr}")


def _installed(package: str) -> bool:
    try:
        return importlib.machinery.PathFinder.find_spec(package) is not None or package in sys.builtin_module_names
    except (ImportError, ValueError):
        return False


def _withdraw() -> None:
    """Take the stand-ins out of this process's imports: the finder off ``sys.meta_path``,
    the stand-in modules out of ``sys.modules`` (the submission keeps the ones it holds)."""
    while FINDER in sys.meta_path:
        sys.meta_path.remove(FINDER)
    for name in [n for n, m in list(sys.modules.items()) if isinstance(m, _StandInModule)]:
        del sys.modules[name]
    FINDER.packages.clear()


def import_tolerating_missing(load: Callable[[], Any], root: str, *, scoped: bool = False) -> tuple[Any, list[str]]:
    """``load()`` (which imports the submission in folder ``root``), retried with a stand-in
    for each missing top-level package that is not the submission's own. Returns the module
    and the packages stood in. Whatever ``load`` raises otherwise propagates.

    ``scoped`` (a submission imported into a process that has other work, the test process
    of an in-process run): once ``load`` ends, however it ends, the stand-ins leave the
    process's imports (:func:`_withdraw`): an import of a missing package by anyone else,
    or by the submission later, fails as it would without them."""
    import os

    root = os.path.realpath(root)

    def own(package: str) -> bool:
        return os.path.isdir(os.path.join(root, package)) or os.path.isfile(os.path.join(root, package + ".py"))

    def submitted(module: Any) -> bool:
        origin = getattr(module, "__file__", None)
        return origin is None or os.path.realpath(origin).startswith(root + os.sep)

    if FINDER not in sys.meta_path:
        sys.meta_path.append(FINDER)  # last: only for what nothing else can import
    FINDER.importing = True
    try:
        while True:
            before = set(sys.modules)
            try:
                module = load()
                return module, list(FINDER.packages)
            except ModuleNotFoundError as err:
                package = (err.name or "").partition(".")[0]
                if (not package or package in FINDER.packages or own(package) or _installed(package)
                        or "forbidden module" in str(err) or len(FINDER.packages) >= MAX_MISSING):
                    raise
                for name in set(sys.modules) - before:  # the half-imported submission goes (installed packages stay)
                    if submitted(sys.modules[name]):
                        del sys.modules[name]
                FINDER.packages.append(package)
    finally:
        FINDER.importing = False
        if scoped:
            _withdraw()
