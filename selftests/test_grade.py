"""``python -m grader grade``: scores, results files, and what a broken policy does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.config import load_config

from .support import ROOT, make_submission, run_grader

GRADESCOPE_TOP = {"score": (int, float), "execution_time": (int, float), "output": str, "tests": list}
GRADESCOPE_TEST = {
    "name": str, "number": str, "score": (int, float), "max_score": (int, float),
    "status": str, "output": str, "visibility": str, "tags": list,
}


def test_reference_gets_full_marks(graded_reference):
    assert graded_reference.code == 0, graded_reference.stderr
    total = load_config(ROOT / "grading.yaml").total
    failed = [t["name"] for t in graded_reference.tests if t["status"] != "passed"]
    assert not failed, f"the reference fails {len(failed)} graded tests, first: {failed[:3]}"
    assert graded_reference.results["score"] == pytest.approx(total)


def test_untouched_stubs_score_zero_with_every_test_not_implemented(graded_stubs):
    assert graded_stubs.code == 0, graded_stubs.stderr
    assert graded_stubs.results["score"] == 0
    assert graded_stubs.tests, "no tests were listed"
    wrong = [t["name"] for t in graded_stubs.tests if t["status"] != "failed" or "not implemented" not in t["output"]]
    assert not wrong, f"{len(wrong)} tests did not fail with 'not implemented', first: {wrong[:3]}"


@pytest.mark.parametrize("run", ["graded_reference", "graded_stubs"])
def test_results_json_has_the_gradescope_fields(run, request):
    data = request.getfixturevalue(run).results
    for key, kind in GRADESCOPE_TOP.items():
        assert isinstance(data.get(key), kind), f"top-level {key!r} should be {kind}, got {data.get(key)!r}"
    numbers = set()
    for test in data["tests"]:
        for key, kind in GRADESCOPE_TEST.items():
            assert isinstance(test.get(key), kind), f"{test.get('name')}: {key!r} should be {kind}, got {test.get(key)!r}"
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
        assert 0 <= test["score"] <= test["max_score"]
        numbers.add(test["number"])
    assert len(numbers) == len(data["tests"]), "test numbers must be unique"
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(load_config(ROOT / "grading.yaml").total, abs=0.01)


def test_partial_submission_gets_exactly_its_groups_points(tmp_path):
    submission = make_submission(tmp_path / "partial", ("primitives.py", "warmup.py"))
    warmup = submission / "student" / "warmup.py"
    # the warm-up's word tokenizer needs pre-tokenization, which this submission lacks: inline it
    warmup.write_text(
        warmup.read_text().replace(
            "from .pretokenize import pretokenize",
            "import regex\n\n\ndef pretokenize(text):\n    return regex.findall(r\"\"\"'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+\"\"\", text)",
        )
    )
    run = run_grader("grade", "--submission", str(submission), results=tmp_path / "results.json")
    assert run.code == 0, run.stderr
    points = {g.name: g.points for g in load_config(ROOT / "grading.yaml").groups}
    scores = run.group_scores()
    for group in points:
        expected = points[group] if group in ("warmup", "primitives") else 0.0
        assert scores.get(group, 0.0) == pytest.approx(expected, abs=0.02), f"group {group}: {scores.get(group)} != {expected}"


def test_grading_a_chosen_subset_scores_only_the_groups_it_touches(tmp_path):
    run = run_grader("grade", "--impl", "reference", "--tests", "tests/public/test_primitives.py", results=tmp_path / "r.json")
    assert run.code == 0, run.stderr
    primitives = next(g.points for g in load_config(ROOT / "grading.yaml").groups if g.name == "primitives")
    assert set(run.group_scores()) == {"primitives"}
    assert run.results["score"] == pytest.approx(primitives)
    assert "partial grade: only tests/public/test_primitives.py" in run.results["output"]
    assert "isolation: " in run.results["output"]


def _without_timings(data: dict) -> dict:
    data = dict(data, execution_time=None, output=None)
    data["tests"] = [dict(t, output=None) if "reference" in t["output"] and " s" in t["output"] else t for t in data["tests"]]
    return data


def test_grading_twice_gives_identical_results_apart_from_timings(graded_stubs, tmp_path):
    again = run_grader("grade", results=tmp_path / "again.json")
    assert _without_timings(again.results) == _without_timings(graded_stubs.results)


def test_junit_xml_lists_every_test(graded_stubs):
    import xml.etree.ElementTree as ET

    cases = ET.parse(graded_stubs.junit).getroot().findall(".//testcase")
    assert len(cases) == len(graded_stubs.tests)
    assert all(case.find("failure") is not None for case in cases)


GOOD = (ROOT / "grading.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "broken, expected",
    [
        (GOOD.replace("hidden_output:", "hiden_output:"), "unknown key 'hiden_output'"),
        (GOOD.replace("points: 10", "points: ten", 1), "expected a number"),
        (GOOD.replace("tests/*/test_warmup*.py::*", "tests/*/test_warmpu*.py::*"), "matches no test"),
        (GOOD.replace("total: 100", "total: 90"), "add up to 100"),
        (GOOD.replace("groups:", "groups: ["), "not valid YAML"),
        (GOOD.replace("visibility: visible", "visibility: public", 1), "'public' is not allowed"),
    ],
    ids=["bad_key", "bad_type", "empty_selection", "points_do_not_add_up", "bad_yaml", "bad_visibility"],
)
def test_broken_grading_yaml_gives_one_line_and_exit_status_2(tmp_path, broken, expected):
    config = tmp_path / "grading.yaml"
    config.write_text(broken, encoding="utf-8")
    run = run_grader("grade", "--config", str(config), results=tmp_path / "results.json", timeout=300)
    assert run.code == 2
    message = run.stderr.strip()
    assert len(message.splitlines()) == 1, f"expected one line, got:\n{message}"
    assert str(config) in message and expected in message, message
    assert run.results is not None and run.results["score"] == 0
    assert expected in run.results["output"]


@pytest.mark.parametrize("text", [GOOD], ids=["shipped"])
def test_shipped_grading_yaml_is_valid(tmp_path, text):
    path = tmp_path / "grading.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_config(path).groups
