"""The implementation under test, seen through ``adapters.py``.

Tests never import a submission directly: they hold an :class:`Implementation`, call its
adapters by name, and get back plain data checked against the shape each adapter promises.
Tokenizer objects stay on the implementation's side and are used through handles, so the
same tests run whether the code runs in this process (``LocalBackend``, for students' own
``pytest`` runs and debuggers) or in an isolated worker process (for grading).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from . import local_names
from . import values as V
from .breaker import Breaker
from .call_text import note_call
from .dispatch import Broken, Dispatcher, OwnPackage, import_adapters
from .in_progress import CallInProgress
from .python_version import import_hint
from .registry import ADAPTERS, METHODS
from .stand_ins import each_step_within, serving

ROOT = Path(__file__).resolve().parent.parent
IMPL_ENV = "BPE_IMPL"  # "student" (default) or "reference": the package adapters.py uses

class Backend(Protocol):
    """Runs adapters and methods of returned objects; returns plain data or handle ids."""

    label: str
    facts: dict[str, object]  # how the submission was loaded: layout, left_out, stand_ins

    def call(self, adapter: str, args: tuple, returns_handle: bool) -> Any: ...

    def method(self, handle: int, name: str, args: tuple) -> Any: ...

    def stream(self, handle: int, name: str, chunks: Iterable[str]) -> Iterator[Any]: ...

    def probe(self, probe: str, handle: int | None, args: tuple) -> Any: ...


class BrokenImplementation(AssertionError, Broken):
    """``adapters.py`` (or what it imports) could not be loaded at all."""


def load_adapters(impl: str = "student", root: Path | str | None = None, facts: dict | None = None,
                  packages: str | None = None) -> ModuleType:
    """Load the adapters file of ``root`` (default: this repository; ``adapters.py``, or
    ``tests/adapters.py`` in a CS336-layout repository) with ``BPE_IMPL=impl``. ``packages``:
    a folder of packages installed for the submission (``grade --install-declared``), put last on
    ``sys.path`` (a plain entry: no ``.pth`` file in it is processed). Packages it
    imports that are neither in ``root`` nor installed get stand-ins (:mod:`harness.stand_ins`),
    which the submission keeps and this process's other imports never see.
    For a submission, ``facts`` gets its ``layout`` and ``stand_ins`` (the names stood in).

    Each call makes a fresh module object, so the student's and the reference's adapters
    can be used side by side in one process.
    """
    from .submission import detect_layout, graded_names

    root = Path(root or ROOT).resolve()
    layout = detect_layout(root)
    if layout is None:
        raise BrokenImplementation(f"no adapters.py (nor tests/adapters.py) in {root}")
    if root != ROOT:  # this process's own modules stay its own; an earlier submission's go
        names = local_names.SubmissionNames(root, impl)
        names.keep_test_side()
        local_names.forget_earlier_submissions(root, layout.packages)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    if packages and packages not in sys.path:
        sys.path.append(packages)
    previous = os.environ.get(IMPL_ENV)
    os.environ[IMPL_ENV] = impl
    try:
        module, missing = import_adapters(str(root), layout.adapters, f"adapters_{impl}", scoped=True,
                                          only=graded_names(root, impl))
    except Exception as err:  # the submission's own import-time error, reported as such
        message = V.describe_import_error(err, base=str(root)) + import_hint(root)
        raise BrokenImplementation(f"{layout.adapters} could not be imported: {message}") from None
    finally:
        if previous is None:
            os.environ.pop(IMPL_ENV, None)
        else:
            os.environ[IMPL_ENV] = previous
    if facts is not None and (impl != "reference" or root != ROOT):
        facts.update(layout=layout.describe(), stand_ins=missing)
        folder = os.path.dirname(layout.adapters)  # "tests" in a CS336 layout: its name is the submission's
        facts["own_folder"] = (str(root), folder.split("/")[0]) if folder else None
        if root != ROOT:
            facts["not_its_own"] = names.not_its_own()
    return module


class LocalBackend:
    """Runs the implementation in this process: prints, breakpoints and tracebacks work."""

    def __init__(self, impl: str = "student", root: Path | str | None = None, packages: str | None = None) -> None:
        self.label = impl
        self.impl, self.root = impl, root
        self.facts: dict[str, object] = {}  # how the submission was loaded (see load_adapters)
        self._own: OwnPackage | None = None  # its folder as its package, once known (_own_folder)
        self.dispatch = Dispatcher(functools.partial(load_adapters, impl, root, facts=self.facts, packages=packages))

    @property
    def adapters(self) -> ModuleType:
        return self.dispatch.adapters

    def _stand_ins(self) -> list[str]:
        """The packages the submission's stand-ins stand for (its adapters loaded first: a
        :class:`~harness.dispatch.Broken` propagates as the call itself would raise it)."""
        __tracebackhide__ = True
        self.dispatch.adapters
        found = self.facts.get("stand_ins")
        return list(found) if isinstance(found, list) else []

    def _own_folder(self) -> contextlib.AbstractContextManager:
        """While the submission's code runs: its adapters' folder (``tests`` in a CS336 layout)
        is the package of that name, as where its author runs it and in the isolated worker,
        for code that imports ``tests.common`` only when called (:class:`harness.dispatch.
        OwnPackage`, one for the backend; nothing to do for other layouts)."""
        found = self.facts.get("own_folder")
        if not found:
            return contextlib.nullcontext()
        if self._own is None:
            self._own = OwnPackage(*found)
        return self._own.active()

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        """Where the submission's code runs here: its stand-ins served, its own folder its package."""
        with serving(self._stand_ins()), self._own_folder():
            yield

    def call(self, adapter: str, args: tuple, returns_handle: bool) -> Any:
        __tracebackhide__ = True
        with self._running():
            return self.dispatch.call(adapter, args, returns_handle)

    def method(self, handle: int, name: str, args: tuple) -> Any:
        __tracebackhide__ = True
        with self._running():
            return self.dispatch.method(handle, name, args)

    def stream(self, handle: int, name: str, chunks: Iterable[str]) -> Iterator[Any]:
        __tracebackhide__ = True
        items = self.dispatch.stream(handle, name, chunks)
        if self._stand_ins() or self.facts.get("own_folder"):  # else no step costs a context
            return each_step_within(items, self._running)
        return items

    def probe(self, probe: str, handle: int | None, args: tuple) -> Any:
        with self._running():
            return self.dispatch.probe(probe, handle, args)

    def forget(self, handle: int) -> None:
        """Nothing holds object ``handle`` any longer: let it go."""
        self.dispatch.objects.pop(handle, None)


