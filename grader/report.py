"""The grading report: what crosses back from the test run to ``grade``, and from ``grade`` to
``batch`` and ``compare``, as typed records (one schema, this module).

Two reports cross a process boundary as JSON, each written by one function and read by one:

- :class:`RunReport`, from the pytest run (:mod:`grader.grading_plugin`) to ``grade``:
  :func:`write_run_report`, :func:`read_run_report`. One :class:`Case` per test case, with
  the facts the grading needs as fields (the known bug it matches, the limits it hit, the
  submission's load error), never parsed back out of its failure text.
- :class:`GradeReport`, the plain report ``grade --report`` writes for instructor tools:
  :func:`write_grade_report`, :func:`read_grade_report`. Every case scored, the entries and
  groups as in ``results.json``, the notes, the layout notes, the error if grading failed.

A malformed file is a :class:`ReportError` naming the file and the field.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.printable import utf8_safe

KNOWN_BUG_PREFIX = "this matches a known bug: "

# the limits a case can hit (grader.grading_plugin finds them; batch's summary counts them)
TEST_TIME, CALL_TIME, GRADING_TIME, TIME_BUDGET = "test time limit", "call time limit", "grading time limit", "time budget"
LIMITS = (
    TEST_TIME, CALL_TIME, "CPU time limit", "memory limit", "file size limit", "output limit", "reply limit",
    "process limit", GRADING_TIME, TIME_BUDGET, "not called again", "worker died", "worker exited", "worker stopped answering",
)


class ReportError(ValueError):
    """A report file that cannot be read: names the file and what is wrong."""


def known_bug_line(description: str) -> str:
    """The line a failure matching a known bug gets: ``this matches a known bug: ...``."""
    return KNOWN_BUG_PREFIX + description


@dataclass
class Case:
    """One test case of the run (a pytest node id) and how it ended."""

    nodeid: str
    group: str
    weight: float
    visibility: str
    outcome: str = "not run"  # passed | failed | skipped | not run
    output: str = ""  # the failure text (pytest's, shaped by the harness), cut to a bound
    duration: float = 0.0
    properties: dict[str, Any] = field(default_factory=dict)  # the test's user properties (speed, not_called, not_reached, waited)
    known_bug: str | None = None  # the description of the catalogued bug its failure matches
    limits: list[str] = field(default_factory=list)  # the LIMITS it ran into
    load_error: str | None = None  # the submission's adapters.py could not be imported: the line saying so
    not_implemented: str | None = None  # the function whose NotImplementedError failed it ("Tokenizer.encode")


@dataclass
class RunReport:
    """What the test run reports to ``grade``: its cases and the facts of the run."""

    tests: list[Case] = field(default_factory=list)
    partial: bool = False  # grade --tests: groups without a test in the run are left out
    peak_rss_mb: float = 0.0  # the test process's peak memory
    isolation: str | None = None  # the isolation in force (harness.keys.CONFINEMENT)
    submission: dict[str, Any] | None = None  # how the submission was loaded (harness.keys.LOADED)
    error: str | None = None  # the run could not grade (an invalid selection)
    incomplete: bool = False  # written before the end (after collection, or when stopped)
    exitstatus: int | None = None
    seconds: float | None = None


@dataclass
class ScoredCase:
    """One case of a grade report: its outcome and its share of its entry's points."""

    nodeid: str
    group: str
    entry: str  # the results entry's number
    outcome: str
    duration: float = 0.0
    score: float = 0.0
    max_score: float = 0.0
    output: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    known_bug: str | None = None
    limits: list[str] = field(default_factory=list)
    load_error: str | None = None
    not_implemented: str | None = None  # the function whose NotImplementedError failed it (Case.not_implemented)


@dataclass
class EntrySummary:
    """One results entry (a test function of one visibility), as in ``results.json``."""

    number: str
    name: str = ""
    test: str = ""
    group: str = ""
    score: float = 0.0
    max_score: float = 0.0
    status: str = ""
    cases_passed: int = 0
    cases: int = 0
    visibility: str = ""
    rule: str = ""  # the name without the group's title ("" in reports written before it was kept)


