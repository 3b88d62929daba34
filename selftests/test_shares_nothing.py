"""The worker shares nothing with the machine (issue 23), as root and as an ordinary user.

A probe submission does, during grading, what a hostile one would: connect to a listener the
test holds on 127.0.0.1, create System V IPC objects, and so on; each rule is checked from
outside the worker, as root (a dedicated user id) and as an ordinary user (unprivileged user
namespaces, run through :func:`selftests.test_nonroot.as_user`).

Rules:
* network: the worker's network namespace holds only a loopback device; nothing outside it,
  the grader's own listening sockets included, is reachable, and its own loopback works;
* IPC: System V shared memory, message queues and semaphores a worker makes are not the
  machine's and are gone when it ends;
* the isolation line says both, and says ``weak`` where the worker shares them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import regex

from . import test_nonroot as N
from .support import ROOT

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="needs root (and to become an ordinary user)"),
    pytest.mark.timeout(300),
]

PROBE = r'''
import ctypes, ctypes.util, os, socket, time

SO = "_regex" + __import__("sysconfig").get_config_var("EXT_SUFFIX")

def run_save_tokenizer(vocab, merges, vocab_path, merges_path):
    for path, value in ((vocab_path, vocab), (merges_path, merges)):
        with open(path, "w") as f:
            f.write(repr(value))


def run_pretokenize(text):
    """send:PORT:DATA connects to 127.0.0.1:PORT and sends DATA; interfaces: the network
    devices it has; sockets: whether it can make one of each family; loopback: a round trip to itself on 127.0.0.1; ipc:KIND:KEY makes a System V
    object of that kind (shm, msg, sem) with that key."""
    what, _, arg = text.partition(":")
    # errors raised as they are (the trusted side words them)
    if what == "load":  # HOW:PLACE: load the copied extension module from PLACE
        how, _, place = arg.partition(":")
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "student", "fastre", SO)
        if place != "code":
            folder = {"work": os.getcwd(), "tmp": "/tmp", "shm": "/dev/shm"}[place]
            with open(path, "rb") as src, open(os.path.join(folder, SO), "wb") as dst:
                dst.write(src.read())
            path = os.path.join(folder, SO)
        if how == "ctypes":
            ctypes.CDLL(path)
        elif how == "spec":
            import importlib.util
            spec = importlib.util.spec_from_file_location("_regex", path)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        else:
            import student.fastre._regex
        return ["loaded"]
    if what == "memory":  # ROUTE: make native code run from memory
        import mmap
        if arg == "memfd":
            os.memfd_create("code")
        elif arg == "anonymous":
            mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        elif arg == "private-copy":
            with open(ctypes.util.find_library("c") and "/proc/self/exe", "rb") as f:
                mmap.mmap(f.fileno(), 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        elif arg == "mprotect":
            buf = mmap.mmap(-1, 4096)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            if libc.mprotect(ctypes.addressof(ctypes.c_char.from_buffer(buf)), 4096, 7) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        elif arg == "proc-mem":
            open("/proc/self/mem", "r+b").close()
        return ["allowed"]
    try:
        if what == "send":
            port, _, data = arg.partition(":")
            with socket.create_connection(("127.0.0.1", int(port)), timeout=3) as s:
                s.sendall(data.encode())
            return ["sent"]
        if what == "children":  # N children, each holding MB megabytes for a while
            n, _, mb = arg.partition(":")
            kids = []
            for _ in range(int(n)):
                pid = os.fork()
                if pid == 0:
                    held = bytearray(int(mb) << 20)
                    held[::4096] = b"x" * len(held[::4096])
                    time.sleep(4)
                    os._exit(0)
                kids.append(pid)
            return ["done", sum(os.waitpid(k, 0)[1] == 0 for k in kids)]
        if what == "writable":  # every folder it may write in: [path, noexec, MB, files]
            # below a folder of a read-only mount only another mount can be written: the walk
            # enters those folders only on the way to a mount point (all of them where the
            # mount table cannot be read)
            try:
                with open("/proc/self/mountinfo") as f:
                    mounts = [line.split()[4] for line in f]
            except OSError:
                mounts = None
            found = []
            for top, dirs, _ in os.walk("/"):
                if top in ("/proc", "/sys"):
                    dirs[:] = []
                    continue
                st = os.statvfs(top)
                if mounts is not None and st.f_flag & os.ST_RDONLY:
                    below = [os.path.join(top, d) for d in dirs]
                    dirs[:] = [d for d, p in zip(dirs, below) if any(m == p or m.startswith(p + "/") for m in mounts)]
                if os.access(top, os.W_OK):
                    found.append([top, bool(st.f_flag & os.ST_NOEXEC), st.f_blocks * st.f_frsize >> 20, st.f_files])
            code = os.path.dirname(os.path.abspath(__file__))
            tree = [(top, d, f) for top, d, f in os.walk(code)]
            entries = sum(1 + len(d) + len(f) for _, d, f in tree)
            mb = sum(os.lstat(os.path.join(top, n)).st_size for top, _, f in tree for n in f) >> 20
            return [found, code, [mb + 1, entries], bool(os.statvfs(code).f_flag & os.ST_NOEXEC), os.access(code, os.W_OK)]
        if what == "spin":  # N busy processes, each double-forked into a session of its own
            for _ in range(int(arg)):
                middle = os.fork()
                if middle == 0:
                    if os.fork() == 0:
                        os.setsid()
                        while True:
                            pass
                    os._exit(0)
                os.waitpid(middle, 0)
            return ["spinning"]
        if what == "interfaces":
            return sorted(name for _, name in socket.if_nameindex())
        if what == "sockets":  # a socket of each family: made or refused
            made = []
            for family in ("AF_INET", "AF_INET6", "AF_UNIX"):
                try:
                    socket.socket(getattr(socket, family)).close()
                    made.append(f"{family}: made")
                except OSError:
                    made.append(f"{family}: refused")
            return made
        if what == "loopback":
            with socket.socket() as server:
                server.bind(("127.0.0.1", 0))
                server.listen(1)
                with socket.create_connection(server.getsockname(), timeout=3) as c:
                    c.sendall(b"echo")
                    conn, _ = server.accept()
                    with conn:
                        return ["loopback", conn.recv(10).decode()]
        if what == "key":  # DESC: a key in the kernel keyring of its user id (which outlives it)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            made = libc.syscall(ctypes.c_long(248), b"user", arg.encode(), b"payload", ctypes.c_long(7), ctypes.c_long(-4))
            return ["made" if made >= 0 else "failed", os.strerror(ctypes.get_errno()) if made < 0 else ""]
        if what == "ipc":
            kind, _, key = arg.partition(":")
            libc = ctypes.CDLL(None, use_errno=True)
            made = {"shm": lambda k: libc.shmget(k, 1 << 20, 0o1600),
                    "msg": lambda k: libc.msgget(k, 0o1600),
                    "sem": lambda k: libc.semget(k, 1, 0o1600)}[kind](int(key))
            return ["made" if made >= 0 else "failed", os.strerror(ctypes.get_errno()) if made < 0 else ""]
    except OSError as err:
        return ["failed", err.strerror or type(err).__name__]
    return ["unknown request"]
'''

# runs the probe in an isolated worker: argv[1] the submission, argv[2] the requests (JSON);
# prints, as JSON, each reply, what the machine's /proc/sysvipc holds while the worker lives
# and after it ended, and the isolation line
SCRIPT = r"""
import json, sys
from sandbox.backend import WorkerBackend
from sandbox.limits import IsolationLimits

