"""Stand-ins for packages a submission imports but the grading environment lacks.

CS336-style ``adapters.py`` files import ``torch``, ``numpy`` or ``jaxtyping`` at the top for
adapters this assignment never calls, and often import the trainer inside ``run_train_bpe``,
whose module imports more (``sympy``, ``torch._dynamo``) that it never uses.
:func:`import_tolerating_missing` imports such a file with a stand-in module for each missing
top-level package (one that is neither in the submission nor installed) that the
submission's source imports somewhere unguarded (:func:`harness.submission.package_imports`:
outside a ``try`` catching ``ImportError``), and for any other one its import stumbles on.
Such an import would fail for sure without the stand-in, so the stand-in serves it at any
time, at the import of the adapters or in a call; a package imported only under an
``ImportError`` guard gets none, so the submission's fallback runs as it would in an
environment without it. While a module is being imported anything may be read,
subscripted, called or subclassed from a stand-in (annotations, decorators, base classes);
outside an import, calling anything of it raises ``ModuleNotFoundError`` naming the package.
A name that is a module of the submission below its root (``cs336_basics/helpers.py``
imported as ``helpers``) gets none either: that import fails where the submission's tests run
(its folder is not on the path), so it fails here too, saying how to import it.
So a tokenizer that never touches ``torch`` is graded normally, and one that does fails
with one readable line. Used by the isolated worker and by in-process runs alike; in-process
(``scoped``) the stand-ins serve the submission's own import and calls (:func:`serving`)
and never stay where the test process's own imports would find them (``pytest.approx``
looks for ``numpy`` in ``sys.modules``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import contextlib
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .submission import nested_module, package_imports

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
        self.made: list[str] = []  # the stand-in modules made, for _withdraw

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname.partition(".")[0] in self.packages:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StandInModule(spec.name)
        module.__path__ = []
        module.__finder__ = self
        self.made.append(spec.name)
        return module

    def exec_module(self, module) -> None:
        pass


FINDER = _Finder()


def _importing() -> bool:
    """Whether a module is being imported (the submission's adapters, or a module its code
    imports in a call): then a stand-in may be called, and is not yet used for what it stands for."""
    return FINDER.importing or _import_running()


class _StandIn:
    """Any name read from a stand-in module."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> "_StandIn":
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _StandIn(f"{self._name}.{attr}")

    def _unavailable(self) -> ModuleNotFoundError:
        package = self._name.partition(".")[0]
        return ModuleNotFoundError(missing_message(package), name=package)

    def __call__(self, *args: Any, **kwargs: Any) -> "_StandIn":
        if not _importing():
            raise self._unavailable()
        return _StandIn(f"{self._name}()")

    # What a stand-in made at import time (``RichHandler(level="INFO")`` added to a logger) meets
    # later, when the code runs: compared (``record.levelno >= handler.level``), counted, iterated,
    # added to or turned into a number, it fails naming its package, as a call does, never with
    # a TypeError about a class of the harness. While the submission is imported, comparisons and
    # arithmetic stay unsupported (TypeError, as before) and iteration is refused instead of
    # running forever through ``__getitem__``.
    def _operand(self, other: Any) -> Any:
        if _importing():
            return NotImplemented
        raise self._unavailable()

    __lt__ = __le__ = __gt__ = __ge__ = _operand
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _operand
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _operand

    def _conversion(self) -> Any:
        if _importing():
            raise TypeError(f"{self!r} cannot be iterated, counted or converted")
        raise self._unavailable()

    __iter__ = __len__ = __int__ = __float__ = __index__ = _conversion

    def __bool__(self) -> bool:  # true, as any object (``__len__`` above would otherwise decide)
        return True

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


