"""Run ``python -m pytest ARGS`` many times, cheaply: each run is a fresh process forked from a
server that has already imported pytest, its plugins, hypothesis and tiktoken (with GPT-2's
encoding), instead of an interpreter starting from nothing (:mod:`mutants.forkserver`).

A run gets the server's working directory and environment (those given to
:class:`ForkServer`), its output (stdout and stderr) in a file, and a time limit: past it, the
run and everything it started are killed and :class:`RunTimeout` is raised. Runs may be
started from several threads at once. Closing the server kills any run still going.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

READY_TIMEOUT = 300  # seconds for the server's imports (far more than they take, even under load)
KILL_GRACE = 30  # seconds to wait for a killed run's exit to be reported


class RunTimeout(Exception):
    """A run went past its time limit and was killed."""


class ForkServerError(RuntimeError):
    """The fork server could not start or died: the runs cannot go on."""


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.code: int | None = None


class ForkServer:
    """``with ForkServer(cwd, env, log) as server: code = server.run(args, out, timeout)``;
    ``log``: a file for the server's own error output (shown if it dies); ``pycache``: a
    folder where the runs share their bytecode (see :mod:`mutants.forkserver`)."""

    def __init__(self, cwd: Path, env: Mapping[str, str], log: Path, pycache: Path | None = None) -> None:
        self.log = Path(log)
        self._next = 0
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._ready = threading.Event()
        self._dead = False
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mutants.forkserver", *(["--pycache", str(pycache)] if pycache else [])],
                cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
            )
        self._reader = threading.Thread(target=self._read, name="forkserver-replies", daemon=True)
        self._reader.start()

    def __enter__(self) -> "ForkServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, args: list[str], out: Path, timeout: float) -> int:
        """The exit code of ``python -m pytest ARGS`` (negative: killed by that signal), its
        output in ``out``; :class:`RunTimeout` past ``timeout`` seconds."""
        if not self._ready.wait(READY_TIMEOUT):
            raise ForkServerError(self._death())
        with self._lock:
            if self._dead:
                raise ForkServerError(self._death())
            self._next += 1
            run_id, pending = self._next, _Pending()
            self._pending[run_id] = pending
            self._send({"run": run_id, "args": [str(a) for a in args], "out": str(out)})
        try:
            if not pending.done.wait(timeout):
                with self._lock:
                    self._send({"kill": run_id})
                pending.done.wait(KILL_GRACE)
                raise RunTimeout(f"pytest run exceeded {timeout:g}s and was killed")
            if pending.code is None:
                raise ForkServerError(self._death())
            return pending.code
        finally:
            with self._lock:
                self._pending.pop(run_id, None)

    def close(self) -> None:
        """End of input: the server kills every run still going and exits. Idempotent."""
        if self.proc.stdin.closed:
            return
        with self._lock:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(KILL_GRACE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(KILL_GRACE)
        self.proc.stdout.close()

    def _send(self, message: dict) -> None:
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):  # the server is gone (or closed): the reader wakes every waiter
            pass

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:  # not a reply (the server writes nothing else there): ignore it
                continue
            if "ready" in message:
                self._ready.set()
                continue
            with self._lock:
                pending = self._pending.get(message["id"])
            if pending is not None:
                pending.code = message["code"]
                pending.done.set()
        with self._lock:  # end of the server's output: it exited
            self._dead = True
            for pending in self._pending.values():
                pending.done.set()
        self._ready.set()

    def _death(self) -> str:
        """One line: the server's command and the last line it wrote (an exception's, usually)."""
        lines = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines() if self.log.exists() else []
        return f"the fork server ({sys.executable} -m mutants.forkserver) exited: {lines[-1] if lines else 'no output'}"
