"""Fixtures for the harness's own tests."""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterator

import pytest

from harness import gpt2_cache, use_shared_tiktoken_cache

from .support import GradeRun, run_grade

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
        "-m 'not slow' leaves these out for a quick run (CI runs every test)")


class Gradings:
    """Gradings run two at a time in the background (the grader waits on one worker most of
    the time, so two share the machine's cores well): ``start`` queues one under a name and
    returns at once, ``get`` waits for it. Queue every grading a module needs before waiting
    on the first."""

    def __init__(self, pool: ThreadPoolExecutor, base: Path) -> None:
        self.pool, self.base = pool, base
        self.futures: dict[str, Future] = {}

    def start(self, name: str, **request) -> None:
        """Queue :func:`run_grade` of ``request`` (its keyword arguments) under ``name``,
        writing to ``<tmp>/NAME``."""
        if name not in self.futures:
            self.futures[name] = self.pool.submit(run_grade, self.base / name, **request)

    def submit(self, name: str, work: Callable[[], object]) -> None:
        """Queue any other work (a grading with its own set-up) under ``name``."""
        if name not in self.futures:
            self.futures[name] = self.pool.submit(work)

    def get(self, name: str):
        return self.futures[name].result()

    def start_whole_suite(self) -> None:
        """Queue the whole-suite gradings of the reference (with ``--report``) and of the
        untouched stubs (with ``--junit``), each once a session."""
        self.start("reference", impl="reference", report=True)
        self.start("stubs", junit=True)


@pytest.fixture(scope="session")
def gradings(tmp_path_factory) -> Iterator[Gradings]:
    """The session's background gradings (nothing is queued until a test asks)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = Gradings(pool, tmp_path_factory.mktemp("gradings"))
        yield runs
        for future in runs.futures.values():
            future.cancel()


@pytest.fixture(scope="session")
def graded_reference(gradings) -> GradeRun:
    """The reference graded on the whole suite (with ``--report``)."""
    gradings.start_whole_suite()
    return gradings.get("reference")


@pytest.fixture(scope="session")
def graded_stubs(gradings) -> GradeRun:
    """The untouched stubs graded on the whole suite (with ``--junit``)."""
    gradings.start_whole_suite()
    return gradings.get("stubs")
