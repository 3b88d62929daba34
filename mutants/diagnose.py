"""Feedback that names the bug: does a failing submission behave exactly like a known mutant?

``harness.impl`` records the submission's calls during each test (adapter or handle method,
arguments, outcome) when :mod:`mutants.plugin` asks. When a test fails, the grading plugin
asks that plugin, which calls :func:`diagnose` with the test's group (by the grading policy)
and its records: it replays the last few recorded calls
on the reference and on each catalogued mutant of the test's part (built once per session,
each under its own package name, loaded in this process), after the bugs earlier failures of
other parts matched (a pre-tokenization bug makes encode fail too, where an encode bug of
the part may fit the same case: the bug already found is the likelier cause). If every
call replayed gives the submission's exact outcome on a mutant (the calls where it disagrees
with the reference, and those where it agrees: an ASCII-only pre-tokenizer's wrong word ids
once fitted a word-tokenizer bug that also broke calls the submission got right), its
description is the answer, and the failure gets one more line:
``this matches a known bug: <description>`` (the grading plugin writes it). A small case can fit
several bugs alike (one hand-worked encode fits four): on small calls every other mutant of the
part is tried too, and each that fits is named after the first (``Or, alike on this case: ...``).

Cheap by construction: at most ``MAX_CALLS`` calls, inputs above ``MAX_INPUT`` skipped, and
a time budget per failure and per session, counted in this process's CPU time (the replays run
here): a loaded machine stretches the wall time of the same work, and must not change which
failures get a diagnosis (under a load of 25 the first diagnosis of a part, building its
mutants, took 0.9 s of CPU and 17 s of wall time). One mutant's replay may take at most
``REPLAY_MULTIPLE`` times the reference's plus ``REPLAY_FLOOR`` seconds of CPU, then it is
stopped (``SIGPROF``) and counts as not fitting: merges_cross_pretokens trains on whole lines
of a 500-merge case for 13 s, most of the failure's budget, and the bug that fitted, tried
after it, went unnamed once CI's load stretched the CPU time of the others. A bug an earlier
failure matched (tried first) is the exception: its replay may use what is left of the failure's
budget, as the submission's own code is that slow when it has this bug (merges_cross_pretokens
graded lost its own line on the 500-merge case to the limit). Any problem turns the feature off silently.
Off when ``BPE_DIAGNOSIS=0`` (the meta-test sets it) and in the student handout (no
``mutants/``, no ``reference/``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.breaker import TimeLost
from harness.proc_folders import own_folder
from harness.recording import Large

from .build import ROOT, build
from .catalogue import CATALOGUE, Mutant

MAX_CALLS = 6  # the last calls of the failing test that are replayed
MAX_INPUT = 300_000  # skip calls whose arguments are bigger (characters / items)
TEST_BUDGET = 20.0  # CPU seconds of replay per failing test
SESSION_BUDGET = 120.0  # CPU seconds of replay per pytest session
GROUP_MISSES = 3  # failures of a part with no matching mutant before that part is skipped
MAX_NAMED = 4  # known bugs named for one failure, when a small case fits several alike
SMALL_CALL = 5_000  # a call this small (see _size) replays on every mutant in no time
MAX_HANDLES = 8  # tokenizers made for replays kept (each keeps its recipe alive)
REPLAY_MULTIPLE, REPLAY_FLOOR = 5.0, 1.0  # one mutant's replay: CPU at most this x the reference's + this


def enabled() -> bool:
    return os.environ.get("BPE_DIAGNOSIS", "1") != "0" and (ROOT / "reference").is_dir()


def _size(value: Any, depth: int = 0) -> int:
    if isinstance(value, (str, bytes, list, tuple, dict)):
        if depth > 1 or isinstance(value, (str, bytes)):
            return len(value)
        items = value.items() if isinstance(value, dict) else value
        return len(value) + sum(_size(v, depth + 1) for v in items) if len(value) < 1000 else len(value)
    return 1 if isinstance(value, (int, float, bool, type(None), os.PathLike)) else MAX_INPUT + 1  # iterators: no


def _replayable(call: tuple) -> bool:
    if call[0] == "call":
        return _size(call[2]) <= MAX_INPUT
    _, recipe, name, args = call
    if name == "encode_iterable":
        return False
    return _size(args) <= MAX_INPUT and _size(recipe[1]) <= 10 * MAX_INPUT


def _file_bytes(args: Any) -> int:
    """The bytes of the files ``args`` name (a training call's path stands for its whole file)."""
    total = 0
    for arg in args if isinstance(args, (list, tuple)) else (args,):
        if isinstance(arg, (str, os.PathLike)) and os.path.isfile(arg):
            try:
                total += os.path.getsize(arg)
            except OSError:
                continue
    return total


def _small(wrong: list) -> bool:
    """Whether every wrong call, the files it names and the tokenizer it was made on are small
    enough that the other mutants of the part can be tried too (a GPT-2-sized vocabulary and a
    200,000-character training corpus are not)."""

    def size(call: tuple) -> int:
        if call[0] == "call":
            return _size(call[2]) + _file_bytes(call[2])
        recipe_args, method_args = call[1][1], call[3]
        return _size((recipe_args, method_args)) + _file_bytes(recipe_args) + _file_bytes(method_args)

    return all(size(call) <= SMALL_CALL for call, _ in wrong)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return isinstance(a, BaseException) and isinstance(b, BaseException) and type(a).__name__ == type(b).__name__
    return type(a) is type(b) and a == b


class ReplayTooSlow(BaseException):
    """A mutant's replay ran past its CPU limit (a BaseException: the mutant's code may catch
    Exception)."""


@contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`ReplayTooSlow` in the block once this process has used ``seconds`` of
    CPU in it (``ITIMER_PROF``). Only in the main thread (where a signal handler runs) and
    when no one else handles ``SIGPROF`` (a profiler); elsewhere the block runs unlimited.
    The exception may come as the block ends: catch it around the ``with``."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGPROF) not in (signal.SIG_DFL, None):
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise ReplayTooSlow

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


PREFIX = "bpe-diagnosis-"


def make_folder() -> Path:
    """The folder this process builds mutants in, removed when it exits. In a grading, inside
    the grading's own temporary folder, which grade removes however this process ends (killed,
    it runs no atexit); in a plain pytest run, in TMPDIR, named after this process (pid and
    start time), and the folders there of processes of this user that are gone (killed ones)
    are removed first (:func:`harness.proc_folders.own_folder`)."""
    return own_folder(PREFIX)


class Replayer:
    """Backends of the reference and of the mutants, with their tokenizer objects cached."""

    def __init__(self) -> None:
        from harness.impl import LocalBackend

        self._local = LocalBackend
        self.dir: Path | None = None
        self.backends: dict[str, Any] = {"reference": LocalBackend("reference")}
        self.handles: dict[tuple[str, int], tuple[tuple, int]] = {}  # -> (recipe, handle)
        self.spent = 0.0
        self.misses: dict[str, int] = {}  # part -> failures that matched no mutant
        self.last: dict[str, Mutant] = {}  # part -> the mutant matched last (tried first)
        self.found: list[Mutant] = []  # every mutant matched first for a failure, in order

    def backend(self, mutant: Mutant | None):
        name = "reference" if mutant is None else mutant.name
        if name not in self.backends:
            if self.dir is None:
                self.dir = make_folder()
            package = f"bpe_mutant_{mutant.name}"
            build(mutant, self.dir / mutant.name, package=package)
            self.backends[name] = self._local(package, self.dir / mutant.name)
        return self.backends[name]

    def run(self, mutant: Mutant | None, call: tuple) -> Any:
        backend = self.backend(mutant)
        try:
            if call[0] == "call":
                return backend.call(call[1], call[2], False)
            _, recipe, name, args = call
            key = (mutant.name if mutant else "reference", id(recipe))
            made = self.handles.get(key)
            if made is None or made[0] is not recipe:  # records end with their test: an id may be reused
                if made is not None:
                    backend.forget(self.handles.pop(key)[1])
                made = self.handles[key] = (recipe, backend.call(recipe[0], recipe[1], True))
                while len(self.handles) > MAX_HANDLES:  # the tokenizers and recipes kept alive here stay few
                    oldest = next(iter(self.handles))
                    _, old = self.handles.pop(oldest)
                    self.backends[oldest[0]].forget(old)
            return backend.method(made[1], name, args)
        except Exception as err:  # the outcome of a call may be an exception
            return err

    def diagnose(self, group: str | None, records: list, until: float | None = None) -> list[Mutant]:
        """The catalogued bugs of ``group`` (the bugs found for other groups' failures tried
        first) that give every outcome in ``records``, the submission's wrong ones and its right
        ones (a bug that also breaks a call the submission got right is not the submission's,
        however its wrong outcomes fit): the first found, and on small
        inputs (:func:`_small`) every other one too (up to ``MAX_NAMED``), since a small case
        can fit several bugs alike. No mutant is tried once ``time.monotonic()`` passes
        ``until`` (what fitted before it is the answer)."""
        if self.spent > SESSION_BUDGET or not records or _past(until):
            return []
        start = time.process_time()
        try:
            earlier = [m for m in self.found if m.group != group]
            candidates = earlier + [m for m in CATALOGUE if m.group == group]
            if len(candidates) == len(earlier) or self.misses.get(group, 0) >= GROUP_MISSES:
                return []
            recent = [r for r in records[-MAX_CALLS:] if _replayable(r[0])]
            if any(isinstance(got, Large) for _, got in recent):
                return []  # a result too large to keep: no catalogued bug returns one
            reference_start = time.process_time()
            agrees = [_same(got, self.run(None, call)) for call, got in recent]
            wrong = [record for record, same in zip(recent, agrees) if not same]
            if not wrong:
                return []
            right = [record for record, same in zip(recent, agrees) if same]
            limit = REPLAY_FLOOR + REPLAY_MULTIPLE * (time.process_time() - reference_start)
            # Mutants named after the wrong call (decode_*, merge_*) first: each mutant tried
            # may have to build a GPT-2-sized tokenizer, and the budget is per failure.
            names = {(c[2] if c[0] == "method" else c[1].removeprefix("run_")) for c, _ in wrong}
            candidates.sort(key=lambda m: (m not in earlier, m is not self.last.get(group), not any(n in m.name for n in names)))
            matched: list[Mutant] = []
            small = _small(wrong)  # once: it reads the sizes of the files the calls name
            matched_before = {m.name for m in earlier} | ({self.last[group].name} if group in self.last else set())
            for mutant in candidates:
                if time.process_time() - start > TEST_BUDGET or (matched and not small) or _past(until):
                    break
                # a bug already matched is likely the submission's own, as slow as its code: the budget left
                left = TEST_BUDGET - (time.process_time() - start) if mutant.name in matched_before else 0.0
                if self._fits(mutant, wrong + right, max(limit, left)):
                    matched.append(mutant)
                    if len(matched) == MAX_NAMED:
                        break
            if matched:
                self.last[group] = matched[0]
                self.found += [matched[0]] if matched[0] not in self.found else []
                return matched
            self.misses[group] = self.misses.get(group, 0) + 1
            return []
        finally:
            self.spent += time.process_time() - start

    def _fits(self, mutant: Mutant, records: list, limit: float) -> bool:
        """Whether ``mutant`` gives every outcome of ``records`` (the wrong ones first: most
        mutants part there), its replays (not its build) stopped past ``limit`` seconds of CPU."""
        self.backend(mutant)
        try:
            with cpu_limit(limit):
                return all(_same(got, self.run(mutant, call)) for call, got in records)
        except ReplayTooSlow:
            return False


def _past(until: float | None) -> bool:
    return until is not None and time.monotonic() > until


_replayer: Replayer | None = None


def diagnose(group: str | None, records: list | None, until: float | None = None) -> str | None:
    """The description of the known bug a failed test of grading group ``group`` matches, or
    ``None`` (also once ``time.monotonic()`` passes ``until``: no mutant is tried after it)."""
    global _replayer
    if not records or not enabled():
        return None
    try:
        if _replayer is None:
            _replayer = Replayer()
        mutants = _replayer.diagnose(group, records, until)
    except Exception:  # never let the diagnosis break a report
        return None
    except BaseException as err:  # not even the test's time limit striking during a replay
        if isinstance(err, TimeLost):  # (not an Exception: uncaught, an INTERNALERROR ends the run)
            return None
        raise
    return describe(mutants)


def describe(mutants: list[Mutant]) -> str | None:
    """One text for the known bugs a failure matches: the first one's description, then each
    other's, as what this case cannot tell apart from it."""
    if not mutants:
        return None
    others = "".join(f" Or, alike on this case: {m.description}" for m in mutants[1:])
    return mutants[0].description + others