@dataclass
class GroupSummary:
    title: str = ""  # "": a report written before reports carried titles
    score: float = 0.0
    points: float = 0.0
    passed: int = 0
    total: int = 0
    cases_passed: int = 0
    cases: int = 0


@dataclass
class GradeReport:
    """The grade command's own report (``--report``): every case with its whole output."""

    score: float = 0.0
    groups: dict[str, GroupSummary] = field(default_factory=dict)
    seed: int | None = None
    seconds: float | None = None
    notes: list[str] = field(default_factory=list)  # what grade printed under its table
    grader_peak_mb: float | None = None
    budget: float | None = None
    budget_used_up: bool = False  # stopped at the time budget: tests not reached score 0
    stopped: str | None = None  # why the run was stopped early (a signal), if it was
    layout: list[str] = field(default_factory=list)  # how the submission was read: layout, left out, not installed
    error: str | None = None  # grading could not complete: why
    harness_error: bool = False  # ... for a reason that is the harness's, not the submission's
    entries: list[EntrySummary] = field(default_factory=list)
    tests: list[ScoredCase] = field(default_factory=list)


# ---- JSON --------------------------------------------------------------------------------

# the JSON types a field of each annotation may hold (None too where the annotation says so)
_JSON = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "list": (list,), "dict": (dict,)}


def _typed(path: Path, what: str, cls, data: Any):
    """``data`` (parsed JSON) as a ``cls`` record, its fields checked; nested records built."""
    if type(data) is not dict:
        raise ReportError(f"{path}: malformed report: {what} is not an object")
    known = {f.name: f for f in fields(cls)}
    values = {}
    for name, value in data.items():
        f = known.get(name)
        if f is None:
            continue  # a field of a newer or older report: ignored
        values[name] = _field(path, f"{what}.{name}", f, value)
    try:
        return cls(**values)
    except TypeError:
        missing = [n for n, f in known.items() if n not in values and f.default is f.default_factory is MISSING]
        raise ReportError(f"{path}: malformed report: {what} has no {', '.join(missing) or 'required fields'}") from None


def _field(path: Path, what: str, f, value: Any):
    kind = f.type
    nested = _NESTED.get((f.name, kind))
    if nested is not None:
        container, cls = nested
        if container is list:
            if type(value) is not list:
                raise ReportError(f"{path}: malformed report: {what} is not a list")
            return [_typed(path, f"{what}[{i}]", cls, v) for i, v in enumerate(value)]
        if type(value) is not dict:
            raise ReportError(f"{path}: malformed report: {what} is not an object")
        return {k: _typed(path, f"{what}.{k}", cls, v) for k, v in value.items()}
    if value is None and "None" in kind:
        return None
    base = kind.split("[")[0].split(" |")[0]
    allowed = _JSON.get(base)
    if allowed is not None and (type(value) not in allowed or (base != "bool" and type(value) is bool)):
        raise ReportError(f"{path}: malformed report: {what} is {type(value).__name__}, not {base}")
    if base == "list" and "str" in kind and not all(type(v) is str for v in value):
        raise ReportError(f"{path}: malformed report: {what} holds something other than text")
    return float(value) if base == "float" else value


# (field name, annotation) -> (container, record type) for the fields that hold records
_NESTED = {
    ("tests", "list[Case]"): (list, Case),
    ("tests", "list[ScoredCase]"): (list, ScoredCase),
    ("entries", "list[EntrySummary]"): (list, EntrySummary),
    ("groups", "dict[str, GroupSummary]"): (dict, GroupSummary),
}


def utf8_tree(value):
    """``value`` (JSON-like data) with every string, keys included, made writable as UTF-8
    (:func:`harness.printable.utf8_safe`)."""
    kind = type(value)
    if kind is str:
        return utf8_safe(value)
    if kind is dict:
        return {utf8_safe(k) if type(k) is str else k: utf8_tree(v) for k, v in value.items()}
    if kind in (list, tuple):
        return [utf8_tree(v) for v in value]
    return value


