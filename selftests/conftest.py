"""Fixtures for the harness's own tests."""

from __future__ import annotations

import os
import time

import pytest

from harness import gpt2_cache, use_shared_tiktoken_cache

from .prefetch import Gradings, Prefetch, prefetched, wanted
from .support import GradeRun

PREFETCH = pytest.StashKey[Prefetch]()
# The graded suite's in-process memory test counts every allocation of its process
# (tracemalloc): set-ups running beside it in background threads (copies, results read back)
# counted as its stream's, and it failed in a run holding both (the two tiers in one session).
# Where it is selected, the background starts once it has ended (:class:`AfterMeasuring`).
MEASURES_ITS_PROCESS = "tests/public/test_encode_iterable.py::test_encode_iterable_memory_does_not_grow_with_input"
MEASURED = pytest.StashKey[float]()  # when that test ended (time.monotonic), in a run that held it

# Every process a self-test starts reads GPT-2's files from the cache this one reads, named
# outright: a copy of the checkout made elsewhere has no ../shared/tiktoken_cache beside it.
use_shared_tiktoken_cache()
if gpt2_cache.cache_dir() is not None:
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(gpt2_cache.cache_dir()))


def pytest_configure(config) -> None:
    # the slow tier (docs/development.md); registered here, not in pyproject.toml, whose pytest
    # options the student handout ships
    config.addinivalue_line(
        "markers", "slow: grades, runs pytest or builds environments for tens of seconds or more; "
        "the README's test command leaves these out (-m 'not slow'), the slow tier runs them (-m slow), "
        "CI runs both")


def pytest_runtestloop(session) -> None:
    """Start the prefetched set-ups the selected tests use (selftests/prefetch.py), the last
    used first, before the first test runs; nothing when only collecting."""
    if session.config.getoption("collectonly") or (session.testsfailed and not session.config.getoption(
            "continue_on_collection_errors")):
        return
    prefetch = session.config.stash[PREFETCH] = Prefetch()
    setups = list(reversed(wanted(session.items)))
    if any(item.nodeid == MEASURES_ITS_PROCESS for item in session.items):
        session.config.pluginmanager.register(AfterMeasuring(session.config, setups), "selftests-after-measuring")
    else:
        prefetch.start(setups)


class AfterMeasuring:
    """Starts the prefetched ``setups`` once the test :data:`MEASURES_ITS_PROCESS` has ended
    (a plugin: a conftest's hooks see only the items of its own folder)."""

    def __init__(self, config, setups) -> None:
        self.config, self.setups = config, setups

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if nodeid == MEASURES_ITS_PROCESS and MEASURED not in self.config.stash:
            self.config.stash[MEASURED] = time.monotonic()
            self.config.stash[PREFETCH].start(self.setups)


def pytest_sessionfinish(session) -> None:
    prefetch = session.config.stash.get(PREFETCH, None)
    if prefetch is not None:
        prefetch.close()


@pytest.fixture(scope="session")
def prefetch(request) -> Prefetch:
    """The session's prefetched set-ups (started by pytest_runtestloop; made here when that
    did not run)."""
    stash = request.config.stash
    if PREFETCH not in stash:
        stash[PREFETCH] = Prefetch()
    return stash[PREFETCH]


@pytest.fixture(scope="session")
def gradings(prefetch) -> Gradings:
    """The session's gradings by name (nothing is queued until a test or a set-up asks)."""
    return prefetch.gradings


@prefetched
def graded_reference(prefetch: Prefetch) -> GradeRun:
    """The reference graded on the whole suite (with ``--report``), once a session."""
    prefetch.gradings.start_whole_suite()
    return prefetch.gradings.get("reference")


@prefetched
def graded_stubs(prefetch: Prefetch) -> GradeRun:
    """The untouched stubs graded on the whole suite (with ``--junit``), once a session."""
    prefetch.gradings.start_whole_suite()
    return prefetch.gradings.get("stubs")
