"""The worker's hardening, before any submission code runs (in the worker: stdlib and
:mod:`sandbox.userns` only, as it runs from the worker's private copy).

:func:`harden` applies the limits (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_NPROC``,
``RLIMIT_FSIZE``, no core files) and moves into a private root directory (:func:`confine`:
the system, Python and the sandbox, nothing else of the machine): when started as root,
then dropping to an unprivileged user id; otherwise inside unprivileged user, mount and pid
namespaces (:mod:`sandbox.userns`), then dropping every capability. The forbidden modules
are covered there (:func:`~sandbox.imports.forbidden_files`) and refused by an import hook
(:class:`~sandbox.imports.ForbiddenFinder`, installed by :func:`~sandbox.imports.forbid`);
:func:`~sandbox.imports.clean_import_state` leaves
only the submission, Python's library path and the worker's own modules importable
(both in :mod:`sandbox.imports`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from . import lockdown, userns
from .imports import FORBIDDEN_MESSAGE, forbidden_files

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
MS_BIND, MS_REMOUNT = 4096, 32
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
FILES = 10_000  # files and folders each writable tmpfs of the worker may hold

# what the worker's private root shows of the machine's: the system, read-only
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
OPTIONAL_DIRS = ("/sys",)  # nice to have (CPU topology); some containers refuse to bind it


# ---- harden: namespaces, private root, limits, user id ---------------------------------


def harden(config: dict) -> dict:
    """Apply limits, hide paths and drop privileges; report what the OS allowed."""
    import signal

    done: dict[str, Any] = {"notes": []}
    libc = _load_libc(done["notes"])
    nproc_extra = _isolate(libc, config, done) if libc is not None else None
    if "root" not in done and os.geteuid() == 0 and config.get("uid") is not None:
        # no private root (a container without CAP_SYS_ADMIN, like most autograder images):
        # the worker gets another user id, so file permissions can still keep it out
        closed = close_to_others(config.get("hide", []))
        if closed:
            done["closed"] = closed
            done["notes"].append("harness folders closed to other users (chmod o-rwx): " + ", ".join(closed))
    limits = config["limits"]
    _set_rlimits(limits, done["notes"])
    _drop_user(config, done)
    _limit_processes(limits, config.get("uid"), nproc_extra, done["notes"])
    if libc is not None:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binaries (su, sudo) from here
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)  # die with the grader
        # no native code of its own: writes only where it may (Landlock), no code made in memory (seccomp)
        writable = ["/tmp", "/dev", config["work_dir"], os.path.join(config["sandbox"], "out"), config["code_dir"]]
        lockdown.writes_only_beneath(libc, writable, done["notes"])
        lockdown.refuse_code_in_memory(libc, done["notes"], no_network=not done.get("own_network"))
    return done


def _load_libc(notes: list[str]) -> Any:
    """The C library through ``ctypes``, or None (noted) where there is none."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except Exception as err:  # pragma: no cover - no libc
        notes.append(f"no libc ({err}): no mount namespace, no prctl")
        return None


def _isolate(libc: Any, config: dict, done: dict) -> int | None:
    """New namespaces and the private root, where allowed and asked for. Returns how many
    processes this (non-root) user had before entering a pid namespace, else None."""
    notes = done["notes"]
    if os.geteuid() != 0 and config.get("private_root", True) and config.get("namespaces", True):
        # not root: unprivileged user, mount and pid namespaces, where the kernel allows them
        nproc_extra = _count_processes(os.getuid())  # while this is still the machine's /proc
        _private_root(libc, config, done, user=True)
        return nproc_extra
    if os.geteuid() != 0:
        notes.append("not root: no private root directory; the worker sees what this user sees")
    elif not config.get("private_root", True):
        notes.append("the private root directory is turned off")
        done["own_network"] = lockdown.own_network_and_ipc(libc, notes)
    else:
        # root: mount and pid namespaces (a /proc of its own, nothing left when it ends),
        # or a mount namespace only where pid namespaces are refused
        _private_root(libc, config, done, user=False)
    return None


