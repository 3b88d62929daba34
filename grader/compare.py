"""``python -m grader compare --submission DIR [--html OUT.html] [--all]``: a submission
beside the reference, what matters first.

Runs the graded suite twice through ``python -m grader grade`` (the submission, then
``--impl reference``) with ``--report`` into a temporary folder and joins the two reports
by case. The terminal shows, in this order: the score and how the submission was read, a
summary per group (policy order, group titles: points of both, failing cases, time ratio),
the known-bug diagnoses of the mutant catalogue (``this matches a known bug: ...``, with how
many failing cases show it), then only the failing tests, group by group, most points lost
first, each with its first failing case and the first lines of its first difference, kept
under 80 lines (a last line says how many more there are). ``--all`` lists every case
instead, passes included, and every failing case's first difference. ``--html`` writes the
same in the same order as one self-contained page (:mod:`grader.compare_html`).

``--batch OUT`` compares a ``batch`` output folder: the reference runs once, each student's
page is made from the report ``batch`` kept (``OUT/reports/<student>.json``), and an index
has one row per student and one column per group, linking to each student's page.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness import ROOT
from harness.childenv import child_env
from harness.printable import terminal_text
from harness.raised_text import HEADER_LINE
from .feedback import first_divergence
from .report import EntrySummary, GradeReport, ReportError, known_bug_line, read_grade_report
from .request import GradeRequest, run_grading
from .wording import count, failing as failing_text, outcome

TERMINAL_LIMIT = 80  # the default terminal output of one submission stays under this many lines
MAX_TERMINAL_LINES = TERMINAL_LIMIT - 2  # the `html:` line may follow
MAX_TO_GOT = 4  # a failure's lines shown up to its "got" line, when that is among its first four
WIDTH = 150  # characters of a terminal line of failure text


@dataclass
class Case:
    """One case (a pytest node id) of both runs."""
    nodeid: str
    group: str
    entry: str  # the results entry (test function) it belongs to
    submission: str  # passed | failed | skipped | not run | missing
    reference: str
    sub_time: float | None
    ref_time: float | None
    score: float
    max_score: float
    output: str = ""
    known_bug: str | None = None  # the description of the known bug its failure matches
    not_implemented: str | None = None  # the function whose NotImplementedError failed it

    @property
    def failed(self) -> bool:
        return self.submission != "passed"

    @property
    def ratio(self) -> float | None:
        if self.sub_time is None or self.ref_time is None or self.ref_time <= 0:
            return None
        return self.sub_time / self.ref_time

    @property
    def case_id(self) -> str:
        """``[param]`` of a parametrized case, else the test function's name."""
        name = self.nodeid.split("::")[-1]
        return name[name.index("["):] if "[" in name else name

    def divergence(self, keep_indent: bool = False) -> str:
        return (first_divergence(self.output, keep_indent=keep_indent) if self.output.strip() else "") or self.submission


@dataclass
class Test:
    """One test function (one results entry) and its cases."""
    key: str
    rule: str
    group: str
    cases: list[Case] = field(default_factory=list)

    @property
    def failing(self) -> list[Case]:
        return [c for c in self.cases if c.failed]

    @property
    def lost(self) -> float:
        return sum(c.max_score - c.score for c in self.cases)


@dataclass
class GroupRow:
    name: str
    title: str
    points: float
    sub_score: float
    ref_score: float
    cases: list[Case]

    @property
    def failed(self) -> list[Case]:
        return [c for c in self.cases if c.failed]

    @property
    def ratio(self) -> float | None:
        sub = sum(c.sub_time or 0.0 for c in self.cases)
        ref = sum(c.ref_time or 0.0 for c in self.cases)
        return sub / ref if ref > 0 and sub > 0 else None


@dataclass
class Comparison:
    name: str
    sub: GradeReport
    ref: GradeReport
    cases: list[Case]
    groups: list[GroupRow]
    tests: list[Test]
    diagnoses: list[tuple[str, int]]  # known bug (its description), failing cases showing it

    @property
    def failing_tests(self) -> list[Test]:
        """Failing tests in group (policy) order, most points lost first, then functions not written yet."""
        order = {g.name: i for i, g in enumerate(self.groups)}
        failing = [t for t in self.tests if t.failing]
        return sorted(failing, key=lambda t: (order.get(t.group, len(order)), -round(t.lost, 6), all(c.not_implemented for c in t.failing)))


