"""The autograders grade with the Python a course asks for: ``handout OUT --gradescope ZIP
--python 3.12`` (CS336's 2026 starter requires 3.12; a repository using 3.12's syntax fails to
import under 3.11 and would score 0). Gradescope's ``setup.sh`` keeps the image's ``python3``
when it is that version or newer, else installs that version; the students' repository asks for
it (``requires-python``, README) and its Classroom workflow sets it up. A version older than the
project's own, or not a version, stops the export in one line, before anything is written."""

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


@pytest.mark.parametrize("args", [["{out}", "--python", "3.9"], ["{out}", "--gradescope", "{zip}", "--python", "3.10"]],
                         ids=["handout", "with_gradescope"])
def test_the_command_refuses_a_wrong_python_in_one_line_and_writes_nothing(tmp_path, args):
    zip_path, out = tmp_path / "autograder.zip", tmp_path / "handout"
    proc = subprocess.run([sys.executable, "-m", "grader", "handout", *[a.format(zip=zip_path, out=out) for a in args]],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "--python" in proc.stderr and not zip_path.exists() and not out.exists()


@pytest.mark.parametrize("python", [PYTHON_VERSION, "3.12"])
def test_the_students_repository_asks_for_the_python_its_workflow_sets_up(python):
    import tomllib

    import yaml

    from grader.classroom import classroom_workflow
    from grader.config import load_config
    from grader.handout import handout_pyproject, handout_readme

    steps = yaml.safe_load(classroom_workflow([], {}, python))["jobs"]["run-autograding-tests"]["steps"]
    assert [s["with"]["python-version"] for s in steps if s.get("uses", "").startswith("actions/setup-python")] == [python]
    assert tomllib.loads(handout_pyproject(ROOT, python))["project"]["requires-python"] == f">={python}"
    assert f"## Set-up (Python {python}+)" in handout_readme([], load_config(ROOT / "grading.yaml"), python)


@pytest.mark.parametrize("typed", ["3.12", " 3.12 "])
def test_the_command_gives_its_python_to_the_handout_and_to_gradescope_as_major_minor(tmp_path, monkeypatch, typed):
    import grader.handout
    from grader.__main__ import main

    seen = {}
    monkeypatch.setattr(grader.handout, "export_handout", lambda out, config, **kw: seen.setdefault("handout", kw["python"]) and [])
    monkeypatch.setattr(grader.handout, "export_gradescope", lambda zip_path, **kw: seen.setdefault("gradescope", kw["python"]) and [])
    (tmp_path / "out").mkdir()
    assert main(["handout", str(tmp_path / "out"), "--gradescope", str(tmp_path / "a.zip"), "--python", typed]) == 0
    assert seen == {"handout": "3.12", "gradescope": "3.12"}


def test_setup_stops_in_one_line_naming_the_base_image_when_apt_has_no_such_python(tmp_path):
    # an image whose python3 is older and whose apt has no python3.12 (Ubuntu 22.04, Debian 12):
    # setup.sh ended with apt's own "E: Unable to locate package python3.12", nothing more
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, body in {"apt-get": "echo \"E: Unable to locate package $6\" >&2; exit 100", "python3": "exit 1"}.items():
        (fake / name).write_text(f"#!/bin/sh\n{body}\n")
        (fake / name).chmod(0o755)
    setup = tmp_path / "setup.sh"
    setup.write_text(gradescope_files(python="3.12")["setup.sh"])
    env = {"PATH": f"{fake}:/usr/bin:/bin", "AUTOGRADER_ROOT": str(tmp_path / "autograder")}
    proc = subprocess.run(["bash", str(setup)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "python3.12" in last and "Ubuntu 24.04" in last and "PYTHON" in last, proc.stderr