def _private_root(libc: Any, config: dict, done: dict, *, user: bool) -> None:
    """Enter mount and pid namespaces (and a user namespace when ``user``: the grader is
    not root) and :func:`confine` the worker there. Not root, the user namespace is needed
    and its capabilities are dropped afterwards; as root, a mount namespace alone will do."""
    import ctypes

    notes = done["notes"]
    try:
        done["host_pid"] = userns.enter(libc, list(config["fds"]), user=user)
        own_proc = done["own_network"] = True
        lockdown.loopback(notes)
    except OSError as err:
        if user:
            notes.append(f"not root, and {err.strerror}: no private root directory; the worker sees what this user sees")
            return
        own_proc = False
        done["own_network"] = lockdown.own_network_and_ipc(libc, notes)
        if libc.unshare(CLONE_NEWNS) != 0:
            notes.append(f"unshare(CLONE_NEWNS) failed: {os.strerror(ctypes.get_errno())}; no private root directory")
            return
    try:
        done["root"] = confine(libc, config, own_proc=own_proc)
    except OSError as err:
        notes.append(f"no private root directory: {err}")
    if user:
        userns.drop_capabilities(libc)  # the namespace's mount and chroot rights, gone


def _setlimit(notes: list[str], name: str, soft: int, hard: int | None = None) -> None:
    """``setrlimit(name, (soft, hard or soft))``, noting what the OS refused."""
    import resource

    which = getattr(resource, name, None)
    if which is None:
        notes.append(f"{name} is not available here")
        return
    try:
        resource.setrlimit(which, (soft, soft if hard is None else hard))
    except (ValueError, OSError) as err:
        notes.append(f"{name} not set: {err}")


def _set_rlimits(limits: dict, notes: list[str]) -> None:
    """No core files; address space, CPU time and file size as ``limits`` asks."""
    _setlimit(notes, "RLIMIT_CORE", 0)
    if limits.get("memory_mb"):
        _setlimit(notes, "RLIMIT_AS", int(limits["memory_mb"]) << 20)
    if limits.get("cpu_seconds"):
        # soft limit: SIGXCPU (kills, as nobody handles it); hard limit: SIGKILL a bit later
        _setlimit(notes, "RLIMIT_CPU", int(limits["cpu_seconds"]), int(limits["cpu_seconds"]) + 5)
    if limits.get("file_bytes"):
        _setlimit(notes, "RLIMIT_FSIZE", int(limits["file_bytes"]))


def _drop_user(config: dict, done: dict) -> None:
    """As root with a dedicated user id configured: become that user, for good."""
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)  # real, effective and saved ids: there is no way back to root
        done["uid"] = os.getuid()


def _limit_processes(limits: dict, uid: int | None, nproc_extra: int | None, notes: list[str]) -> None:
    """``RLIMIT_NPROC``: ``limits.max_processes`` and one per core of the machine more than
    this user id already runs: a process pool of the default size (``multiprocessing.Pool()``,
    ``os.cpu_count()`` processes) fits on any grading machine, as on its author's."""
    if not limits.get("max_processes"):
        return
    if os.getuid() == 0:
        notes.append("RLIMIT_NPROC is ignored for root: the process limit is not enforced")
        return
    # the limit counts every process of this user id; with a dedicated id that is the
    # worker's own processes, otherwise the grader's user already has some
    extra = 0 if uid is not None else (nproc_extra if nproc_extra is not None else _count_processes(os.getuid()))
    _setlimit(notes, "RLIMIT_NPROC", extra + int(limits["max_processes"]) + (os.cpu_count() or 1))


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


def close_to_others(paths: list[str]) -> list[str]:
    """Take the permissions of "other" users off each directory (``chmod o-rwx``; the grader
    runs as root and needs none of them; the trusted side gives them back when the grading
    ends, :mod:`sandbox.closing`), so that a worker running under another user id can neither
    list nor enter it. Returns the directories now closed."""
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


# ---- confine: the private root directory -----------------------------------------------


