"""``GradeRequest``: ``python -m grader grade``'s options declared once. argparse takes its
defaults from it, and the command line a request builds parses back to the same request
(what batch, compare, the collateral table, the benchmarks and Gradescope's
``run_autograder`` run)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from grader.__main__ import build_parser
from grader.gradescope import AUTOGRADER_REQUEST, gradescope_files
from grader.request import GradeRequest

from .support import ROOT

# a value other than the default for every field (a field added without one fails below)
OTHER = {
    "submission": Path("/submissions/alice smith"),
    "impl": "reference",
    "results": Path("/out/alice/results.json"),
    "junit": Path("/out/alice/junit.xml"),
    "config": "cs336",
    "isolate": False,
    "install_declared": True,
    "max_time": 90.5,
    "quiet": True,
    "report": Path("/out/alice/report.json"),
    "tests": ("tests/public/test_primitives.py", "tests/hidden/test_warmup_hidden.py::test_x"),
    "self_checked": True,
    "unwrapped": "my_bpe_repo",
}
FIELDS = [f.name for f in dataclasses.fields(GradeRequest)]


def parsed(args: list[str]) -> GradeRequest:
    """The request ``python -m grader grade ARGS`` makes."""
    return GradeRequest.from_args(build_parser().parse_args(["grade", *args]))


def test_every_field_has_a_non_default_example():
    assert sorted(OTHER) == sorted(FIELDS)
    assert all(OTHER[f.name] != f.default for f in dataclasses.fields(GradeRequest))


def test_the_command_without_options_is_the_default_request():
    assert parsed([]) == GradeRequest()


@pytest.mark.parametrize("name", FIELDS)
def test_a_request_parses_back_from_its_own_command_line(name):
    request = GradeRequest(**{name: OTHER[name]})
    assert request.argv()[1:4] == ["-m", "grader", "grade"]
    assert parsed(request.argv()[4:]) == request


@pytest.mark.parametrize("isolate", [True, False, None])
def test_isolation_has_three_states_on_the_command_line(isolate):
    assert parsed(GradeRequest(isolate=isolate).args()).isolate is isolate


@pytest.mark.parametrize("install", [True, False, None])
def test_installing_declared_packages_has_three_states_on_the_command_line(install):
    assert parsed(GradeRequest(install_declared=install).args()).install_declared is install


def test_a_request_with_every_option_parses_back():
    request = GradeRequest(**OTHER)
    assert parsed(request.args()) == request


def test_default_fields_add_nothing_to_the_command_line():
    assert GradeRequest().args() == []


def test_the_request_is_keyword_only_and_frozen():
    with pytest.raises(TypeError):
        GradeRequest(Path("alice"))  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        GradeRequest().quiet = True  # type: ignore[misc]


def autograder_command(env: str) -> list[str]:
    """The words run_autograder passes to ``$PY`` (its grade command line run by bash, the
    script's variables set, ``env`` assignments before it)."""
    script = gradescope_files()["run_autograder"]
    line = script[script.index('"$PY" '):]
    line = line[: line.index("\nstatus=")]
    prelude = "say() { printf '%s\\0' \"$@\"; }; PY=say WORK=/graded RESULTS=/results SRC=/source UNWRAPPED=(); " + env
    out = subprocess.run(["bash", "-c", prelude + "\n" + line], capture_output=True, text=True, check=True).stdout
    return out.split("\0")[:-1]


@pytest.mark.parametrize("env, changes", [
    ("", {}),
    ("AUTOGRADER_CONFIG=/course/policy.yaml", {"config": "/course/policy.yaml"}),
    ("AUTOGRADER_MAX_TIME=300", {"max_time": 300.0}),
    ("UNWRAPPED=(--unwrapped 'my repo')", {"unwrapped": "my repo"}),
])
def test_run_autograder_runs_the_autograder_request(env, changes):
    words = autograder_command(env)
    assert words[:3] == ["-m", "grader", "grade"]
    expected = dataclasses.replace(AUTOGRADER_REQUEST, submission=Path("/graded"), results=Path("/results/results.json"))
    assert parsed(words[3:]) == dataclasses.replace(expected, **changes)


def test_the_bundle_names_its_policy_so_an_upload_laid_out_like_cs336_cannot_choose_its_own(tmp_path, monkeypatch):
    # a course running this assignment: an upload moved into CS336's layout (tests/adapters.py,
    # no adapters.py) was graded by grading-cs336.yaml, where Parts 1-3 count for nothing: a
    # tokenizer without the warm-up or the primitives scored 100/100 so, 80/100 as student/
    from .support import build_layout

    upload = build_layout("cs336", tmp_path / "upload")
    monkeypatch.chdir(ROOT)  # run_autograder grades in the bundle's source folder
    request = dataclasses.replace(parsed(autograder_command("")[3:]), submission=upload)
    assert request.policy_file().resolve() == (ROOT / "grading.yaml").resolve()


def test_handout_bundles_the_policy_it_is_given_and_run_autograder_grades_by_it(tmp_path):
    # `handout --config course.yaml --gradescope ZIP` bundled the repository's grading.yaml
    # and graded by it: the course's points were in the student README, not on Gradescope
    import zipfile

    from grader.__main__ import main

    policy = tmp_path / "course.yaml"
    policy.write_text((ROOT / "grading.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    bundle = tmp_path / "autograder.zip"
    assert main(["handout", "--config", str(policy), "--gradescope", str(bundle)]) == 0
    with zipfile.ZipFile(bundle) as zf:
        assert zf.read("course.yaml") == policy.read_bytes()
        script = zf.read("run_autograder").decode()
    assert " --config course.yaml " in script, script
