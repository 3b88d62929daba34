"""The stand-in modules and objects themselves (:mod:`harness.stand_ins` decides when they serve).

Self-contained on purpose: it imports nothing but the standard library and nothing of the
harness, because a process the submission starts with ``multiprocessing``'s ``spawn`` or
``forkserver`` method (a new interpreter: it gets ``sys.path``, not ``sys.meta_path``) loads a
copy of this file from the stand-ins folder :mod:`harness.stand_ins` writes, last on its path:
there each stood-in package is a folder whose ``__init__.py`` calls :func:`adopt`, so the
child's imports of the submission's package (``import torch`` in its ``__init__.py``) work as
in the process that started it, and its stand-ins behave the same way.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any


def missing_message(package: str) -> str:
    return (
        f"No module named '{package}': your code uses '{package}', which is neither in your "
        "submission nor installed where grading runs"
    )


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self.packages: list[str] = []
        self.importing = True  # while the submission is imported, stand-ins may be called
        self.made: list[str] = []  # the stand-in modules made, for harness.stand_ins' withdraw

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname.partition(".")[0] in self.packages:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = StandInModule(spec.name)
        module.__path__ = []
        module.__finder__ = self
        self.made.append(spec.name)
        return module

    def exec_module(self, module) -> None:
        pass


FINDER = Finder()


def in_import() -> bool:
    """Whether a module is being imported (the submission's adapters, or a module its code
    imports in a call): then a stand-in may be called, and is not yet used for what it stands for."""
    return FINDER.importing or import_running()


class StandInType(type):
    """The metaclass of every stand-in: any name read from a stand-in module is a class of it.

    A class, not an instance, because annotation libraries the submission has really installed
    take the names of a stood-in package as types: jaxtyping's ``Float[Tensor, "d_in"]`` (the
    real jaxtyping, installed for a CS336 repository, over a stand-in ``torch``) calls
    ``issubclass(Tensor, ...)``, which refused an instance with ``TypeError: issubclass() arg 1
    must be a class`` and failed the import of every model module annotated that way. A class
    of the submission's deriving from a stand-in (``class Linear(nn.Module)``) is a plain class,
    the stand-ins left out of its bases, as before."""

    def __new__(mcls, name: str, bases: tuple, namespace: dict, **kwargs: Any):
        if namespace.get("__stand_in__"):  # made by stand_in()
            return super().__new__(mcls, name, bases, namespace)
        kept = tuple(b for b in bases if not isinstance(b, StandInType)) or (object,)
        return types.new_class(name, kept, kwargs, lambda ns: ns.update(namespace))

    def __getattr__(cls, attr: str) -> "StandInType":
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        child = stand_in(f"{cls._name}.{attr}")
        type.__setattr__(cls, attr, child)  # the same object each time it is read, as a real module's
        return child

    def _unavailable(cls) -> ModuleNotFoundError:
        package = cls._name.partition(".")[0]
        return ModuleNotFoundError(missing_message(package), name=package)

    def __call__(cls, *args: Any, **kwargs: Any) -> "StandInType":
        if not in_import():
            raise cls._unavailable()
        return stand_in(f"{cls._name}()")

    # What a stand-in made at import time (``RichHandler(level="INFO")`` added to a logger) meets
    # later, when the code runs: compared (``record.levelno >= handler.level``), counted, iterated,
    # added to or turned into a number, it fails naming its package, as a call does, never with
    # a TypeError about a class of the harness. While the submission is imported, comparisons and
    # arithmetic stay unsupported (TypeError, as before) and iteration is refused instead of
    # running forever through ``__getitem__``.
    def _operand(cls, other: Any) -> Any:
        if in_import():
            return NotImplemented
        raise cls._unavailable()

    __lt__ = __le__ = __gt__ = __ge__ = _operand
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _operand
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _operand

    def _conversion(cls) -> Any:
        if in_import():
            raise TypeError(f"{cls!r} cannot be iterated, counted or converted")
        raise cls._unavailable()

    __iter__ = __len__ = __int__ = __float__ = __index__ = _conversion

    def __bool__(cls) -> bool:  # true, as any object (``__len__`` above would otherwise decide)
        return True

    def __getitem__(cls, key: Any) -> "StandInType":
        return cls

    def __or__(cls, other: Any) -> "StandInType":
        return cls

    __ror__ = __or__

    def __repr__(cls) -> str:
        return f"<stand-in for {cls._name}: not installed>"


def stand_in(name: str) -> StandInType:
    """A stand-in for ``name`` (``torch.nn.Module``), read from a stand-in module."""
    short = name.rpartition(".")[2].replace("()", "") or name
    return StandInType(short, (), {"__stand_in__": True, "_name": name, "__module__": name.partition(".")[0],
                                   "__qualname__": short})


class StandInModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        child = stand_in(f"{self.__name__}.{attr}")
        setattr(self, attr, child)  # the same object each time it is read, as a real module's
        return child


def import_running() -> bool:
    """Whether a module is being imported (a frame of the import system is on the stack): the
    module-level code of one the submission imports in a call may use a stand-in as its
    adapters' may."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def adopt(package: str) -> None:
    """Called by the ``__init__.py`` of top-level package ``package`` in the stand-ins folder,
    while it is imported: the stand-in module takes its place (its submodules served by
    :data:`FINDER`, put last on ``sys.meta_path`` in a process that has not got it yet, a
    spawned one, where stand-ins may then be called only while a module is imported, as in
    the process that started it once the submission is imported)."""
    if FINDER not in sys.meta_path:
        FINDER.importing = False
        sys.meta_path.append(FINDER)
    if package not in FINDER.packages:
        FINDER.packages.append(package)
    sys.modules[package] = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(package, FINDER, is_package=True))