def _record(impl: "Implementation", call: tuple, outcome: Any) -> None:
    """Hand a call of the submission and its outcome (result or exception) to the
    implementation's recorder, if it has one (:class:`harness.recording.CallLog`)."""
    if impl.recorder is not None and impl.label != "reference":
        impl.recorder(call, outcome)


class Handle:
    """An object living on the implementation's side (a tokenizer), used by method name."""

    def __init__(self, impl: "Implementation", handle: int, kind: str, made_by: str, recipe: tuple = ()) -> None:
        self._impl, self._handle, self._kind, self._made_by = impl, handle, kind, made_by
        self._recipe = recipe or (made_by, ())  # (adapter, args) that made the object

    def _function(self, name: str) -> str:
        """How the breaker names method ``name`` of this object."""
        return f"{self._made_by}(...).{name}"

    def _told(self, name: str) -> str:
        """How a student is told of a call of method ``name`` of this object."""
        return f"{name}(...) of the tokenizer from adapters.{self._made_by}(...)"

    def _call(self, name: str, *args: Any) -> Any:
        __tracebackhide__ = True
        self._impl.starting(self._function(name))
        try:
            with CallInProgress(self._told(name)):
                value = self._impl.backend.method(self._handle, name, args)
        except BaseException as err:
            self._impl.ended(self._function(name), err)
            note_call(err, f"{name}", args, f" of the tokenizer from adapters.{self._made_by}(...)")
            if isinstance(err, Exception):
                _record(self._impl, ("method", self._recipe, name, args), err)
            raise
        self._impl.ended(self._function(name), None)
        with CallInProgress(self._told(name), running=False):
            _record(self._impl, ("method", self._recipe, name, args), value)
            V.wrong_result(f"{name}(...)", METHODS[self._kind][name], value)
        return value

    def encode(self, text: str) -> list[int]:
        __tracebackhide__ = True
        return self._call("encode", text)

    def decode(self, ids: list[int]) -> str:
        __tracebackhide__ = True
        return self._call("decode", ids)

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        __tracebackhide__ = True
        function = self._function("encode_iterable")
        checking = CallInProgress(self._told("encode_iterable"), running=False)
        self._impl.starting(function)
        try:
            with CallInProgress(checking.name):  # while the test holds an item, no call runs
                for i, item in enumerate(self._impl.backend.stream(self._handle, "encode_iterable", iterable)):
                    with checking:
                        V.INT.check(item, f"encode_iterable(...) item {i}")
                    yield item
        except GeneratorExit:  # the test stopped reading: the call ended normally
            self._impl.ended(function, None)
            raise
        except BaseException as err:
            self._impl.ended(function, err)
            raise
        self._impl.ended(function, None)

    def probe(self, probe: str, *args: Any) -> Any:
        function = self._function("encode_iterable")  # the probes stream through encode_iterable
        self._impl.starting(function)
        try:
            with CallInProgress(self._told("encode_iterable")):
                value = self._impl.backend.probe(probe, self._handle, args)
        except BaseException as err:
            self._impl.ended(function, err)
            raise
        self._impl.ended(function, None)
        return value

    def __repr__(self) -> str:
        whose = "the reference's " if self._impl.label == "reference" else ""  # a submission's: its adapters.py
        return f"<{self._kind} from {whose}adapters.{self._made_by}(...)>"


