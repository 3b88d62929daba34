"""The isolated worker: the process that runs a submission's code during grading.

The trusted side (:mod:`sandbox.process`) starts it as
``python -s -P -B -c <bootstrap> FD`` (its configuration comes as the first line on the request
pipe ``FD``, never in its argv) in a throw-away sandbox directory holding a copy of
``adapters.py`` and the implementation package, plus a private copy of the ``harness`` and
``sandbox`` packages it runs from (:mod:`sandbox.workercode`; what a request does is
:mod:`harness.dispatch`'s, shared with in-process runs). Nothing else of the harness is on its
``sys.path``; the environment holds only ``PATH``, ``HOME``/``TMPDIR`` (the sandbox work
directory), the locale, ``BPE_IMPL`` and ``PYTHONHASHSEED`` (the grading's seed: no ``-E``).

Before any submission code is imported, :func:`sandbox.confine.harden` applies the limits
(``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_NPROC``, ``RLIMIT_FSIZE``, no core files) and moves
into a private root directory (:func:`sandbox.confine.confine`: the system, Python and the
sandbox, nothing else of the machine): when started as root, then dropping to an
unprivileged user id; otherwise inside unprivileged user, mount and pid namespaces
(:mod:`sandbox.userns`), then dropping every capability. The forbidden modules are covered
there and refused by an import hook.

Protocol (both ends in :mod:`sandbox.channel`): one line of tagged JSON
(:func:`harness.wire.dumps`) per message, over two dedicated pipe descriptors (never stdout,
which is the submission's, captured with a cap by the trusted side). Requests and replies are lists::

                                                       <- ["ready", 0, {notes}] (sandbox set up)
    -> ["go", 0] (the grader has checked the sandbox)
                                                       <- ["hello", 0, {pid, uid}] (adapters.py imported)
    -> ["call", rid, adapter, args, returns_handle]   <- ["ok", rid, value | handle id]
    -> ["method", rid, handle, name, args]            <- ["err", rid, {kind, mro, message, traceback}]
    -> ["probe", rid, probe, handle | None, args]
    -> ["stream", rid, handle, name, file_like]        <- ["need", rid]  -> ["chunks", rid, [str, ...]]
                                                       <- ["ids", rid, [int, ...]]  -> ["end", rid] | ["abort", rid]
                                                       <- ["ok", rid, None] | ["err", ...] | ["aborted", rid]

The worker only returns plain data (``to_plain``); everything it says is re-checked, compared
and scored on the trusted side, so a submission that tampers with this module gains nothing.
"""

from __future__ import annotations

import binascii
import os
import sys
import traceback
from typing import Any

from harness import values as V
from harness.dispatch import Broken, Dispatcher, close, import_adapters  # imported before privileges drop
from harness.python_version import import_hint

from . import stacks
from .chunkfile import ChunkFile
from .channel import Channel, plain_copy, to_plain
from .confine import harden
from .imports import clean_import_state, forbid

ID_BATCH = 8192  # ids per "ids" message of a stream


class Aborted(BaseException):
    """The trusted side stopped consuming a stream."""


# ---- running submission code ------------------------------------------------------------


SHORTEN: list[tuple[str, str]] = []  # (sandbox prefix, what a student reads instead), set by main


