"""The limits on an isolated worker: one frozen dataclass, set from grading.yaml's ``isolation``."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class IsolationLimits:
    """Limits on a worker (grading.yaml may override them by these names)."""

    call_timeout: float = 90.0  # wall-clock seconds per adapter or method call
    memory_mb: int = 4096  # RLIMIT_AS
    cpu_seconds: int = 1800  # RLIMIT_CPU, over the worker's life (it is restarted after a kill)
    max_processes: int = 64  # RLIMIT_NPROC (processes and threads)
    output_bytes: int = 1_000_000  # stdout+stderr kept; the rest is counted and dropped
    file_bytes: int = 256 << 20  # RLIMIT_FSIZE; also the most copied back from a written file
    term_grace: float = 0.5  # seconds between SIGTERM and SIGKILL
    startup_timeout: float = 60.0  # seconds for a new worker to say hello
    stream_ids: int = 200_000_000  # ids one encode_iterable may send (also: at most one per input byte)
    reply_bytes: int = 64 << 20  # longest reply read from a worker
    reply_values: int = 4_000_000  # most values (commas + 1) in one reply: bounds the memory parsing it
    work_mb: int = 256  # size of the worker's work folder (HOME, TMPDIR; a tmpfs in its private root)

    @classmethod
    def from_mapping(cls, data: dict | None) -> "IsolationLimits":
        data = dict(data or {})
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown isolation limit(s): {', '.join(unknown)}")
        return cls(**{k: (float if k in ("call_timeout", "term_grace", "startup_timeout") else int)(v) for k, v in data.items()})

