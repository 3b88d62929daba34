"""The trusted side of isolated grading: ``WorkerBackend`` runs a submission in a worker process.

``pytest --isolate`` (what ``python -m grader grade`` uses) makes every ``impl.<adapter>(...)``
and tokenizer method run in a long-lived worker process (:mod:`sandbox.worker`), one per
implementation, reused across tests. The tests, every comparison and the score stay in this
process; the worker gets inputs and sends back plain data as tagged JSON over a dedicated
pipe (never pickle, never its stdout), which is parsed here into built-in values only and
then checked by the :class:`~harness.impl.Implementation` facade for exact types.

What the worker cannot do, and how:

* hang the grader: each call has a wall-clock limit; on expiry the worker's process group
  (and, when it runs under a dedicated user id, every process of that id) gets SIGTERM, then
  SIGKILL after a short grace, the test fails with "timed out after N s", and the next call
  starts a fresh worker. ``RLIMIT_CPU`` bounds its CPU time, ``RLIMIT_AS`` its memory,
  ``RLIMIT_NPROC`` its processes, ``RLIMIT_FSIZE`` the files it writes.
* crash the grader: a worker that dies (segfault, ``os._exit``, killed for memory) fails the
  test in progress with the signal or status; a tokenizer it held is made again (same
  adapter, same arguments) in a fresh worker when next used, so one failing or non-lazy call
  fails only its own test (if making it again fails, its calls fail saying it died with its
  worker).
* forge results: its stdout/stderr go to a pipe drained here with a cap (the protocol has its
  own descriptors), it never learns the results path, and when the grader runs as root the
  worker runs as an unprivileged, per-worker user id, ``chroot``-ed into a root directory of
  its own (:func:`sandbox.worker.confine`) that holds only the system directories, Python
  and its sandbox: the harness repository (tests, hidden tests, reference, grading.yaml),
  any other copy of it on the machine, the original submission, home directories and
  ``/autograder`` are simply not there, and its ``/tmp`` is private.
* read the tests: see above; it is also given no path into the harness (files passed as
  paths are copied into the sandbox and the argument rewritten).

Without root the worker gets the same private root inside unprivileged user, mount and pid
namespaces (:mod:`sandbox.userns`), where the kernel allows them: the process started here then
only supervises, and the worker's own pid (its grandchild) is used for ``/proc`` reads. Where
the kernel refuses, it runs as the grader's own user: limits still apply (``RLIMIT_NPROC``
then counts all of that user's processes, so it is set to their current number plus
``max_processes``), but files readable by that user cannot be hidden and stray children
that leave the process group cannot be swept up by user id (the isolation line says weak).
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from . import leftovers, proctree, uids
from harness import submission as S
from harness import values as V
from .forbidden import FORBIDDEN_MODULES
from .failures import StudentExit, WorkerDied, WorkerFailure, WorkerTimeout
from harness.impl import ROOT, BrokenImplementation
from harness.registry import PATH_ARGS
from .pyenv import worker_python
from .stream import Stream
from .worker import fast_dumps, plain_copy

# the modules a worker imports, copied into its sandbox as private packages of these names
WORKER_FILES = {"harness": ("values.py", "probes.py", "stand_ins.py", "dispatch.py"), "sandbox": ("worker.py", "userns.py")}
CODE_DIR = Path(__file__).resolve().parent.parent
SPIN_SECONDS = 0.002  # see default_spin
OUTPUT_IN_MESSAGE = 2000  # characters of captured output quoted in a failure
MESSAGE_CHARS = 4000  # characters of a submission's exception message (and traceback) kept
REF_MIN = 2000  # lists/dicts at least this long are sent once per worker and then referenced
REF_SLOTS = 32  # at most this many of them are kept by a worker
ARG_CACHE = 16  # serialized large arguments kept here, by object identity


@dataclass(frozen=True)
class IsolationLimits:
    """Limits on a worker (grading.yaml may override them by these names)."""

    call_timeout: float = 90.0  # wall-clock seconds per adapter or method call
    memory_mb: int = 4096  # RLIMIT_AS
    cpu_seconds: int = 1800  # RLIMIT_CPU, over the worker's life (it is restarted after a kill)
    max_processes: int = 64  # RLIMIT_NPROC (processes and threads)
    output_bytes: int = 1_000_000  # stdout+stderr kept; the rest is counted and dropped
    file_bytes: int = 256 << 20  # RLIMIT_FSIZE; also the most copied back from a written file
    term_grace: float = 0.5  # seconds between SIGTERM and SIGKILL
    startup_timeout: float = 60.0  # seconds for a new worker to say hello
    stream_ids: int = 200_000_000  # ids one encode_iterable may send (also: at most one per input byte)
    reply_bytes: int = 64 << 20  # longest reply read from a worker
    reply_values: int = 4_000_000  # most values (commas + 1) in one reply: bounds the memory parsing it
    work_mb: int = 256  # size of the worker's work folder (HOME, TMPDIR; a tmpfs in its private root)

    @classmethod
    def from_mapping(cls, data: dict | None) -> "IsolationLimits":
        data = dict(data or {})
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown isolation limit(s): {', '.join(unknown)}")
        return cls(**{k: (float if k in ("call_timeout", "term_grace", "startup_timeout") else int)(v) for k, v in data.items()})


def limits_for(config: Any) -> IsolationLimits:
    """Limits of a pytest session: defaults, then grading.yaml's ``isolation`` (set by the
    grading plugin as ``config._bpe_isolation``), then ``--isolate-timeout``."""
    data: dict[str, Any] = {}
    policy = getattr(config, "_bpe_isolation", None)
    if policy is not None:
        known = {f.name for f in fields(IsolationLimits)}
        items = asdict(policy) if hasattr(policy, "__dataclass_fields__") else dict(policy)
        data.update({k: v for k, v in items.items() if k in known and v is not None})
    timeout = config.getoption("isolate_timeout", None)
    if timeout is not None:
        data["call_timeout"] = timeout
    return IsolationLimits.from_mapping(data)


def backend_for(config: Any, which: str) -> "WorkerBackend":
    """The worker backend of ``which`` ("submission" or "reference") for a pytest session."""
    from .forbidden import forbidden_for

    limits, forbidden = limits_for(config), forbidden_for(config)
    if which == "reference":
        return WorkerBackend("reference", None, limits, label="reference", forbidden=forbidden)
    return WorkerBackend(config.getoption("impl"), config.getoption("submission"), limits, forbidden=forbidden)


# ---- helpers --------------------------------------------------------------------------


def _widen_pipe(fd: int) -> None:
    """Let a pipe hold 1 MiB instead of 64 KiB: a large value then crosses in a few writes
    instead of a hundred hand-overs between the two processes."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass  # not Linux, or over /proc/sys/fs/pipe-max-size: keep the default


