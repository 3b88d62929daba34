"""Scores from a grading report, and the files CI autograders read.

One results entry per test function (a *rule*): its parametrized cases are folded in
("12 of 15 cases passed; first failing case: ..."), its points are a whole number of
hundredths (largest-remainder split of the group's points, :mod:`grader.points`), and
partial credit is proportional to the weight of the cases passed, rounded down to the
hundredth. A function whose cases have different visibilities (``overrides`` may set it per
case) becomes one entry per visibility, so a visible case's feedback is never held back
and a hidden case's never shown early. Gradescope's ``results.json`` (Markdown feedback),
JUnit XML and the terminal table are written from these entries; the plain JSON report
(``--report``) keeps every case.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from harness import ROOT
from harness.printable import escape_char
from .config import Config
from .feedback import bounded, first_divergence, md_block, md_code, md_text, rule_name, split_nodeid
from .feedback import HIDDEN_NOTE, HIDDEN_NOTES, utf8_tree  # noqa: F401  (re-exported)
from .points import cents_text, largest_remainder, part_numbers, proportional_cents, to_cents
from .report import Case, EntrySummary, GradeReport, GroupSummary, RunReport, ScoredCase, known_bug_line

NOT_RUN = "not run: grading stopped before this test (see the log)"
MAX_OTHER_CASES = 8  # failing cases listed by id after the first one
MAX_SPEED_LINES = 4


@dataclass
class Entry:
    """One results entry: the cases of one test function (of one visibility)."""

    key: str  # "tests/public/test_x.py::test_rule"
    rule: str
    group: str
    visibility: str
    cases: list[Case]
    name: str = ""
    number: str = ""
    max_cents: int = 0
    score_cents: int = 0
    text: str = ""  # plain feedback, as a student may see it
    markdown: str = ""  # the same, as Gradescope Markdown

    @property
    def passed_cases(self) -> int:
        return sum(c.outcome == "passed" for c in self.cases)

    @property
    def status(self) -> str:
        return "passed" if self.passed_cases == len(self.cases) else "failed"

    @property
    def score(self) -> float:
        return self.score_cents / 100

    @property
    def max_score(self) -> float:
        return self.max_cents / 100

    @property
    def lost_cents(self) -> int:
        return self.max_cents - self.score_cents

    @property
    def duration(self) -> float:
        return sum(c.duration for c in self.cases)

    def failing(self) -> list[Case]:
        return [c for c in self.cases if c.outcome != "passed"]


@dataclass
class GroupResult:
    name: str
    title: str
    points: float
    cents: int = 0
    tests: list[Entry] = field(default_factory=list)

    @property
    def score_cents(self) -> int:
        return sum(e.score_cents for e in self.tests)

    @property
    def score(self) -> float:
        return self.score_cents / 100

    @property
    def passed(self) -> int:
        return sum(e.status == "passed" for e in self.tests)

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def cases_passed(self) -> int:
        return sum(e.passed_cases for e in self.tests)

    @property
    def cases_total(self) -> int:
        return sum(len(e.cases) for e in self.tests)

    @property
    def seconds(self) -> float:
        return sum(e.duration for e in self.tests)


def case_id(nodeid: str) -> str:
    """The parametrization of a case (``"[merge-3]"``), or ``""`` for a plain test."""
    return split_nodeid(nodeid)[2]


def case_output(case: Case) -> str:
    """A case's failure text as the grader reports it (``not run`` explained: the reason the
    grading gave, else :data:`NOT_RUN`)."""
    if case.outcome == "not run":
        return case.output or NOT_RUN
    return case.output or case.outcome


def _fold(cases: list[Case]) -> list[Entry]:
    """Cases in report order -> entries in order of first appearance, one per (test
    function, visibility)."""
    entries: dict[tuple[str, str], Entry] = {}
    for case in cases:
        path, function, _ = split_nodeid(case.nodeid)
        key = f"{path}::{function}"
        slot = (key, case.visibility)
        if slot not in entries:
            entries[slot] = Entry(key, rule_name(case.nodeid, ROOT), case.group, case.visibility, [])
        entries[slot].cases.append(case)
    return list(entries.values())


def _name_entries(entries: list[Entry], titles: dict[str, str]) -> None:
    """``"<group title> — <rule>"``; a function split by visibility says which part; a
    name two functions share gets its file's name."""
    split = {e.key for e in entries if sum(x.key == e.key for x in entries) > 1}
    for e in entries:
        e.name = f"{titles[e.group]} — {e.rule}" + (f" ({e.visibility} cases)" if e.key in split else "")
    names = [e.name for e in entries]
    for e in entries:
        if names.count(e.name) > 1:
            e.name += f" [{Path(split_nodeid(e.key)[0]).name}]"