def diagnoses(cases: list[Case]) -> list[tuple[str, int]]:
    """The distinct known bugs of the failing cases, in order of first appearance, each with
    the number of failing cases that show it."""
    seen: dict[str, int] = {}
    for c in cases:
        if c.failed and c.known_bug:
            seen[c.known_bug] = seen.get(c.known_bug, 0) + 1
    return list(seen.items())


def _rule(entry: EntrySummary | None, nodeid: str) -> str:
    """The rule an entry states (its name without the group title), else the function name."""
    if entry and entry.rule:
        return entry.rule
    return nodeid.split("::")[-1].split("[")[0]


def join(sub: GradeReport, ref: GradeReport) -> list[Case]:
    """One case per node id of either report, in the submission report's order (then any
    case only the reference ran)."""
    ref_tests = {t.nodeid: t for t in ref.tests}
    cases, seen = [], set()
    for t in sub.tests:
        r = ref_tests.get(t.nodeid)
        seen.add(t.nodeid)
        cases.append(Case(t.nodeid, t.group, t.entry, t.outcome, r.outcome if r else "missing", t.duration,
                          r.duration if r else None, t.score, t.max_score, t.output, t.known_bug, t.not_implemented))
    for nodeid, r in ref_tests.items():
        if nodeid not in seen:
            cases.append(Case(nodeid, r.group, "", "missing", r.outcome, None, r.duration, 0.0, r.max_score))
    return cases


def build(sub: GradeReport, ref: GradeReport, name: str, titles: dict[str, str] | None = None) -> Comparison:
    """The comparison of two grade reports: cases, tests, groups in policy order, diagnoses
    (``titles``: group titles for reports that do not carry them)."""
    cases = join(sub, ref)
    entries = {e.number: e for e in sub.entries}
    tests: dict[str, Test] = {}
    for c in cases:
        key = c.entry if c.entry in entries else c.nodeid.split("[")[0]
        if key not in tests:
            tests[key] = Test(key, _rule(entries.get(key), c.nodeid), c.group)
        tests[key].cases.append(c)
    groups = []
    for g in dict.fromkeys([*sub.groups, *ref.groups, *(c.group for c in cases)]):
        s, r = sub.groups.get(g), ref.groups.get(g)
        title = (s.title if s else "") or (r.title if r else "") or (titles or {}).get(g) or g
        groups.append(GroupRow(g, title, s.points if s else r.points if r else 0.0, s.score if s else 0.0, r.score if r else 0.0,
                               [c for c in cases if c.group == g]))
    return Comparison(name, sub, ref, cases, groups, list(tests.values()), diagnoses(cases))


# ---- running -----------------------------------------------------------------------------