def default_spin() -> float:
    """Seconds each side busy-polls for the other's next message before sleeping: waking a
    sleeping process costs 50-100 us on virtual machines, several times a whole small call.
    Off on one core (the two sides would take turns spinning) and when ``BPE_GRADER_SPIN=0``
    (``batch`` sets it when it runs several gradings at once)."""
    value = os.environ.get("BPE_GRADER_SPIN")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return 0.0
    return SPIN_SECONDS if (os.cpu_count() or 1) >= 2 else 0.0


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


# the worker's first line of code: read the configuration (one JSON line) from the request
# pipe whose descriptor is the only argument, then hand over to sandbox.worker.main
BOOTSTRAP = """\
import sys, os, json
fd, line = int(sys.argv[1]), bytearray()
while not line.endswith(b"\\n"):
    byte = os.read(fd, 1)
    if not byte:
        raise SystemExit(1)
    line += byte
c = json.loads(line)
del fd, line, byte
sys.path.insert(0, c["harness_dir"])
import sandbox.worker as w
w.main(c)
"""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"




def _status_kb(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


CONFINEMENT: list[str | None] = [None]  # how the last started worker is isolated (for reports)
_LIVE: "set[WorkerBackend]" = set()  # strong references: every worker is stopped at exit


def _end_namespace(init: int) -> None:
    """Kill process 1 of a worker's pid namespace (the kernel then kills every process in it)
    and wait, up to 5 s, until it is gone or a zombie: nothing of the worker runs after that."""
    try:
        os.kill(init, signal.SIGKILL)
    except OSError:
        return
    for _ in range(500):
        try:
            with open(f"/proc/{init}/stat") as f:
                if f.read().rpartition(")")[2].split()[0] in ("Z", "X"):
                    return
        except OSError:
            return
        time.sleep(0.01)


def _own_namespaces(pid: int, kinds: tuple[str, ...] = ("user", "mnt", "pid")) -> bool:
    """Whether ``pid`` is in namespaces of these kinds other than this process's."""
    try:
        return all(os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}") for ns in kinds)
    except OSError:
        return False


def restart_workers(keep: str = "reference") -> None:
    """Stop the workers of every backend but those labelled ``keep``; the next call starts a
    fresh one (its tokenizers are made again there, without counting as a death)."""
    for backend in list(_LIVE):
        if backend.label != keep:
            backend.restart()


@atexit.register
def close_all() -> None:
    """Stop every worker of this process and remove their sandboxes (at exit, on SIGTERM)."""
    for backend in list(_LIVE):
        backend.close()


def _draw_rid() -> int:
    return secrets.randbits(52) + 1  # exact in every JSON reader


# ---- one running worker ----------------------------------------------------------------


class _Process:
    """A started worker: its sandbox, pipes, output drain and identity."""

    def __init__(self, backend: "WorkerBackend", generation: int) -> None:
        self.generation = generation
        self.limits = backend.limits
        self.buffer = bytearray()
        self.output = bytearray()
        self.output_total = 0
        self.death: str | None = None
        self.uid = self.gid = None
        self.lease: uids.UidLease | None = None
        if os.geteuid() == 0 and backend.drop_privileges:
            self.lease = uids.allocate()  # unique on the machine while this worker lives
            self.uid = self.gid = self.lease.uid
        self.sandbox = Path(tempfile.mkdtemp(prefix="bpe-worker-"))
        leftovers.record(sandbox=str(self.sandbox))
        self.proc: subprocess.Popen | None = None
        self.init_pid: int | None = None  # process 1 of the worker's pid namespace, if it has one
        self.req_w = self.resp_r = self.pidfd = None  # type: ignore[assignment]
        try:
            self._start(backend)
        except BaseException:
            self.close()  # whatever failed, the sandbox goes
            raise

    def _start(self, backend: "WorkerBackend") -> None:
        if self.gid is not None:
            # root's, readable through the worker's own group only: other workers (other
            # submissions graded at the same time) cannot read it, and this one cannot
            # rename what root later writes into it
            os.chown(self.sandbox, 0, self.gid)
            os.chmod(self.sandbox, 0o750)
        else:
            os.chmod(self.sandbox, 0o755)
        code = self.sandbox / "code"
        backend.copy_code(code)
        for package, names in WORKER_FILES.items():
            private = self.sandbox / "harness" / package
            private.mkdir(parents=True)
            (private / "__init__.py").write_text('"""The worker\'s private copy of the modules it needs."""\n')
            for name in names:
                shutil.copyfile(CODE_DIR / package / name, private / name)
        self.work = self.sandbox / "work"
        self.inputs = self.sandbox / "in"
        self.outputs = self.sandbox / "out"
        for d in (self.work, self.outputs):
            d.mkdir(mode=0o700)
            if self.uid is not None:
                os.chown(d, self.uid, self.gid)
        self.inputs.mkdir(mode=0o755)

        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        for fd in (self.req_w, self.resp_r):
            _widen_pipe(fd)
        self.spin = backend.spin
        if self.spin:
            os.set_blocking(self.resp_r, False)
        out_r, out_w = os.pipe()
        python_path, python_dirs = backend.python()
        config = {
            "fds": [req_r, resp_w],
            "code_dir": str(code),
            "adapters": backend.layout.adapters,
            "harness_dir": str(self.sandbox / "harness"),
            "work_dir": str(self.work),
            "sandbox": str(self.sandbox),
            "uid": self.uid,
            "gid": self.gid,
            "hide": backend.hide_paths(self.sandbox),
            "python_path": python_path,
            "python_dirs": python_dirs,
            "forbidden": backend.forbidden,
            "private_root": backend.private_root,
            "namespaces": backend.namespaces,
            "limits": asdict(self.limits),
            "spin": self.spin,
        }
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.work),
            "TMPDIR": str(self.work),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "BPE_IMPL": backend.package,
        }
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", BOOTSTRAP, str(req_r)],
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=out_w,
                pass_fds=(req_r, resp_w),
                cwd=str(self.work),
                env=env,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except BaseException:
            os.close(out_r)
            raise
        finally:
            for fd in (req_r, resp_w, out_w):
                os.close(fd)
        self.pid = self.pgid = self.proc.pid  # pid: the worker's own (see _adopt_inner_pid)
        self.init_pid = None  # process 1 of the worker's pid namespace, if it has one
        leftovers.record(pid=self.pid, uid=self.uid)  # its process group holds the namespace too
        # the configuration names the folders to hide: sent on the pipe, never in the argv
        # that every process can read from /proc/<pid>/cmdline
        _write_all(self.req_w, (json.dumps(config) + "\n").encode("utf-8"))
        os.set_blocking(self.req_w, False)
        self.sent_keys: set[int] = set()  # cached arguments this worker already holds
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.pidfd = None
        self.drain = threading.Thread(target=self._drain, args=(out_r,), daemon=True)
        self.drain.start()
        wait = min(self.limits.startup_timeout, self.limits.call_timeout + 10)
        # "ready" comes after the sandbox is set up and before any submission code runs
        ready = self.recv(0, wait, "starting")
        if ready[0] != "ready" or len(ready) != 3 or type(ready[2]) is not dict:
            raise self.violation(f"did not start properly ({ready!r:.200})")
        self.info = ready[2]
        self._adopt_inner_pid()
        CONFINEMENT[0] = self.confinement()  # read while the worker waits, alive, for "go"
        self.send(["go", 0])
        hello = self.recv(0, wait, "starting (importing adapters.py)")
        if hello[0] != "hello" or len(hello) != 3 or type(hello[2]) is not dict:
            raise self.violation(f"did not start properly ({hello!r:.200})")
        backend.note_loaded(hello[2])

    def _adopt_inner_pid(self) -> None:
        """In namespaces (:mod:`sandbox.userns`) the process started here only supervises; the
        worker is its grandchild. Its pid, as the worker reports it, is used for ``/proc``
        reads once checked to be that grandchild."""
        pid = self.info.get("host_pid")
        if type(pid) is not int or pid <= 0:
            return
        init = _status_kb(pid, "PPid")
        if init is not None and _status_kb(init, "PPid") == self.proc.pid:
            self.pid, self.init_pid = pid, init

    # -- output --

    def confinement(self) -> str:
        """How this worker is isolated, read from ``/proc`` (not from what the worker says)."""
        try:
            root = os.readlink(f"/proc/{self.pid}/root")
            uid = os.stat(f"/proc/{self.pid}").st_uid
        except OSError as err:
            return f"unknown ({err.strerror})"
        if root == str(self.sandbox / "root") and uid != os.geteuid():
            pids = ", own pid namespace" if self.init_pid is not None and _own_namespaces(self.pid, ("pid",)) else ""
            return "own user id, private root directory (the system, Python and the sandbox only)" + pids
        if root == str(self.sandbox / "root") and self.pid != self.proc.pid and _own_namespaces(self.pid):
            return (
                "own user, mount and pid namespaces (not root), private root directory "
                "(the system, Python and the sandbox only)"
            )
        notes = self.info.get("notes") if type(self.info.get("notes")) is list else []
        why = "; ".join(str(n) for n in notes[:3])[:300]
        if uid != os.geteuid() and type(self.info.get("closed")) is list and self.info["closed"]:
            return (
                "own user id; no private root directory here, so the harness folders are closed to "
                f"other users by file permissions instead ({why})"
            )
        who = "the grader's user id" if uid == os.geteuid() else "its own user id"
        return f"weak: runs as {who} and sees the machine's files" + (f" ({why})" if why else "")

    def _drain(self, fd: int) -> None:
        cap = self.limits.output_bytes
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                self.output_total += len(chunk)
                room = cap - len(self.output)
                if room > 0:
                    self.output += chunk[:room]
        except OSError:
            pass
        finally:
            os.close(fd)

    def output_since(self, mark: int) -> str:
        text = bytes(self.output[mark:]).decode("utf-8", "replace")
        if len(text) > OUTPUT_IN_MESSAGE:
            text = text[:OUTPUT_IN_MESSAGE] + "\n..."
        if self.output_total > len(self.output) and len(self.output) >= self.limits.output_bytes:
            text += f"\n[output truncated: {self.output_total} bytes printed, {self.limits.output_bytes} kept]"
        return text

    # -- messages --

    def send(self, message: list, refs: list[str] | None = None) -> None:
        """Send ``message``; ``refs`` (JSON fragments of cached arguments) are appended to it
        as one more list item."""
        try:
            text = fast_dumps(message)
        except (TypeError, ValueError) as err:
            raise TypeError(f"argument cannot be sent to the worker: {err}") from None
        if refs is not None:
            text = text[:-1] + ",[" + ",".join(refs) + "]]"
        data = (text + "\n").encode("utf-8")
        view = memoryview(data)
        deadline = time.monotonic() + self.limits.call_timeout
        while view:
            try:
                n = os.write(self.req_w, view[: 1 << 16])  # non-blocking: a worker that stops reading cannot block us
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise self.violation("stopped reading its input") from None
                select.select([], [self.req_w], [], 0.5)
                if self.proc.poll() is not None:
                    raise self.died("receiving its input") from None
                continue
            except BrokenPipeError:
                raise self.died("receiving its input") from None
            view = view[n:]

    def recv(self, rid: int, timeout: float, doing: str) -> list:
        """The next message for request ``rid``; kills the worker on timeout or misbehaviour."""
        deadline = time.monotonic() + timeout
        waiting = [self.resp_r] + ([self.pidfd] if self.pidfd is not None else [])
        spin = self.spin
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                values = line.count(b",") + 1
                if values > self.limits.reply_values:  # each value costs far more parsed than sent
                    raise self.violation(f"sent a reply of more than {self.limits.reply_values} values")
                try:
                    msg = V.wire_loads(line)
                except (ValueError, TypeError, RecursionError) as err:
                    raise self.violation(f"sent a malformed message ({err})") from None
                if type(msg) is not list or len(msg) < 2 or type(msg[0]) is not str or msg[1] != rid:
                    raise self.violation(f"sent an unexpected message ({line[:80]!r})")
                return msg
            if len(self.buffer) > self.limits.reply_bytes:
                raise self.violation(f"sent a reply longer than {self.limits.reply_bytes} bytes")
            if spin:  # most replies come within microseconds: poll before sleeping in select
                chunk, spin = self._poll(spin), 0.0
                if chunk is not None:
                    if chunk:
                        self.buffer += chunk
                        continue
                    raise self.died(doing)
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                self.death = f"timed out after {timeout:g} s"
                raise WorkerTimeout(f"timed out after {timeout:g} s while {doing}; the worker running your code was stopped")
            try:
                readable, _, _ = select.select(waiting, [], [], min(left, 1.0))
            except BaseException:
                self.kill()  # pytest-timeout or Ctrl-C in the middle of a call: the state is lost
                self.death = "interrupted"
                raise
            if self.resp_r in readable:
                chunk = os.read(self.resp_r, 1 << 20)
                if chunk:
                    self.buffer += chunk
                    continue
                raise self.died(doing)
            if (self.pidfd is not None and self.pidfd in readable) or (self.pidfd is None and self.proc.poll() is not None):
                # the worker exited; read whatever it managed to send first
                more = self._read_remaining()
                if more:
                    self.buffer += more
                    if b"\n" in self.buffer:
                        continue
                raise self.died(doing)

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
        while len(out) <= self.limits.reply_bytes:
            r, _, _ = select.select([self.resp_r], [], [], 0)
            if not r:
                return out
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                return out
            out += chunk

    def died(self, doing: str) -> WorkerDied:
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        code = self.proc.poll()
        if code is None:
            why = "stopped answering (it closed its channel)"
        elif code < 0:
            why = f"died ({_signal_name(-code)}{self._hint(-code)})"
        else:
            why = f"exited with status {code}"
        self.kill()
        self.death = why
        return WorkerDied(f"the worker running your code {why} while {doing}")

    def _hint(self, sig: int) -> str:
        if sig == signal.SIGXCPU:
            return f": CPU time limit of {self.limits.cpu_seconds} s"
        if sig == signal.SIGXFSZ:
            return f": file size limit of {self.limits.file_bytes} bytes"
        if sig == signal.SIGSEGV:
            return ": segmentation fault"
        return ""

    def violation(self, what: str) -> WorkerFailure:
        self.kill()
        self.death = f"broke the protocol: {what}"
        return WorkerFailure(f"the worker running your code {what}; it was stopped")

    def alive(self) -> bool:
        return self.death is None and self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGTERM the process group, SIGKILL after the grace, then sweep the user id. A
        worker in its own pid namespace is ended as a whole first (its supervisor then reaps
        the namespace's process 1 and exits, so no zombie is left to the machine's init)."""
        if self.proc is None:  # it never started
            if self.death is None:
                self.death = "stopped"
            return
        if self.init_pid is not None and self.proc.poll() is None:
            _end_namespace(self.init_pid)
            try:
                self.proc.wait(timeout=max(self.limits.term_grace, 1.0))
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.pgid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=self.limits.term_grace)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.pgid, signal.SIGKILL)  # what is left of the group, worker or not
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            pass
        if self.init_pid is not None:
            _end_namespace(self.init_pid)
        if self.uid is not None:
            # children that left the process group (setsid, double fork) still run as this uid
            uids.sweep(self.uid)
        if self.death is None:
            self.death = "stopped"

    def close(self) -> None:
        self.kill()
        for fd in (self.req_w, self.resp_r, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.req_w = self.resp_r = self.pidfd = None  # type: ignore[assignment]
        shutil.rmtree(self.sandbox, ignore_errors=True)
        if self.lease is not None:
            self.lease.release()  # after the sweep in kill(): nothing of this id is left

    def peak_rss(self) -> int | None:
        kb = _status_kb(self.pid, "VmHWM")
        return None if kb is None else kb * 1024


# directories never hidden whole: the system needs them (a repository directly inside one of
# them gets only its own folder hidden)
_SYSTEM_DIRS = {Path(p) for p in ("/", "/usr", "/etc", "/var", "/tmp", "/opt", "/lib", "/lib64", "/bin", "/sbin", "/proc", "/dev", "/sys", "/run", "/home", "/root", "/srv", "/mnt", "/media")}


# ---- the backend -----------------------------------------------------------------------


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
    ) -> None:
        self.package = impl
        # modules the worker cannot import (grading.yaml forbidden_modules; None: the defaults)
        self.forbidden = list(FORBIDDEN_MODULES if forbidden is None else forbidden)
        self.private_root = private_root  # False: as in a container that refuses mount namespaces
        self.namespaces = namespaces  # False: not root and no user namespaces, as where the kernel refuses them
        self.label = label or impl
        self.source_root = Path(root or ROOT).resolve()
        if self.source_root == ROOT:  # this checkout: only adapters.py and the package in use
            self.layout, self._only = S.Layout("stubs", "adapters.py", (impl,)), (impl, "adapters.py")
        else:  # a submission: all of it, wherever its adapters.py is
            self.layout, self._only = S.detect_layout(self.source_root) or S.Layout("no adapters", "adapters.py"), None
        self._copy_error: str | None = None
        self.limits = limits or IsolationLimits()
        self.drop_privileges = drop_privileges
        self.spin = default_spin() if spin is None else spin
        self.extra_hide = [Path(p) for p in hide]
        self._proc: _Process | None = None
        self._generation = 0
        self._deaths: dict[int, str] = {}
        self._handles: dict[int, tuple[int, int]] = {}  # our handle -> (generation, worker's)
        self._recipes: dict[int, tuple[str, tuple]] = {}  # our handle -> (adapter, args) that made it
        self._handle_counter = 0
        self._unmakeable: set[int] = set()  # handles whose making again in a fresh worker failed
        self._rid = 0
        self._rid_next = _draw_rid()  # request ids are unpredictable: see _new_rid
        self._stream: Stream | None = None
        self._mark = 0
        self._lock = threading.RLock()
        self._arg_cache: dict[int, tuple] = {}
        self._start_failures = 0
        self._start_failure: str | None = None
        self._made_files = False  # the last call copied files into the sandbox
        self._renamed: list[tuple[str, str]] = []  # (sandbox path, path the test gave) of the last call
        self._ref_counter = 0
        self._python: tuple[list[str], list[str]] | None = None
        _LIVE.add(self)

    # -- paths the worker must not see --

    def keep_out(self) -> list[Path]:
        """Folders whose contents the worker must never see (see :meth:`hide_paths`)."""
        found = [ROOT, ROOT.parent, self.source_root, self.source_root.parent, Path("/autograder"), *self.extra_hide]
        return [p for p in found if p.resolve() not in _SYSTEM_DIRS]

    def python(self) -> tuple[list[str], list[str]]:
        """The worker's ``sys.path`` from this environment and the directories it needs
        (:func:`sandbox.pyenv.worker_python`), computed once per backend."""
        if self._python is None:
            self._python = worker_python(self.keep_out())
        return self._python

    def hide_paths(self, sandbox: Path) -> list[str]:
        """Directories the worker must not see: the harness checkout and the folder it sits
        in (sibling checkouts hold the same tests and reference), the submission's original
        folder and the one holding it (other students' submissions, in a batch) and
        /autograder. Covered with empty mounts inside the private root, or closed by file
        permissions where there is none. A directory holding something the worker needs (the
        sandbox, Python itself) is not hidden whole: its other sub-directories are, two levels
        down."""
        candidates = [ROOT, self.source_root, self.source_root.parent, Path("/autograder"), *self.extra_hide]
        if ROOT.parent.resolve() not in _SYSTEM_DIRS:
            candidates.insert(0, ROOT.parent)
        needed = [Path(p).resolve() for p in (sandbox, sys.executable, *self.python()[1])]
        out: list[str] = []

        def add(c: Path, depth: int) -> None:
            c = c.resolve()
            if not c.is_dir() or c in _SYSTEM_DIRS or any(c == Path(o) or Path(o) in c.parents for o in out):
                return
            if not any(n == c or c in n.parents for n in needed):
                out.append(str(c))
            elif depth > 0:
                try:
                    children = sorted(p for p in c.iterdir() if p.is_dir() and not p.is_symlink())
                except OSError:
                    return
                for child in children:
                    add(child, depth - 1)

        for c in candidates:
            if c is not None:
                add(Path(c), 2)
        return out

    # -- the worker's life --

    def copy_code(self, dest: Path) -> None:
        """Copy the submission (or this checkout's adapters.py and package) into ``dest``,
        links and hard links handled as :mod:`harness.submission` says. A submission too big
        to copy is broken, once and for all (not re-walked for every test)."""
        if self._copy_error is None:
            try:
                found = S.copy_submission(self.source_root, dest, self._only)
            except S.SubmissionError as err:
                self._copy_error = str(err)
            else:
                if self.source_root != ROOT:  # a submission (not this checkout's student/ or reference/)
                    S.LOADED["left_out"] = found.notes
                return
        raise BrokenImplementation(self._copy_error)

    def note_loaded(self, hello: dict) -> None:
        """Remember what the worker said on loading adapters.py (stand-ins for missing packages)."""
        if self.source_root != ROOT:  # a submission (not this checkout's student/ or reference/)
            S.LOADED["layout"] = self.layout.describe()
            missing = hello.get("stand_ins")
            if type(missing) is list:
                S.LOADED["stand_ins"] = [str(m)[:100] for m in missing[:20]]

    def _worker(self) -> _Process:
        __tracebackhide__ = True
        if self._proc is None or not self._proc.alive():
            if self._proc is not None:
                self._retire()
            if self._start_failure is not None and self._start_failures >= 2:
                raise BrokenImplementation(self._start_failure)
            if self._copy_error is not None:
                raise BrokenImplementation(self._copy_error)
            self._generation += 1
            try:
                self._proc = _Process(self, self._generation)
            except WorkerFailure as err:
                # dying or hanging while importing adapters.py happens again on every start:
                # after the second time the submission counts as broken, without more restarts
                self._start_failures += 1
                self._start_failure = f"adapters.py could not be imported: {err}"
                raise BrokenImplementation(self._start_failure) from None
            self._start_failures = 0
            self._mark = 0
        return self._proc

    def _retire(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.death is None:
            code = proc.proc.poll()
            proc.death = f"exited with status {code}" if code is not None and code >= 0 else (
                f"died ({_signal_name(-code)})" if code is not None else "stopped"
            )
        self._deaths[proc.generation] = proc.death
        proc.close()
        self._proc = None

    def paused(self):
        """A context in which every process of the running worker is stopped (see
        :func:`sandbox.proctree.frozen`); it yields how many were stopped (0 if none runs)."""
        proc = self._proc
        if proc is None or not proc.alive():
            return contextlib.nullcontext(0)
        return proctree.frozen(proc.pid, proc.uid)

    def restart(self) -> None:
        """Stop the running worker (not a failure of the submission); its tokenizers are made
        again in the next one."""
        with self._lock:
            self._abort_stream()
            if self._proc is not None:
                self._proc.death = "was restarted"
                self._retire()

    def close(self) -> None:
        """Stop the worker and every process it left behind; remove its sandbox."""
        with self._lock:
            if self._proc is not None:
                self._retire()
            _LIVE.discard(self)

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
            refs = None
            if args is not None:
                args, refs = self._split_args(args, proc)
                message = [*message[:-1], args, message[-1]] if message[0] == "call" else [*message, args]
            try:
                proc.send([message[0], rid, *message[1:]], refs)
                reply = proc.recv(rid, self.limits.call_timeout, doing)
            except WorkerFailure as err:
                raise type(err)(self._with_output(str(err), proc, mark)) from None
            return self._settle(reply, proc, mark, doing)

    def _settle(self, reply: list, proc: _Process, mark: int, doing: str) -> Any:
        __tracebackhide__ = True
        if reply[0] == "ok" and len(reply) == 3:
            return reply[2]
        if reply[0] == "err" and len(reply) == 3 and type(reply[2]) is dict:
            raise self._student_error(reply[2], proc, mark)
        raise proc.violation(f"sent an unexpected reply {reply[0]!r}")

    def _with_output(self, message: str, proc: _Process, mark: int) -> str:
        time.sleep(0.02)  # let the drain thread catch up with what was printed last
        out = proc.output_since(mark)
        return f"{message}\nyour code printed:\n{out}" if out.strip() else message

    def _student_error(self, info: dict, proc: _Process, mark: int) -> BaseException:
        kind = info.get("kind")
        message = _cut(str(info.get("message", "")), MESSAGE_CHARS)  # the worker's own cap cannot be trusted
        if kind == "broken":
            return BrokenImplementation(message)
        if kind == "wrong":
            return V.WrongResult(message)
        mro = [str(n)[:100] for n in info.get("mro", [])[:50]] if type(info.get("mro")) is list else []
        cls = None
        for name in mro:
            candidate = getattr(builtins, name, None)
            if isinstance(candidate, type) and issubclass(candidate, BaseException):
                cls = candidate
                break
        shown = mro[0] if mro else "an exception"
        tb = str(info.get("traceback", ""))[-MESSAGE_CHARS:]
        if cls is None or not issubclass(cls, Exception):
            err: BaseException = StudentExit(f"your code raised {shown}({message!r}), which the tests treat as a failure")
        else:
            err = None
            for candidate in [cls, *cls.__mro__[1:]]:
                try:
                    err = candidate(message)
                    break
                except Exception:
                    continue
        if tb:
            err.add_note(f"raised by {shown} in the isolated worker:\n{tb.rstrip()}")
        out = proc.output_since(mark)
        if out.strip():
            err.add_note(f"your code printed:\n{out}")
        return err

    def _split_args(self, args: list, proc: _Process) -> tuple[list, list[str]]:
        """Large list/dict arguments (GPT-2's vocabulary and merges, long texts' ids) are
        serialized once and kept by the worker; later calls send a reference. A cached
        serialization is reused only while the object is still equal to a snapshot of it."""
        args, refs = list(args), []
        for i, value in enumerate(args):
            if type(value) not in (list, dict) or len(value) < REF_MIN:
                continue
            if type(value) is list and type(value[0]) is int:
                continue  # ids to decode are rarely sent twice; vocabularies and merges are
            entry = self._arg_cache.get(id(value))
            if entry is None or entry[0] is not value or type(entry[1]) is not type(value) or entry[1] != value:
                self._ref_counter += 1
                entry = (value, plain_copy(value), self._ref_counter, fast_dumps(value))
                self._arg_cache.pop(id(value), None)
                self._arg_cache[id(value)] = entry
                while len(self._arg_cache) > ARG_CACHE:
                    self._arg_cache.pop(next(iter(self._arg_cache)))
            _, _, key, text = entry
            if key in proc.sent_keys:
                refs.append(f"[{i},{key},null]")
            elif len(proc.sent_keys) < REF_SLOTS:
                proc.sent_keys.add(key)
                refs.append(f"[{i},{key},{text}]")
            else:
                continue
            args[i] = None
        return args, refs

    def _resolve(self, handle: int) -> int:
        __tracebackhide__ = True
        generation, theirs = self._handles[handle]
        if generation != self._generation or self._proc is None or not self._proc.alive():
            if self._proc is not None and self._proc.generation == generation and not self._proc.alive():
                self._retire()
            why = self._deaths.get(generation, "was restarted")
            lost = f"the worker running your code {why} after this tokenizer was made, and the tokenizer died with it"
            if handle in self._unmakeable:
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

    # -- path arguments --

    def _rewrite_paths(self, key: str, args: tuple, proc: _Process, rid: int) -> tuple[list, list[tuple[Path, str]]]:
        """Path arguments replaced by copies in the worker's sandbox (inputs) or places it may
        write (outputs, copied back by :meth:`_copy_back`); ``self._renamed`` maps each
        sandbox path back to the one the test passed, for error messages."""
        self._renamed = []
        kinds = PATH_ARGS.get(key, {})
        if not kinds and not any(isinstance(a, os.PathLike) for a in args):
            return list(args), []
        out, copy_back = list(args), []
        for i, value in enumerate(args):
            kind = kinds.get(i)
            if kind is None and isinstance(value, os.PathLike):
                kind = "in"
            if kind is None or not isinstance(value, (str, os.PathLike)):
                continue
            original = Path(os.fspath(value))
            self._made_files = True
            if kind == "in":
                folder = proc.inputs / f"{rid}-{i}"
                folder.mkdir(mode=0o755)
                target = folder / (original.name or "input")
                if original.is_file():
                    shutil.copyfile(original, target)
                    os.chmod(target, 0o444)  # root-owned and read-only when the worker is not root
                out[i] = str(target)
            else:
                folder = proc.outputs / f"{rid}-{i}"
                folder.mkdir(mode=0o700)
                if proc.uid is not None:
                    os.chown(folder, proc.uid, proc.gid)
                target = folder / (original.name or "output")
                if not original.parent.is_dir():  # as it would fail locally
                    target = folder / "missing-directory" / target.name
                out[i] = str(target)
                copy_back.append((target, str(original)))
            self._renamed.append((out[i], os.fspath(value)))
        return out, copy_back

    def _unsandboxed(self, err: BaseException) -> None:
        """Put the paths the test gave back in place of sandbox paths in ``err``'s message and
        notes, so a student reads the path they passed (as they would in-process)."""
        if not self._renamed:
            return

        def fix(text: str) -> str:
            for sandboxed, original in self._renamed:
                text = text.replace(sandboxed, original)
                folder, given = os.path.dirname(sandboxed), os.path.dirname(original)
                if folder and given:
                    text = text.replace(folder + os.sep, given + os.sep)
            return text

        if err.args and all(type(a) is str for a in err.args):
            err.args = tuple(fix(a) for a in err.args)
        notes = getattr(err, "__notes__", None)
        if type(notes) is list:
            notes[:] = [fix(n) if type(n) is str else n for n in notes]

    def _copy_back(self, pairs: list[tuple[Path, str]], proc: _Process) -> None:
        for sandboxed, original in pairs:
            try:
                fd = os.open(sandboxed, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue  # not written (the test will say so)
            with os.fdopen(fd, "rb") as src:
                st = os.fstat(src.fileno())
                if not stat.S_ISREG(st.st_mode) or (proc.uid is not None and st.st_uid != proc.uid):
                    continue  # only a regular file the worker wrote itself, never a link
                data = src.read(self.limits.file_bytes + 1)[: self.limits.file_bytes]
            Path(original).write_bytes(data)

    def _cleanup_inputs(self, proc: _Process) -> None:
        if not self._made_files:
            return
        self._made_files = False
        for d in (proc.inputs, proc.outputs):
            for entry in list(d.iterdir()) if d.is_dir() else []:
                shutil.rmtree(entry, ignore_errors=True)

    # -- the Backend protocol --

    def call(self, adapter: str, args: tuple, returns_handle: bool) -> Any:
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            proc = self._worker()
            wire_args, copy_back = self._rewrite_paths(adapter, args, proc, self._rid_next)
            try:
                value = self._request(["call", adapter, returns_handle], f"running adapters.{adapter}(...)", wire_args)
                if copy_back and self._proc is proc:
                    self._copy_back(copy_back, proc)
            except BaseException as err:
                self._unsandboxed(err)
                raise
            finally:
                if self._proc is proc:
                    self._cleanup_inputs(proc)
            if returns_handle:
                if type(value) is not int:
                    raise proc.violation("sent a handle that is not an int")
                self._handle_counter += 1
                ours = self._handle_counter
                self._handles[ours] = (proc.generation, value)
                self._recipes[ours] = (adapter, args)
                return ours
            return value

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
        ``/proc/<pid>/clear_refs`` before the probe and read after it; a dict result gets
        ``rss_peak`` (bytes the worker's resident memory grew above its size before the
        probe, plus the peak private memory of its other processes, sampled: a forked child
        doing the work counts), ``other_processes`` and ``rss_before``. Tests bounding memory should check ``rss_peak`` too."""
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            theirs = self._resolve(handle) if handle is not None else None
            proc = self._worker()
            wire_args, _ = self._rewrite_paths(f"probe:{probe}", args, proc, self._rid_next)
            before = self._reset_peak(proc)
            try:
                with proctree.TreeMemory(proc.pid, proc.uid) as others:  # children doing the work count too
                    value = self._request(["probe", probe, theirs, wire_args], f"running probe {probe}")
            except BaseException as err:
                self._unsandboxed(err)
                raise
            finally:
                if self._proc is proc:
                    self._cleanup_inputs(proc)
            peak = proc.peak_rss()
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

    def _reset_peak(self, proc: _Process) -> int | None:
        try:
            with open(f"/proc/{proc.pid}/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current VmRSS (Linux >= 4.0)
        except OSError:
            return None
        kb = _status_kb(proc.pid, "VmRSS")
        return None if kb is None else kb * 1024

    def stream(self, handle: int, name: str, chunks: Iterable[str]) -> Iterator[Any]:
        __tracebackhide__ = True
        with self._lock:
            self._abort_stream()
            theirs = self._resolve(handle)
            proc = self._proc
            self._new_rid()
            stream = Stream(self, proc, self._rid, name)
            self._stream = stream
            try:
                proc.send(["stream", self._rid, theirs, name])
            except WorkerFailure:
                self._stream = None
                raise
        return stream.run(iter(chunks))

    def _abort_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.abort()
