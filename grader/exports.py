"""What the student handout and the Gradescope bundle share: the Python version they
target, the project's run-time dependencies, the file templates, and the error that stops
an export."""

from __future__ import annotations

import re
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