def run_grade(request: GradeRequest, report: Path, results: Path, max_time: float) -> GradeReport:
    """The report of ``request`` graded (quietly) with ``max_time``, results and report where said."""
    request = replace(request, results=results, report=report, max_time=max_time, quiet=True)
    run_grading(request.argv(), max_time + 120, cwd=ROOT, env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    if not report.exists():
        return GradeReport(error="the grade command wrote no report")
    try:
        return read_grade_report(report)
    except ReportError as err:
        return GradeReport(error=str(err))


def _common(config: Path | None, tests: list[str] | None) -> dict:
    """The request's fields both gradings share: the policy and the tests."""
    return {"config": Path(config).resolve() if config is not None else None, "tests": tuple(tests) if tests else None}


def compare(submission: Path, config: Path | None = None, tests: list[str] | None = None,
            max_time: float = 3600.0) -> tuple[GradeReport, GradeReport]:
    """The grade reports of the submission and of the reference, both graded by the policy
    the submission's grading uses (``config``, or the one its layout selects)."""
    from .policies import policy_path

    config = policy_path(config, Path(submission))
    with tempfile.TemporaryDirectory(prefix="bpe-compare-") as tmp:
        t = Path(tmp)
        request = GradeRequest(submission=Path(submission).resolve(), **_common(config, tests))
        sub = run_grade(request, t / "sub.json", t / "sub-results.json", max_time)
        ref = reference_report(config, tests, max_time)
    return sub, ref


def reference_report(config: Path | None, tests: list[str] | None, max_time: float) -> GradeReport:
    with tempfile.TemporaryDirectory(prefix="bpe-compare-") as tmp:
        t = Path(tmp)
        return run_grade(GradeRequest(impl="reference", **_common(config, tests)), t / "ref.json", t / "ref-results.json", max_time)


# ---- terminal ------------------------------------------------------------------------------


def points(x: float) -> str:
    return f"{round(x, 2):g}"


def ratio_text(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def secs_text(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _cut(line: str, width: int = WIDTH) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def columns(rows: list[tuple[str, ...]], left: int = 1) -> list[str]:
    """Aligned text columns: the first ``left`` left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


def headline(c: Comparison) -> list[str]:
    possible = sum(g.points for g in c.groups)
    failing = [x for x in c.cases if x.failed]
    lines = [f"{c.name}: {points(c.sub.score)} / {points(possible)} points (reference {points(c.ref.score)}); "
             + outcome(len(failing), len(c.cases), len(c.failing_tests), len(c.tests))]
    lines += [f"  {n}" for n in c.sub.layout]
    for which, report in (("submission", c.sub), ("reference", c.ref)):
        if report.error:
            lines.append(f"{which}: grading failed: {report.error}")
    return lines


def summary_table(c: Comparison) -> list[str]:
    rows = [("group", "points", "reference", "failing cases", "time ratio")]
    for g in c.groups:
        rows.append((g.title, f"{points(g.sub_score)} / {points(g.points)}", points(g.ref_score),
                     f"{len(g.failed)} of {len(g.cases)}", ratio_text(g.ratio)))
    rows.append(("total", f"{points(sum(g.sub_score for g in c.groups))} / {points(sum(g.points for g in c.groups))}",
                 points(sum(g.ref_score for g in c.groups)), f"{sum(len(g.failed) for g in c.groups)} of {len(c.cases)}", ""))
    lines = columns(rows)
    lines.insert(1, "-" * len(lines[0]))
    return lines


def diagnosis_lines(c: Comparison) -> list[str]:
    if not c.diagnoses:
        return []
    return ["diagnosis:"] + [f"  {known_bug_line(bug)} ({count(n, 'failing case')})" for bug, n in c.diagnoses]


def _test_lines(t: Test, diff_lines: int = 2) -> list[str]:
    """A failing test in the terminal summary: its rule, cases and points lost, then the first
    failing case's first difference: where, what was expected and what the submission gave."""
    failing = t.failing
    first = failing[0]
    head = f"  ✗ {t.rule}: {failing_text(len(failing), len(t.cases), 'case')}, -{points(t.lost)} point{'' if points(t.lost) == '1' else 's'}"
    message = first.divergence().splitlines()
    got = next((i for i, ln in enumerate(message[:MAX_TO_GOT]) if ln.startswith(("got:", "got["))), None)
    diff = message[:diff_lines if got is None else max(got + 1, diff_lines)] or [first.submission]
    if len(diff) > 1 and HEADER_LINE.fullmatch(diff[1]):  # an exception: where in the submission instead
        frames = re.findall(r'File "[^"]+", line \d+, in \S+', first_divergence(first.output, max_lines=10_000))
        diff[1:] = frames[-1:]
    label = first.case_id + " " if first.case_id.startswith("[") else ""
    return [_cut(head), _cut(f"      {label}{diff[0]}"), *(_cut(f"      {ln}") for ln in diff[1:])]


def failure_lines(c: Comparison, budget: int) -> list[str]:
    """The failing tests, group by group, within ``budget`` lines: tests are taken one per
    group in turn (so every group with failures shows its worst first), the last line says
    how many were left out."""
    by_group: dict[str, list[Test]] = {}
    for t in c.failing_tests:
        by_group.setdefault(t.group, []).append(t)
    titles = {g.name: g for g in c.groups}
    shown: dict[str, list[list[str]]] = {g: [] for g in by_group}
    left, total = budget - 2, sum(len(v) for v in by_group.values())  # the heading, the "more" line
    for k in range(max((len(v) for v in by_group.values()), default=0)):
        for g, tests in by_group.items():
            if k < len(tests):
                lines = _test_lines(tests[k])
                cost = len(lines) + (1 if k == 0 else 0)
                if cost > left:
                    left = -1
                    break
                shown[g].append(lines)
                left -= cost
        if left < 0:
            break
    out = ["failing tests, group by group, most points lost first (--all: every case, passes included):"]
    for g, blocks in shown.items():
        if blocks:
            group = titles.get(g)
            tests = [t for t in c.tests if t.group == g]
            out.append(f"{group.title if group else g}: {failing_text(len(by_group[g]), len(tests), 'test')}")
            out += [ln for block in blocks for ln in block]
    more = total - sum(len(b) for b in shown.values())
    if more:
        out.append(f"... {count(more, 'more failing test')} not shown: --html PAGE shows every one, --all lists every case here")
    return out


def all_lines(c: Comparison) -> list[str]:
    """Every case (passes included) with both outcomes and times, then the first difference
    of every failing case."""
    rows = [("case", "submission", "reference", "sub s", "ref s", "ratio", "points")]
    rows += [(x.nodeid.removeprefix("tests/"), x.submission, x.reference, secs_text(x.sub_time), secs_text(x.ref_time), ratio_text(x.ratio),
              f"{points(x.score)}/{points(x.max_score)}") for g in c.groups for x in g.cases]
    lines = columns(rows, left=3)
    lines.insert(1, "-" * len(lines[0]))
    failing = [x for g in c.groups for x in g.cases if x.failed]
    if failing:
        lines += ["", "first difference of each failing case:"]
        for x in failing:
            lines += [f"- {x.nodeid}", *(f"    {ln}" for ln in x.divergence(keep_indent=True).splitlines())]
    return lines


def terminal(c: Comparison, every_case: bool = False, max_lines: int = MAX_TERMINAL_LINES) -> str:
    """What ``compare`` prints: headline, summary, diagnosis, then the failing tests (under ``max_lines``
    in all), or with ``every_case`` every case and every failure; the submission's text inert (terminal_text)."""
    out = headline(c) + [""] + summary_table(c)
    diag = diagnosis_lines(c)
    if diag:
        out += [""] + diag
    graded = not (c.sub.error and not c.sub.tests)  # else nothing was graded: no case to list
    if graded and every_case:
        out += [""] + all_lines(c)
    elif graded and c.failing_tests:
        out += [""] + failure_lines(c, max_lines - len(out) - 1)
    return terminal_text("\n".join(out))


def main(submission: Path | None, html_path: Path | None, config: Path | None, tests: list[str] | None, max_time: float,
         every_case: bool = False, batch: Path | None = None) -> int:
    if batch is not None:
        if not Path(batch).is_dir():
            print(f"compare: {batch} is not a folder", file=sys.stderr)
            return 2
        from .compare_class import main_batch

        return main_batch(Path(batch), html_path, config, tests, max_time)
    from .intake import Rejected, extracted, is_upload, unwrap_submission

    if submission is None or not (Path(submission).is_dir() or is_upload(Path(submission))):
        print(f"compare: {submission} is not a folder or a .zip", file=sys.stderr)
        return 2
    if (Path(submission) / "reports").is_dir() and (Path(submission) / "grades.csv").is_file():
        print(f"compare: {submission} is a batch output folder; use --batch {submission}", file=sys.stderr)
        return 2
    from .compare_html import page
    from .policies import policy_titles

    try:  # graded as grade grades it: a .zip extracted, everything inside one folder unwrapped
        with extracted(Path(submission)) as folder:
            sub, ref = compare(unwrap_submission(folder)[0], config, tests, max_time)
    except Rejected as err:
        print(f"compare: {Path(submission).name}: {err}", file=sys.stderr)
        return 2
    given = Path(submission).resolve()
    c = build(sub, ref, given.stem if is_upload(given) else given.name, policy_titles(config))
    print(terminal(c, every_case))
    if html_path is not None:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(page(c), encoding="utf-8")
        print(f"html: {html_path}")
    return 0 if not sub.error and not ref.error else 1
