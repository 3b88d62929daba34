"""What the student handout and the Gradescope bundle share: the Python version they
target, the project's run-time dependencies and their pinned versions (``grading.lock``),
the file templates, the error that stops an export, and when an export may replace an
earlier one."""

from __future__ import annotations

import ast
import re
import shutil
import tomllib
from pathlib import Path

from harness import ROOT

TEMPLATES = Path(__file__).resolve().parent / "templates"
PYTHON_VERSION = "3.11"  # the oldest Python the project runs on (pyproject's requires-python)
LOCK = "grading.lock"  # the grading environment pinned (refreshed by .ci/lock)


class HandoutError(Exception):
    """The export would be wrong (e.g. it would contain solution code); nothing is written."""


def python_version(text: str) -> tuple[int, int]:
    """``"3.12"`` as ``(3, 12)``: a Python an export may ask for (``handout --python``), no
    older than :data:`PYTHON_VERSION`; :class:`HandoutError` naming the value otherwise."""
    match = re.fullmatch(r"3\.(\d{1,2})", text.strip())
    oldest = tuple(int(n) for n in PYTHON_VERSION.split("."))
    if match is None or (3, int(match[1])) < oldest:
        raise HandoutError(f"--python {text!r}: give a Python version {PYTHON_VERSION} or newer, as major.minor (3.12)")
    return 3, int(match[1])


def dependencies(root: Path) -> list[str]:
    """The run-time dependencies of ``pyproject.toml`` (``project.dependencies``)."""
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["project"]["dependencies"])


def locked(root: Path) -> list[str]:
    """The pinned requirements of ``root/grading.lock`` (``name==version``, one per runtime
    package); :class:`HandoutError` when it is missing or a line pins nothing exactly."""
    path = root / LOCK
    if not path.is_file():
        raise HandoutError(f"{path} is missing: run .ci/lock to pin the grading environment")
    pins = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+", line):
            raise HandoutError(f"{path}, line {number}: {line!r} is not an exact pin name==version")
        pins.append(line)
    if not pins:
        raise HandoutError(f"{path} pins nothing: run .ci/lock")
    return pins


def render(name: str, **values: str) -> str:
    """``templates/NAME`` with each ``{{key}}`` replaced by its value."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{%s}}" % key, value)
    left = re.findall(r"\{\{\w+\}\}", text)
    if left:
        raise HandoutError(f"template {name}: no value for {left}")
    return text


def replaceable(out: Path, root: Path) -> None:
    """``HandoutError`` unless ``--force`` may replace what ``out`` holds: never the
    repository exported from or a folder holding it, never a folder with solution code."""
    where, home = out.resolve(), root.resolve()
    if where == home or where in home.parents:
        raise HandoutError(f"{out} holds the repository the handout is exported from; --force would delete it: choose another folder")
    if out.is_symlink():
        raise HandoutError(f"{out} is a symbolic link; give the folder it points to")
    found = [p for p in ("reference", "mutants", "tests/hidden") if (out / p).exists()]
    if found:
        raise HandoutError(f"{out} holds {', '.join(found)} (course staff files), so it is no handout; --force replaces only a handout: choose another folder")


def clear_folder(out: Path) -> None:
    """Remove everything in ``out`` but its ``.git`` (links themselves, never what they point to)."""
    for entry in out.iterdir():
        if entry.name == ".git":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def student_parts(root: Path = ROOT) -> dict[str, int]:
    """Module name -> part number, from the ``* Part N, ...: ``x.py``...`` lines of
    ``student/__init__.py``'s docstring."""
    doc = ast.get_docstring(ast.parse((root / "student" / "__init__.py").read_text(encoding="utf-8"))) or ""
    parts: dict[str, int] = {}
    for number, files in re.findall(r"Part (\d+)\b[^:\n]*:(.*)", doc):
        for name in re.findall(r"``(\w+)\.py``", files):
            parts[name] = int(number)
    return parts