class _Root:
    """The private root being built at ``path``: mounts, and the machine's directories
    placed in it so far (``placed``)."""

    def __init__(self, libc: Any, path: str) -> None:
        self.libc, self.path = libc, path
        self.placed: list[str] = []
        self.covered: list[str] = []  # paths inside placed folders with a tmpfs of the worker's own over them

    def mount(self, src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        """``mount(2)``; raises ``OSError`` naming both paths."""
        import ctypes

        enc = lambda v: v.encode() if isinstance(v, str) else v  # noqa: E731
        if self.libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)) != 0:
            raise OSError(ctypes.get_errno(), f"mount {src or ''} on {dst}: {os.strerror(ctypes.get_errno())}")

    def place(self, path: str, *, writable: bool = False, recursive: bool = False, devices: bool = False, noexec: bool = False) -> None:
        """Show the machine's ``path`` at the same path inside (bind-mounted, read-only
        unless ``writable``, nothing run or mapped executable from it when ``noexec``; a
        symbolic link is copied), unless already shown: inside a placed folder, and not below
        a tmpfs covering part of it (a sandbox in a TMPDIR under ``/dev/shm``)."""
        if not os.path.lexists(path) or self._shown(path):
            return
        inside = self.path + path
        os.makedirs(os.path.dirname(inside), mode=0o755, exist_ok=True)
        if os.path.islink(path):  # /bin -> usr/bin on merged-/usr systems
            os.symlink(os.readlink(path), inside)
            return
        if not os.path.isdir(path):
            return
        os.makedirs(inside, mode=0o755, exist_ok=True)
        self.mount(path, inside, None, MS_BIND | (MS_REC if recursive else 0))
        self.placed.append(path)
        if not writable:
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | (0 if devices else MS_NODEV) | (MS_NOEXEC if noexec else 0)
            self.mount(None, inside, None, flags)

    def _shown(self, path: str) -> bool:
        """Whether the machine's ``path`` shows already: the deepest folder holding it that
        was placed or covered is a placed one."""
        holders = [(len(p), True) for p in self.placed if _within(path, [p])]
        holders += [(len(c), False) for c in self.covered if _within(path, [c])]
        return bool(holders) and max(holders)[1]

    def tmpfs(self, path: str, data: str, flags: int = MS_NOSUID | MS_NODEV | MS_NOEXEC) -> None:
        """An empty tmpfs (``data``: its size and mode) at ``path`` inside; by default nothing
        on it can be run or mapped executable (``noexec``: the kernel refuses ``execve`` and
        ``mmap(PROT_EXEC)`` of its files, so a compiled library written there cannot load)."""
        self.mount("tmpfs", self.path + path, "tmpfs", flags, data)
        if path and _within(path, self.placed):
            self.covered.append(path)


def _within(path: str, folders: list[str]) -> bool:
    """``path`` is one of ``folders`` or inside one."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def confine(libc: Any, config: dict, own_proc: bool = False) -> str:
    """Give the worker a root directory of its own and ``chroot`` into it.

    The new root is an empty tmpfs holding, at their own paths: the system directories
    (read-only), Python's installation and site-packages (read-only), ``/dev`` and ``/proc``,
    a private ``/tmp``, and the sandbox. Nothing else of the machine is there: not the
    harness, not other checkouts of it, not home directories. Paths the trusted side asks to
    hide that still fall inside one of those directories are covered by empty mounts.
    ``/dev/shm`` is a small tmpfs of its own and the sandbox's ``work`` and ``out`` folders
    tmpfs of ``limits.work_mb``, its copy of the submission a tmpfs holding those files
    (:func:`_mount_writable`; all gone with the namespace, all ``noexec``, like the rest of
    the sandbox). ``own_proc``: the worker is in a pid
    namespace of its own (:mod:`sandbox.userns`) and gets a fresh ``/proc`` showing only it.
    Must run with mount rights in a private mount namespace (root, or a user namespace); the
    caller then drops to another user id or drops its capabilities, so it cannot ``chroot``
    back out."""
    root = _Root(libc, os.path.join(config["sandbox"], "root"))
    root.mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted below reaches the machine's namespace
    os.mkdir(root.path, 0o755)
    root.tmpfs("", "size=1m,mode=0755", MS_NOSUID | MS_NODEV)
    _place_system(root, own_proc)
    # after /tmp: a venv under /tmp shows through the private /tmp, not under it
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)}
    python |= set(config.get("python_dirs", []))
    for path in sorted({os.path.realpath(p) for p in python}, key=len):
        root.place(path)
    sandbox = os.path.realpath(config["sandbox"])
    # read-only (but the folders _mount_writable covers), and nothing in it can run (the
    # submission's copy: a compiled library it brings cannot be loaded); not recursive: its
    # "root" folder shows empty inside
    root.place(sandbox, noexec=True)
    _mount_writable(root, config, sandbox)
    for path in config.get("hide", []):
        if os.path.isdir(root.path + os.path.realpath(path)) and not (sandbox + "/").startswith(os.path.realpath(path) + "/"):
            root.tmpfs(os.path.realpath(path), "size=16k,mode=0555", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path in forbidden_files(config.get("forbidden", []), [*config.get("python_path", []), *python]):
        _cover_forbidden(root, path)
    root.mount(None, root.path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chroot(root.path)
    os.chdir("/")
    return "private root: " + ", ".join(root.placed) + ", /tmp (empty), /dev/shm (empty), work and out (tmpfs)"


def _place_system(root: _Root, own_proc: bool) -> None:
    """The system directories, ``/dev`` (with a ``/dev/shm`` of its own), ``/proc`` (a fresh
    one when ``own_proc``) and an empty ``/tmp``."""
    for path in SYSTEM_DIRS:
        root.place(path)
    for path in OPTIONAL_DIRS:
        try:
            root.place(path, recursive=True)
        except OSError:
            pass
    root.place("/dev", writable=True, recursive=True, devices=True)
    if os.path.isdir(root.path + "/dev/shm"):  # shared memory of its own, not the machine's
        root.tmpfs("/dev/shm", f"size=64m,nr_inodes={FILES},mode=1777")
    if os.path.isdir(root.path + "/dev/mqueue"):  # the machine's POSIX queues: not shown
        root.tmpfs("/dev/mqueue", "size=16k,mode=0555", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if own_proc:
        os.makedirs(root.path + "/proc", mode=0o755, exist_ok=True)
        root.mount("proc", root.path + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        root.placed.append("/proc (its own processes only)")
    else:
        root.place("/proc", writable=True, recursive=True)
    os.makedirs(root.path + "/tmp", exist_ok=True)
    root.tmpfs("/tmp", f"size=256m,nr_inodes={FILES},mode=1777")


def _mount_writable(root: _Root, config: dict, sandbox: str) -> None:
    """The sandbox's work folder (its ``HOME`` and ``TMPDIR``) and output folder (where it
    writes the files a call names; the trusted side reads them through ``/proc/<pid>/root``):
    each a tmpfs of ``limits.work_mb`` and at most :data:`FILES` files, owned by the worker's
    user, ``noexec``, gone with the worker. The submission's copy likewise (:func:`_own_copy`).
    Nothing of the machine's disk is writable."""
    work_mb = int(config.get("limits", {}).get("work_mb") or 0) or 256
    owner = config.get("uid") if config.get("uid") is not None else os.getuid()
    group = config.get("gid") if config.get("gid") is not None else os.getgid()
    for folder in (os.path.realpath(config["work_dir"]), os.path.join(sandbox, "out")):
        if os.path.isdir(root.path + folder):
            root.tmpfs(folder, f"size={work_mb}m,nr_inodes={FILES},mode=0700,uid={owner},gid={group}")
    code = os.path.realpath(config["code_dir"])
    if os.path.isdir(root.path + code):
        _own_copy(root, code, work_mb, owner, group)


