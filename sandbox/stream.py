"""One ``encode_iterable`` exchange with an isolated worker, on the trusted side.

Input goes over in chunks of about ``CHUNK_CHARS`` characters when the worker asks for
them ("need"); ids come back in batches ("ids"); "ok" or "err" ends it, "aborted" answers an
"abort". Every loop here is bounded: by the call's deadline over the whole exchange and by
the input itself (at most one id per byte received). An exception the input raises is the
caller's at once, the worker's side stopped, as it is in-process.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ContextManager

from .failures import WorkerFailure, WorkerTimeout
from .student_errors import student_error

if TYPE_CHECKING:  # pragma: no cover
    from .process import WorkerProcess

CHUNK_CHARS = 1 << 16  # characters of encode_iterable input per message


class Stream:
    """One ``encode_iterable`` in progress: input goes over in chunks, ids come back in batches.

    The exchange as a whole has the call's deadline: the time spent waiting for or talking
    with the worker adds up across its messages, and when it reaches ``call_timeout`` the
    worker is stopped. Ids are capped by the input: every token covers at least one byte,
    so a worker sending more ids than the bytes it was given (or ``stream_ids`` in all), or
    asking for input after it was told the input ended, breaks the protocol and is stopped.
    Each step of the exchange holds ``lock`` (its backend's: no other call talks to the worker
    meanwhile); a call that comes between two steps aborts the stream first."""

    def __init__(self, proc: "WorkerProcess", lock: ContextManager, rid: int, name: str) -> None:
        self.proc, self.lock, self.rid, self.name = proc, lock, rid, name
        self.limits = proc.limits
        self.finished = False
        self.interrupted = False
        self.mark = len(proc.output)
        self.busy = 0.0  # seconds spent in the exchange so far
        self.sent_bytes = 0  # UTF-8 bytes of input sent
        self.received = 0  # ids received
        self.ended = False  # "end" was sent

    def _next(self, doing: str) -> list:
        """The worker's next message within what is left of the call's deadline."""
        timeout = self.limits.call_timeout
        left = timeout - self.busy
        if left <= 0:
            raise self.proc.timed_out(timeout, doing)
        try:
            msg = self.proc.recv(self.rid, left, doing)
        except WorkerTimeout:
            raise WorkerTimeout(f"timed out after {timeout:g} s while {doing}; the worker running your code was stopped") from None
        if msg[0] == "need" and self.ended:
            raise self.proc.violation(f"asked for more input after {self.name}(...)'s input had ended")
        if msg[0] == "ids" and len(msg) == 3 and type(msg[2]) is list:
            self.received += len(msg[2])
            most = min(self.sent_bytes, self.limits.stream_ids)
            if self.received > most:
                raise self.proc.violation(
                    f"sent {self.received} ids from {self.name}(...) for {self.sent_bytes} bytes of input "
                    f"(at most one id per byte, {self.limits.stream_ids} in all)"
                )
        return msg

    def _feed(self, source: Iterator[str]) -> None:
        batch, size = [], 0
        for piece in source:
            batch.append(piece)
            if type(piece) is str:
                size += len(piece)
                self.sent_bytes += len(piece.encode("utf-8", "surrogatepass"))
            else:
                size += 1
            if size >= CHUNK_CHARS:
                break
        if not batch:
            self.ended = True
        self.proc.send(["chunks", self.rid, batch] if batch else ["end", self.rid])

    def run(self, source: Iterator[str]) -> Iterator[Any]:
        __tracebackhide__ = True
        try:
            while True:
                if self.interrupted:
                    raise WorkerFailure(f"{self.name}(...) was interrupted by another call to the same implementation")
                with self.lock:
                    started = time.monotonic()
                    try:
                        msg = self._next(f"running {self.name}(...)")
                        kind = msg[0]
                        if kind == "need":
                            try:
                                self._feed(source)
                            except Exception:
                                # the input raised (a test's endless stream read too far): the
                                # worker, waiting for it, is told to stop, and the exception is
                                # the caller's at once, as in-process (not a wait to the deadline)
                                self.ended = True
                                self.proc.send(["abort", self.rid])
                                raise
                            continue
                    except WorkerFailure as err:
                        self.finished = True
                        raise type(err)(self.proc.with_output(str(err), self.mark)) from None
                    finally:
                        self.busy += time.monotonic() - started
                    if kind == "ok":
                        self.finished = True
                        return
                    if kind == "err" and len(msg) == 3 and type(msg[2]) is dict:
                        self.finished = True
                        raise student_error(msg[2], self.proc, self.mark)
                    if kind != "ids" or len(msg) != 3 or type(msg[2]) is not list:
                        self.finished = True
                        raise self.proc.violation(f"sent an unexpected stream message {kind!r}")
                    ids = msg[2]
                for i in ids:
                    if self.interrupted:
                        break
                    yield i
        finally:
            if not self.finished and not self.interrupted:
                self.abort()  # finished: its backend's next call, finding it, has nothing to stop

    def abort(self) -> None:
        """Stop the worker's side of the stream and wait until it is idle again (within the
        call's deadline; a worker that does not stop in time is stopped)."""
        if self.finished:
            return
        self.interrupted = True
        self.finished = True
        proc = self.proc
        if not proc.alive():
            return
        started = time.monotonic()
        try:
            while True:
                msg = self._next(f"stopping {self.name}(...)")
                self.busy += time.monotonic() - started
                started = time.monotonic()
                if msg[0] == "need":
                    self.ended = True  # whatever it asks for next is a violation
                    proc.send(["abort", self.rid])
                elif msg[0] in ("ok", "err", "aborted"):
                    return
        except WorkerFailure:
            pass  # the worker was stopped; the next call starts a fresh one
