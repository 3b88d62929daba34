"""Whether the submission's ``pyproject.toml`` (``[project] requires-python``) admits the
Python grading runs: CS336's 2026 starter asks for ``>=3.12,<3.14``, and code using 3.12's
syntax (``type X = ...``) fails to import under 3.11 for that reason alone, which the
feedback must say rather than leave a bare ``SyntaxError``."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|~=|>|<)\s*(\d+(?:\.\d+)*)(\.\*)?\s*$")


def allows(clause: str, running: tuple[int, ...]) -> bool:
    """Whether one clause of a ``requires-python`` specifier admits ``running``; a clause
    this reader does not know admits everything (what follows is a hint, never a refusal)."""
    found = _CLAUSE.match(clause)
    if not found:
        return True
    op, wanted, star = found.group(1), tuple(int(x) for x in found.group(2).split(".")), found.group(3)
    have = running[: len(wanted)] if star or op == "~=" else running
    if op == "~=":  # ~=3.12 is >=3.12 and ==3.*
        return running >= wanted and running[: max(len(wanted) - 1, 1)] == wanted[: max(len(wanted) - 1, 1)]
    return {">=": have >= wanted, ">": have > wanted, "<=": have <= wanted, "<": have < wanted,
            "==": have == wanted, "!=": have != wanted}[op]


def excluding_requirement(root: str | Path, running: tuple[int, ...] | None = None) -> str | None:
    """``root/pyproject.toml``'s ``requires-python`` when it excludes ``running`` (the Python
    this runs on by default); None when it admits it, or says nothing this reader understands."""
    running = running or tuple(sys.version_info[:3])
    try:
        spec = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(spec, str) or all(allows(c, running) for c in spec.split(",")):
        return None
    return spec


def import_hint(root: str | Path) -> str:
    """What to add to the line saying the submission's adapters could not be imported when
    its ``requires-python`` excludes this Python ("" otherwise)."""
    spec = excluding_requirement(root)
    if spec is None:
        return ""
    version = ".".join(map(str, sys.version_info[:3]))
    return (f" (grading runs Python {version}; the submission's pyproject.toml requires Python {spec[:60]}: "
            "code that needs a newer Python fails here for that reason alone; grade with a Python it accepts)")