def score_report(config: Config, report: RunReport) -> list[GroupResult]:
    """Entries grouped in grading.yaml's order, with exact points (see the module doc)."""
    tests = report.tests
    total = config.total if config.total is not None else sum(g.points for g in config.groups)
    group_cents = largest_remainder(to_cents(total), [Fraction(g.points) for g in config.groups])
    groups = [GroupResult(g.name, g.title, g.points, cents) for g, cents in zip(config.groups, group_cents)]
    titles = {g.name: g.title for g in config.groups}
    all_entries: list[Entry] = []
    numbers = part_numbers([g.title for g in groups])
    counted: dict[int, int] = {}
    for g, part in zip(groups, numbers):
        g.tests = _fold([t for t in tests if t.group == g.name])
        weights = [sum((Fraction(c.weight) for c in e.cases), Fraction(0)) for e in g.tests]
        for e, w, cents in zip(g.tests, weights, largest_remainder(g.cents, weights)):
            counted[part] = counted.get(part, 0) + 1
            e.number = f"{part}.{counted[part]}"
            e.max_cents = cents
            passed_w = sum((Fraction(c.weight) for c in e.cases if c.outcome == "passed"), Fraction(0))
            e.score_cents = proportional_cents(cents, passed_w, w)
            e.text, e.markdown = feedback(e, config.hidden_output)
        all_entries += g.tests
    _name_entries(all_entries, titles)
    if report.partial:  # grade --tests: groups outside the chosen tests are not graded
        return [g for g in groups if g.tests]
    return groups


# ---- feedback ----------------------------------------------------------------------------


def _speed_lines(entry: Entry) -> list[str]:
    lines = [str(c.properties.get("speed")) for c in entry.cases if c.properties.get("speed")]
    return lines[:MAX_SPEED_LINES] + ([f"... and {len(lines) - MAX_SPEED_LINES} more"] if len(lines) > MAX_SPEED_LINES else [])


def feedback(entry: Entry, policy: str) -> tuple[str, str]:
    """(plain text, Markdown) feedback of one entry. Outside ``visible`` entries (unless
    ``hidden_output: full``): ``first_line`` keeps the first line of the first difference
    and any known-bug line, ``none`` keeps only the counts."""
    restricted = entry.visibility != "visible" and policy != "full"
    show_ids = not (restricted and policy == "none")
    failing = entry.failing()
    n, ok = len(entry.cases), entry.passed_cases
    first = failing[0] if failing else None
    header = ""
    if n > 1:
        header = f"{ok} of {n} cases passed"
        if first is not None and show_ids and case_id(first.nodeid):
            header += f"; first failing case: {case_id(first.nodeid)}"
    difference, bugs = "", []
    if first is not None:
        out = case_output(first)
        difference = (first_divergence(out) or out.strip().splitlines()[0]) if out.strip() else first.outcome
        bugs = [known_bug_line(first.known_bug)] if first.known_bug else []
        if restricted:
            difference = difference.splitlines()[0] if policy == "first_line" and difference else ""
            bugs = bugs if policy == "first_line" else []
    difference = bounded(difference)
    others = [case_id(c.nodeid) for c in failing[1:]] if show_ids else []
    others_text = ", ".join(others[:MAX_OTHER_CASES]) + (f" and {len(others) - MAX_OTHER_CASES} more" if len(others) > MAX_OTHER_CASES else "")
    speed = _speed_lines(entry)
    note = HIDDEN_NOTES.get(policy, HIDDEN_NOTE) if restricted and first is not None else ""

    text = [x for x in [header, difference, *bugs, *speed] if x]
    if others:
        text.append(f"other failing cases: {others_text}")
    if note:
        text.append(note)

    md: list[str] = []
    if header:
        head = f"{ok} of {n} cases passed"
        if first is not None and show_ids and case_id(first.nodeid):
            head = f"**{head}**; first failing case: {md_code(case_id(first.nodeid))}"
        else:
            head = f"**{head}**"
        md.append(head)
    if difference:
        md.append(md_block(difference))
    md += [md_text(b) for b in bugs] + [md_text(s) for s in speed]
    if others:
        shown = ", ".join(md_code(o) for o in others[:MAX_OTHER_CASES])
        more = f" and {len(others) - MAX_OTHER_CASES} more" if len(others) > MAX_OTHER_CASES else ""
        md.append(f"Other failing cases: {shown}{more}")
    if note:
        md.append(f"_{md_text(note)}_")
    return "\n".join(text), "\n\n".join(md)


# ---- outputs -----------------------------------------------------------------------------


