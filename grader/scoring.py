"""Points from a grading report: results entries, exact points per group, partial credit.

One results entry per test function (a *rule*): its parametrized cases are folded in
("12 of 15 cases passed; first failing case: ..."), its points are a whole number of
hundredths (largest-remainder split of the group's points, :mod:`grader.points`), and
partial credit is proportional to the weight of the cases passed, rounded down to the
hundredth. A function whose cases have different visibilities (``overrides`` may set it per
case) becomes one entry per visibility, so a visible case's feedback is never held back
and a hidden case's never shown early: each entry's feedback (:func:`grader.feedback.entry_feedback`)
shows what its visibility and ``hidden_output`` allow. The files written from the entries
are :mod:`grader.formats`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from harness import ROOT
from .config import Config
from .feedback import entry_feedback, rule_name, split_nodeid
from .points import largest_remainder, part_numbers, proportional_cents, to_cents
from .report import Case, RunReport


@dataclass
class Entry:
    """One results entry: the cases of one test function (of one visibility)."""

    key: str  # "tests/public/test_x.py::test_rule"
    rule: str
    group: str
    visibility: str
    cases: list[Case]
    name: str = ""  # "<group title> — <label>"
    label: str = ""  # the rule, and which part of it when the name needs it (its visibility, its file)
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
        e.label = e.rule + (f" ({e.visibility} cases)" if e.key in split else "")
        e.name = f"{titles[e.group]} — {e.label}"
    names = [e.name for e in entries]
    for e in entries:
        if names.count(e.name) > 1:
            e.label += f" [{Path(split_nodeid(e.key)[0]).name}]"
            e.name = f"{titles[e.group]} — {e.label}"


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
            e.text, e.markdown = entry_feedback(e, config.hidden_output)
        all_entries += g.tests
    _name_entries(all_entries, titles)
    if report.partial:  # grade --tests: groups outside the chosen tests are not graded
        return [g for g in groups if g.tests]
    return groups
