"""The limits on an isolated worker: one frozen dataclass, set from grading.yaml's ``isolation``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class IsolationLimits:
    """Limits on a worker. grading.yaml's ``isolation:`` may set the :attr:`CONFIGURABLE` ones
    (:func:`grader.config.load_config` reads them); the defaults are the values grading.yaml
    ships with, so a file without the section grades as the shipped one does."""

    CONFIGURABLE: ClassVar[tuple[str, ...]] = ("call_timeout", "memory_mb", "cpu_seconds", "max_processes", "output_bytes")

    call_timeout: float = 60.0  # wall-clock seconds per adapter or method call
    memory_mb: int = 4096  # RLIMIT_AS
    cpu_seconds: int = 600  # RLIMIT_CPU, over the worker's life (it is restarted after a kill)
    max_processes: int = 64  # RLIMIT_NPROC (processes and threads)
    output_bytes: int = 1_000_000  # stdout+stderr kept; the rest is counted and dropped
    file_bytes: int = 256 << 20  # RLIMIT_FSIZE
    copy_back_bytes: int = 8 << 20  # the most copied back from a file a call wrote (GPT-2's vocab.json: 1 MB); a bigger one fails the call
    term_grace: float = 0.5  # seconds between SIGTERM and SIGKILL
    startup_timeout: float = 60.0  # seconds for a new worker to say hello
    stream_ids: int = 200_000_000  # ids one encode_iterable may send (also: at most one per input byte)
    reply_bytes: int = 64 << 20  # longest reply read from a worker
    reply_values: int = 2_000_000  # most values (commas + 1, and each packed id) in one reply: bounds the memory parsing it (a correct reply has under 1 million)
    work_mb: int = 256  # size of the worker's work folder (HOME, TMPDIR; a tmpfs in its private root)