def sysv():
    keys = {}
    for kind in ("shm", "msg", "sem"):
        with open("/proc/sysvipc/" + kind) as f:
            keys[kind] = [int(line.split()[0]) for line in list(f)[1:]]
    return keys

options = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
limits = IsolationLimits(**{"call_timeout": 20, **options.pop("limits", {})})
b = WorkerBackend("student", sys.argv[1], limits, **options)

def call(request):
    try:
        return b.call("run_pretokenize", (request,), False)
    except Exception as err:
        return ["raised", type(err).__name__, str(err)[:500]]

try:
    replies = [call(r) for r in json.loads(sys.argv[2])]
    b.sandbox_info  # a worker runs, even for no request
    during, line = sysv(), b.process.confinement()
finally:
    b.close()
print(json.dumps({"replies": replies, "during": during, "after": sysv(), "isolation": line}))
"""

MODES = ["root", "ordinary user"]


@pytest.fixture(scope="module")
def stage():
    base = Path(tempfile.mkdtemp(prefix="bpe-shares-nothing-"))
    os.chmod(base, 0o755)
    (base / "home").mkdir()
    os.chown(base / "home", N.USER_ID, N.USER_ID)
    sub = base / "probe"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(PROBE)
    (sub / "student" / "fastre").mkdir()
    (sub / "student" / "fastre" / "__init__.py").write_text("")
    compiled = Path(regex._regex.__file__)  # an installed extension module, copied in as the submission's own
    shutil.copyfile(compiled, sub / "student" / "fastre" / compiled.name)
    for path in [sub, *sub.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def run_as(mode: str, stage: Path, args: list[str]) -> subprocess.CompletedProcess:
    """``args`` run from the checkout as ``mode`` (root, or the ordinary user: skipped where
    none can run); it must succeed."""
    if mode == "ordinary user":
        if N._can_run() is not None:
            pytest.skip(str(N._can_run()))
        args = N.as_user(args, stage)
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def probe(stage: Path, mode: str, requests: list[str], **options: object) -> dict:
    """The replies to ``requests`` from a worker started as ``mode`` (``options``: the
    WorkerBackend's), and what was seen outside."""
    args = [sys.executable, "-c", SCRIPT, str(stage / "probe"), json.dumps(requests), json.dumps(options)]
    proc = run_as(mode, stage, args)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# an ordinary user without namespaces (as where the kernel refuses them): the worker shares
# the machine's network, and its seccomp filter refuses its sockets (sandbox.lockdown)
SHARED_NETWORK = ("ordinary user", {"namespaces": False})


@pytest.mark.parametrize("mode, options", [*((m, {}) for m in MODES), SHARED_NETWORK], ids=[*MODES, "sharing the network"])
def test_a_listener_on_the_graders_loopback_receives_nothing(stage, mode, options):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        seen = probe(stage, mode, [f"send:{port}:hidden fixture text"], **options)
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            conn = None
        received = b""
        if conn is not None:
            with conn:
                conn.settimeout(1)
                received = conn.recv(100)
    assert conn is None and received == b"", f"the worker reached the grader's listener: {received!r}"
    assert seen["replies"][0][0] == "failed", seen


@pytest.mark.parametrize("mode", MODES)
def test_the_worker_has_only_a_working_loopback_device(stage, mode):
    seen = probe(stage, mode, ["interfaces", "loopback"])
    assert seen["replies"] == [["lo"], ["loopback", "echo"]], seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["shm", "msg", "sem"])
