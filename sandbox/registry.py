"""The live worker backends of this process: every one is stopped at exit.

:class:`sandbox.backend.WorkerBackend` registers itself here when made and leaves when closed.
"""

from __future__ import annotations

import atexit
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .backend import WorkerBackend

LIVE: "set[WorkerBackend]" = set()  # strong references: every worker is stopped at exit


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
