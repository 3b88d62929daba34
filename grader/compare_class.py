"""``python -m grader compare --batch OUT``: a class beside the reference.

``OUT`` is the output folder of ``python -m grader batch``, which keeps each student's grade
report in ``OUT/reports/<student>.json``. The reference is graded once; each student gets
the page :func:`grader.compare_html.page` writes for one submission, in
``OUT/compare/students/`` (or ``--html DIR``), and ``index.html`` beside it has one row per
student and one column per group, linking to each page. The terminal shows the same table.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from . import compare as C
from .compare_html import class_page, page
from .policies import policy_titles
from .report import GradeReport, ReportError, read_grade_report


SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def student_pages(folder: Path) -> dict[str, GradeReport]:
    """student -> the grade report ``batch`` kept for them (``reports/<student>.json``)."""
    reports = {}
    for path in sorted((folder / "reports").glob("*.json")):
        try:
            reports[path.stem] = read_grade_report(path)
        except ReportError as err:
            reports[path.stem] = GradeReport(error=str(err))
    return reports


def _cases(n: int) -> str:
    """``n`` failing cases, as the class table counts them (``1 case``, ``2 cases``)."""
    return f"{n} case{'' if n == 1 else 's'}"


def class_terminal(comparisons: list[C.Comparison]) -> str:
    groups = comparisons[0].groups if comparisons else []
    rows = [("student", "total", *(g.name for g in groups), "failing", "known bugs")]
    for c in comparisons:
        scores = {g.name: g.sub_score for g in c.groups}
        rows.append((c.name, C.points(c.sub.score), *(C.points(scores.get(g.name, 0.0)) for g in groups),
                     "could not be graded" if c.sub.error else _cases(sum(x.failed for x in c.cases)),
                     str(len(c.diagnoses))))
    lines = C.columns(rows, left=1)
    lines.insert(1, "-" * len(lines[0]))
    legend = [f"  {g.name}: {g.title} ({C.points(g.points)} point{'' if C.points(g.points) == '1' else 's'})" for g in groups]
    return "\n".join(lines + (["", "groups:"] + legend if legend else []))


def main_batch(folder: Path, html_dir: Path | None, config: Path | None, tests: list[str] | None, max_time: float) -> int:
    reports = student_pages(folder)
    if not reports:
        print(f"compare: {folder} holds no reports/*.json; give the --out folder of `python -m grader batch`", file=sys.stderr)
        return 2
    ref = C.reference_report(config, tests, max_time)
    titles = policy_titles(config)
    comparisons = [C.build(sub, ref, student, titles) for student, sub in reports.items()]
    out = html_dir or folder / "compare"
    (out / "students").mkdir(parents=True, exist_ok=True)
    links: dict[str, str] = {}
    for c in comparisons:
        name = SAFE_NAME.sub("_", c.name) + ".html"
        while f"students/{name}" in links.values():  # names that differ only where they were replaced
            name = "_" + name
        (out / "students" / name).write_text(page(c, back="../index.html"), encoding="utf-8")
        links[c.name] = f"students/{name}"
    (out / "index.html").write_text(class_page(comparisons, links), encoding="utf-8")
    print(class_terminal(comparisons))
    print(f"\nhtml: {out / 'index.html'} (one page per student in {out / 'students'})")
    return 1 if ref.error else 0
