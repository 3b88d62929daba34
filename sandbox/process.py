"""One running worker, seen from the trusted side: its sandbox, start, output, end.

:class:`WorkerProcess` makes the worker's sandbox folder (the code, a private copy of the
packages it runs from (:mod:`sandbox.workercode`), its work, input and output folders), starts
its process (:mod:`sandbox.launch`), sends it its configuration on the
request pipe, waits for it to confine itself (``ready``) and import ``adapters.py``
(``hello``), drains its stdout/stderr with a cap, and ends it (process group, pid namespace,
user id) and its sandbox. Messages go through the :class:`sandbox.channel.TrustedEnd` it owns,
whose :class:`~sandbox.channel.ChannelError` s it turns into failures, stopping the worker.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path

from harness import submission as S
from harness.breaker import TimeLost
from harness.in_progress import note_frames, told_frames

from . import confinement, hiding, launch, leftovers, proctree, stacks, uids, workercode
from .channel import Broken, ChannelError, Closed, TrustedEnd, encode, widen_pipe
from .closing import ClosedFolders
from .failures import WorkerDied, WorkerFailure, WorkerTimeout, died_of, signal_hint, signal_name
from .spec import Startup, WorkerSpec

OUTPUT_IN_MESSAGE = 2000  # characters of captured output quoted in a failure


class WorkerProcess:
    """One worker: made from its :class:`~sandbox.spec.WorkerSpec`, then :meth:`start` makes its
    sandbox, starts it and says what it learned; then its pipes, output drain and identity."""

    def __init__(self, spec: WorkerSpec, generation: int, folders: ClosedFolders | None = None) -> None:
        self.spec, self.generation, self.limits, self.spin = spec, generation, spec.limits, spec.spin
        self.folders = folders  # its backend's: what it may close to other users is held there first
        self.learned = Startup()  # what start() found out so far, also when it failed
        self.output = bytearray()
        self.output_total = 0
        self.death: str | None = None
        self.closed = False  # close() ran: the sandbox is gone
        self.uid = self.gid = None
        self.lease: uids.UidLease | None = None
        self.sandbox: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.guard: proctree.TreeLimit | None = None
        self.init_pid: int | None = None  # process 1 of the worker's pid namespace, if it has one
        self.fds: list[int] = []  # the trusted side's pipe ends and the worker's pidfd, closed by close()
        self.stack_r: int | None = None  # where the worker dumps its stack when asked (sandbox.stacks)
        self.end: TrustedEnd | None = None  # the channel to the worker, once it runs
        self.sent_keys: set[int] = set()  # cached arguments this worker already holds

    def start(self) -> Startup:
        """Make the sandbox, start the worker in it and wait until it has imported adapters.py;
        what it learned (also kept in :attr:`learned`, when it fails). Whatever fails, the
        sandbox goes (:class:`~harness.submission.SubmissionError`: the code could not be copied)."""
        try:
            if os.geteuid() == 0 and self.spec.drop_privileges:
                self.lease = uids.allocate()  # unique on the machine while this worker lives
                self.uid = self.gid = self.lease.uid
            self.sandbox = Path(tempfile.mkdtemp(prefix="bpe-worker-"))
            leftovers.record(sandbox=str(self.sandbox))
            self._start()
        except BaseException:
            self.close()
            raise
        return self.learned

    def _start(self) -> None:
        code = self._make_folders()
        req_r, req_w = os.pipe()
        self.fds.append(req_w)
        resp_r, resp_w = os.pipe()
        self.fds.append(resp_r)
        for fd in (req_w, resp_r):
            widen_pipe(fd)
        if self.spin:
            os.set_blocking(resp_r, False)
        out_r, out_w = os.pipe()
        self.stack_r, stack_w = os.pipe()  # the worker's stack dump on a timeout (sandbox.stacks)
        self.fds.append(self.stack_r)
        os.set_blocking(self.stack_r, False)
        config = self._config(code, req_r, resp_w, stack_w)
        self._spawn(req_r, resp_w, stack_w, out_r, out_w)
        # the configuration names the folders to hide: sent on the pipe, never in the argv
        # that every process can read from /proc/<pid>/cmdline
        launch.send_config(req_w, config)
        os.set_blocking(req_w, False)
        try:
            pidfd: int | None = os.pidfd_open(self.pid)
            self.fds.append(pidfd)
        except (AttributeError, OSError):
            pidfd = None
        lim = self.limits
        self.end = TrustedEnd(req_w, resp_r, self.proc, pidfd, send_timeout=lim.call_timeout, spin=self.spin,
                              reply_bytes=lim.reply_bytes, reply_values=lim.reply_values)
        self.drain = threading.Thread(target=self._drain, args=(out_r,), daemon=True)
        self.drain.start()
        self._handshake()

    def _make_folders(self) -> Path:
        """The sandbox's folders: the code (returned), the private harness copy, work, in, out."""
        if self.gid is not None:
            # root's, readable through the worker's own group only: other workers (other
            # submissions graded at the same time) cannot read it, and this one cannot
            # rename what root later writes into it
            os.chown(self.sandbox, 0, self.gid)
            os.chmod(self.sandbox, 0o750)
        else:
            os.chmod(self.sandbox, 0o755)
        code = self.sandbox / "code"
        # the folder the sandboxes are made in (TMPDIR) may lie inside the submission: its other
        # workers' sandboxes and the grading's own files are not the submission's
        found = S.copy_submission(self.spec.source_root, code, self.spec.only, outside=(self.sandbox.parent,))
        self.learned = replace(self.learned, left_out=tuple(found.notes))
        if self.uid is not None:  # the worker's own copy, writable (in a private root too: confine._own_copy)
            for path in (code, *code.rglob("*")):
                os.lchown(path, self.uid, self.gid)
        workercode.ship(self.sandbox / "harness")
        self.work = self.sandbox / "work"
        self.inputs = self.sandbox / "in"
        self.outputs = self.sandbox / "out"
        for d in (self.work, self.outputs):
            d.mkdir(mode=0o700)
            if self.uid is not None:
                os.chown(d, self.uid, self.gid)
        self.inputs.mkdir(mode=0o755)
        return code

    def _config(self, code: Path, req_r: int, resp_w: int, stack_w: int) -> dict:
        """What the worker is told on its request pipe (:func:`sandbox.worker.main`)."""
        spec = self.spec
        hide = hiding.hide_paths(spec.source_root, spec.hidden, self.sandbox, spec.python_dirs)
        if self.uid is not None and self.folders is not None:  # it may close them (no private root)
            self.folders.hold(hide)
        return {
            "fds": [req_r, resp_w, stack_w],
            "code_dir": str(code),
            "adapters": spec.adapters,
            "harness_dir": str(self.sandbox / "harness"),
            "work_dir": str(self.work),
            "sandbox": str(self.sandbox),
            "uid": self.uid,
            "gid": self.gid,
            "hide": hide,
            "python_path": list(spec.python_path),
            "python_dirs": list(spec.python_dirs),
            "forbidden": list(spec.forbidden),
            "private_root": spec.private_root,
            "namespaces": spec.namespaces,
            "limits": asdict(self.limits),
            "spin": self.spin,
        }

    def _spawn(self, req_r: int, resp_w: int, stack_w: int, out_r: int, out_w: int) -> None:
        """Start the worker's process (:func:`sandbox.launch.spawn`) on these pipes."""
        self.proc = launch.spawn(self.spec.package, self.work, (req_r, resp_w, stack_w), out_r, out_w, self.spec.hash_seed)
        self.pid = self.pgid = self.proc.pid  # pid: the worker's own (see _adopt_inner_pid)
        self.init_pid = None  # process 1 of the worker's pid namespace, if it has one
        leftovers.record(pid=self.pid, uid=self.uid)  # its process group holds the namespace too

    def _handshake(self) -> None:
        """Wait for "ready" (confined, no submission code run yet), read from ``/proc`` how it
        is confined, say "go", then wait for "hello" (adapters.py imported)."""
        wait = min(self.limits.startup_timeout, self.limits.call_timeout + 10)
        # "ready" comes after the sandbox is set up and before any submission code runs
        ready = self.recv(0, wait, "starting")
        if ready[0] != "ready" or len(ready) != 3 or type(ready[2]) is not dict:
            raise self.violation(f"did not start properly ({ready!r:.200})")
        self.info = ready[2]
        if self.folders is not None and not self.info.get("closed"):
            self.folders.release()  # a private root hides them: none of the machine's was closed
        self._adopt_inner_pid()
        self._see_outputs()
        if self.limits.memory_mb:  # for all its processes together, not each
            self.guard = proctree.TreeLimit(self.pid, self.uid, self.init_pid, self.limits.memory_mb << 20)
        # read while the worker waits, alive, for "go"
        self.learned = replace(self.learned, confinement=self.confinement())
        self.send(["go", 0])
        hello = self.recv(0, wait, "starting (importing adapters.py)")
        if hello[0] != "hello" or len(hello) != 3 or type(hello[2]) is not dict:
            raise self.violation(f"did not start properly ({hello!r:.200})")
        missing = hello[2].get("stand_ins")
        stand_ins = tuple(str(m)[:100] for m in missing[:20]) if type(missing) is list else None
        self.learned = replace(self.learned, loaded=True, stand_ins=stand_ins)

    def _adopt_inner_pid(self) -> None:
        """In namespaces (:mod:`sandbox.userns`) the process started here only supervises; the
        worker is its grandchild. Its pid, as the worker reports it, is used for ``/proc``
        reads once checked to be that grandchild."""
        pid = self.info.get("host_pid")
        if type(pid) is not int or pid <= 0:
            return
        init = proctree.status_kb(pid, "PPid")
        if init is not None and proctree.status_kb(init, "PPid") == self.proc.pid:
            self.pid, self.init_pid = pid, init

    def _see_outputs(self) -> None:
        """In its private root the worker's ``out`` folder is a tmpfs of its own (nothing it
        writes reaches the machine's disk): reach it through ``/proc/<pid>/root``."""
        try:
            confined = os.readlink(f"/proc/{self.pid}/root") == str(self.sandbox / "root")
        except OSError:
            return
        if confined:
            self.outputs = Path(f"/proc/{self.pid}/root") / os.path.realpath(self.sandbox / "out").lstrip("/")

    def worker_path(self, path: Path) -> str:
        """``path`` in the output folder (:attr:`outputs`) as the worker names it."""
        return str(self.sandbox / "out" / path.relative_to(self.outputs))

    # -- messages --

    def send(self, message: list, refs: list[str] | None = None) -> None:
        """Send ``message`` (``refs``: see :func:`sandbox.channel.encode`)."""
        self.send_encoded(encode(message, refs))

    def send_encoded(self, data: bytes) -> None:
        """Write a line made by :func:`sandbox.channel.encode`; a worker that stops reading or
        dies meanwhile is stopped, and the failure raised."""
        try:
            self.end.send_encoded(data)
        except ChannelError as err:
            raise self._failure(err) from None

    def recv(self, rid: int, timeout: float, doing: str) -> list:
        """The next message for request ``rid``; the worker is stopped on timeout or
        misbehaviour, and when the wait is interrupted (a test's timeout, Ctrl-C: the channel
        is then out of step)."""
        try:
            return self.end.recv(rid, timeout, doing)
        except ChannelError as err:
            raise self._failure(err) from None
        except BaseException as err:
            if self.death is None:
                if isinstance(err, TimeLost):  # a test's time limit: its message says where the code was
                    note_frames(err, self.where())
                self.interrupted()
            raise

    def _failure(self, err: ChannelError) -> WorkerFailure:
        if isinstance(err, Closed):
            return self.died(err.doing)
        if isinstance(err, Broken):
            return self.violation(err.what)
        return self.timed_out(err.timeout, err.doing)

    # -- output --

    def confinement(self) -> str:
        """How this worker is isolated, read from ``/proc`` (:func:`sandbox.confinement.describe`)."""
        return confinement.describe(self.pid, self.proc.pid, self.init_pid, self.sandbox / "root", self.info)

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

    def with_output(self, message: str, mark: int) -> str:
        """``message``, then what the worker printed since ``mark`` (if anything)."""
        time.sleep(0.02)  # let the drain thread catch up with what was printed last
        out = self.output_since(mark)
        return f"{message}\nyour code printed:\n{out}" if out.strip() else message

    def output_since(self, mark: int) -> str:
        text = bytes(self.output[mark:]).decode("utf-8", "replace")
        if len(text) > OUTPUT_IN_MESSAGE:
            text = text[:OUTPUT_IN_MESSAGE] + "\n..."
        if self.output_total > len(self.output) and len(self.output) >= self.limits.output_bytes:
            text += f"\n[output truncated: {self.output_total} bytes printed, {self.limits.output_bytes} kept]"
        return text

    # -- how it fails and ends --

    def died(self, doing: str) -> WorkerDied:
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        code = self.proc.poll()
        over = self.guard.over if self.guard is not None else None  # why the guard stopped the worker
        if over is not None:
            why = f"was stopped: {over}"
        elif code is None:
            why = "stopped answering (it closed its channel)"
        elif code < 0:
            why = f"died ({signal_name(-code)}{signal_hint(-code, self.limits)})"
        else:
            why = f"exited with status {code}"
        self.kill()
        self.death = why
        return died_of(code, over is not None, f"the worker running your code {why} while {doing}")

    def exited(self) -> bool:
        return self.proc.poll() is not None

    def where(self) -> list[str]:
        """Where the worker's code is now: the submission's frames, innermost last, from the
        stack it dumps when asked (:mod:`sandbox.stacks`); ``[]`` when it does not say in time."""
        if self.death is not None or self.proc is None or self.proc.poll() is not None:
            return []
        dump = stacks.ask(self.pid, self.stack_r)
        return stacks.submission_frames(dump, str(self.sandbox / "code"), str(self.sandbox / "harness"))

    def timed_out(self, timeout: float, doing: str) -> WorkerTimeout:
        where = told_frames(self.where())
        self.kill()
        self.death = f"timed out after {timeout:g} s"
        return WorkerTimeout(f"timed out after {timeout:g} s while {doing}; the worker running your code was stopped{where}")

    def interrupted(self) -> None:
        self.kill()
        self.death = "interrupted"

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
        if self.guard is not None:
            self.guard.close()
        if self.proc is None:  # it never started
            if self.death is None:
                self.death = "stopped"
            return
        if self.init_pid is not None and self.proc.poll() is None:
            proctree.end_namespace(self.init_pid)
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
            proctree.end_namespace(self.init_pid)
        if self.uid is not None:
            # children that left the process group (setsid, double fork) still run as this uid
            uids.sweep(self.uid)
        if self.death is None:
            self.death = "stopped"

    def close(self) -> None:
        self.kill()
        fds, self.fds = self.fds, []
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.closed = True
        if self.sandbox is not None:
            shutil.rmtree(self.sandbox, ignore_errors=True)
        if self.lease is not None:
            self.lease.release()  # after the sweep in kill(): nothing of this id is left

    def peak_rss(self) -> int | None:
        kb = proctree.status_kb(self.pid, "VmHWM")
        return None if kb is None else kb * 1024

