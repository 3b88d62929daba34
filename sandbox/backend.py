"""The trusted side's backend for one implementation: :class:`WorkerBackend` runs its
``adapters.py`` in an isolated worker (:mod:`sandbox.process`), one at a time, reused across
tests and started afresh after a death, a timeout or a restart (tokenizers made in a worker
that ended are made again, the same way, in the next one)."""

from __future__ import annotations

import contextlib
import io
import secrets
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness import submission as S
from harness.impl import ROOT, BrokenImplementation

from . import hiding, proctree, registry
from .argcache import ArgumentCache, change_in_place
from .channel import default_spin, encode
from .closing import ClosedFolders
from .failures import WorkerDied, WorkerFailure, signal_name
from .forbidden import FORBIDDEN_MODULES
from .limits import IsolationLimits
from .paths import PathArguments
from .process import WorkerProcess
from .pyenv import worker_python
from .spec import Startup, WorkerSpec
from .stream import Stream
from .student_errors import student_error


def _draw_rid() -> int:
    return secrets.randbits(52) + 1  # exact in every JSON reader


class WorkerBackend:
    """A :class:`~harness.impl.Backend` that runs ``adapters.py`` in an isolated worker."""

    def __init__(
        self,
        impl: str = "student",
        root: Path | str | None = None,
        limits: IsolationLimits | None = None,
        *,
        label: str | None = None,
        hide: Iterable[Path | str] = (),
        drop_privileges: bool = True,
        spin: float | None = None,
        private_root: bool = True,
        forbidden: Iterable[str] | None = None,
        namespaces: bool = True,
        hash_seed: int | None = None,
        packages: str | Path | None = None,
    ) -> None:
        self.package = impl
        # modules the worker cannot import (grading.yaml forbidden_modules; None: the defaults)
        self.forbidden = list(FORBIDDEN_MODULES if forbidden is None else forbidden)
        self.private_root = private_root  # False: as in a container that refuses mount namespaces
        self.namespaces = namespaces  # False: not root and no user namespaces, as where the kernel refuses them
        self.hash_seed = hash_seed  # the workers' PYTHONHASHSEED: their sets' order the same every run
        self.packages = str(Path(packages).resolve()) if packages else None  # grade --install-declared's, last on its path
        self.label = label or impl
        self.source_root = Path(root or ROOT).resolve()
        self._only = S.graded_names(self.source_root, impl)
        if self._only is not None:  # this checkout: only adapters.py and the package in use
            self.layout = S.Layout("stubs", "adapters.py", (impl,))
        else:  # a submission: all of it, wherever its adapters.py is
            self.layout = S.detect_layout(self.source_root) or S.Layout("no adapters", "adapters.py")
        self._copy_error: str | None = None
        self.facts: dict[str, object] = {}  # how the submission was loaded: layout, left_out, stand_ins
        self.confinement: str | None = None  # how its last started worker is isolated (for reports)
        self.limits = limits or IsolationLimits()
        self.drop_privileges = drop_privileges
        self.spin = spin  # None: default_spin, decided as each worker starts
        self.extra_hide = [Path(p) for p in hide]
        self._proc: WorkerProcess | None = None
        self._generation = 0
        self._deaths: dict[int, str] = {}
        self._handles: dict[int, tuple[int, int]] = {}  # our handle -> (generation, worker's)
        self._recipes: dict[int, tuple[str, tuple]] = {}  # our handle -> (adapter, args) that made it
        self._handle_counter = 0
        self._unmakeable: set[int] = set()  # handles whose making again in a fresh worker failed
        self._rid = 0
        self._rid_next = _draw_rid()  # request ids are unpredictable: see _new_rid
        self._stream: Stream | None = None
        self._lock = threading.RLock()
        self._args = ArgumentCache()
        self._start_failures = 0  # starts in a row that failed
        self._start_failure: str | None = None
        self._paths = PathArguments()
        self._python: tuple[list[str], list[str]] | None = None
        self._folders = ClosedFolders()  # closed to other users by its workers: given back by close()
        registry.LIVE.add(self)

    # -- paths the worker must not see --

    def keep_out(self) -> list[Path]:
        """Folders whose contents the worker must never see (:func:`sandbox.hiding.keep_out`)."""
        return hiding.keep_out(self.source_root, self.extra_hide)

    def python(self) -> tuple[list[str], list[str]]:
        """The worker's ``sys.path`` from this environment, then the packages installed for the
        submission, and the directories it needs (:func:`sandbox.pyenv.worker_python`), computed once per backend."""
        if self._python is None:
            self._python = worker_python(self.keep_out(), [self.packages] if self.packages is not None else [])
        return self._python

    def _spec(self) -> WorkerSpec:
        """What the next worker starts from."""
        python_path, python_dirs = self.python()
        return WorkerSpec(
            package=self.package, source_root=self.source_root, only=self._only, adapters=self.layout.adapters,
            limits=self.limits, forbidden=tuple(self.forbidden), drop_privileges=self.drop_privileges,
            private_root=self.private_root, namespaces=self.namespaces, spin=default_spin() if self.spin is None else self.spin,
            hidden=tuple(self.extra_hide), python_path=tuple(python_path), python_dirs=tuple(python_dirs),
            hash_seed=self.hash_seed,
        )

    # -- the worker's life --

    def _worker(self) -> WorkerProcess:
        __tracebackhide__ = True
        if self._proc is None or not self._proc.alive():
            if self._proc is not None:
                self._retire()
            if self._start_failure is not None and self._start_failures >= 2:
                raise BrokenImplementation(self._start_failure)
            if self._copy_error is not None:
                raise BrokenImplementation(self._copy_error)
            self._generation += 1
            self._proc = self._start(WorkerProcess(self._spec(), self._generation, self._folders))
            self._start_failures = 0
        return self._proc

    def _start(self, proc: WorkerProcess) -> WorkerProcess:
        """Start ``proc`` and keep what it learned, also when it failed (what was left out of
        the copy may say why adapters.py could not be imported)."""
        __tracebackhide__ = True
        try:
            proc.start()
        except S.SubmissionError as err:
            # a submission too big to copy is broken, once and for all (not re-walked for every test)
            self._copy_error = str(err)
            raise BrokenImplementation(self._copy_error) from None
        except WorkerFailure as err:
            # dying or hanging while importing adapters.py happens again on every start:
            # after the second time the submission counts as broken, without more restarts
            self._start_failures += 1
            self._start_failure = f"adapters.py could not be imported: {err}"
            raise BrokenImplementation(self._start_failure) from None
        finally:
            self._learn(proc.learned)
        return proc

    def _learn(self, learned: Startup) -> None:
        """Keep what a worker's start found out: how it is isolated (for reports) and, for a
        submission (not this checkout's student/ or reference/), how it was loaded."""
        if learned.confinement is not None:
            self.confinement = learned.confinement
        if self._only is not None:  # this checkout
            return
        if learned.left_out is not None:
            self.facts["left_out"] = list(learned.left_out)
        if learned.loaded:
            self.facts["layout"] = self.layout.describe()
            if learned.stand_ins is not None:
                self.facts["stand_ins"] = list(learned.stand_ins)

    def _retire(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.death is None:
            code = proc.proc.poll()
            proc.death = f"exited with status {code}" if code is not None and code >= 0 else (
                f"died ({signal_name(-code)})" if code is not None else "stopped"
            )
        self._deaths[proc.generation] = proc.death
        proc.close()
        self._proc = None

    def ready(self) -> None:
        """Start a worker now if none runs, so that a timed call does not include its start."""
        __tracebackhide__ = True
        with self._lock:
            self._worker()

    def paused(self):
        """A context in which every process of the running worker is stopped (see
        :func:`sandbox.proctree.frozen`); it yields how many were stopped (0 if none runs)."""
        proc = self._proc
        if proc is None or not proc.alive():
            return contextlib.nullcontext(0)
        return proctree.frozen(proc.pid, proc.uid, init=proc.init_pid)

    def restart(self) -> None:
        """Stop the running worker (not a failure of the submission); its tokenizers are made
        again in the next one."""
        with self._lock:
            self._abort_stream()
            if self._proc is not None:
                self._proc.death = "was restarted"
                self._retire()

    def close(self) -> None:
        """Stop the worker and every process it left behind; remove its sandbox; give the
        folders its workers closed to other users their modes back (:mod:`sandbox.closing`)."""
        with self._lock:
            if self._proc is not None:
                self._retire()
            self._folders.release()
            registry.LIVE.discard(self)

    @property
    def process(self) -> WorkerProcess | None:
        """The worker started last, while it is this backend's (None before the first call,
        after a restart or close); a fresh one starts with the next call."""
        return self._proc

    @property
    def sandbox_info(self) -> dict:
        """What the running worker reported about its hardening (starts one if needed)."""
        return dict(self._worker().info)

    def output(self) -> str:
        proc = self._proc
        return "" if proc is None else bytes(proc.output).decode("utf-8", "replace")

    # -- requests --

    def _request(self, message: list, doing: str, args: list | None = None) -> Any:
        """Send ``message`` (with ``args`` and their cache references appended) and wait."""
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            proc = self._worker()
            rid = self._new_rid()
            mark = len(proc.output)
            refs, originals = None, args
            if args is not None:
                args, refs = self._args.split(args, proc.sent_keys)
                message = [*message[:-1], args, message[-1]] if message[0] == "call" else [*message, args]
            data = encode([message[0], rid, *message[1:]], refs)  # a TypeError here: nothing sent
            try:
                proc.send_encoded(data)
                reply = proc.recv(rid, self.limits.call_timeout, doing)
            except WorkerFailure as err:
                raise type(err)(proc.with_output(str(err), mark)) from None
            except BaseException:
                # interrupted (a test's timeout, Ctrl-C) between the request and the whole of
                # its reply: the request, the reply or the rest of either may still be in a
                # pipe, so the channel is out of step: the worker goes (its tokenizers are made
                # again in the next one), never leaving the next call a stale reply to read
                if proc.death is None:
                    proc.interrupted()
                raise
            return self._settle(reply, proc, mark, doing, originals)

    def _settle(self, reply: list, proc: WorkerProcess, mark: int, doing: str, originals: list | None) -> Any:
        __tracebackhide__ = True
        if reply[0] == "ok" and len(reply) == 3:
            return reply[2]
        if reply[0] == "ok" and len(reply) == 4 and originals is not None:
            change_in_place(originals, reply[3], proc)
            return reply[2]
        if reply[0] == "err" and len(reply) == 3 and type(reply[2]) is dict:
            raise student_error(reply[2], proc, mark)
        raise proc.violation(f"sent an unexpected reply {reply[0]!r}")

    def _resolve(self, handle: int) -> int:
        __tracebackhide__ = True
        generation, theirs = self._handles[handle]
        if generation != self._generation or self._proc is None or not self._proc.alive():
            if self._proc is not None and self._proc.generation == generation and not self._proc.alive():
                self._retire()
            why = self._deaths.get(generation, "was restarted")
            lost = f"the worker running your code {why} after this tokenizer was made, and the tokenizer died with it"
            if handle in self._unmakeable or handle not in self._recipes:
                raise WorkerDied(f"{lost}; making it again failed before")
            # another test's failure must not fail every later test sharing this tokenizer:
            # make it again, the same way, in a fresh worker (unless that fails)
            adapter, args = self._recipes[handle]
            try:
                fresh = self.call(adapter, args, True)
            except Exception as err:
                self._unmakeable.add(handle)
                raise WorkerDied(f"{lost}; making it again failed: {str(err)[:500]}") from None
            self._handles[handle] = self._handles.pop(fresh)
            self._recipes.pop(fresh, None)
            return self._handles[handle][1]
        return theirs

    # -- the Backend protocol --

    def call(self, adapter: str, args: tuple, returns_handle: bool) -> Any:
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            proc = self._worker()
            wire_args, copy_back = self._paths.rewrite(adapter, args, proc, self._rid_next)
            with self._paths.call(proc):
                value = self._request(["call", adapter, returns_handle], f"running adapters.{adapter}(...)", wire_args)
                if copy_back and self._proc is proc:
                    self._paths.copy_back(copy_back, proc, self.limits.copy_back_bytes, adapter)
            if returns_handle:
                if type(value) is not int:
                    raise proc.violation("sent a handle that is not an int")
                self._handle_counter += 1
                ours = self._handle_counter
                self._handles[ours] = (proc.generation, value)
                self._recipes[ours] = (adapter, args)
                return ours
            return value

    def forget(self, handle: int) -> None:
        """The test side no longer holds tokenizer ``handle``: its recipe (the arguments that
        made it, which may be the submission's own huge results) is not kept any longer.
        Called by a finalizer, at any point: one dict removal, no lock."""
        self._recipes.pop(handle, None)

    def method(self, handle: int, name: str, args: tuple) -> Any:
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            theirs = self._resolve(handle)
            return self._request(["method", theirs, name], f"running {name}(...)", list(args))

    def probe(self, probe: str, handle: int | None, args: tuple) -> Any:
        """Run a :mod:`harness.probes` function in the worker. The worker's own numbers cannot
        be trusted (it could stop tracemalloc or fake its result), so the peak resident
        memory is also read here from ``/proc/<pid>/status``: ``VmHWM`` is reset through
        ``/proc/<pid>/clear_refs`` before the probe and read after it, and ``VmRSS`` sampled
        meanwhile (the worker may reset ``VmHWM`` too where it may write that file:
        :class:`proctree.TreeMemory`); a dict result gets
        ``rss_peak`` (bytes the worker's resident memory grew above its size before the
        probe, plus the peak private memory of its other processes, sampled: a forked child
        doing the work counts), ``other_processes`` and ``rss_before``. Tests bounding memory should check ``rss_peak`` too."""
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            theirs = self._resolve(handle) if handle is not None else None
            proc = self._worker()
            wire_args, _ = self._paths.rewrite(f"probe:{probe}", args, proc, self._rid_next)
            before = self._reset_peak(proc)
            with self._paths.call(proc), proctree.TreeMemory(proc.pid, proc.uid, init=proc.init_pid) as others:
                # children doing the work count too
                value = self._request(["probe", probe, theirs, wire_args], f"running probe {probe}")
            peak = proc.peak_rss()
            if peak is not None:
                peak = max(peak, others.own_peak)  # a VmHWM reset from inside cannot undo a sample
            if type(value) is dict and before is not None and peak is not None:
                value["rss_before"] = before
                value["rss_peak"] = max(0, peak - before) + others.peak
                value["other_processes"] = others.processes
            return value

    def _new_rid(self) -> int:
        """The id of a new request. Drawn at random, so the worker cannot send the reply to a
        request before it is made (a reply prepared in advance, e.g. to beat a speed test, has
        the wrong id and is a protocol violation)."""
        self._rid, self._rid_next = self._rid_next, _draw_rid()
        return self._rid

    def _reset_peak(self, proc: WorkerProcess) -> int | None:
        try:
            with open(f"/proc/{proc.pid}/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current VmRSS (Linux >= 4.0)
        except OSError:
            return None
        kb = proctree.status_kb(proc.pid, "VmRSS")
        return None if kb is None else kb * 1024

    def stream(self, handle: int, name: str, chunks: Iterable[str]) -> Iterator[Any]:
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            theirs = self._resolve(handle)
            proc = self._proc
            self._new_rid()
            stream = Stream(proc, self._lock, self._rid, name)
            self._stream = stream
            try:
                # an open file given: the submission gets a file of the chunks there too (sandbox.chunkfile)
                proc.send(["stream", self._rid, theirs, name, isinstance(chunks, io.TextIOBase)])
            except WorkerFailure:
                self._stream = None
                raise
        return stream.run(iter(chunks))

    def _abort_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.abort()

