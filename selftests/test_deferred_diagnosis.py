"""A grading's known-bug diagnoses never take the tests' time: under a deadline they are made
once every test has run, in the order the tests failed, with what time is left before the
deadline (less :data:`grader.deferred_diagnosis.ROOM`), and each one found still goes into
its case (:mod:`grader.deferred_diagnosis`). Outside a grading (a plain pytest run, no
deadline) a failure is diagnosed as it is reported.

The suite here is made up: ten failing tests with a recorded call each, and a
``pytest_bpe_known_bug`` that takes half a second and logs when it ran."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from grader.deferred_diagnosis import ROOM
from grader.report import read_run_report
from harness.childenv import child_env

ROOT = Path(__file__).resolve().parent.parent
FAILING = 10
DIAGNOSIS_SECONDS = 0.5
SUITE = f"""
import pytest


@pytest.mark.parametrize("n", range({FAILING}))
def test_fails(n):
    assert n < 0
"""
CONFTEST = f"""
import json
import os
import time

import pytest

from harness import keys

LOG = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    item.stash[keys.RECORDS] = [(("call", "run_merge", ([1, 2], (1, 2), 3)), [1, 2])]
    yield


def pytest_runtest_logfinish(nodeid, location):
    LOG.append(["test", nodeid, time.monotonic()])


def pytest_bpe_known_bug(item, records, until):
    LOG.append(["diagnosis", item.nodeid, time.monotonic(), until])
    time.sleep({DIAGNOSIS_SECONDS})
    return "a bug of " + item.nodeid


def pytest_unconfigure(config):
    with open(os.environ["LOG_PATH"], "w") as f:
        json.dump(LOG, f)
"""
POLICY = """
groups:
  - name: made_up
    title: "Made up: failing tests"
    points: 1
    select: ["test_suite.py::*"]
"""


def run(tmp_path: Path, seconds_left: float | None) -> tuple[list, dict]:
    """The made-up suite run (with the grading plugin, under a deadline ``seconds_left`` from
    now, or none): the log of its tests' ends and diagnoses, and the known bug of each case."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "grading.yaml").write_text(POLICY)
    log, report = tmp_path / "log.json", tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "grader.grading_plugin", "-p", "no:cacheprovider",
           "--grading-config", str(tmp_path / "grading.yaml"), "--grading-report", str(report), "test_suite.py"]
    if seconds_left is not None:
        cmd += ["--grading-deadline", f"{time.time() + seconds_left:.3f}", "--grading-budget", f"{seconds_left:g}"]
    env = child_env(keep=("PYTHONPATH",), PYTHONPATH=str(ROOT), LOG_PATH=str(log))
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # the tests fail, the run completes
    cases = read_run_report(report).tests
    assert [c.outcome for c in cases] == ["failed"] * FAILING
    return json.loads(log.read_text()), {c.nodeid: c.known_bug for c in cases}


def test_a_graded_failure_is_diagnosed_once_every_test_has_run(tmp_path):
    log, bugs = run(tmp_path, seconds_left=ROOM + 60)
    kinds = [entry[0] for entry in log]
    assert kinds == ["test"] * FAILING + ["diagnosis"] * FAILING, kinds
    assert [entry[1] for entry in log if entry[0] == "diagnosis"] == [e[1] for e in log if e[0] == "test"]
    assert bugs == {nodeid: f"a bug of {nodeid}" for nodeid in bugs}, "each one found goes into its case"


def test_the_diagnoses_stop_with_room_left_before_the_deadline(tmp_path):
    # room for 9 diagnoses at most after the tests, if pytest started at once; a loaded machine
    # once took the whole margin to start pytest and run the tests (then none is made): again
    for attempt in range(3):
        log, bugs = run(tmp_path / str(attempt), seconds_left=ROOM + (FAILING - 1) * DIAGNOSIS_SECONDS - 0.3)
        diagnoses = [entry for entry in log if entry[0] == "diagnosis"]
        if diagnoses:
            break
    assert 1 <= len(diagnoses) < FAILING, log
    until = diagnoses[0][3]
    assert all(started <= until for _, _, started, _ in diagnoses), "none starts past the deadline less the room"
    assert sum(bug is not None for bug in bugs.values()) == len(diagnoses)


def test_outside_a_grading_a_failure_is_diagnosed_as_it_is_reported(tmp_path):
    log, _ = run(tmp_path, seconds_left=None)
    kinds = [entry[0] for entry in log]
    assert kinds == ["diagnosis", "test"] * FAILING, kinds
    assert all(entry[3] is None for entry in log if entry[0] == "diagnosis")
