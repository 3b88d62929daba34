"""Fixtures for the harness's own tests."""

from __future__ import annotations

import pytest

from .support import GradeRun, run_grader


@pytest.fixture(scope="session")
def graded_reference(tmp_path_factory) -> GradeRun:
    out = tmp_path_factory.mktemp("ref")
    run = run_grader("grade", "--impl", "reference", "--report", str(out / "report.json"), results=out / "results.json")
    run.report = out / "report.json"
    return run


@pytest.fixture(scope="session")
def graded_stubs(tmp_path_factory) -> GradeRun:
    out = tmp_path_factory.mktemp("stubs")
    run = run_grader("grade", "--junit", str(out / "junit.xml"), results=out / "results.json")
    run.junit = out / "junit.xml"
    return run
