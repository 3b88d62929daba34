"""The files and text written from scored entries (:mod:`grader.scoring`): Gradescope's
``results.json`` (Markdown feedback), JUnit XML for any CI, the terminal table and what to
look at first, and the plain report (``--report``, :class:`grader.report.GradeReport`) that
keeps every case for ``compare`` and ``batch``.
"""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

from harness.printable import escape_char
from .feedback import case_output, first_divergence, md_block
from .points import cents_text
from .report import EntrySummary, GradeReport, GroupSummary, ScoredCase, utf8_tree
from .wording import failing as failing_clause
from .scoring import GroupResult


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


ROWS_PER_LINE = 3  # terminal rows a long line of a failure may wrap to in top_failures


def _rows(line: str, width: int, rows: int = ROWS_PER_LINE) -> list[str]:
    """``line`` wrapped at spaces to rows of at most ``width`` characters (its indent kept,
    the rows after the first indented two more), at most ``rows`` of them, the last ending in
    "…" where text is left out: a failure's first line often ends in its hint (a speed test's
    "look for: ..."), which a cut at the terminal's width hid."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    wrapped = textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False) or [line]
    if len(wrapped) > rows:
        wrapped = wrapped[:rows]
        wrapped[-1] = wrapped[-1][: width - 1] + "…"
    return wrapped


def top_failures(groups: list[GroupResult], count: int = 3, max_lines: int = 3, width: int = 160, skip=None) -> str:
    """The ``count`` entries that lost the most points (``skip``: entries left out), each with
    its first failing case and the first ``max_lines`` lines of its first difference, each
    wrapped to a few rows of ``width`` (full text: for the instructor's terminal, not for
    results.json). Empty when nothing lost points."""
    entries = [e for g in groups for e in g.tests if e.lost_cents > 0 and not (skip and skip(e))]
    worst = sorted(entries, key=lambda e: -e.lost_cents)[:count]
    if not worst:
        return ""
    lines = [f"look at these first ({len(worst)} of {len(entries)} entries that lost points, most lost first):"]
    for i, e in enumerate(worst, 1):
        failing = e.failing()
        lines.append(f"{i}. {e.name}: -{cents_text(e.lost_cents)} of {cents_text(e.max_cents)} points, "
                     f"{failing_clause(len(failing), len(e.cases), 'case')}")
        lines.append(f"   {failing[0].nodeid}")
        out = case_output(failing[0])
        diff = first_divergence(out, max_lines) or out.strip()
        for ln in diff.splitlines()[:max_lines]:
            lines.extend("   " + row for row in _rows(ln, width - 3))
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


def make_folder(folder: Path) -> str | None:
    """Make ``folder`` and its parents: None when it is there, else why it cannot be (:func:`why_not`)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return why_not(err)
    return None


def cannot_make(folder: Path) -> str | None:
    """Why ``folder`` could not be made (:func:`why_not`), None when it is there or could be;
    each missing folder is made to find out and removed again."""
    made, why = [], None
    for f in [*reversed(folder.parents), folder]:
        if not f.is_dir():
            try:
                f.mkdir()
            except OSError as err:
                why = why_not(err)
                break
            made.append(f)
    for f in reversed(made):
        f.rmdir()
    return why


def why_not(err: OSError) -> str:
    """Why a file or folder could not be written, in a phrase (a file where a folder must be:
    "a file is in the way")."""
    return "a file is in the way" if isinstance(err, (FileExistsError, NotADirectoryError)) else err.strerror or str(err)


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
                    c.not_implemented,
                ))
            entries.append(EntrySummary(e.number, e.name, e.key, g.name, e.score, e.max_score, e.status, e.passed_cases,
                                        len(e.cases), e.visibility, e.label))
    return GradeReport(
        score=sum(g.score_cents for g in groups) / 100,
        groups={g.name: GroupSummary(g.title, g.score, g.cents / 100, g.passed, g.total, g.cases_passed, g.cases_total) for g in groups},
        **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in meta.items()},
        entries=entries,
        tests=tests,
    )
