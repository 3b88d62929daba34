"""Confinement without root: user, mount and pid namespaces (runs in the worker, stdlib only).

A grader that is not root cannot give the worker another user id or a root directory of its
own by itself; an unprivileged user namespace can (where the kernel allows them). The worker
calls :func:`enter` before any submission code exists:

* ``unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC)``,
  mapping the grader's user and group ids to themselves (so files keep their owners; nothing
  else is mapped): a network namespace holding only a loopback device (its loopback is brought
  up by :func:`sandbox.lockdown.loopback_up`:
  nothing of the machine's network, the internet or the grader's listening sockets is
  reachable) and System V IPC objects of its own (gone with the namespace);
* a first ``fork``: this process stays outside as the *supervisor* (the process the grader
  started), waits and leaves with the worker's exact status (same exit code or signal);
* the child is process 1 of the new pid namespace, an *init* that reaps orphans and reports
  the worker's status; when it ends, the kernel kills every process left in the namespace,
  so nothing the submission started outlives the worker;
* a second ``fork``: the worker itself, which returns from :func:`enter` and then builds its
  private root (:func:`sandbox.confine.confine`, with a fresh ``/proc`` showing only its own
  namespace's processes) and calls :func:`drop_capabilities`. Being chroot-ed, it cannot
  create another user namespace either (the kernel refuses that to chroot-ed processes).

Supervisor and init close the protocol pipes; they run no submission code.
"""

from __future__ import annotations

import ctypes
import os
import signal

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
CLONE_NEWIPC, CLONE_NEWNET = 0x08000000, 0x40000000
PR_SET_PDEATHSIG = 1
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter(libc, close: list[int], user: bool = True) -> int:
    """Move into new user (unless ``user`` is false: a root grader needs none), mount and
    pid namespaces; returns in the worker process only, with its process id as the grader
    sees it. ``close``: descriptors the supervisor and init must not keep (the protocol
    pipes). Raises ``OSError`` when the kernel refuses."""
    uid, gid = os.getuid(), os.getgid()
    flags = (CLONE_NEWUSER if user else 0) | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        kinds = "user, mount, pid, network and IPC" if user else "mount, pid, network and IPC"
        raise OSError(err, f"unshare({kinds} namespaces) failed: {os.strerror(err)}")
    if user:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:
        _never_return(_supervise, libc, init, status_r, status_w, close)
    os.close(status_r)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    worker = os.fork()
    if worker:
        _never_return(_init, worker, status_w, close)
    os.close(status_w)
    return int(os.readlink("/proc/self"))  # still the machine's /proc: the grader's view of our pid


def _never_return(role, *args) -> None:
    """Run the supervisor's or init's part; whatever happens, that process ends there (it
    must never carry on as a worker)."""
    try:
        role(*args)
    finally:
        os._exit(1)


def _supervise(libc, init: int, status_r: int, status_w: int, close: list[int]) -> None:
    """Outside the namespaces: wait for init, then end exactly as the worker did."""
    for fd in [*close, status_w]:
        os.close(fd)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    os.waitpid(init, 0)
    data = os.read(status_r, 64)
    status = int(data) if data.strip().lstrip(b"-").isdigit() else 1 << 8
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _init(worker: int, status_w: int, close: list[int]) -> None:
    """Process 1 of the namespace: reap every process until the worker ends, report its
    status to the supervisor, then end (which ends the namespace and all left in it)."""
    for fd in close:
        os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == worker:
            os.write(status_w, str(status).encode())
            os._exit(0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities(libc) -> None:
    """Give up every capability the new user namespace granted (mounting, chroot, ...)."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset failed: {os.strerror(err)}")
