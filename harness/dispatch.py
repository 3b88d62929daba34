"""Running requests against a submission's ``adapters.py``: the one dispatcher behind both
backends (in this process, :class:`harness.impl.LocalBackend`; in the isolated worker,
:class:`sandbox.worker.Worker`), and the one way to import the adapters file.

Imports only the standard library and harness modules that do the same: the isolated worker
runs it from its private copy of the harness and the sandbox (``selftests/test_worker_files.py``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from . import values as V
from .own_metadata import provide
from .registry import ADAPTERS, method_shape
from .stand_ins import import_tolerating_missing


def arguments(fn: Callable[..., Any], args: tuple | list, names: tuple[str, ...]) -> tuple[tuple, dict[str, Any]]:
    """How to pass ``args`` to ``fn``: by ``names`` (CS336's keywords, in order) if its
    signature takes them so, else positionally (a signature that cannot be read, or renamed
    parameters).

    >>> arguments(lambda *, b, a: None, [1, 2], ("a", "b")), arguments(lambda x, y: None, [1, 2], ("a", "b"))
    (((), {'a': 1, 'b': 2}), ((1, 2), {}))
    """
    if not names or len(args) > len(names):
        return tuple(args), {}
    named = dict(zip(names, args))
    try:
        inspect.signature(fn).bind(**named)
    except Exception:  # renamed or missing parameters; no signature to read (a builtin, a broken __signature__)
        return tuple(args), {}
    return (), named


class Broken(Exception):
    """``adapters.py`` (or what it imports) could not be loaded; raised again on every request."""


def import_adapters(code_dir: str, adapters: str, module_name: str, *, register: bool = False,
                    scoped: bool = False, only: tuple[str, ...] | None = None) -> tuple[ModuleType, list[str]]:
    """Import ``code_dir/adapters`` as a fresh module named ``module_name`` (also put in
    ``sys.modules`` when ``register``), with stand-ins for packages it imports that are
    neither in ``code_dir`` nor installed, its ``src/`` folder on the path when it holds packages
    (kept out of this process's imports afterwards when
    ``scoped``: an in-process run), and the submission's own package metadata
    (:func:`harness.own_metadata.provide`, from its ``pyproject.toml``); ``only``: the top-level
    names of ``code_dir`` whose imports are read (the harness's own checkout: the package in
    use and ``adapters.py``, as an isolated worker gets them). Returns the module and
    those packages' names; the submission's own import-time errors propagate for the caller
    to describe."""
    path = os.path.join(code_dir, adapters)
    provide(code_dir)
    src = os.path.join(code_dir, "src")  # a "src layout": installed, its packages import from there
    if src not in sys.path and os.path.isdir(src) and any(os.path.isfile(os.path.join(src, d, "__init__.py")) for d in os.listdir(src)):
        sys.path.insert(sys.path.index(code_dir) + 1 if code_dir in sys.path else 0, src)
    folder = os.path.dirname(adapters)  # "tests" in a CS336 layout: its relative imports must work

    def load() -> ModuleType:
        name = module_name
        if folder:  # a package of its own name standing for the folder (never the harness's `tests`)
            package = types.ModuleType(f"_{module_name}_{folder.replace('/', '_')}")
            package.__path__ = [os.path.join(code_dir, folder)]
            for stale in [m for m in sys.modules if m.startswith(package.__name__ + ".")]:  # an earlier submission's
                del sys.modules[stale]
            sys.modules[package.__name__] = package
            name = f"{package.__name__}.{os.path.basename(adapters).removesuffix('.py')}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        if register:
            sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module

    if not (scoped and folder):
        return import_tolerating_missing(load, code_dir, scoped=scoped, only=only)
    with OwnPackage(code_dir, folder.split("/")[0]).active():
        return import_tolerating_missing(load, code_dir, scoped=scoped, only=only)


def _is_under(module: ModuleType, folder: str) -> bool:
    origin = getattr(module, "__file__", None) or ""
    paths = list(getattr(module, "__path__", None) or ())
    return any(os.path.realpath(p).startswith(folder + os.sep) or os.path.realpath(p) == folder for p in [origin, *paths] if p)


class OwnPackage:
    """While a submission's adapters import, or an adapter runs (its code may import a module
    that imports ``tests.common`` only when called), in a process with other work (in-process grading),
    ``top`` (``tests`` in a CS336 layout) names the submission's own folder, as it does where
    the submission runs and in the isolated worker, not the package of that name this process
    imported (the harness's ``tests``): ``from tests.common import X`` gets the submission's
    ``tests/common.py``. Afterwards this process's modules of that name are back, and the
    submission keeps what it bound. Its modules of that name are kept between activations
    (each step of an in-process stream is one): made once, not again at every step."""

    def __init__(self, code_dir: str, top: str) -> None:
        self.top, self.folder = top, os.path.realpath(os.path.join(code_dir, top))
        self.theirs: dict[str, ModuleType] = {}
        self.others: weakref.WeakSet[ModuleType] = weakref.WeakSet()  # modules seen not to be its (no realpath again)

    def _names(self) -> list[str]:
        """The names of ``top`` and its submodules in ``sys.modules`` (a scan at every
        activation: kept to one C-level test per module)."""
        top, dotted = self.top, self.top + "."
        return [m for m in sys.modules if m.startswith(top) and (m == top or m.startswith(dotted))]

    def _other(self, module: ModuleType) -> bool:
        if module not in self.others:
            if _is_under(module, self.folder):
                return False
            self.others.add(module)
        return True

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        ours = {m: sys.modules[m] for m in self._names() if self._other(sys.modules[m])}
        for name in ours:
            del sys.modules[name]
        try:
            sys.modules.update(self.theirs)
            if self.top not in sys.modules and os.path.isdir(self.folder):  # found first even where an entry of
                init = os.path.join(self.folder, "__init__.py")  # sys.path later holds a regular package of that name
                if os.path.isfile(init):
                    spec = importlib.util.spec_from_file_location(self.top, init, submodule_search_locations=[self.folder])
                    package = sys.modules[self.top] = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(package)
                else:
                    package = sys.modules[self.top] = types.ModuleType(self.top)
                    package.__path__ = [self.folder]
            yield
        finally:
            self.theirs = {m: sys.modules.pop(m) for m in self._names()}
            sys.modules.update(ours)


def close(items: Iterator[Any]) -> None:
    """Close a submission's iterator if it can be closed; whatever that raises is ignored."""
    method = getattr(items, "close", None)
    if method is not None:
        try:
            method()
        except BaseException:
            pass


class Dispatcher:
    """The adapters module (imported by ``load`` on first use; a :class:`Broken` it raises is
    kept and raised again) and the objects its adapters returned, kept under handles.

    ``to_plain`` turns results into plain data (:func:`harness.values.to_plain`; the worker
    passes a variant that skips copying what it serializes at once)."""

    def __init__(self, load: Callable[[], ModuleType], to_plain: Callable[..., Any] = V.to_plain) -> None:
        self._load = load
        self._module: ModuleType | None = None
        self._broken: Broken | None = None
        self.to_plain = to_plain
        self.objects: dict[int, Any] = {}
        self.made = 0  # objects made so far

    @property
    def adapters(self) -> ModuleType:
        """The loaded adapters module; :class:`Broken` if it could not be loaded."""
        __tracebackhide__ = True
        if self._broken is not None:
            raise self._broken
        if self._module is None:
            try:
                self._module = self._load()
            except Broken as err:
                self._broken = err
                raise
        return self._module

    def call(self, adapter: str, args: tuple | list, returns_handle: bool) -> Any:
        """``adapters.<adapter>(*args)``: plain data, or a new handle to the object returned."""
        __tracebackhide__ = True
        fn = getattr(self.adapters, adapter, None)
        if not callable(fn):
            raise NotImplementedError(f"adapters.{adapter} is missing from adapters.py")
        spec = ADAPTERS.get(adapter)
        if spec is not None and spec.pathlib:
            args = [Path(a) if i in spec.pathlib and isinstance(a, (str, os.PathLike)) else a for i, a in enumerate(args)]
        positional, named = arguments(fn, args, spec.keywords if spec is not None else ())
        result = fn(*positional, **named)
        if returns_handle:
            self.made += 1
            handle = self.made  # never a handle given before, even after some were forgotten
            self.objects[handle] = result
            return handle
        return self.to_plain(result, f"adapters.{adapter}(...)", spec.shape if spec is not None else None)

    def bound(self, handle: int, name: str) -> Callable[..., Any]:
        """Method ``name`` of the object under ``handle``; NotImplementedError if it has none."""
        __tracebackhide__ = True
        obj = self.objects[handle]
        fn = getattr(obj, name, None)
        if not callable(fn):
            raise NotImplementedError(f"{type(obj).__qualname__}.{name} is missing")
        return fn

    def method(self, handle: int, name: str, args: tuple | list) -> Any:
        """``obj.<name>(*args)`` for the object under ``handle``, as plain data."""
        __tracebackhide__ = True
        return self.to_plain(self.bound(handle, name)(*args), f"{name}(...)", method_shape(name))

    def iterate(self, handle: int, name: str, chunks: Iterable[str]) -> Iterator[Any]:
        """``iter(obj.<name>(chunks))`` for the object under ``handle``: its items as they
        come, each to go through :meth:`plain_item` (the worker's stream loop, where a
        generator in between would cost a switch per id)."""
        __tracebackhide__ = True
        return iter(self.bound(handle, name)(chunks))

    def plain_item(self, item: Any, name: str, index: int) -> Any:
        """Item ``index`` of stream ``name`` as plain data."""
        __tracebackhide__ = True
        shape = method_shape(name)
        return item if type(item) is int else self.to_plain(item, f"{name}(...) item {index}", getattr(shape, "item", None))

    def stream(self, handle: int, name: str, chunks: Iterable[str]) -> Iterator[Any]:
        """The items of ``obj.<name>(chunks)`` as plain data, one by one; closing this
        iterator closes the object's."""
        __tracebackhide__ = True
        items = self.iterate(handle, name, chunks)
        try:
            for i, item in enumerate(items):
                yield self.plain_item(item, name, i)
        finally:
            close(items)

    def probe(self, probe: str, handle: int | None, args: tuple | list) -> Any:
        """:mod:`harness.probes` function ``probe`` on the object under ``handle`` (or on the
        adapters module), as plain data."""
        __tracebackhide__ = True
        from . import probes

        target = self.objects[handle] if handle is not None else self.adapters
        return self.to_plain(getattr(probes, probe)(target, *args), f"probe {probe}")
