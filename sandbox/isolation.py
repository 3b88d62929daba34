"""Isolated grading in a pytest session: :func:`backend_for` gives the session's worker backends
(:mod:`sandbox.plugin` calls it under ``--isolate``).

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
  its own (:func:`sandbox.confine.confine`) that holds only the system directories, Python
  and its sandbox: the harness repository (tests, hidden tests, reference, grading.yaml),
  any other copy of it on the machine, the original submission, home directories and
  ``/autograder`` are simply not there, and its ``/tmp`` is private.
* read the tests: see above; it is also given no path into the harness (files passed as
  paths are copied into the sandbox and the argument rewritten).
* share anything else with the machine: it has network and IPC namespaces of its own (only a
  loopback device; System V objects gone with it; where it cannot, its seccomp filter refuses
  every socket but a local one), every place it can write is a capped tmpfs
  of its own, its processes' memory is summed and the whole worker stopped past ``memory_mb``
  (:class:`sandbox.proctree.TreeLimit`), and no compiled code it brings or writes can run
  (``noexec`` mounts, a seccomp filter and Landlock: :mod:`sandbox.lockdown`).

Without root the worker gets the same private root inside unprivileged user, mount and pid
namespaces (:mod:`sandbox.userns`), where the kernel allows them: the process started here then
only supervises, and the worker's own pid (its grandchild) is used for ``/proc`` reads. Where
the kernel refuses, it runs as the grader's own user: limits still apply (``RLIMIT_NPROC``
then counts all of that user's processes, so it is set to their current number plus
``max_processes``), but files readable by that user cannot be hidden and stray children
that leave the process group cannot be swept up by user id (the isolation line says weak).

The trusted side is split by job: :mod:`sandbox.limits` (the limits), :mod:`sandbox.channel`
(both ends of the protocol), :mod:`sandbox.spec` (the frozen :class:`~sandbox.spec.WorkerSpec`
a worker starts from, and the :class:`~sandbox.spec.Startup` it reports back),
:mod:`sandbox.process` (one running worker, started by :mod:`sandbox.launch`),
:mod:`sandbox.backend` (:class:`~sandbox.backend.WorkerBackend`, one implementation's worker) and
:mod:`sandbox.registry` (the live backends, all stopped at exit).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness import keys

from .backend import WorkerBackend
from .forbidden import FORBIDDEN_MODULES
from .limits import IsolationLimits
from .registry import close_all, restart_workers

__all__ = ["backend_for", "close_all", "forbidden_for", "limits_for", "restart_workers"]


def limits_for(config: Any) -> IsolationLimits:
    """Limits of a pytest session: the grading policy's ``isolation`` (the policy in
    ``config.stash[harness.keys.POLICY]``, when grading) or the defaults, with
    ``--isolate-timeout`` as ``call_timeout``."""
    limits = keys.policy_value(config, "isolation", IsolationLimits())
    timeout = config.getoption("isolate_timeout", None)
    return limits if timeout is None else replace(limits, call_timeout=timeout)


def forbidden_for(config: Any) -> tuple[str, ...]:
    """The session's forbidden modules: the grading policy's, else the defaults."""
    return tuple(keys.policy_value(config, "forbidden_modules", FORBIDDEN_MODULES))


def backend_for(config: Any, which: str) -> "WorkerBackend":
    """The worker backend of ``which`` ("submission" or "reference") for a pytest session; its
    workers' hash seed is the session's ``--seed``; the submission's also sees the packages
    installed for it (``--submission-packages``)."""
    limits, forbidden, seed = limits_for(config), forbidden_for(config), config.getoption("seed")
    if which == "reference":
        return WorkerBackend("reference", None, limits, label="reference", forbidden=forbidden, hash_seed=seed)
    return WorkerBackend(config.getoption("impl"), config.getoption("submission"), limits, forbidden=forbidden,
                         hash_seed=seed, packages=config.getoption("submission_packages", None))