def test_system_v_objects_are_not_the_machines_and_end_with_the_worker(stage, mode, kind):
    key = 0x23A00000 + os.getpid() % 0x10000 + (MODES.index(mode) << 16)
    try:
        seen = probe(stage, mode, [f"ipc:{kind}:{key}"])
    finally:  # what a failing run leaves on the machine goes
        subprocess.run(["ipcrm", f"-{kind[0].upper()}", str(key)], capture_output=True)
    assert seen["replies"] == [["made", ""]], seen
    assert key not in seen["during"][kind], "the machine sees the worker's object while it runs"
    assert key not in seen["after"][kind], "the worker's object outlived it"


def key_users() -> dict[int, str]:
    """``/proc/key-users``: the user ids holding kernel keys, with their counts."""
    with open("/proc/key-users") as f:
        return {int(line.split(":")[0]): line.split(":", 1)[1].strip() for line in f}


@pytest.mark.parametrize("mode", MODES)
def test_the_worker_makes_no_kernel_key(stage, mode):
    """A key added to the kernel keyring of the worker's user id outlives the worker (a root
    grader's worker user ids are reused: the next submission given that id could read it): the
    worker can make none (add_key, request_key and keyctl are refused)."""
    before = key_users()
    seen = probe(stage, mode, ["key:bpe-shares-nothing"])
    assert seen["replies"] == [["failed", "Operation not permitted"]], seen
    new = {uid: counts for uid, counts in key_users().items() if uid not in before}
    assert not new, f"user ids holding kernel keys after the worker ended: {new}"


