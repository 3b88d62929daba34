"""The isolation line: how a running worker is confined, read from ``/proc`` (its root
directory, user id and namespaces), not from what the worker says."""

from __future__ import annotations

import os
from pathlib import Path

from . import lockdown, proctree


def describe(pid: int, started: int, init_pid: int | None, root: Path, info: dict) -> str:
    """How the worker ``pid`` is isolated, read from ``/proc`` (not from what the worker says;
    ``started``: the process the trusted side started, its supervisor in namespaces;
    ``init_pid``: process 1 of its pid namespace; ``root``: the private root it should have;
    ``info``: what it said when ready, only for the reasons of a weakness):
    its user id, root directory and pid namespace, whether its seccomp filter refusing code made
    in memory is in place, then its network and IPC: namespaces of its own (no network but
    loopback, System V IPC gone with it), else ``weak`` with the reason."""
    line = _confinement(pid, started, init_pid, root, info)
    if line.startswith("unknown"):
        return line
    shared = [what for kind, what in (("net", "network"), ("ipc", "System V IPC")) if not proctree.own_namespaces(pid, (kind,))]
    filtered = proctree.status_kb(pid, "Seccomp") == 2
    if "private root directory (" in line and not line.startswith("weak") and filtered:  # not "no private root directory here"
        # noexec mounts for its files (sandbox.confine), its seccomp filter (sandbox.lockdown)
        line += "; no compiled code of its own runs"
    # sharing the machine's network, its seccomp filter refuses every socket but a local one
    refused = "; no network (every socket but a local one is refused)" if "network" in shared and filtered else ""
    shared = [what for what in shared if not (refused and what == "network")]
    if not shared:
        return line + (refused + " and own IPC namespace" if refused else "; own network (loopback only) and IPC namespaces")
    why = "; ".join(str(n) for n in _reasons(info) if "network" in str(n) or "IPC" in str(n))[:300]
    line = line if line.startswith("weak") else "weak: " + line
    return line + refused + f"; shares the machine's {' and '.join(shared)}" + (f" ({why})" if why else "")


def _reasons(info: dict) -> list:
    """The worker's notes that can explain a weakness: all it said, but the line saying its
    seccomp filter refuses sockets (:data:`sandbox.lockdown.NO_NETWORK`: a strength)."""
    notes = info.get("notes")
    return [n for n in notes if n != lockdown.NO_NETWORK] if type(notes) is list else []


def _confinement(pid: int, started: int, init_pid: int | None, root: Path, info: dict) -> str:
    """Its user id, root directory and pid namespace, read from ``/proc``."""
    try:
        seen = os.readlink(f"/proc/{pid}/root")
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError as err:
        return f"unknown ({err.strerror})"
    if seen == str(root) and uid != os.geteuid():
        pids = ", own pid namespace" if init_pid is not None and proctree.own_namespaces(pid, ("pid",)) else ""
        return "own user id, private root directory (the system, Python and the sandbox only)" + pids
    if seen == str(root) and pid != started and proctree.own_namespaces(pid):
        return (
            "own user, mount and pid namespaces (not root), private root directory "
            "(the system, Python and the sandbox only)"
        )
    why = "; ".join(str(n) for n in _reasons(info)[:3])[:300]
    if uid != os.geteuid() and type(info.get("closed")) is list and info["closed"]:
        return (
            "own user id; no private root directory here, so the harness folders are closed to "
            f"other users by file permissions instead ({why})"
        )
    who = "the grader's user id" if uid == os.geteuid() else "its own user id"
    return f"weak: runs as {who} and sees the machine's files" + (f" ({why})" if why else "")