class AdapterCall(functools.partial):
    """``impl.run_compression_ratio``: calls that adapter. Its repr is the adapter's name, so
    that a failing ``assert impl.run_compression_ratio(text, ids) == 5.5`` is explained as
    ``where 0.18 = run_compression_ratio('hello world', [1, 2])``, not through
    ``functools.partial(<bound method Implementation.call of impl>, ...)``."""

    def __repr__(self) -> str:
        return self.args[0]


class Implementation:
    """Adapters by name, with every result checked: ``impl.run_merge([1, 2], (1, 2), 3)``."""

    def __init__(self, backend: Backend, recorder: Callable[[tuple, Any], None] | None = None,
                 breaker: Breaker | None = None) -> None:
        self.backend = backend
        self.label = backend.label
        self.recorder = recorder  # gets each call and its outcome, for the known-bug diagnosis
        self.breaker = breaker  # stops calling a function that ran into a limit on tests in a row

    def starting(self, function: str) -> None:
        """A call to ``function`` is about to be made (:class:`~harness.breaker.NotCalled`
        if the breaker no longer calls it)."""
        __tracebackhide__ = True
        if self.breaker is not None:
            self.breaker.check(function)

    def ended(self, function: str, error: BaseException | None) -> None:
        """A call to ``function`` returned (``error`` None) or raised ``error``."""
        if self.breaker is not None:
            self.breaker.ended(function, error)

    def call(self, adapter: str, *args: Any) -> Any:
        __tracebackhide__ = True
        spec = ADAPTERS[adapter]
        self.starting(adapter)
        try:
            with CallInProgress(f"adapters.{adapter}(...)"):
                value = self.backend.call(adapter, args, spec.handle is not None)
        except BaseException as err:
            self.ended(adapter, err)
            note_call(err, f"adapters.{adapter}", args)
            if spec.handle is None and isinstance(err, Exception):
                _record(self, ("call", adapter, args), err)
            raise
        self.ended(adapter, None)
        if spec.handle is not None:
            made = Handle(self, value, spec.handle, adapter, (adapter, args))
            forget = getattr(self.backend, "forget", None)
            if forget is not None:  # what the backend keeps for this object goes with it
                weakref.finalize(made, forget, value)
            return made
        with CallInProgress(f"adapters.{adapter}(...)", running=False):
            _record(self, ("call", adapter, args), value)
            V.wrong_result(f"adapters.{adapter}(...)", spec.shape, value)
        return value

    def __repr__(self) -> str:
        """The name of its fixture: what a failing Hypothesis example shows for it (an
        address would differ in every run)."""
        return "ref" if self.label == "reference" else "impl"

    def __getattr__(self, name: str) -> Any:
        if name in ADAPTERS:
            return AdapterCall(self.call, name)
        raise AttributeError(name)

    def probe(self, probe: str, *args: Any) -> Any:
        return self.backend.probe(probe, None, args)

    def ready(self) -> None:
        """Where this implementation runs in a worker, start one now if none runs (a speed
        test's timed call must not include a worker's start: an earlier test may have ended
        the last one); in-process, nothing to do."""
        __tracebackhide__ = True
        ready = getattr(self.backend, "ready", None)
        if ready is not None:
            ready()

    def start_afresh(self) -> None:
        """Where this implementation runs in a worker, a new one now, holding nothing of earlier
        calls (its tokenizers are made again there when used): a speed test's timed run must
        not find what earlier tests left in the submission's memory, a cache keyed by the
        content of a file an earlier test trained on, say; in-process, nothing to do."""
        __tracebackhide__ = True
        restart = getattr(self.backend, "restart", None)
        if restart is not None:
            restart()
        self.ready()

    def paused(self) -> contextlib.AbstractContextManager[int | None]:
        """A context in which no process of this implementation runs: where it runs in a
        worker, every process of the worker is stopped until the block ends. It yields how
        many processes were stopped, or None in-process (there is nothing to stop)."""
        pause = getattr(self.backend, "paused", None)
        return pause() if pause is not None else contextlib.nullcontext(None)
