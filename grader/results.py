"""Scores from a grading report, and the files CI autograders read.

Gradescope's ``results.json`` (top-level ``score``, ``execution_time``, ``output``,
``tests[]``), JUnit XML, and the terminal table.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from .config import Config

HIDDEN_NOTE = "(details are hidden until the results are published)"


@dataclass
class TestResult:
    name: str
    group: str
    number: str
    score: float
    max_score: float
    status: str  # "passed" | "failed"
    output: str
    visibility: str
    duration: float


@dataclass
class GroupResult:
    name: str
    title: str
    points: float
    score: float = 0.0
    passed: int = 0
    total: int = 0
    seconds: float = 0.0
    tests: list[TestResult] = field(default_factory=list)


def _visible_output(text: str, visibility: str, policy: str) -> str:
    if visibility == "visible" or policy == "full" or not text:
        return text
    if policy == "none":
        return HIDDEN_NOTE
    lines = text.strip().splitlines()
    keep = lines[:1] + [line.strip().removeprefix("E").strip() for line in lines[1:] if "matches a known bug" in line]
    return "\n".join(keep + [HIDDEN_NOTE])


def score_report(config: Config, report: dict) -> list[GroupResult]:
    """Group results in grading.yaml's order; each test's share of its group's points is
    proportional to its weight, and only passed tests score."""
    groups = {g.name: GroupResult(g.name, g.title, g.points) for g in config.groups}
    tests = report.get("tests", [])
    weights: dict[str, float] = {}
    for t in tests:
        weights[t["group"]] = weights.get(t["group"], 0.0) + t["weight"]
    for gi, g in enumerate(config.groups, 1):
        members = [t for t in tests if t["group"] == g.name]
        for ti, t in enumerate(members, 1):
            total_w = weights.get(g.name) or 1.0
            max_score = g.points * t["weight"] / total_w
            passed = t["outcome"] == "passed"
            output = t.get("output", "")
            if t["outcome"] == "not run":
                output = "not run: grading stopped before this test (see the log)"
            speed = t.get("properties", {}).get("speed")
            if speed and speed not in output:
                output = f"{speed}\n{output}".strip()
            groups[g.name].tests.append(
                TestResult(
                    name=t["nodeid"],
                    group=g.name,
                    number=f"{gi}.{ti}",
                    score=max_score if passed else 0.0,
                    max_score=max_score,
                    status="passed" if passed else "failed",
                    output=_visible_output(output, t["visibility"], config.hidden_output),
                    visibility=t["visibility"],
                    duration=t.get("duration", 0.0),
                )
            )
    for g in groups.values():
        g.total = len(g.tests)
        g.passed = sum(t.status == "passed" for t in g.tests)
        # exact share of the group's points, not a sum of rounded per-test scores
        weight_all = sum(t.max_score for t in g.tests)
        weight_passed = sum(t.max_score for t in g.tests if t.status == "passed")
        g.score = round(g.points * weight_passed / weight_all, 4) if weight_all else 0.0
        g.seconds = sum(t.duration for t in g.tests)
    if report.get("partial"):  # grade --tests: groups outside the chosen tests are not graded
        return [g for g in groups.values() if g.tests]
    return list(groups.values())


def table(groups: list[GroupResult]) -> str:
    """The per-group summary printed at the end of grading."""
    rows = [("group", "points", "passed", "time")]
    for g in groups:
        rows.append((g.title, f"{g.score:g} / {g.points:g}", f"{g.passed}/{g.total}", f"{g.seconds:.1f} s"))
    score = sum(g.score for g in groups)
    possible = sum(g.points for g in groups)
    rows.append(("total", f"{round(score, 4):g} / {possible:g}", f"{sum(g.passed for g in groups)}/{sum(g.total for g in groups)}", f"{sum(g.seconds for g in groups):.1f} s"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(lines)


def gradescope_json(groups: list[GroupResult], execution_time: float, output: str) -> dict:
    return {
        "score": round(sum(g.score for g in groups), 4),
        "execution_time": round(execution_time, 1),
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": t.name,
                "number": t.number,
                "score": round(t.score, 6),
                "max_score": round(t.max_score, 6),
                "status": t.status,
                "output": t.output,
                "visibility": t.visibility,
                "tags": [t.group],
            }
            for g in groups
            for t in g.tests
        ],
    }


def failure_json(reason: str, execution_time: float = 0.0) -> dict:
    """Results when grading could not complete: score 0 and the reason."""
    return {"score": 0.0, "execution_time": round(execution_time, 1), "output": f"Grading failed: {reason}", "visibility": "visible", "tests": []}


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def write_junit(path: Path, groups: list[GroupResult]) -> None:
    root = ET.Element("testsuites", name="bpe-harness")
    for g in groups:
        suite = ET.SubElement(
            root, "testsuite", name=g.name, tests=str(g.total), failures=str(g.total - g.passed), time=f"{g.seconds:.3f}"
        )
        for t in g.tests:
            case = ET.SubElement(suite, "testcase", classname=g.name, name=t.name, time=f"{t.duration:.3f}")
            if t.status != "passed":
                first = t.output.strip().splitlines()[0] if t.output.strip() else "failed"
                failure = ET.SubElement(case, "failure", message=first)
                failure.text = t.output
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def plain_report(groups: list[GroupResult], report: dict, **meta) -> dict:
    """The grade command's own report (``--report``): every test's node id, group, outcome,
    duration, score and FULL output (not hidden by visibility), for instructor tools
    (``compare``, ``batch``). Gradescope's results.json stays as it is."""
    raw = {t["nodeid"]: t for t in report.get("tests", [])}
    tests = []
    for g in groups:
        for t in g.tests:
            r = raw.get(t.name, {})
            tests.append(
                {
                    "nodeid": t.name,
                    "group": g.name,
                    "outcome": r.get("outcome", t.status),
                    "duration": round(t.duration, 4),
                    "score": round(t.score, 6),
                    "max_score": round(t.max_score, 6),
                    "output": r.get("output", t.output),
                    "properties": r.get("properties", {}),
                }
            )
    return {
        "score": round(sum(g.score for g in groups), 4),
        "groups": {g.name: {"score": g.score, "points": g.points, "passed": g.passed, "total": g.total} for g in groups},
        **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in meta.items()},
        "tests": tests,
    }
