"""The sandbox's pytest plugin: ``--isolate`` runs the implementations in sandboxed workers.

Options: ``--isolate`` (what grading does) and ``--isolate-timeout S`` (wall-clock limit per
call). It implements the harness's ``pytest_bpe_make_backend`` hook with a
:class:`~sandbox.backend.WorkerBackend` (:func:`sandbox.isolation.backend_for`) whose limits and
forbidden modules come from the grading policy in the session's stash
(:data:`harness.keys.POLICY`; defaults without one),
and puts how the submission's worker is isolated in ``config.stash[CONFINEMENT]`` after each
test, for the grading report. The worker code is imported only under ``--isolate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from harness import keys

if TYPE_CHECKING:
    from .backend import WorkerBackend


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bpe", "BPE assignment harness")
    group.addoption(
        "--isolate",
        action="store_true",
        default=False,
        help="run the implementations in sandboxed worker processes (what grading does)",
    )
    group.addoption(
        "--isolate-timeout", type=float, default=None, metavar="S", help="with --isolate: wall-clock limit per call"
    )


BACKENDS = pytest.StashKey["dict[str, WorkerBackend]"]()  # the session's worker backends by role


def pytest_bpe_make_backend(config: pytest.Config, which: str) -> "WorkerBackend | None":
    if not config.getoption("isolate"):
        return None
    from .isolation import backend_for  # limits and forbidden modules from the grading policy

    backend = backend_for(config, which)
    config.stash.setdefault(BACKENDS, {})[which] = backend
    return backend


def _note_confinement(config: pytest.Config) -> None:
    """How the submission's worker is isolated (the reference's, until one has started)."""
    made = config.stash.get(BACKENDS, {})
    for backend in (made.get("submission"), made.get("reference")):
        if backend is not None and backend.confinement:
            config.stash[keys.CONFINEMENT] = backend.confinement
            return


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item):
    yield
    _note_confinement(item.config)  # a worker started during this test (or its fixtures)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _note_confinement(session.config)  # before the grading plugin writes its report

