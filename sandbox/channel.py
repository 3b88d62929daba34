"""Both ends of the protocol between the trusted side and an isolated worker.

One line of tagged JSON (:func:`harness.wire.dumps`) per message, over two dedicated
pipes (never the worker's stdout): :class:`Channel` is the worker's end, :class:`TrustedEnd`
the trusted side's (owned by :class:`sandbox.process.WorkerProcess`), which bounds what it
reads (``reply_bytes``, ``reply_values``), accepts only a reply to the request it made and
never blocks on a worker that stops reading or writing. The worker imports this module from
its private copy, so it imports only the standard library and the harness (:mod:`harness.values`,
:mod:`harness.wire`).
"""

from __future__ import annotations

import os
import re
import select
import time
from itertools import chain
from typing import Any

from harness import values as V
from harness import wire

MAX_LINE = 1 << 30  # requests longer than this are a protocol error
SPIN_SECONDS = 0.002  # see default_spin
# no spinning while more tasks are runnable than there are CPUs, or tasks waited for a CPU more
# than this % of the last 10 s (cpu_contended): a whole-suite grading spun 2.5-3 s of CPU on a
# quiet machine (17 s with it, 15 s without), and beside two busy processes 27.5 s against 14.7 s
# (2026-11-26), taking cores the processes beside it need (CI, a busy runner)
CPU_PRESSURE, LOAD, CONTENDED_SHARE = "/proc/pressure/cpu", "/proc/loadavg", 10.0


# ---- the wire: harness.wire's tagged JSON, with fast paths for the common shapes -------


def fast_dumps(value: Any) -> str:
    """:func:`harness.wire.dumps` (which packs vocabularies and merges compactly)."""
    return wire.dumps(value)


def plain_copy(value: Any) -> Any:
    """A copy of plain data sharing only immutable parts (so a callee cannot change the caller's)."""
    kind = type(value)
    if kind is list:
        kinds = set(map(type, value))
        if kinds <= _IMMUTABLE_SET or (kinds == {tuple} and set(map(type, chain.from_iterable(value))) <= _IMMUTABLE_SET):
            return value.copy()  # ids, pre-tokens, merges: nothing inside can change
        return [v if type(v) in _IMMUTABLE else plain_copy(v) for v in value]
    if kind is dict:
        if set(map(type, value.values())) <= _IMMUTABLE_SET:
            return value.copy()  # a vocabulary: nothing inside can change
        return {k: v if type(v) in _IMMUTABLE else plain_copy(v) for k, v in value.items()}
    if kind is tuple and not all(type(v) in _IMMUTABLE for v in value):
        return tuple(plain_copy(v) for v in value)
    return value


_IMMUTABLE = (int, float, str, bytes, bool, type(None))
_IMMUTABLE_SET = set(_IMMUTABLE)


def to_plain(value: Any, where: str, shape: V.Shape | None = None) -> Any:
    """:func:`harness.values.to_plain`, skipping the per-item walk for plain lists of ints or strs."""
    if type(value) is list and (V.only(value, int) or V.only(value, str)):
        return value
    return V.to_plain(value, where, shape)


_PACKED = re.compile(rb'"\$i([48])":"')


def reply_values(line: bytes | bytearray) -> int:
    """The values a reply line holds, counted before it is parsed: commas + 1, plus the ids
    of every packed list of ints (``$i4``/``$i8``: 8 or 16 hex digits each, no commas),
    which cost the parsed reply as much as any other value."""
    values = line.count(b",") + 1
    if b'"$i' in line:
        for m in _PACKED.finditer(line):
            end = line.find(b'"', m.end())
            values += ((end if end >= 0 else len(line)) - m.end()) // (8 if m.group(1) == b"4" else 16)
    return values


# ---- the worker's end ---------------------------------------------------------------