def _read(path: Path, cls):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ReportError(f"{path}: cannot read the report: {err.strerror or err}") from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ReportError(f"{path}: not a JSON report ({err})") from None
    return _typed(Path(path), "the report", cls, data)


def _write(path: Path, data: dict, **dump) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, **dump) + ("\n" if dump.get("indent") == 2 else ""), encoding="utf-8")
    tmp.replace(path)


def run_report_data(report: RunReport) -> dict:
    """``report`` as JSON data (absent facts left out)."""
    data = asdict(report)
    for name in ("isolation", "submission", "error", "exitstatus", "seconds"):
        if data[name] is None:
            del data[name]
    if not data["incomplete"]:
        del data["incomplete"]
    return data


def write_run_report(path: Path, report: RunReport) -> None:
    """The test run's report, replaced whole (atomically)."""
    _write(path, run_report_data(report), indent=1)


def read_run_report(path: Path) -> RunReport:
    """The test run's report at ``path``; :class:`ReportError` when it is missing or malformed."""
    return _read(path, RunReport)


def case_from_data(path: Path, data: Any) -> Case:
    """One journaled case (:mod:`grader.journal`), checked like a report's."""
    return _typed(path, "a journaled case", Case, data)


def grade_report_data(report: GradeReport) -> dict:
    """``report`` as the JSON ``--report`` holds (the fields of a failed grading only, then)."""
    data = asdict(report)
    if report.error is not None and not report.tests:  # grading failed: what is known
        if report.harness_error:
            return {"error": report.error, "harness_error": True, "seconds": report.seconds, "tests": []}
        failed = {"error": report.error, "score": report.score, "seconds": report.seconds, "tests": []}
        return failed if report.stopped is None else {**failed, "stopped": report.stopped}
    for name in ("error", "harness_error"):
        data.pop(name)
    return data


def write_grade_report(path: Path, report: GradeReport) -> None:
    """The plain report (``grade --report``), UTF-8 whatever its strings hold."""
    _write(path, utf8_tree(grade_report_data(report)), indent=2, ensure_ascii=False)


def read_grade_report(path: Path) -> GradeReport:
    """The plain report at ``path``; :class:`ReportError` when it is missing or malformed."""
    return _read(path, GradeReport)


def grade_report_from_data(data: Any, source: str = "the report") -> GradeReport:
    """A plain report from parsed JSON (``source`` names it in a :class:`ReportError`)."""
    return _typed(Path(source), "the report", GradeReport, data)


def breaker_notes(report: RunReport) -> list[str]:
    """What the circuit breaker did (:mod:`harness.breaker`): ``run_merge timed out on 3 tests
    in a row; the 40 other tests that call it were not run``, one line per function; for a
    function called again (``grader.grading_plugin``'s second chance), how its refused tests
    went then."""
    skipped: dict[str, int] = {}
    for test in report.tests:
        summary = test.properties.get("not_called")
        if type(summary) is str:
            skipped[summary] = skipped.get(summary, 0) + 1
    again: dict[str, list[Case]] = {}
    for test in report.tests:
        first = test.properties.get("second_chance")
        if type(first) is str:
            again.setdefault(first, []).append(test)
    return [f"{summary}; " + (f"the {n} other tests that call it were not run" if n != 1 else "the 1 other test that calls it was not run")
            for summary, n in skipped.items()] + [
        f"{summary}; having returned in other tests, it was called again once every other test had run: "
        f"{sum(t.outcome == 'passed' for t in cases)} of the {len(cases)} tests refused meanwhile passed then"
        for summary, cases in again.items()]


def share_notes(report: RunReport, titles: dict[str, str]) -> list[str]:
    """The groups that spent more than their share of the time budget, so that the other
    groups' tests went first (:mod:`grader.fair_share`), one line each, named by ``titles``."""
    shares: dict[str, float] = {}
    for test in report.tests:
        share = test.properties.get("waited")
        if type(share) in (int, float):
            shares.setdefault(test.group, share)
    return [f"{titles.get(group, group)} spent more than its share of the time budget ({share:g} s): "
            "the other groups' tests ran before the rest of its tests" for group, share in shares.items()]
