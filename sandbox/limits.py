"""The limits on an isolated worker: one frozen dataclass, set from grading.yaml's ``isolation``.

The limits a policy may set are declared here once, each with its default and its
description (``metadata["policy"]``): :mod:`grader.config` reads them over these defaults, and
``docs/policy.md``'s table of keys is generated from them (:mod:`grader.policy_keys`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass(frozen=True)
class IsolationLimits:
    """Limits on a worker. grading.yaml's ``isolation:`` may set those with a description
    (:func:`configurable`; :func:`grader.config.load_config` reads them over these defaults)."""

    call_timeout: float = field(default=60.0, metadata={"policy": "wall-clock seconds per call into the submission"})
    memory_mb: int = field(default=4096, metadata={  # RLIMIT_AS
        "policy": "megabytes of memory for each of the worker's processes, and for all of them together"})
    cpu_seconds: int = field(default=600, metadata={  # RLIMIT_CPU
        "policy": "CPU seconds over the worker's life (it is restarted after a kill)"})
    max_processes: int = field(default=64, metadata={  # RLIMIT_NPROC, with one per core more (sandbox.confine)
        "policy": "processes and threads of the worker, besides one per core of the machine (a process pool of the "
                  "default size fits on any machine)"})
    output_bytes: int = field(default=1_000_000, metadata={
        "policy": "bytes of what the submission prints that are kept; the rest is counted and dropped"})
    file_bytes: int = 256 << 20  # RLIMIT_FSIZE
    copy_back_bytes: int = 8 << 20  # the most copied back from a file a call wrote (GPT-2's vocab.json: 1 MB); a bigger one fails the call
    term_grace: float = 0.5  # seconds between SIGTERM and SIGKILL
    startup_timeout: float = 60.0  # seconds for a new worker to say hello
    stream_ids: int = 200_000_000  # ids one encode_iterable may send (also: at most one per input byte)
    reply_bytes: int = 64 << 20  # longest reply read from a worker
    reply_values: int = 2_000_000  # most values (commas + 1, and each packed id) in one reply: bounds the memory parsing it (a correct reply has under 1 million)
    work_mb: int = 256  # size of the worker's work folder (HOME, TMPDIR; a tmpfs in its private root)


def configurable() -> tuple[str, ...]:
    """The limits grading.yaml's ``isolation:`` may set: those with a description."""
    return tuple(f.name for f in fields(IsolationLimits) if "policy" in f.metadata)