def _own_copy(root: _Root, code: str, work_mb: int, owner: int, group: int) -> None:
    """The submission's copy as the worker's own, writable as where its author runs it (and as
    in-process: code that writes a cache beside its module works the same): a tmpfs over
    ``code`` holding the same files, owned by the worker, with ``work_mb`` and :data:`FILES`
    files to spare, ``noexec``, gone with the worker (the next worker starts from the copy)."""
    import shutil

    size = files = 0
    for folder, dirs, names in os.walk(code):
        files += 1 + len(dirs) + len(names)
        size += sum(os.lstat(os.path.join(folder, n)).st_size for n in names)
    root.tmpfs(code, f"size={(size >> 20) + 1 + work_mb}m,nr_inodes={files + FILES},mode=0755,uid={owner},gid={group}")
    shutil.copytree(code, root.path + code, symlinks=True, dirs_exist_ok=True)
    if owner == os.getuid():  # in a user namespace: the copies are the worker's already
        return
    for folder, dirs, names in os.walk(root.path + code):
        for name in (*dirs, *names):
            os.lchown(os.path.join(folder, name), owner, group)


def _cover_forbidden(root: _Root, path: str) -> None:
    """Cover a forbidden package or module with one that only raises (an empty folder
    would still import, as a namespace package)."""
    inside, name = root.path + path, os.path.basename(path).split(".", 1)[0]
    stub = f"raise ModuleNotFoundError({FORBIDDEN_MESSAGE.format(name)!r}, name={name!r})\n"
    if os.path.isdir(inside):
        root.tmpfs(path, "size=16k,mode=0755", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        with open(os.path.join(inside, "__init__.py"), "w") as f:
            f.write(stub)
        root.mount(None, inside, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    elif os.path.isfile(inside):
        os.makedirs(root.path + "/.forbidden", mode=0o755, exist_ok=True)
        with open(f"{root.path}/.forbidden/{name}.py", "w") as f:
            f.write(stub)
        root.mount(f"{root.path}/.forbidden/{name}.py", inside, None, MS_BIND)
        root.mount(None, inside, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
