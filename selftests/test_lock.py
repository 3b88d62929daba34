"""The grading environment is pinned (issue 22): ``grading.lock`` holds every runtime package
at an exact version within ``pyproject.toml``'s ranges, and what installs the grading
environment elsewhere installs exactly it: the exported Gradescope autograder's ``setup.sh``,
the handout's GitHub Classroom workflow and its README's set-up (the handout ships the lock:
test_handout). That the lock is complete, nothing missing for its own versions, is checked
where it is installed: ``.ci/run``.
"""

from __future__ import annotations

import re
import shlex
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .support import ROOT

LOCK = ROOT / "grading.lock"


def pins(text: str) -> dict[str, str]:
    """Package (canonical name) -> the requirement line, for each requirement line of a lock."""
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return {canonicalize_name(Requirement(line).name): line for line in lines if line}


def exact(requirement: str) -> bool:
    """``name==version``: one exact version, no wildcard, no extras or markers."""
    req = Requirement(requirement)
    specs = list(req.specifier)
    return (len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version
            and not req.extras and req.marker is None and req.url is None)


def test_every_line_of_the_lock_pins_one_exact_version():
    lines = [line.strip() for line in LOCK.read_text(encoding="utf-8").splitlines()]
    requirements = [line for line in lines if line and not line.startswith("#")]
    assert requirements, "grading.lock pins nothing"
    assert [r for r in requirements if not exact(r)] == []


@pytest.mark.parametrize("dependency", tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
def test_the_lock_pins_each_dependency_within_its_range(dependency):
    req = Requirement(dependency)
    locked = pins(LOCK.read_text(encoding="utf-8"))
    assert canonicalize_name(req.name) in locked, f"grading.lock lacks {req.name}: run .ci/lock"
    version = next(iter(Requirement(locked[canonicalize_name(req.name)]).specifier)).version
    assert req.specifier.contains(version, prereleases=True), f"{locked[canonicalize_name(req.name)]} is outside {dependency}"


def test_the_lock_leaves_the_project_itself_out():
    assert canonicalize_name(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]) not in pins(
        LOCK.read_text(encoding="utf-8"))


def pip_installs(script: str) -> list[list[str]]:
    """The arguments after ``pip install`` of each such command in a shell script or step."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(line.split(" #", 1)[0]) if "pip" in line else []
        for i in range(len(words) - 1):
            if words[i] == "pip" and words[i + 1] == "install":
                found.append(words[i + 2:])
    return found


def requirements_of(args: list[str], where: Path) -> list[str]:
    """What a ``pip install`` with ``args`` (run in ``where``) installs: its requirement
    arguments and the lines of the files it reads with ``-r``; ``-e PATH`` and options left out."""
    out, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-r", "--requirement"):
            text = (where / args[i + 1]).read_text(encoding="utf-8")
            out += [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]
            i += 2
        elif arg in ("-e", "--editable"):
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            out.append(arg)
            i += 1
    return out


def assert_installs_exactly_the_lock(installs: list[list[str]], where: Path) -> None:
    requirements = [r for args in installs for r in requirements_of(args, where)]
    requirements = [r for r in requirements if canonicalize_name(Requirement(r).name) != "pip"]  # pip itself: the installer
    assert requirements, f"no pip install of the grading environment: {installs}"
    assert [r for r in requirements if not exact(r)] == [], "installed without an exact version"
    assert sorted(pins("\n".join(requirements)).values()) == sorted(pins(LOCK.read_text(encoding="utf-8")).values())


def test_gradescope_setup_installs_exactly_the_locked_versions(tmp_path):
    from grader.gradescope import export_gradescope

    export_gradescope(tmp_path / "autograder.zip")
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        zf.extractall(tmp_path / "autograder")
    setup = (tmp_path / "autograder" / "setup.sh").read_text(encoding="utf-8")
    assert_installs_exactly_the_lock(pip_installs(setup), tmp_path / "autograder")


def test_the_classroom_workflow_installs_exactly_the_locked_versions():
    from grader.classroom import classroom_workflow

    workflow = yaml.safe_load(classroom_workflow([], {}))  # the install step does not depend on the groups
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    runs = "\n".join(step.get("run", "") + "\n" + step.get("with", {}).get("setup-command", "") for step in steps)
    assert_installs_exactly_the_lock(pip_installs(runs), ROOT)  # run in the handout, which ships the lock


def test_the_handout_readme_sets_up_with_the_locked_versions():
    from grader.config import load_config
    from grader.handout import handout_readme

    readme = handout_readme([], load_config(ROOT / "grading.yaml"))
    set_up = re.search(r"## Set-up.*?```bash\n(.*?)```", readme, re.S)
    assert set_up, "the handout README has no set-up commands"
    assert_installs_exactly_the_lock(pip_installs(set_up.group(1)), ROOT)  # run in the handout, which ships the lock
