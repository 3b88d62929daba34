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
looks for ``numpy`` in ``sys.modules``). Processes the submission starts with
``multiprocessing``'s ``spawn`` or ``forkserver`` method get the same stand-ins from a folder
on disk, last on their ``sys.path``, while they serve here (:func:`_publish`); the stand-in
objects themselves are :mod:`harness.stand_in_objects`.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import shutil
import sys
import contextlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from . import stand_in_objects as objects
from .proc_folders import made_folder, process_folder
from .stand_in_objects import FINDER, StandInModule
from .submission import nested_module, package_imports

MAX_MISSING = 16  # different missing packages tolerated in one submission
PREFIX = "bpe-stand-ins-"  # this process's stand-ins folder, for the processes the submission spawns
ON_DISK_MODULE = "_bpe_stand_in_objects"  # harness.stand_in_objects, as the stand-ins folder holds it
ON_DISK_INIT = (f"# A stand-in for a package missing where grading runs (harness/stand_ins.py wrote it)\n"
                f"import {ON_DISK_MODULE}\n\n{ON_DISK_MODULE}.adopt(__name__)\n")
_SOURCE = Path(objects.__file__).read_text(encoding="utf-8")  # read now: the worker imports this before dropping privileges
_written: dict[str, tuple[str, ...]] = {}  # stand-ins folder -> the packages written there


def _folder() -> str:
    """This process's stand-ins folder (made once per process, a forked one too;
    :func:`harness.proc_folders.process_folder`: removed at exit, or by a later process when
    this one ended without running ``atexit``), holding :data:`ON_DISK_MODULE`."""
    folder = str(process_folder(PREFIX))
    if folder not in _written:
        with open(os.path.join(folder, ON_DISK_MODULE + ".py"), "w", encoding="utf-8") as f:
            f.write(_SOURCE)
        _written[folder] = ()
    return folder


def _publish() -> None:
    """The stand-ins of :data:`FINDER`'s packages also on disk, for the processes the
    submission starts with ``multiprocessing``'s ``spawn`` or ``forkserver`` method: new
    interpreters get this process's ``sys.path``, not its ``sys.meta_path``, so without them a
    child importing the submission's package (``import torch`` in its ``__init__.py``, a
    training pool's workers) failed, and the pool waiting for it hung. Each package is a folder
    of this process's stand-ins folder, last on ``sys.path``, whose ``__init__.py`` makes the
    stand-in (:func:`harness.stand_in_objects.adopt`); in this process the same module answers
    (registered as :data:`ON_DISK_MODULE`), so a stand-in is the same whichever finder is asked."""
    if not FINDER.packages:
        return
    folder = _folder()
    sys.modules[ON_DISK_MODULE] = objects
    wanted = tuple(FINDER.packages)
    if _written[folder] != wanted:
        for entry in os.listdir(folder):  # an earlier submission's
            if entry not in wanted and entry != ON_DISK_MODULE + ".py":
                shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)
        for package in wanted:
            os.makedirs(os.path.join(folder, package), exist_ok=True)
            with open(os.path.join(folder, package, "__init__.py"), "w", encoding="utf-8") as f:
                f.write(ON_DISK_INIT)
        _written[folder] = wanted
        importlib.invalidate_caches()
    if folder not in sys.path:
        sys.path.append(folder)


def _off_path() -> list[str]:
    """``sys.path`` without this process's stand-ins folder."""
    own = made_folder(PREFIX)
    return [p for p in sys.path if own is None or p != str(own)]


def _installed(package: str) -> bool:
    try:  # never the stand-ins folder's copy
        return importlib.machinery.PathFinder.find_spec(package, _off_path()) is not None or package in sys.builtin_module_names
    except (ImportError, ValueError):
        return False


def _withdraw() -> None:
    """Take the stand-ins out of this process's imports: the finder off ``sys.meta_path``, the
    stand-ins folder off ``sys.path``, the stand-in modules out of ``sys.modules`` (the
    submission keeps the ones it holds)."""
    while FINDER in sys.meta_path:
        sys.meta_path.remove(FINDER)
    sys.path[:] = _off_path()
    if sys.modules.get(ON_DISK_MODULE) is objects:
        del sys.modules[ON_DISK_MODULE]
    for name in FINDER.made:
        if isinstance(sys.modules.get(name), StandInModule):
            del sys.modules[name]
    FINDER.made.clear()
    FINDER.packages.clear()


def unguarded_missing(root: str, only: tuple[str, ...] | None = None) -> list[str]:
    """The missing top-level packages (neither in ``root`` nor installed) that the submission
    in ``root`` (``only``: these top-level names of it) imports somewhere unguarded
    (:func:`harness.submission.package_imports`), sorted, at most :data:`MAX_MISSING`."""
    found = package_imports(root, only=only)
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
    code, for the processes it spawns too (:func:`_publish`); afterwards they leave this
    process's imports again (the submission keeps those it holds). Nothing at all for no packages."""
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
        _publish()
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


def import_tolerating_missing(load: Callable[[], Any], root: str, *, scoped: bool = False,
                              only: tuple[str, ...] | None = None) -> tuple[Any, list[str]]:
    """``load()`` (which imports the submission in folder ``root``) with a stand-in for each
    missing package the submission imports unguarded (:func:`unguarded_missing`), retried
    with one for each other missing top-level package its import stumbles on that is not the
    submission's own. Returns the module and the packages stood in. Whatever ``load`` raises
    otherwise propagates.

    ``scoped`` (a submission imported into a process that has other work, the test process
    of an in-process run): once ``load`` ends, however it ends, the stand-ins leave the
    process's imports (:func:`_withdraw`): an import of a missing package by anyone else
    fails as it would without them, and the submission's calls get them back through
    :func:`serving`. Otherwise (the isolated worker, which runs nothing else) they stay.
    Either way, while they serve, processes the submission spawns get them too (:func:`_publish`).
    ``only``: the top-level names of ``root`` that are the submission (the harness's own
    checkout: :func:`harness.submission.graded_names`)."""

    root = os.path.realpath(root)

    def own(package: str) -> bool:
        return os.path.isdir(os.path.join(root, package)) or os.path.isfile(os.path.join(root, package + ".py"))

    def submitted(module: Any) -> bool:
        origin = getattr(module, "__file__", None)
        return origin is None or os.path.realpath(origin).startswith(root + os.sep)

    if FINDER not in sys.meta_path:
        sys.meta_path.append(FINDER)  # last: only for what nothing else can import
    for package in unguarded_missing(root, only):  # its import fails for sure without one: at any time
        if package not in FINDER.packages:
            FINDER.packages.append(package)
    FINDER.importing = True
    try:
        while True:
            _publish()
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