@pytest.mark.parametrize("mode", MODES)
def test_the_isolation_line_names_the_network_and_ipc_namespaces(stage, mode):
    line = probe(stage, mode, [])["isolation"]
    assert "own network (loopback only) and IPC namespaces" in line and "weak" not in line, line


def test_a_worker_sharing_the_network_gets_no_socket_and_is_called_weak_for_the_rest(stage):
    """The machine's interfaces show, but no socket of the internet's families can be made
    (only a local one); the isolation line says so, and weak for the IPC it shares."""
    mode, options = SHARED_NETWORK
    seen = probe(stage, mode, ["interfaces", "sockets"], **options)
    assert "lo" in seen["replies"][0] and len(seen["replies"][0]) > 1, seen  # the machine's
    assert seen["replies"][1] == ["AF_INET: refused", "AF_INET6: refused", "AF_UNIX: made"], seen
    line = seen["isolation"]
    assert line.startswith("weak: ") and "no network (every socket but a local one is refused)" in line, line
    assert line.endswith("shares the machine's System V IPC"), line


@pytest.mark.parametrize("mode", MODES)
def test_a_workers_processes_together_cannot_pass_memory_mb(stage, mode):
    """Four children of 120 MB each: under a 1,024 MB limit they all finish (the control);
    under 320 MB, each one's own limit, the worker is stopped, naming the limit."""
    seen = probe(stage, mode, ["children:4:120"], limits={"memory_mb": 1024})
    assert seen["replies"] == [["done", 4]], seen
    seen = probe(stage, mode, ["children:4:120"], limits={"memory_mb": 320})
    kind, _, message = seen["replies"][0]
    assert kind == "raised" and "processes together held" in message and "memory limit of 320 MB" in message, seen


@pytest.mark.parametrize("mode", MODES)
def test_every_place_the_worker_can_write_is_a_small_noexec_tmpfs(stage, mode):
    """Every folder the worker may write in is on a file system of at most 256 MB and
    10,000 files that runs nothing; its own copy of the submission, which it may write as where
    its author runs it, has as much room beside what it holds, and runs nothing either."""
    found, code, entries, code_noexec, code_writable = probe(stage, mode, ["writable"])["replies"][0]
    assert found, "the worker can write nowhere (not even its work folder)"
    assert any(path.endswith("/out") for path, *_ in found), found  # where calls write files
    held = lambda path: entries if path == code or path.startswith(code + "/") else (0, 0)  # noqa: E731  (MB, files)
    too_big = [f for f in found if not f[1] or f[2] > 256 + held(f[0])[0] or f[3] > 10_000 + held(f[0])[1]]
    assert not too_big, f"writable and unbounded or executable: {too_big}"
    assert code_noexec and code_writable


LOADS = [("import", "code"), ("spec", "code"), ("ctypes", "code"), ("spec", "work"), ("ctypes", "tmp"), ("ctypes", "shm")]
ROUTES = ["memfd", "anonymous", "private-copy", "mprotect", "proc-mem"]


@pytest.fixture(scope="module")
def native_code(stage):
    """The reply to each attempt to run native code (``load:HOW:PLACE``, ``memory:ROUTE``) as
    ``mode``: every attempt a call of its own, one worker for all of a mode's (a worker started
    per attempt took 11.4 s against 1.1 s for both modes, 2026-11-27; the replies were the same)."""
    replies: dict[str, dict[str, list]] = {}

    def reply(mode: str, request: str) -> list:
        if mode not in replies:
            requests = [*(f"load:{how}:{place}" for how, place in LOADS), *(f"memory:{route}" for route in ROUTES)]
            replies[mode] = dict(zip(requests, probe(stage, mode, requests)["replies"]))
        return replies[mode][request]

    return reply


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how, place", LOADS)
def test_compiled_code_the_submission_brings_cannot_load_from_anywhere_it_can_write(native_code, mode, how, place):
    """A compiled extension module in the submission (regex's, copied under student/fastre/),
    imported, loaded from its file or through ctypes, where it is or copied anywhere the worker
    can write: refused, saying why."""
    kind, _, message = native_code(mode, f"load:{how}:{place}")
    assert kind == "raised" and "your code loads compiled code (" in message, message
    assert "_regex" in message and "); grading allows only Python source" in message, message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("route", ROUTES)
