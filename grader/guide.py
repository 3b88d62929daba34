"""Where a student should look first, printed by ``grade`` after its table.

With functions still unimplemented (cases failed by their ``NotImplementedError``: the
report's ``Case.not_implemented``, ``not implemented: NAME`` to the student), the pointer is the earliest
part that has one (the order of ``student/__init__.py``'s "Part N" list): on the untouched
stubs, "start with Part 1". The failures that lost the most points follow, among the
entries whose code exists (an unwritten function, or a test skipped until what it builds on
works, is no bug to look at). A submission that could not be imported is told that first,
once, with the file and line of the cause.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from harness import ROOT
from .exports import student_parts
from .formats import top_failures
from .scoring import GroupResult


def _unwritten(entry) -> set[str]:
    """The functions an entry's failing cases say are not implemented (empty when any of
    its failures is something else)."""
    names = set()
    for case in entry.failing():
        if case.not_implemented is None:
            return set()
        names.add(case.not_implemented)
    return names


def _not_yet(entry) -> bool:
    """Whether every failing case of an entry waits for code not written yet: ``not
    implemented``, or skipped (a test not graded until what it builds on works)."""
    return all(c.outcome == "skipped" or c.not_implemented is not None for c in entry.failing())


def modules_of(root: Path = ROOT) -> dict[str, str]:
    """Top-level function or class name -> the ``student/`` module defining it."""
    found: dict[str, str] = {}
    for path in sorted((root / "student").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found.setdefault(node.name, path.stem)
    return found


def where_to_start(groups: list[GroupResult], root: Path = ROOT) -> str:
    """One line naming the earliest part with unwritten functions (its group's title, the
    module and the functions), or "" when every function exists. Only entries that carry
    points count: a function that only a no-points group needs (this assignment's own
    adapters, graded as "beyond CS336" for a CS336 repository) is nothing to write next. A
    function outside ``student/`` (a repository's own package) is named without a part."""
    unwritten = sorted({n for g in groups for e in g.tests if e.max_cents > 0 for n in _unwritten(e)})
    if not unwritten:
        return ""
    passed = any(c.outcome == "passed" for g in groups for e in g.tests for c in e.cases)
    lead = "next to write" if passed else "where to start: nothing is implemented yet; begin with"
    parts, modules = student_parts(root), modules_of(root)
    placed = [(parts[modules[n.split(".")[0]]], modules[n.split(".")[0]], n) for n in unwritten
              if modules.get(n.split(".")[0]) in parts]
    if not placed:  # laid out in its own package: no part of student/ to point at
        return f"{lead}: {', '.join(unwritten)} (not implemented yet)"
    first = min(p for p, _, _ in placed)
    names = sorted({n for p, _, n in placed if p == first})
    files = sorted({f"student/{m}.py" for p, m, _ in placed if p == first})
    title = next((g.title for g in groups if re.match(rf"Part {first}\b", g.title)), f"Part {first}")
    return f"{lead} {title} ({', '.join(files)}: {', '.join(names)})"


def _load_failed(entry) -> bool:
    """Whether every failing case of an entry failed because the submission could not be imported."""
    return all(c.load_error is not None for c in entry.failing())


def import_failure(groups: list[GroupResult]) -> str:
    """One line saying the submission could not be imported (its cause, file and line first)
    and how many entries fail on it, or "" when none does: the same line in every entry's
    first failure, three times over in the failures below, hid that one fix was all it took."""
    failed = [e for g in groups for e in g.tests if e.lost_cents > 0 and e.failing() and _load_failed(e)]
    if not failed:
        return ""
    error = failed[0].failing()[0].load_error
    return f"start here: {error}; the tests that need it fail until it imports ({len(failed)} entries)"


def look_here(groups: list[GroupResult], root: Path = ROOT) -> str:
    """The pointer to where to start (the submission's import error, when it has one), then the
    failures that lost the most points among the entries whose functions exist and import."""
    pointer = import_failure(groups) or where_to_start(groups, root)
    worst = top_failures(groups, skip=lambda e: _not_yet(e) or _load_failed(e))
    return "\n\n".join(x for x in (pointer, worst) if x)
