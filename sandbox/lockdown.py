"""What the kernel enforces for the worker beyond its private root (in the worker: stdlib only,
as it runs from the worker's private copy): a network namespace with only a working loopback
device and an IPC namespace of its own (where :func:`sandbox.userns.enter` could not give them)."""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
from typing import Any

CLONE_NEWIPC, CLONE_NEWNET = 0x08000000, 0x40000000


def own_network_and_ipc(libc: Any, notes: list[str]) -> bool:
    """Network and IPC namespaces of the worker's own (loopback only; System V objects gone
    with it), where the pid namespace route (:func:`sandbox.userns.enter`) was refused; noted if not."""
    if libc.unshare(CLONE_NEWNET | CLONE_NEWIPC) != 0:
        notes.append(f"unshare(network and IPC namespaces) failed: {os.strerror(ctypes.get_errno())}; the worker shares the machine's network and System V IPC")
        return False
    loopback(notes)
    return True


def loopback(notes: list[str]) -> None:
    """:func:`loopback_up`, noting a failure (the worker then has no network at all)."""
    try:
        loopback_up()
    except OSError as err:
        notes.append(f"loopback device not up ({err.strerror}): the worker has no network at all")


def loopback_up() -> None:
    """Bring up the new network namespace's loopback device (it starts down), so that a
    submission talking to itself over 127.0.0.1 works; nothing else is there to reach."""
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack_from("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))
