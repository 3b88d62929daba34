"""What a worker starts from and what its start found out, as frozen values passed down and
back up: :class:`WorkerSpec` (made by :class:`sandbox.backend.WorkerBackend` for every
start) holds all a :class:`sandbox.process.WorkerProcess` needs to make its sandbox and
start; :class:`Startup` is what the start learned, for the backend to keep (the isolation
line, what was left out of the copy, the stand-ins adapters.py imported)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .limits import IsolationLimits


@dataclass(frozen=True)
class WorkerSpec:
    """Everything one worker needs to start, fixed by its backend."""

    package: str  # the implementation's package (BPE_IMPL): "student", "reference" ...
    source_root: Path  # the submission (or this checkout), copied into the sandbox
    only: tuple[str, ...] | None  # copy only these names from source_root (this checkout); None: all of it
    adapters: str  # adapters.py's path in the copy (harness.submission.Layout.adapters)
    limits: IsolationLimits
    forbidden: tuple[str, ...]  # modules the worker cannot import
    drop_privileges: bool  # as root: run the worker under a user id of its own
    private_root: bool  # False: as in a container that refuses mount namespaces
    namespaces: bool  # False: not root and no user namespaces, as where the kernel refuses them
    spin: float  # seconds each side polls for the other's next message (sandbox.channel.default_spin)
    hidden: tuple[Path, ...]  # more folders it must not see (sandbox.hiding.hide_paths' extra)
    python_path: tuple[str, ...]  # its sys.path (sandbox.pyenv.worker_python)
    python_dirs: tuple[str, ...]  # the directories that path needs
    hash_seed: int | None = None  # its PYTHONHASHSEED (the grading's seed): None, Python draws one


@dataclass(frozen=True)
class Startup:
    """What starting a worker found out; the fields stay None when the start failed before
    finding them out (a start that fails still reports what it learned until then)."""

    left_out: tuple[str, ...] | None = None  # what copying the code left out (harness.submission's notes)
    confinement: str | None = None  # how the worker is isolated, read from /proc (sandbox.confinement)
    loaded: bool = False  # adapters.py was imported ("hello")
    stand_ins: tuple[str, ...] | None = None  # missing packages stood in for, as the worker said (capped)