def table(groups: list[GroupResult]) -> str:
    """The per-group summary printed at the end of grading."""
    rows = [("group", "points", "tests passed", "cases passed", "time")]
    for g in groups:
        rows.append((g.title, f"{cents_text(g.score_cents)} / {cents_text(g.cents)}", f"{g.passed}/{g.total}",
                     f"{g.cases_passed}/{g.cases_total}", f"{g.seconds:.1f} s"))
    rows.append((
        "total", f"{cents_text(sum(g.score_cents for g in groups))} / {cents_text(sum(g.cents for g in groups))}",
        f"{sum(g.passed for g in groups)}/{sum(g.total for g in groups)}",
        f"{sum(g.cases_passed for g in groups)}/{sum(g.cases_total for g in groups)}", f"{sum(g.seconds for g in groups):.1f} s",
    ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(lines)


def top_failures(groups: list[GroupResult], count: int = 3, max_lines: int = 3, width: int = 160, skip=None) -> str:
    """The ``count`` entries that lost the most points (``skip``: entries left out), each with
    its first failing case and the first lines of its first difference (full text: for the
    instructor's terminal, not for results.json). Empty when nothing lost points."""
    entries = [e for g in groups for e in g.tests if e.lost_cents > 0 and not (skip and skip(e))]
    worst = sorted(entries, key=lambda e: -e.lost_cents)[:count]
    if not worst:
        return ""
    lines = [f"look at these first ({len(worst)} of {len(entries)} entries that lost points, most lost first):"]
    for i, e in enumerate(worst, 1):
        failing = e.failing()
        lines.append(f"{i}. {e.name}: -{cents_text(e.lost_cents)} of {cents_text(e.max_cents)} points, "
                     f"{len(failing)} of {len(e.cases)} case{'s' if len(e.cases) != 1 else ''} failed")
        lines.append(f"   {failing[0].nodeid}")
        out = case_output(failing[0])
        diff = first_divergence(out, max_lines) or out.strip()
        for ln in diff.splitlines()[:max_lines]:
            lines.append("   " + (ln if len(ln) <= width else ln[: width - 1] + "…"))
    return "\n".join(lines)


def summary_markdown(text: str) -> str:
    """The top-level output (the table and notes) as Markdown: one literal block."""
    return md_block(text)


def gradescope_json(groups: list[GroupResult], execution_time: float, output: str) -> dict:
    """Gradescope's results.json: one entry per rule; ``output`` is the plain summary."""
    return {
        "score": sum(g.score_cents for g in groups) / 100,
        "execution_time": round(execution_time, 1),
        "output": summary_markdown(output),
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": e.name,
                "number": e.number,
                "score": e.score,
                "max_score": e.max_score,
                "status": e.status,
                "output": e.markdown,
                "output_format": "md",
                "visibility": e.visibility,
                "tags": [g.name],
                "extra_data": {"test": e.key, "cases": len(e.cases), "cases_passed": e.passed_cases},
            }
            for g in groups
            for e in g.tests
        ],
    }


def failure_json(reason: str, execution_time: float = 0.0) -> dict:
    """Results when grading could not complete: score 0 and the reason."""
    return {"score": 0.0, "execution_time": round(execution_time, 1), "output": f"Grading failed: {reason}",
            "output_format": "text", "visibility": "visible", "tests": []}


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as UTF-8 JSON, whatever its strings hold (a lone surrogate, such as a
    byte of a file name that is not UTF-8, is written as its escape: ``\\xff``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(utf8_tree(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def write_junit(path: Path, groups: list[GroupResult]) -> None:
    """JUnit XML: a test suite per group, a test case per rule (entry)."""
    root = ET.Element("testsuites", name="bpe-harness")
    for g in groups:
        suite = ET.SubElement(
            root, "testsuite", name=g.name, tests=str(g.total), failures=str(g.total - g.passed), time=f"{g.seconds:.3f}"
        )
        for e in g.tests:
            case = ET.SubElement(suite, "testcase", classname=g.name, name=_xml_text(e.name), time=f"{e.duration:.3f}")
            if e.status != "passed":
                first = e.text.strip().splitlines()[0] if e.text.strip() else "failed"
                failure = ET.SubElement(case, "failure", message=_xml_text(first))
                failure.text = _xml_text(f"{e.key}: {cents_text(e.score_cents)} of {cents_text(e.max_cents)} points\n{e.text}")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` as XML 1.0 may hold it: characters it cannot hold escaped (newlines and tabs kept)."""
    return _NOT_XML.sub(lambda m: escape_char(m.group()), text)


def plain_report(groups: list[GroupResult], **meta) -> GradeReport:
    """The grade command's own report (``--report``), for instructor tools (``compare``,
    ``batch``): every CASE's node id, group, outcome, duration, share of its entry's points
    and FULL output (not hidden by visibility), and the entries as in results.json."""
    tests, entries = [], []
    for g in groups:
        for e in g.tests:
            weight = sum((Fraction(c.weight) for c in e.cases), Fraction(0))
            for c in e.cases:
                share = float(Fraction(e.max_cents, 100) * Fraction(c.weight) / weight) if weight else 0.0
                tests.append(ScoredCase(
                    c.nodeid, g.name, e.number, c.outcome, round(c.duration, 4), round(share if c.outcome == "passed" else 0.0, 6),
                    round(share, 6), case_output(c) if c.outcome != "passed" else c.output, c.properties, c.known_bug, c.limits, c.load_error,
                ))
            entries.append(EntrySummary(e.number, e.name, e.key, g.name, e.score, e.max_score, e.status, e.passed_cases,
                                        len(e.cases), e.visibility))
    return GradeReport(
        score=sum(g.score_cents for g in groups) / 100,
        groups={g.name: GroupSummary(g.title, g.score, g.cents / 100, g.passed, g.total, g.cases_passed, g.cases_total) for g in groups},
        **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in meta.items()},
        entries=entries,
        tests=tests,
    )
