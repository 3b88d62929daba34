"""The live worker backends of this process: every one is stopped at exit.

:class:`sandbox.backend.WorkerBackend` registers itself here when made and leaves when closed.
The registry calls back into what registered (``restart``, ``close``): at exit nothing else
is left to stop the workers, and :func:`restart_workers` is how the grader reaches the
backends of its test session without holding them.
"""

from __future__ import annotations

import atexit
from typing import Protocol


class Live(Protocol):
    """What this registry needs of a backend (:class:`sandbox.backend.WorkerBackend`)."""

    label: str

    def restart(self) -> None: ...

    def close(self) -> None: ...


LIVE: set[Live] = set()  # strong references: every worker is stopped at exit


def restart_workers(keep: str = "reference") -> None:
    """Stop the workers of every backend but those labelled ``keep``; the next call starts a
    fresh one (its tokenizers are made again there, without counting as a death)."""
    for backend in list(LIVE):
        if backend.label != keep:
            backend.restart()


@atexit.register
def close_all() -> None:
    """Stop every worker of this process and remove their sandboxes (at exit, on SIGTERM)."""
    for backend in list(LIVE):
        backend.close()
