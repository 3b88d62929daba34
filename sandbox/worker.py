"""The isolated worker: the process that runs a submission's code during grading.

The trusted side (:mod:`sandbox.process`) starts it as
``python -I -B -c <bootstrap> FD`` (its configuration comes as the first line on the request
pipe ``FD``, never in its argv) in a throw-away sandbox directory holding a copy of
``adapters.py`` and the implementation package, plus private copies of the few harness
and sandbox modules it imports (``WORKER_FILES``; what a request does is
:mod:`harness.dispatch`'s, shared with in-process runs). Nothing else of the harness is on its
``sys.path``; the environment holds only ``PATH``, ``HOME``/``TMPDIR`` (the sandbox work
directory), the locale and ``BPE_IMPL``.

Before any submission code is imported, :func:`harden` applies the limits (``RLIMIT_AS``,
``RLIMIT_CPU``, ``RLIMIT_NPROC``, ``RLIMIT_FSIZE``, no core files) and moves into a private
root directory (:func:`confine`: the system, Python and the sandbox, nothing else of the
machine): when started as root, then dropping to an unprivileged user id; otherwise inside
unprivileged user, mount and pid namespaces (:mod:`sandbox.userns`), then dropping every
capability. The forbidden modules are covered there and refused by an import hook.

Protocol (both ends in :mod:`sandbox.channel`): one line of tagged JSON
(:func:`harness.values.wire_dumps`) per message, over two dedicated pipe descriptors (never stdout,
which is the submission's, captured with a cap by the trusted side). Requests and replies are lists::

                                                       <- ["ready", 0, {notes}] (sandbox set up)
    -> ["go", 0] (the grader has checked the sandbox)
                                                       <- ["hello", 0, {pid, uid}] (adapters.py imported)
    -> ["call", rid, adapter, args, returns_handle]   <- ["ok", rid, value | handle id]
    -> ["method", rid, handle, name, args]            <- ["err", rid, {kind, mro, message, traceback}]
    -> ["probe", rid, probe, handle | None, args]
    -> ["stream", rid, handle, name]                   <- ["need", rid]  -> ["chunks", rid, [str, ...]]
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

from .channel import Channel, plain_copy, to_plain

ID_BATCH = 8192  # ids per "ids" message of a stream


# ---- hardening (runs before any submission code) --------------------------------------

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38


def harden(config: dict) -> dict:
    """Apply limits, hide paths and drop privileges; report what the OS allowed."""
    import resource
    import signal

    done: dict[str, Any] = {"notes": []}
    notes = done["notes"]
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except Exception as err:  # pragma: no cover - no libc
        libc = None
        notes.append(f"no libc ({err}): no mount namespace, no prctl")

    nproc_extra = None
    if libc is not None:
        if os.geteuid() != 0 and config.get("private_root", True) and config.get("namespaces", True):
            # not root: unprivileged user, mount and pid namespaces, where the kernel allows them
            from . import userns

            nproc_extra = _count_processes(os.getuid())  # while this is still the machine's /proc
            try:
                done["host_pid"] = userns.enter(libc, list(config["fds"]))
            except OSError as err:
                notes.append(f"not root, and {err.strerror}: no private root directory; the worker sees what this user sees")
            else:
                try:
                    done["root"] = confine(libc, config, own_proc=True)
                except OSError as err:
                    notes.append(f"no private root directory: {err}")
                userns.drop_capabilities(libc)  # the namespace's mount and chroot rights, gone
        elif os.geteuid() != 0:
            notes.append("not root: no private root directory; the worker sees what this user sees")
        elif not config.get("private_root", True):
            notes.append("the private root directory is turned off")
        else:
            # root: mount and pid namespaces (a /proc of its own, nothing left when it ends),
            # or a mount namespace only where pid namespaces are refused
            from . import userns

            own_proc = False
            try:
                done["host_pid"] = userns.enter(libc, list(config["fds"]), user=False)
                own_proc = True
            except OSError:
                pass
            if not own_proc and libc.unshare(CLONE_NEWNS) != 0:
                notes.append(f"unshare(CLONE_NEWNS) failed: {os.strerror(ctypes.get_errno())}; no private root directory")
            else:
                try:
                    done["root"] = confine(libc, config, own_proc=own_proc)
                except OSError as err:
                    notes.append(f"no private root directory: {err}")

    if "root" not in done and os.geteuid() == 0 and config.get("uid") is not None:
        # no private root (a container without CAP_SYS_ADMIN, like most autograder images):
        # the worker gets another user id, so file permissions can still keep it out
        closed = close_to_others(config.get("hide", []))
        if closed:
            done["closed"] = closed
            notes.append("harness folders closed to other users (chmod o-rwx): " + ", ".join(closed))

    limits = config["limits"]

    def setlimit(name: str, soft: int, hard: int | None = None) -> None:
        which = getattr(resource, name, None)
        if which is None:
            notes.append(f"{name} is not available here")
            return
        try:
            resource.setrlimit(which, (soft, soft if hard is None else hard))
        except (ValueError, OSError) as err:
            notes.append(f"{name} not set: {err}")

    setlimit("RLIMIT_CORE", 0)
    if limits.get("memory_mb"):
        setlimit("RLIMIT_AS", int(limits["memory_mb"]) << 20)
    if limits.get("cpu_seconds"):
        # soft limit: SIGXCPU (kills, as nobody handles it); hard limit: SIGKILL a bit later
        setlimit("RLIMIT_CPU", int(limits["cpu_seconds"]), int(limits["cpu_seconds"]) + 5)
    if limits.get("file_bytes"):
        setlimit("RLIMIT_FSIZE", int(limits["file_bytes"]))

    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)  # real, effective and saved ids: there is no way back to root
        done["uid"] = os.getuid()
    if limits.get("max_processes"):
        if os.getuid() == 0:
            notes.append("RLIMIT_NPROC is ignored for root: the process limit is not enforced")
        else:
            # the limit counts every process of this user id; with a dedicated id that is the
            # worker's own processes, otherwise the grader's user already has some
            extra = 0 if uid is not None else (nproc_extra if nproc_extra is not None else _count_processes(os.getuid()))
            setlimit("RLIMIT_NPROC", extra + int(limits["max_processes"]))
    if libc is not None:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binaries (su, sudo) from here
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)  # die with the grader
    return done


def close_to_others(paths: list[str]) -> list[str]:
    """Take the permissions of "other" users off each directory (``chmod o-rwx``, for good:
    the grader runs as root and needs none of them), so that a worker running under another
    user id can neither list nor enter it. Returns the directories now closed."""
    import stat

    closed = []
    for path in paths:
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode):
                continue
            if st.st_mode & 0o007:
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o007)
            closed.append(path)
        except OSError:
            continue
    return closed


MS_BIND, MS_REMOUNT = 4096, 32

# what the worker's private root shows of the machine's: the system, read-only
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
OPTIONAL_DIRS = ("/sys",)  # nice to have (CPU topology); some containers refuse to bind it


def confine(libc, config: dict, own_proc: bool = False) -> str:
    """Give the worker a root directory of its own and ``chroot`` into it.

    The new root is an empty tmpfs holding, at their own paths: the system directories
    (read-only), Python's installation and site-packages (read-only), ``/dev`` and ``/proc``,
    a private ``/tmp``, and the sandbox. Nothing else of the machine is there: not the
    harness, not other checkouts of it, not home directories. Paths the trusted side asks to
    hide that still fall inside one of those directories are covered by empty mounts.
    ``/dev/shm`` is a small tmpfs of its own and the sandbox's ``work`` folder a tmpfs of
    ``limits.work_mb`` (both gone with the namespace). ``own_proc``: the worker is in a pid
    namespace of its own (:mod:`sandbox.userns`) and gets a fresh ``/proc`` showing only it.
    Must run with mount rights in a private mount namespace (root, or a user namespace); the
    caller then drops to another user id or drops its capabilities, so it cannot ``chroot``
    back out."""
    import ctypes

    def mount(src, dst: str, fstype, flags: int, data=None) -> None:
        enc = lambda v: v.encode() if isinstance(v, str) else v  # noqa: E731
        if libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)) != 0:
            raise OSError(ctypes.get_errno(), f"mount {src or ''} on {dst}: {os.strerror(ctypes.get_errno())}")

    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted below reaches the machine's namespace
    root = os.path.join(config["sandbox"], "root")
    os.mkdir(root, 0o755)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    placed: list[str] = []

    def place(path: str, *, writable: bool = False, recursive: bool = False, devices: bool = False) -> None:
        if any(path == p or path.startswith(p.rstrip("/") + "/") for p in placed) or not os.path.lexists(path):
            return
        inside = root + path
        os.makedirs(os.path.dirname(inside), mode=0o755, exist_ok=True)
        if os.path.islink(path):  # /bin -> usr/bin on merged-/usr systems
            os.symlink(os.readlink(path), inside)
            return
        if not os.path.isdir(path):
            return
        os.makedirs(inside, mode=0o755, exist_ok=True)
        mount(path, inside, None, MS_BIND | (MS_REC if recursive else 0))
        placed.append(path)
        if not writable:
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | (0 if devices else MS_NODEV)
            mount(None, inside, None, flags)

    for path in SYSTEM_DIRS:
        place(path)
    for path in OPTIONAL_DIRS:
        try:
            place(path, recursive=True)
        except OSError:
            pass
    place("/dev", writable=True, recursive=True, devices=True)
    if os.path.isdir(root + "/dev/shm"):  # shared memory of its own, not the machine's
        mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    if own_proc:
        os.makedirs(root + "/proc", mode=0o755, exist_ok=True)
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        placed.append("/proc (its own processes only)")
    else:
        place("/proc", writable=True, recursive=True)
    os.makedirs(root + "/tmp", exist_ok=True)
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777")
    # after /tmp: a venv under /tmp shows through the private /tmp, not under it
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)}
    python |= set(config.get("python_dirs", []))
    for path in sorted({os.path.realpath(p) for p in python}, key=len):
        place(path)
    sandbox = os.path.realpath(config["sandbox"])
    place(sandbox, writable=True)  # not recursive: its "root" folder shows empty inside
    work_mb = int(config.get("limits", {}).get("work_mb") or 0)
    if work_mb and os.path.isdir(root + os.path.realpath(config["work_dir"])):
        owner = config.get("uid") if config.get("uid") is not None else os.getuid()
        group = config.get("gid") if config.get("gid") is not None else os.getgid()
        mount("tmpfs", root + os.path.realpath(config["work_dir"]), "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={work_mb}m,mode=0700,uid={owner},gid={group}")
    for path in config.get("hide", []):
        inside = root + os.path.realpath(path)
        if os.path.isdir(inside) and not (sandbox + "/").startswith(os.path.realpath(path) + "/"):
            mount("tmpfs", inside, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k,mode=0555")
    for path in forbidden_files(config.get("forbidden", []), [*config.get("python_path", []), *python]):
        # a forbidden package or module is covered by one that only raises (an empty folder
        # would still import, as a namespace package)
        inside, name = root + path, os.path.basename(path).split(".", 1)[0]
        stub = f"raise ModuleNotFoundError({FORBIDDEN_MESSAGE.format(name)!r}, name={name!r})\n"
        if os.path.isdir(inside):
            mount("tmpfs", inside, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k,mode=0755")
            with open(os.path.join(inside, "__init__.py"), "w") as f:
                f.write(stub)
            mount(None, inside, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif os.path.isfile(inside):
            os.makedirs(root + "/.forbidden", mode=0o755, exist_ok=True)
            with open(f"{root}/.forbidden/{name}.py", "w") as f:
                f.write(stub)
            mount(f"{root}/.forbidden/{name}.py", inside, None, MS_BIND)
            mount(None, inside, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chroot(root)
    os.chdir("/")
    return "private root: " + ", ".join(placed) + ", /tmp (empty), /dev/shm (empty)"


def forbidden_files(names: list[str], dirs: list[str]) -> list[str]:
    """The packages and modules called ``names`` in the directories ``dirs``: ``NAME/``,
    ``NAME.py``, ``NAME*.so`` (covered with empty mounts inside the private root)."""
    found = []
    for d in sorted(set(dirs)):
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        for entry in entries:
            stem = entry.split(".", 1)[0]
            if stem in names and (entry == stem or entry.endswith((".py", ".pyc", ".so", ".pyd"))):
                found.append(os.path.join(os.path.realpath(d), entry))
    return found


FORBIDDEN_MESSAGE = "your code uses the forbidden module {}: grading does not allow it (grading.yaml forbidden_modules)"


class ForbiddenFinder:
    """The import hook that refuses grading.yaml's ``forbidden_modules`` (first on
    ``sys.meta_path``): importing one raises ``ModuleNotFoundError`` naming it."""

    def __init__(self, names: list[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in self.names:
            raise ModuleNotFoundError(FORBIDDEN_MESSAGE.format(top), name=fullname)
        return None


def forbid(names: list[str]) -> None:
    """Refuse ``names`` from now on (and drop any already imported)."""
    if not names:
        return
    for loaded in [m for m in sys.modules if m.partition(".")[0] in names]:
        del sys.modules[loaded]
    sys.meta_path.insert(0, ForbiddenFinder(names))


def _count_processes(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def clean_import_state(code_dir: str, harness_dir: str, python_path: list[str] | None = None) -> None:
    """Keep only the submission, the grading environment's library path (``python_path``,
    from :func:`sandbox.pyenv.worker_python`: the standard library, site-packages, the user
    site, ``.pth`` additions) and the worker's own harness modules importable."""
    from importlib.machinery import BuiltinImporter, FrozenImporter, PathFinder

    if python_path is None:  # an older caller: what this interpreter found under its prefixes
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        python_path = [
            e for e in sys.path
            if e and any(os.path.realpath(e) == p or os.path.realpath(e).startswith(p.rstrip("/") + "/") for p in prefixes)
        ]
    sys.path[:] = [code_dir, *python_path, harness_dir]
    # editable installs add finders that map the harness's own packages: drop them
    sys.meta_path[:] = [f for f in sys.meta_path if f in (BuiltinImporter, FrozenImporter, PathFinder)]
    sys.path_importer_cache.clear()


