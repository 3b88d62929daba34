"""What ``batch`` asks an instructor to look at: who hit a limit, whose grading had errors,
whose failures match a known bug, read from each student's grade report."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.printable import terminal_text

from .report import GradeReport


@dataclass
class Attention:
    limits: dict[str, int] = field(default_factory=dict)  # limit -> cases that hit it
    errors: list[str] = field(default_factory=list)
    known_bugs: list[str] = field(default_factory=list)  # descriptions, in order of appearance

    def __bool__(self) -> bool:
        return bool(self.limits or self.errors or self.known_bugs)


def from_report(report: GradeReport | None, error: str | None = None) -> Attention:
    """The limits hit, errors and known bugs of one grade report (``error``: why the
    submission could not be graded at all), from the fields of its failing cases."""
    found = Attention(errors=[error] if error else [])
    if report is None:
        return found
    if report.error and not error:
        found.errors.append(report.error)
    odd = 0
    for t in report.tests:
        if t.outcome == "passed":
            continue
        odd += t.outcome not in ("passed", "failed", "skipped")
        for name in t.limits:
            found.limits[name] = found.limits.get(name, 0) + 1
        if t.load_error and t.load_error not in found.errors:
            found.errors.append(t.load_error)
        if t.known_bug and t.known_bug not in found.known_bugs:
            found.known_bugs.append(t.known_bug)
    if odd:
        found.errors.append(f"{odd} case{'s' if odd != 1 else ''} ended in an error (neither passed nor failed)")
    return found


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _error_cell(errors: list[str], width: int) -> str:
    """The errors, cut to ``width``: an import error by its cause alone (``import failed:
    SyntaxError in student/train.py, line 68``), whose file and line a cut would lose."""
    shown = [re.sub(r"^\S*adapters\.py could not be imported: ", "import failed: ", e) for e in errors]
    return _cut(terminal_text("; ".join(shown)), width)


def table(rows: list[tuple[str, Attention]], width: int = 60) -> list[str]:
    """One line per student with anything to look at: the limits hit (with how many cases),
    errors, known bugs; empty when nobody has any."""
    marked = [(student, a) for student, a in rows if a]
    if not marked:
        return []
    cells = [("student", "limits hit", "errors", "known bugs")]
    for student, a in marked:
        limits = ", ".join(f"{name} ({n})" for name, n in a.limits.items()) or "-"
        bugs = "-" if not a.known_bugs else _cut(a.known_bugs[0], width) + (f" (+{len(a.known_bugs) - 1} more)" if len(a.known_bugs) > 1 else "")
        cells.append((student, limits, _error_cell(a.errors, width) or "-", bugs))
    widths = [max(len(r[i]) for r in cells) for i in range(3)]
    lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] for r in cells]
    lines.insert(1, "  " + "-" * (len(lines[0]) - 2))
    return [f"to look at ({len(marked)} of {len(rows)} submissions hit a limit, had errors or match a known bug):", *lines]
