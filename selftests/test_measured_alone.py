"""The graded suite's in-process memory test counts every allocation of its process: no
prefetched set-up (selftests/prefetch.py) runs in a background thread while it measures
(``selftests/conftest.py``: the background starts once it has ended, where it is selected)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from harness.childenv import child_env

from .conftest import MEASURED, MEASURES_ITS_PROCESS
from .prefetch import prefetched
from .support import ROOT


@prefetched
def started_in_the_background(prefetch) -> float:
    """When this set-up started (time.monotonic): queued for the background in a run of this file."""
    return time.monotonic()


def test_no_set_up_starts_while_the_graded_suites_memory_test_measures_its_process(request, started_in_the_background):
    ended = request.config.stash.get(MEASURED, None)
    if ended is None:
        pytest.skip(f"{MEASURES_ITS_PROCESS} is not in this run")
    assert started_in_the_background >= ended


def test_a_run_of_the_memory_test_and_a_prefetched_set_up_starts_the_set_up_after_it():
    # with nothing else to do, the background took the set-up at the session's start, while
    # the memory test measured every allocation of the process (it failed in a run of both tiers)
    probe = "selftests/test_measured_alone.py::test_no_set_up_starts_while_the_graded_suites_memory_test_measures_its_process"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--impl", "reference",
                           MEASURES_ITS_PROCESS, probe], cwd=ROOT, env=child_env(drop=("PYTEST*", "BPE_*")),
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout[-3000:]