def _import_running() -> bool:
    """Whether a module is being imported (a frame of the import system is on the stack): the
    module-level code of one the submission imports in a call may use a stand-in as its
    adapters' may."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


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
    for name in FINDER.made:
        if isinstance(sys.modules.get(name), _StandInModule):
            del sys.modules[name]
    FINDER.made.clear()
    FINDER.packages.clear()


def unguarded_missing(root: str) -> list[str]:
    """The missing top-level packages (neither in ``root`` nor installed) that the submission
    in ``root`` imports somewhere unguarded (:func:`harness.submission.package_imports`),
    sorted, at most :data:`MAX_MISSING`."""
    import os

    found = package_imports(root)
    return sorted(p for p, unguarded in found.items() if unguarded and p.isidentifier() and not _installed(p)
                  and not os.path.isdir(os.path.join(root, p)) and not os.path.isfile(os.path.join(root, p + ".py"))
                  and nested_module(root, p) is None)[:MAX_MISSING]


def own_module_message(package: str, path: str) -> str:
    """Why a module of the submission imported as a top-level one gets no stand-in."""
    dotted = path.removesuffix("/__init__.py").removesuffix(".py").replace("/", ".")
    return (f"No module named '{package}': the submission's {path} is imported as a top-level module, which it "
            f"is not where its tests run (its folder is not on the path); import it as {dotted}")


_depth = 0  # serving() blocks open


@contextlib.contextmanager
def serving(packages: Iterable[str]) -> Iterator[None]:
    """Stand-ins for ``packages`` (an in-process submission's, as
    :func:`import_tolerating_missing` returned them) while the block runs the submission's
    code; afterwards they leave this process's imports again (the submission keeps those it
    holds). Nothing at all for no packages."""
    global _depth
    packages = list(packages)
    if not packages or _depth:
        yield
        return
    _depth += 1
    FINDER.packages[:] = packages
    FINDER.importing = False
    sys.meta_path.append(FINDER)
    try:
        yield
    finally:
        _depth -= 1
        _withdraw()


def each_step_within(items: Iterator[Any], context: Callable[[], contextlib.AbstractContextManager]) -> Iterator[Any]:
    """The items of ``items``, each produced (the submission's code running) inside a fresh
    ``context()``; closing this closes ``items`` the same way."""
    items = iter(items)
    try:
        while True:
            with context():
                try:
                    item = next(items)
                except StopIteration:
                    return
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            with context():
                close()


def import_tolerating_missing(load: Callable[[], Any], root: str, *, scoped: bool = False) -> tuple[Any, list[str]]:
    """``load()`` (which imports the submission in folder ``root``) with a stand-in for each
    missing package the submission imports unguarded (:func:`unguarded_missing`), retried
    with one for each other missing top-level package its import stumbles on that is not the
    submission's own. Returns the module and the packages stood in. Whatever ``load`` raises
    otherwise propagates.

    ``scoped`` (a submission imported into a process that has other work, the test process
    of an in-process run): once ``load`` ends, however it ends, the stand-ins leave the
    process's imports (:func:`_withdraw`): an import of a missing package by anyone else
    fails as it would without them, and the submission's calls get them back through
    :func:`serving`. Otherwise (the isolated worker, which runs nothing else) they stay."""
    import os

    root = os.path.realpath(root)

    def own(package: str) -> bool:
        return os.path.isdir(os.path.join(root, package)) or os.path.isfile(os.path.join(root, package + ".py"))

    def submitted(module: Any) -> bool:
        origin = getattr(module, "__file__", None)
        return origin is None or os.path.realpath(origin).startswith(root + os.sep)

    if FINDER not in sys.meta_path:
        sys.meta_path.append(FINDER)  # last: only for what nothing else can import
    for package in unguarded_missing(root):  # its import fails for sure without one: at any time
        if package not in FINDER.packages:
            FINDER.packages.append(package)
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
                nested = nested_module(root, package)
                if nested is not None:  # fails where its tests run too: no stand-in, a clear line
                    err.msg = own_module_message(package, nested)
                    raise
                for name in set(sys.modules) - before:  # the half-imported submission goes (installed packages stay)
                    if submitted(sys.modules[name]):
                        del sys.modules[name]
                FINDER.packages.append(package)
    finally:
        FINDER.importing = False
        if scoped:
            _withdraw()