def shortened(code_dir: str, harness_dir: str) -> list[tuple[str, str]]:
    """What :func:`unsandboxed` replaces, longest first: the submission's folder (its files
    read relative to it), the grader's, the installed packages' (``<site-packages>/``) and the
    standard library's (``<python>/``): no path of the grading machine reaches a student."""
    pairs = [(code_dir.rstrip("/") + "/", ""), (harness_dir.rstrip("/") + "/", "<grader>/"),
             (os.path.dirname(os.__file__).rstrip("/") + "/", "<python>/")]
    pairs += [(p.rstrip("/") + "/", "<site-packages>/") for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def unsandboxed(text: str) -> str:
    """``text`` with the worker's sandbox paths made relative to the submission."""
    for prefix, shown in SHORTEN:
        text = text.replace(prefix, shown)
    return text


def describe(err: BaseException) -> dict:
    """A student exception as plain data: class names along the MRO, its class's module and
    qualified name, message, short traceback (paths relative to the submission)."""
    mro = [c.__name__ for c in type(err).__mro__ if c is not object]
    try:
        message = str(err)
    except BaseException:  # a __str__ that raises
        message = f"<{type(err).__name__} whose message could not be printed>"
    tb = err.__traceback__
    innermost = None
    while tb is not None:
        innermost = tb.tb_frame.f_code
        tb = tb.tb_next
    if isinstance(err, NotImplementedError) and not message.strip() and innermost is not None:
        message = getattr(innermost, "co_qualname", innermost.co_name)  # as the plugin does locally
    try:
        frames = traceback.extract_tb(err.__traceback__)
        while frames and frames[0].filename in _OWN_FILES:  # the worker's and the dispatcher's frames
            del frames[0]
        frames = frames[-6:]
        text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(err), err))
    except BaseException:
        text = ""
    kind = type(err)
    return {"kind": "error", "mro": mro, "module": str(getattr(kind, "__module__", ""))[:200],
            "qualname": str(getattr(kind, "__qualname__", ""))[:200],
            "message": unsandboxed(message[:20000]), "traceback": unsandboxed(text)[-4000:]}


def failure(kind: str, message: str) -> dict:
    """A failure the harness itself names (``"broken"``: adapters.py could not be loaded;
    ``"wrong"``: a result that is not plain data): no exception class, no traceback."""
    return {"kind": kind, "mro": [], "message": message, "traceback": ""}


_OWN_FILES = frozenset({__file__, sys.modules[Dispatcher.__module__].__file__})


def snapshot(args: list, kept: dict[int, Any]) -> dict[int, Any]:
    """The arguments a call could change in place (lists and dicts) as they were, by position:
    ``kept``'s value where it has one (a cached argument, never handed out), else a copy."""
    return {i: kept[i] if i in kept else plain_copy(a) for i, a in enumerate(args) if type(a) in (list, dict)}


def changed_arguments(args: list, before: dict[int, Any]) -> list[list]:
    """``[position, new value]`` of each argument the call changed in place: in-process the
    caller's own object would have changed, and a test checking that it did not must see it."""
    return [[i, to_plain(args[i], f"argument {i + 1}")] for i, old in before.items()
            if type(args[i]) is not type(old) or args[i] != old]


