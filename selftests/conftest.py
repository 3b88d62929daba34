"""Fixtures for the harness's own tests."""

from __future__ import annotations

import os

import pytest

from harness import gpt2_cache, use_shared_tiktoken_cache

from .prefetch import Gradings, Prefetch, prefetched, wanted
from .support import GradeRun

PREFETCH = pytest.StashKey[Prefetch]()

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
    prefetch.start(reversed(wanted(session.items)))


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