class Channel:
    """The worker's end: reads requests (spinning briefly first, see ``spin``), writes replies."""

    def __init__(self, rfd: int, wfd: int, spin: float = 0.0) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.buffer = bytearray()
        self.spin = spin  # seconds to poll for the next request before sleeping in read()
        if spin:
            os.set_blocking(rfd, False)

    def _read(self) -> bytes:
        """The next bytes from the trusted side. Polls for ``spin`` seconds first: a request
        usually follows a reply within microseconds, and waking a sleeping process costs
        far more than that on virtual machines."""
        if not self.spin:
            return os.read(self.rfd, 1 << 20)
        until = time.perf_counter() + self.spin
        while True:
            try:
                return os.read(self.rfd, 1 << 20)
            except BlockingIOError:
                if time.perf_counter() > until:
                    select.select([self.rfd], [], [])
                    until = time.perf_counter() + self.spin
                else:
                    os.sched_yield()  # a process with real work on this core goes first

    def send(self, message: list) -> None:
        data = (fast_dumps(message) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(self.wfd, view)
            view = view[n:]

    def recv(self) -> list:
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return wire.loads(line)
            if len(self.buffer) > MAX_LINE:
                raise SystemExit("request too long")
            chunk = self._read()
            if not chunk:
                raise SystemExit(0)  # the trusted side went away
            self.buffer += chunk


# ---- the trusted end ----------------------------------------------------------------------


def widen_pipe(fd: int) -> None:
    """Let a pipe hold 1 MiB instead of 64 KiB: a large value then crosses in a few writes
    instead of a hundred hand-overs between the two processes."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass  # not Linux, or over /proc/sys/fs/pipe-max-size: keep the default


def default_spin(pressure: str | None = None, load: str | None = None) -> float:
    """Seconds each side busy-polls for the other's next message before sleeping: waking a
    sleeping process costs 50-100 us on virtual machines, several times a whole small call.
    Off on one core (the two sides would take turns spinning), while other tasks wait for a
    CPU (:func:`cpu_contended`: a spinning side takes a core they need, for little) and when
    ``BPE_GRADER_SPIN=0`` (``batch`` sets it when it runs several gradings at once)."""
    value = os.environ.get("BPE_GRADER_SPIN")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return 0.0
    return SPIN_SECONDS if (os.cpu_count() or 1) >= 2 and not cpu_contended(pressure, load) else 0.0


def cpu_contended(pressure: str | None = None, load: str | None = None) -> bool:
    """Whether the CPUs are contended: more tasks runnable right now than there are CPUs
    (``load``, by default ``LOAD``: /proc/loadavg's ``running/total``), or tasks waited for a
    CPU more than ``CONTENDED_SHARE`` % of the last 10 seconds (``pressure``, by default
    ``CPU_PRESSURE``: Linux's pressure stall information, ``some avg10``), which tells of a
    load that began up to 10 s ago only slowly. Either file unreadable counts as no contention."""
    return _runnable(load or LOAD) > (os.cpu_count() or 1) or _waited_share(pressure or CPU_PRESSURE) > CONTENDED_SHARE


def _runnable(load: str) -> int:
    try:
        with open(load, encoding="ascii") as f:
            return int(f.read().split()[3].partition("/")[0])
    except (OSError, ValueError, IndexError):
        return 0


def _waited_share(pressure: str) -> float:
    try:
        with open(pressure, encoding="ascii") as f:
            fields = dict(field.split("=", 1) for field in f.readline().split()[1:])
        return float(fields["avg10"])
    except (OSError, ValueError, KeyError):
        return 0.0


class ChannelError(Exception):
    """What went wrong on the channel to a worker; the owner of the worker (which knows how to
    stop it) turns it into the failure a test sees."""


class Closed(ChannelError):
    """The worker closed its end, or exited, while the trusted side was ``doing`` something."""

    def __init__(self, doing: str) -> None:
        super().__init__(doing)
        self.doing = doing


class Broken(ChannelError):
    """The worker broke the protocol: ``what`` it did, said as "the worker running your code {what}"."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class Late(ChannelError):
    """No whole reply came within ``timeout`` seconds while ``doing`` something."""

    def __init__(self, timeout: float, doing: str) -> None:
        super().__init__(timeout, doing)
        self.timeout, self.doing = timeout, doing


def encode(message: list, refs: list[str] | None = None) -> bytes:
    """``message`` as the line :meth:`TrustedEnd.send_encoded` writes, ``refs`` (JSON fragments of
    cached arguments) appended to it as one more list item; a TypeError, with nothing sent, for
    a value that cannot cross."""
    try:
        text = fast_dumps(message)
    except (TypeError, ValueError) as err:
        raise TypeError(f"argument cannot be sent to the worker: {err}") from None
    if refs is not None:
        text = text[:-1] + ",[" + ",".join(refs) + "]]"
    return (text + "\n").encode("utf-8")


class TrustedEnd:
    """The trusted side's end of the channel to one worker: writes requests without blocking,
    reads replies within a deadline and bounded (``reply_bytes``, ``reply_values``). It owns
    nothing it is given: the pipes, the worker's pidfd and process are its owner's, who
    closes them. What goes wrong is raised as a :class:`ChannelError` (:class:`Closed`,
    :class:`Broken`, :class:`Late`), for the owner to stop the worker."""

    def __init__(
        self,
        req_w: int,
        resp_r: int,
        process: Any,
        pidfd: int | None = None,
        *,
        send_timeout: float,
        reply_bytes: int,
        reply_values: int,
        spin: float = 0.0,
    ) -> None:
        self.req_w, self.resp_r, self.pidfd = req_w, resp_r, pidfd
        self.process = process  # the worker's process (subprocess.Popen): poll() says whether it exited
        self.send_timeout, self.reply_bytes, self.reply_values = send_timeout, reply_bytes, reply_values
        self.spin = spin  # seconds to poll for a reply before sleeping in select (see default_spin)
        self.buffer = bytearray()  # what was read of the next replies

    def exited(self) -> bool:
        return self.process.poll() is not None

    def send_encoded(self, data: bytes) -> None:
        """Write a line made by :func:`encode`, without blocking on a worker that stops reading."""
        view = memoryview(data)
        deadline = time.monotonic() + self.send_timeout
        while view:
            try:
                n = os.write(self.req_w, view[: 1 << 16])  # non-blocking: a worker that stops reading cannot block us
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Broken("stopped reading its input") from None
                select.select([], [self.req_w], [], 0.5)
                if self.exited():
                    raise Closed("receiving its input") from None
                continue
            except BrokenPipeError:
                raise Closed("receiving its input") from None
            view = view[n:]

    def recv(self, rid: int, timeout: float, doing: str) -> list:
        """The next message for request ``rid``, within ``timeout`` seconds. Whatever stops
        the wait midway (a test's timeout, Ctrl-C) leaves the channel out of step: the owner
        must then stop the worker."""
        deadline = time.monotonic() + timeout
        waiting = [self.resp_r] + ([self.pidfd] if self.pidfd is not None else [])
        spin = self.spin
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                if end == len(self.buffer) - 1:  # the usual case: the line is the whole buffer, taken without a copy
                    line, self.buffer = self.buffer, bytearray()
                    del line[end:]
                else:
                    line = bytes(memoryview(self.buffer)[:end])
                    del self.buffer[: end + 1]
                if reply_values(line) > self.reply_values:  # each value costs far more parsed than sent
                    raise Broken(f"sent a reply of more than {self.reply_values} values")
                try:
                    # the packed ids counted exactly as they are decoded: reply_values reads only
                    # the usual spelling of their tags, JSON allows others (escapes, spaces)
                    msg = wire.loads(line, max_packed=self.reply_values - (line.count(b",") + 1))
                except wire.TooManyValues:
                    raise Broken(f"sent a reply of more than {self.reply_values} values") from None
                except (ValueError, TypeError, RecursionError) as err:
                    raise Broken(f"sent a malformed message ({err})") from None
                if type(msg) is not list or len(msg) < 2 or type(msg[0]) is not str or msg[1] != rid:
                    raise Broken(f"sent an unexpected message ({bytes(line[:80])!r})")
                return msg
            if len(self.buffer) > self.reply_bytes:
                raise Broken(f"sent a reply longer than {self.reply_bytes} bytes")
            if spin:  # most replies come within microseconds: poll before sleeping in select
                chunk, spin = self._poll(spin), 0.0
                if chunk is not None:
                    if chunk:
                        self.buffer += chunk
                        continue
                    raise Closed(doing)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Late(timeout, doing)
            readable, _, _ = select.select(waiting, [], [], min(left, 1.0))
            if self.resp_r in readable:
                chunk = os.read(self.resp_r, 1 << 20)
                if chunk:
                    self.buffer += chunk
                    continue
                raise Closed(doing)
            if (self.pidfd is not None and self.pidfd in readable) or (self.pidfd is None and self.exited()):
                # the worker exited; read whatever it managed to send first
                more = self._read_remaining()
                if more:
                    self.buffer += more
                    if b"\n" in self.buffer:
                        continue
                raise Closed(doing)

    def _poll(self, seconds: float) -> bytes | None:
        """Bytes from the worker if any arrive within ``seconds`` (busy-polling), else None."""
        until = time.perf_counter() + seconds
        while True:
            try:
                return os.read(self.resp_r, 1 << 20)
            except BlockingIOError:
                if time.perf_counter() > until:
                    return None
                os.sched_yield()  # a process with real work on this core goes first

    def _read_remaining(self) -> bytes:
        """What the exited worker left in the pipe (at most a reply's worth: a process it
        left behind could keep writing)."""
        out = b""
        while len(out) <= self.reply_bytes:
            r, _, _ = select.select([self.resp_r], [], [], 0)
            if not r:
                return out
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                return out
            out += chunk