class Worker:
    """The protocol's worker end: arguments sent once and then referenced, replies, the
    stream's need/ids exchange and errors described as plain data; what a request does is
    :class:`harness.dispatch.Dispatcher`'s."""

    def __init__(self, config: dict, channel: Channel) -> None:
        self.config = config
        self.channel = channel
        self.dispatch = Dispatcher(self.load, to_plain)
        self.cached: dict[int, Any] = {}  # large arguments the trusted side sends only once
        self.stand_ins: list[str] = []  # missing packages the submission imports (harness.stand_ins)

    def arguments(self, args: list, refs: list) -> tuple[list, dict[int, Any]]:
        """Arguments with cached large values filled in (each call gets its own copy), and
        what to compare them with after the call (:func:`snapshot`: the cached value itself
        for a cached argument, which the call never sees)."""
        kept = {}
        for index, key, payload in refs:
            if payload is not None:
                self.cached[key] = payload
            kept[index] = self.cached[key]
            args[index] = plain_copy(kept[index])
        return args, snapshot(args, kept)

    def load(self):
        """Import the submission's adapters file as module ``adapters``; Broken, naming the
        cause, if it is missing or its import fails (SystemExit at import too)."""
        code_dir = self.config["code_dir"]
        where = self.config.get("adapters", "adapters.py")
        if not os.path.isfile(os.path.join(code_dir, where)):
            raise Broken("no adapters.py (nor tests/adapters.py) in the submission")
        try:
            module, self.stand_ins = import_adapters(code_dir, where, "adapters", register=True)
        except BaseException as err:  # SystemExit at import too: the submission is broken
            message = V.describe_import_error(err, short_paths=True, base=code_dir) + import_hint(code_dir)
            raise Broken(f"{where} could not be imported: {message}") from None
        return module

    def handle_request(self, msg: list) -> None:
        op, rid = msg[0], msg[1]
        try:
            if op == "call":
                _, _, adapter, args, returns_handle, refs = msg
                args, before = self.arguments(args, refs)
                value = self.dispatch.call(adapter, args, returns_handle)
            elif op == "method":
                _, _, handle, name, args, refs = msg
                args, before = self.arguments(args, refs)
                value = self.dispatch.method(handle, name, args)
            elif op == "probe":
                _, _, probe, handle, args = msg
                value = self.dispatch.probe(probe, handle, args)
            elif op == "stream":
                self.stream(rid, msg[2], msg[3], file_like=msg[4] is True)
                return
            else:
                raise SystemExit(f"unknown request {op!r}")
            data = ["ok", rid, value]
            if op in ("call", "method") and (changed := changed_arguments(args, before)):
                data.append(changed)  # the trusted side changes the caller's objects as in-process
        except Broken as err:
            data = ["err", rid, failure("broken", str(err))]
        except V.WrongResult as err:
            data = ["err", rid, failure("wrong", str(err))]
        except BaseException as err:  # SystemExit and KeyboardInterrupt from student code too
            data = ["err", rid, describe(err)]
        self.reply(rid, data)

    def reply(self, rid: int, data: list) -> None:
        try:
            self.channel.send(data)
        except (TypeError, ValueError) as err:  # e.g. a float the wire cannot carry
            self.channel.send(["err", rid, failure("wrong", f"result could not be sent: {err}")])

    def stream(self, rid: int, handle: int, name: str, file_like: bool = False) -> None:
        """Run ``name`` of object ``handle`` on the chunks the trusted side sends as it asks for
        them (``file_like``: the test gave an open file, so the submission gets a
        :class:`~sandbox.chunkfile.ChunkFile` of them), sending the ids in batches."""
        channel = self.channel
        pending: list[int] = []
        state = {"aborted": False, "ended": False}

        def flush() -> None:
            if pending:
                channel.send(["ids", rid, pending[:]])
                del pending[:]

        def source():
            while not (state["aborted"] or state["ended"]):
                flush()  # hand over what is ready before blocking on more input
                channel.send(["need", rid])
                msg = channel.recv()
                if msg[0] == "chunks" and msg[1] == rid:
                    yield from msg[2]
                elif msg[0] == "end":
                    state["ended"] = True
                else:
                    state["aborted"] = True
                    raise Aborted()

        gen = None
        try:
            gen = self.dispatch.iterate(handle, name, ChunkFile(source()) if file_like else source())
            for i, item in enumerate(gen):
                if state["aborted"]:
                    break
                pending.append(item if type(item) is int else self.dispatch.plain_item(item, name, i))
                if len(pending) >= ID_BATCH:
                    flush()
            if state["aborted"]:
                raise Aborted()
            flush()
            self.reply(rid, ["ok", rid, None])
        except Aborted:
            self.reply(rid, ["aborted", rid])
        except V.WrongResult as err:
            self.reply(rid, ["err", rid, failure("wrong", str(err))])
        except BaseException as err:
            self.reply(rid, ["aborted", rid] if state["aborted"] else ["err", rid, describe(err)])
        finally:
            if gen is not None:
                close(gen)

    def loop(self) -> None:
        while True:
            msg = self.channel.recv()
            self.handle_request(msg)


def main(config: dict) -> None:
    rfd, wfd, stack_fd = config["fds"]
    stacks.register(stack_fd)  # before any submission code: where it was when a call runs too long
    channel = Channel(rfd, wfd, float(config.get("spin", 0.0)))
    info = harden(config)
    config.pop("hide", None)  # the submission's code can find this dict: it names harness folders
    channel.send(["ready", 0, info])  # sandbox in place; no submission code has run yet
    channel.recv()  # "go": the grader has read from /proc how this process is confined
    clean_import_state(config["code_dir"], config["harness_dir"], config.get("python_path"))
    forbid(list(config.get("forbidden", [])))
    SHORTEN[:] = shortened(config["code_dir"], config["harness_dir"])
    os.chdir(config["work_dir"])
    worker = Worker(config, channel)
    try:
        worker.dispatch.adapters  # import the submission now: a crash here is a broken submission, not a test failure
    except Broken:
        pass  # reported on every call
    channel.send(["hello", 0, {"pid": os.getpid(), "uid": os.getuid(), "stand_ins": worker.stand_ins}])
    worker.loop()
