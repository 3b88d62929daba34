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
        notes.append(f"unshare(network and IPC namespaces) failed: {os.strerror(ctypes.get_errno())}")
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


# ---- no native code the submission brings or writes ------------------------------------
# Every place holding its files is mounted noexec (sandbox.confine), so the kernel refuses to
# run or map executable anything there (a compiled library it brings cannot load). What is
# left is code made in memory; the seccomp filter below refuses it, and Landlock keeps
# /proc/self/mem (which writes through page protections) closed. Both are inherited by
# every process the worker starts and cannot be lifted.

PROT_WRITE, PROT_EXEC, MAP_ANONYMOUS, SHM_EXEC, READ_IMPLIES_EXEC = 2, 4, 0x20, 0o100000, 0x0400000
AUDIT_ARCH_X86_64 = 0xC000003E
# x86_64 system call numbers refused outright: memfd_create (code in memory that looks like a
# file), ptrace and process_vm_writev (writing into a process's code), bpf, and add_key,
# request_key and keyctl: the kernel keyring of a user id is no namespace's, it outlives the
# worker, and a root grader gives the same worker user id to later gradings (a key left there
# was read by the next submission graded, 2026-11-27)
REFUSED_X86_64 = (319, 101, 311, 321, 248, 249, 250)
MMAP, MPROTECT, PKEY_MPROTECT, SHMAT, PERSONALITY = 9, 10, 329, 30, 135
# where the worker shares the machine's network (no network namespace of its own: a container
# refusing them): socket() of any family but AF_UNIX and AF_NETLINK (the kernel's own: listing
# interfaces), and io_uring_setup (io_uring makes sockets without the socket call), so that code
# graded there reaches no network either (it is given the hidden tests' inputs)
SOCKET, AF_UNIX, AF_NETLINK, IO_URING_SETUP = 41, 1, 16, 425
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _EPERM = 0x7FFF0000, 0x00050000 | 1


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _arg(i: int) -> int:
    return 16 + 8 * i  # low 32 bits of seccomp_data.args[i] (little-endian)


def native_code_filter(no_network: bool = False) -> bytes:
    """The seccomp program (classic BPF): on x86_64 only (other ABIs refused), EPERM for the
    calls in :data:`REFUSED_X86_64`, an executable mapping that is anonymous or writable,
    ``mprotect`` adding execution, ``shmat`` with ``SHM_EXEC`` and ``personality`` with
    ``READ_IMPLIES_EXEC``, and with ``no_network`` any socket but a local or the kernel's one (:data:`SOCKET`);
    everything else allowed."""
    deny = _op(_RET, _EPERM)
    prog = [_op(_LD, 4), _op(_JEQ, AUDIT_ARCH_X86_64, 1, 0), deny, _op(_LD, 0), _op(_JGE, 0x40000000, 0, 1), deny]
    if no_network:  # socket(): its domain AF_UNIX or AF_NETLINK, else refused
        prog += [_op(_JEQ, IO_URING_SETUP, 0, 1), deny]
        prog += [_op(_JEQ, SOCKET, 0, 5), _op(_LD, _arg(0)), _op(_JEQ, AF_UNIX, 2, 0), _op(_JEQ, AF_NETLINK, 1, 0), deny, _op(_LD, 0)]
    for nr in REFUSED_X86_64:
        prog += [_op(_JEQ, nr, 0, 1), deny]
    # mmap: executable and (writable or anonymous)
    prog += [_op(_JEQ, MMAP, 0, 7), _op(_LD, _arg(2)), _op(_JSET, PROT_EXEC, 0, 3), _op(_JSET, PROT_WRITE, 3, 0),
             _op(_LD, _arg(3)), _op(_JSET, MAP_ANONYMOUS, 1, 0), _op(_RET, _ALLOW), deny]
    # mprotect, pkey_mprotect: adding execution; shmat: SHM_EXEC
    prog += [_op(_JEQ, MPROTECT, 1, 0), _op(_JEQ, PKEY_MPROTECT, 0, 4), _op(_LD, _arg(2)), _op(_JSET, PROT_EXEC, 0, 1), deny, _op(_LD, 0)]
    prog += [_op(_JEQ, SHMAT, 0, 4), _op(_LD, _arg(2)), _op(_JSET, SHM_EXEC, 0, 1), deny, _op(_LD, 0)]
    # personality: READ_IMPLIES_EXEC (0xffffffff only asks for the current one)
    prog += [_op(_JEQ, PERSONALITY, 0, 5), _op(_LD, _arg(0)), _op(_JEQ, 0xFFFFFFFF, 2, 0), _op(_JSET, READ_IMPLIES_EXEC, 0, 1), deny, _op(_LD, 0)]
    return b"".join([*prog, _op(_RET, _ALLOW)])


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def refuse_code_in_memory(libc: Any, notes: list[str], no_network: bool = False) -> bool:
    """Install :func:`native_code_filter` (needs ``PR_SET_NO_NEW_PRIVS``, set before);
    ``no_network``: the worker shares the machine's network, so its sockets are refused too."""
    machine = os.uname().machine  # nothing imported here: the worker may no longer read the library
    if machine != "x86_64":
        notes.append(f"no seccomp filter on {machine}: code made in memory is not refused")
        return False
    program = native_code_filter(no_network)
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.addressof(buf))
    libc.syscall.restype = ctypes.c_long
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW): without the flag, older
    # kernels also turn on a costly Spectre mitigation (SSBD) for the filtered process, which
    # guards nothing here (the worker's memory holds nothing it may not read)
    installed = libc.syscall(ctypes.c_long(317), ctypes.c_long(1), ctypes.c_long(4), ctypes.byref(fprog)) == 0
    if not installed and libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        notes.append(f"seccomp filter refused ({os.strerror(ctypes.get_errno())}): code made in memory is not refused")
        return False
    if no_network:
        notes.append(NO_NETWORK)
    return True


NO_NETWORK = "no network namespace of its own: every socket but a local (AF_UNIX) or the kernel's (AF_NETLINK) one is refused"


def writes_only_beneath(libc: Any, folders: list[str], notes: list[str]) -> bool:
    """Landlock: from now on files may be opened for writing (or truncated) only beneath
    ``folders`` (nothing else of the private root is writable anyway; this closes
    ``/proc/<pid>/mem``, which writes through page protections into a process's code)."""
    libc.syscall.restype = ctypes.c_long
    SYS_CREATE, SYS_ADD, SYS_RESTRICT, WRITE_FILE, TRUNCATE = 444, 445, 446, 2, 1 << 14

    def call(*args: Any) -> int:
        result = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
        if result < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return result

    try:
        abi = call(SYS_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
        access = WRITE_FILE | (TRUNCATE if abi >= 3 else 0)
        attr = ctypes.create_string_buffer(struct.pack("Q", access), 8)
        ruleset = call(SYS_CREATE, attr, 8, 0)
        try:
            for folder in folders:
                try:
                    fd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
                except OSError:
                    continue
                try:
                    call(SYS_ADD, ruleset, 1, ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12), 0)
                finally:
                    os.close(fd)
            call(SYS_RESTRICT, ruleset, 0)
        finally:
            os.close(ruleset)
    except OSError as err:
        notes.append(f"Landlock not available ({err.strerror}): /proc/self/mem stays writable")
        return False
    return True
