"""The Gradescope autograder grades with the Python a course asks for: ``handout --gradescope
ZIP --python 3.12`` (CS336's 2026 starter requires 3.12; a repository using 3.12's syntax
fails to import under 3.11 and would score 0). ``setup.sh`` keeps the image's ``python3`` when
it is that version or newer, else installs that version; a version older than the project's
own, or not a version, stops the export in one line, before anything is written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.exports import PYTHON_VERSION, HandoutError
from grader.gradescope import gradescope_files
from harness import ROOT


def version_check(setup: str) -> str:
    """The Python code ``setup.sh`` runs to decide whether the image's python3 will do."""
    return re.search(r"\"\$PY\" -c '([^']*)'", setup)[1]


@pytest.mark.parametrize("minor", [11, 12, 13, 14])
def test_setup_keeps_python3_only_when_it_is_the_version_asked_for_or_newer(minor):
    setup = gradescope_files(python=f"3.{minor}")["setup.sh"]
    keeps = subprocess.run([sys.executable, "-c", version_check(setup)]).returncode == 0
    assert keeps == (sys.version_info[:2] >= (3, minor))
    assert f"apt-get install -y -q python3.{minor} python3.{minor}-venv" in setup


def test_the_default_is_the_projects_own_oldest_python():
    assert gradescope_files()["setup.sh"] == gradescope_files(python=PYTHON_VERSION)["setup.sh"]
    assert f'requires-python = ">={PYTHON_VERSION}"' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.parametrize("text", ["3.10", "2.7", "three", "3.12.1", "", "3"])
def test_a_python_older_than_the_projects_or_not_a_version_is_refused_naming_it(text):
    with pytest.raises(HandoutError, match=re.escape(repr(text))):
        gradescope_files(python=text)


@pytest.mark.parametrize("args, status", [(["{out}", "--python", "3.12"], 2), (["{out}", "--gradescope", "{zip}", "--python", "3.9"], 1)],
                         ids=["without_gradescope", "too_old"])
def test_the_command_refuses_a_wrong_python_in_one_line_and_writes_nothing(tmp_path, args, status):
    zip_path, out = tmp_path / "autograder.zip", tmp_path / "handout"
    proc = subprocess.run([sys.executable, "-m", "grader", "handout", *[a.format(zip=zip_path, out=out) for a in args]],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == status and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "--python" in proc.stderr and not zip_path.exists() and not out.exists()
