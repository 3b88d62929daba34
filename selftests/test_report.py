"""The grading report's schema (grader/report.py): what one function writes the other reads
back as it was, and a malformed file is one readable error naming the file and the field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.report import (
    Case, EntrySummary, GradeReport, GroupSummary, ReportError, RunReport, ScoredCase, read_grade_report, read_run_report,
    write_grade_report, write_run_report,
)

text = st.text(max_size=20)
maybe = st.none() | text
cases = st.builds(Case, text, text, st.floats(0, 100), text, st.sampled_from(["passed", "failed", "skipped", "not run"]), text,
                  st.floats(0, 1e4), st.dictionaries(text, text | st.integers(), max_size=3), maybe, st.lists(text, max_size=3), maybe)
runs = st.builds(RunReport, st.lists(cases, max_size=4), st.booleans(), st.floats(0, 1e5), maybe,
                 st.none() | st.dictionaries(text, st.lists(text, max_size=2), max_size=2), maybe, st.booleans(),
                 st.none() | st.integers(0, 5), st.none() | st.floats(0, 1e5))


@settings(max_examples=30)
@given(runs)
def test_a_run_report_reads_back_as_it_was_written(tmp_path_factory, report):
    path = tmp_path_factory.mktemp("run") / "report.json"
    write_run_report(path, report)
    assert read_run_report(path) == report


def test_a_grade_report_reads_back_as_it_was_written(tmp_path):
    report = GradeReport(
        score=1.5, groups={"a": GroupSummary("Part A", 1.5, 2.0, 1, 2, 3, 4)}, seed=7, seconds=1.25, notes=["seed 7"],
        budget=60.0, layout=["layout: stubs"],
        entries=[EntrySummary("1.1", "Part A — x", "t::x", "a", 1.5, 2.0, "failed", 3, 4, "visible", "x")],
        tests=[ScoredCase("t::x[0]", "a", "1.1", "failed", 0.5, 0.0, 0.5, "E   differs", {"speed": "1x"}, "merge skips a pair.",
                          ["test time limit"], None)],
    )
    write_grade_report(tmp_path / "r.json", report)
    assert read_grade_report(tmp_path / "r.json") == report


@pytest.mark.parametrize("failed", [GradeReport(error="no adapters.py", seconds=0.5),
                                    GradeReport(error="the worker cannot run", harness_error=True, seconds=0.5),
                                    GradeReport(error="stopped", seconds=0.5, stopped="stopped")],
                         ids=["failed", "harness", "stopped"])
def test_a_failed_grading_reads_back_with_its_error(tmp_path, failed):
    write_grade_report(tmp_path / "r.json", failed)
    back = read_grade_report(tmp_path / "r.json")
    assert (back.error, back.harness_error, back.stopped, back.tests) == (failed.error, failed.harness_error, failed.stopped, [])


@pytest.mark.parametrize("content, field", [
    ("{not json", "not a JSON report"),
    ("[]", "the report is not an object"),
    ('{"tests": {}}', "the report.tests is not a list"),
    ('{"tests": [{"nodeid": "t::a", "group": "g", "weight": "all", "visibility": "visible"}]}', "the report.tests[0].weight is str"),
    ('{"tests": [{"nodeid": "t::a"}]}', "the report.tests[0] has no group, weight, visibility"),
    ('{"partial": 1}', "the report.partial is int"),
    ('{"tests": [{"nodeid": "t::a", "group": "g", "weight": 1, "visibility": "v", "limits": [3]}]}', "tests[0].limits holds"),
], ids=["not_json", "not_object", "tests_not_list", "weight_text", "missing_fields", "flag_number", "limit_number"])
def test_a_malformed_run_report_is_one_error_naming_the_file_and_the_field(tmp_path, content, field):
    path = tmp_path / "report.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError) as err:
        read_run_report(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and field in message and "\n" not in message, message


def test_a_missing_report_is_a_report_error_naming_the_file(tmp_path):
    with pytest.raises(ReportError, match=str(tmp_path / "gone.json")):
        read_grade_report(tmp_path / "gone.json")


def test_fields_a_report_does_not_know_are_ignored(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"score": 2.0, "from_a_newer_grader": [1]}), encoding="utf-8")
    assert read_grade_report(path) == GradeReport(score=2.0)