class Aborted(BaseException):
    """The trusted side stopped consuming a stream."""


# ---- running submission code ------------------------------------------------------------


SHORTEN: list[tuple[str, str]] = []  # (sandbox prefix, what a student reads instead), set by main


def unsandboxed(text: str) -> str:
    """``text`` with the worker's sandbox paths made relative to the submission."""
    for prefix, shown in SHORTEN:
        text = text.replace(prefix, shown)
    return text


def describe(err: BaseException) -> dict:
    """A student exception as plain data: class names along the MRO, message, short traceback
    (paths relative to the submission)."""
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
    return {"kind": "error", "mro": mro, "message": unsandboxed(message[:20000]), "traceback": unsandboxed(text)[-4000:]}


_OWN_FILES = frozenset({__file__, sys.modules[Dispatcher.__module__].__file__})


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

    def arguments(self, args: list, refs: list) -> list:
        """Arguments with cached large values filled in (each call gets its own copy)."""
        for index, key, payload in refs:
            if payload is not None:
                self.cached[key] = payload
            args[index] = plain_copy(self.cached[key])
        return args

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
            message = V.describe_import_error(err, short_paths=True, base=code_dir)
            raise Broken(f"{where} could not be imported: {message}") from None
        return module

    def handle_request(self, msg: list) -> None:
        op, rid = msg[0], msg[1]
        try:
            if op == "call":
                _, _, adapter, args, returns_handle, refs = msg
                value = self.dispatch.call(adapter, self.arguments(args, refs), returns_handle)
            elif op == "method":
                _, _, handle, name, args, refs = msg
                value = self.dispatch.method(handle, name, self.arguments(args, refs))
            elif op == "probe":
                _, _, probe, handle, args = msg
                value = self.dispatch.probe(probe, handle, args)
            elif op == "stream":
                self.stream(rid, msg[2], msg[3])
                return
            else:
                raise SystemExit(f"unknown request {op!r}")
            data = ["ok", rid, value]
        except Broken as err:
            data = ["err", rid, {"kind": "broken", "mro": [], "message": str(err), "traceback": ""}]
        except V.WrongResult as err:
            data = ["err", rid, {"kind": "wrong", "mro": [], "message": str(err), "traceback": ""}]
        except BaseException as err:  # SystemExit and KeyboardInterrupt from student code too
            data = ["err", rid, describe(err)]
        self.reply(rid, data)

    def reply(self, rid: int, data: list) -> None:
        try:
            self.channel.send(data)
        except (TypeError, ValueError) as err:  # e.g. a float the wire cannot carry
            self.channel.send(["err", rid, {"kind": "wrong", "mro": [], "message": f"result could not be sent: {err}", "traceback": ""}])

    def stream(self, rid: int, handle: int, name: str) -> None:
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
            gen = self.dispatch.iterate(handle, name, source())
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
            self._finish_failed_stream(rid, state, {"kind": "wrong", "mro": [], "message": str(err), "traceback": ""})
        except BaseException as err:
            if state["aborted"]:
                self.reply(rid, ["aborted", rid])
            else:
                self._finish_failed_stream(rid, state, describe(err))
        finally:
            if gen is not None:
                close(gen)

    def _finish_failed_stream(self, rid: int, state: dict, info: dict) -> None:
        self.reply(rid, ["err", rid, info])

    def loop(self) -> None:
        while True:
            msg = self.channel.recv()
            self.handle_request(msg)



def main(config: dict) -> None:
    rfd, wfd = config["fds"]
    channel = Channel(rfd, wfd, float(config.get("spin", 0.0)))
    info = harden(config)
    config.pop("hide", None)  # the submission's code can find this dict: it names harness folders
    channel.send(["ready", 0, info])  # sandbox in place; no submission code has run yet
    channel.recv()  # "go": the grader has read from /proc how this process is confined
    clean_import_state(config["code_dir"], config["harness_dir"], config.get("python_path"))
    forbid(list(config.get("forbidden", [])))
    SHORTEN[:] = [(config["code_dir"].rstrip("/") + "/", ""), (config["harness_dir"].rstrip("/") + "/", "<grader>/")]
    os.chdir(config["work_dir"])
    worker = Worker(config, channel)
    try:
        worker.dispatch.adapters  # import the submission now: a crash here is a broken submission, not a test failure
    except Broken:
        pass  # reported on every call
    channel.send(["hello", 0, {"pid": os.getpid(), "uid": os.getuid(), "stand_ins": worker.stand_ins}])
    worker.loop()