def test_no_route_to_executable_memory_the_submission_can_write(native_code, mode, route):
    kind, *rest = native_code(mode, f"memory:{route}")
    assert kind == "raised" and ("Operation not permitted" in rest[1] or "Permission denied" in rest[1]), rest


# the reference's timing, stood in for by fixed CPU work in the grader's process, best of 5;
# the worker's processes (found from outside) and their CPU ticks while it is paused
PAUSE_SCRIPT = r"""
import json, sys, time
from sandbox import proctree
from sandbox.backend import WorkerBackend
from sandbox.limits import IsolationLimits

def timed():
    best = None
    for _ in range(5):
        start = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        best = min(best or 1e9, time.perf_counter() - start)
    return best

def states(pids):
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                found.append(f.read().rsplit(b")", 1)[1].split()[0].decode())
        except OSError:
            found.append("gone")
    return found

def ticks(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total

b = WorkerBackend("student", sys.argv[1], IsolationLimits(call_timeout=20))
try:
    b.sandbox_info
    quiet = timed()
    b.call("run_pretokenize", ("spin:3",), False)
    time.sleep(0.3)
    proc = b.process
    pids = proctree.submission_pids(proc.pid, proc.uid, proc.init_pid)
    with b.paused() as stopped:
        before = ticks(pids)
        paused = timed()
        time.sleep(0.2)
        used = ticks(pids) - before
        held = states(pids)
    busy = timed()
finally:
    b.close()
print(json.dumps({"quiet": [quiet, timed()], "paused": paused, "busy": busy, "stopped": stopped,
                  "processes": len(pids), "ticks_while_paused": used, "states_while_paused": held}))
"""


@pytest.mark.parametrize("mode", MODES)
def test_every_process_of_the_worker_is_stopped_while_the_reference_is_timed(stage, mode):
    """Three busy processes, double-forked into sessions of their own: while the worker is
    paused none of them runs: the count stopped is the worker and those three, each is in the
    stopped state (``T``) and none uses a clock tick of CPU meanwhile, so work timed then has
    the machine as if they were not there. (Not compared: that work's wall time against a quiet
    one's, which other load on the machine moves by more than any margin; a CI run with the
    slow tier beside it failed a 20% margin, 0.083 s against 0.062 s, with no tick used.)"""
    args = [sys.executable, "-c", PAUSE_SCRIPT, str(stage / "probe")]
    proc = run_as(mode, stage, args)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["processes"] == 4 and seen["stopped"] == 4, seen
    assert set(seen["states_while_paused"]) <= {"T", "t"}, seen
    assert seen["ticks_while_paused"] == 0, seen


SAVE_SCRIPT = r"""
import sys
from sandbox.backend import WorkerBackend
b = WorkerBackend("student", sys.argv[1])
try:
    b.call("run_save_tokenizer", ({0: b"a"}, [(b"a", b"b")], sys.argv[2] + "/vocab.txt", sys.argv[2] + "/merges.txt"), False)
finally:
    b.close()
"""


@pytest.mark.parametrize("mode", MODES)
def test_files_a_call_writes_come_back_from_the_workers_own_tmpfs(stage, mode):
    out = stage / f"saved-{MODES.index(mode)}"
    out.mkdir()
    os.chown(out, N.USER_ID, N.USER_ID)
    args = [sys.executable, "-c", SAVE_SCRIPT, str(stage / "probe"), str(out)]
    proc = run_as(mode, stage, args)
    assert (out / "vocab.txt").read_text() == "{0: b'a'}" and (out / "merges.txt").read_text() == "[(b'a', b'b')]"
