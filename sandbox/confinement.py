"""The isolation line: how a running worker is confined, read from ``/proc`` (its root
directory, user id and namespaces), not from what the worker says."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from . import proctree

if TYPE_CHECKING:  # pragma: no cover
    from .process import WorkerProcess


def describe(proc: "WorkerProcess") -> str:
    """How this worker is isolated, read from ``/proc`` (not from what the worker says):
    its user id, root directory and pid namespace, whether its seccomp filter refusing code made
    in memory is in place, then its network and IPC: namespaces of its own (no network but
    loopback, System V IPC gone with it), else ``weak`` with the reason."""
    line = _confinement(proc)
    if line.startswith("unknown"):
        return line
    shared = [what for kind, what in (("net", "network"), ("ipc", "System V IPC")) if not proctree.own_namespaces(proc.pid, (kind,))]
    if "private root" in line and not line.startswith("weak") and proctree.status_kb(proc.pid, "Seccomp") == 2:
        # noexec mounts for its files (sandbox.confine), its seccomp filter (sandbox.lockdown)
        line += "; no compiled code of its own runs"
    if not shared:
        return line + "; own network (loopback only) and IPC namespaces"
    notes = proc.info.get("notes") if type(proc.info.get("notes")) is list else []
    why = "; ".join(str(n) for n in notes if "network" in str(n) or "IPC" in str(n))[:300]
    line = line if line.startswith("weak") else "weak: " + line
    return line + f"; shares the machine's {' and '.join(shared)}" + (f" ({why})" if why else "")


def _confinement(proc: "WorkerProcess") -> str:
    """Its user id, root directory and pid namespace, read from ``/proc``."""
    try:
        root = os.readlink(f"/proc/{proc.pid}/root")
        uid = os.stat(f"/proc/{proc.pid}").st_uid
    except OSError as err:
        return f"unknown ({err.strerror})"
    if root == str(proc.sandbox / "root") and uid != os.geteuid():
        pids = ", own pid namespace" if proc.init_pid is not None and proctree.own_namespaces(proc.pid, ("pid",)) else ""
        return "own user id, private root directory (the system, Python and the sandbox only)" + pids
    if root == str(proc.sandbox / "root") and proc.pid != proc.proc.pid and proctree.own_namespaces(proc.pid):
        return (
            "own user, mount and pid namespaces (not root), private root directory "
            "(the system, Python and the sandbox only)"
        )
    notes = proc.info.get("notes") if type(proc.info.get("notes")) is list else []
    why = "; ".join(str(n) for n in notes[:3])[:300]
    if uid != os.geteuid() and type(proc.info.get("closed")) is list and proc.info["closed"]:
        return (
            "own user id; no private root directory here, so the harness folders are closed to "
            f"other users by file permissions instead ({why})"
        )
    who = "the grader's user id" if uid == os.geteuid() else "its own user id"
    return f"weak: runs as {who} and sees the machine's files" + (f" ({why})" if why else "")
