"""What the student handout and the Gradescope bundle share: the Python version they
target, the project's run-time dependencies, the file templates, and the error that stops
an export, and when an export may replace an earlier one."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
PYTHON_VERSION = "3.11"


class HandoutError(Exception):
    """The export would be wrong (e.g. it would contain solution code); nothing is written."""


def dependencies(root: Path) -> list[str]:
    """The run-time dependencies of ``pyproject.toml`` (``project.dependencies``)."""
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["project"]["dependencies"])


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
