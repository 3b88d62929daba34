"""Options that cannot work end in one readable line and exit status 2 (``grade``: with a
results file wherever one can be written), never a traceback, a grading that ran for a
negative budget, or a silent ``0 / 0``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from grader.__main__ import build_parser
from harness import ROOT


def run(args: list[str]) -> subprocess.CompletedProcess:
    """``python -m grader ARGS`` in the repository."""
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", [["grade"], ["batch", "subs"], ["compare", "--submission", "sub"]])
@pytest.mark.parametrize("value", ["-5", "0", "nan", "inf", "soon"])
def test_a_time_limit_must_be_a_positive_number_of_seconds(command, value, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([*command, "--max-time", value])
    assert exc.value.code == 2
    assert f"expected a positive number of seconds, got {value!r}" in capsys.readouterr().err


@pytest.mark.parametrize("where, why", [("/proc/bpe-no-such-folder/results.json", "No such file or directory"),
                                        ("FILE/results.json", "a file is in the way")])
def test_a_results_file_that_cannot_be_written_is_said_in_one_line(tmp_path, where, why):
    (tmp_path / "file").write_text("")
    results = where.replace("FILE", str(tmp_path / "file"))  # /proc: no folder can be made there, even by root
    proc = run(["grade", "--results", results])
    assert proc.returncode == 2 and proc.stderr == f"grade: cannot write the results file {results} ({why})\n", proc.stderr


@pytest.mark.parametrize("blocked, why", [("FILE", "a file is in the way"), ("/proc/bpe-no-such-folder", "No such file or directory")],
                         ids=["a file in the way", "a folder that cannot be made"])
@pytest.mark.parametrize("command", [["batch", "SUBS", "--out", "{}/out"], ["compare", "--submission", "SUBS/alice", "--html", "{}/page.html"],
                                     ["handout", "{}/handout"], ["handout", "--gradescope", "{}/autograder.zip"]],
                         ids=["batch --out", "compare --html", "handout", "handout --gradescope"])
def test_every_command_says_in_one_line_where_it_cannot_write(tmp_path, command, blocked, why):
    (tmp_path / "file").write_text("")
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    blocked = blocked.replace("FILE", str(tmp_path / "file"))
    proc = run([a.replace("SUBS", str(tmp_path / "subs")).format(blocked) for a in command])
    assert proc.returncode in (1, 2) and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"{command[0]}: cannot write") and f"({why})" in proc.stderr, proc.stderr


def test_the_handouts_function_search_finds_the_reference_from_any_folder(tmp_path):
    """``python -m grader handout OUT`` run outside the checkout ended in ModuleNotFoundError:
    the search imported ``reference``, which only the checkout's folder holds."""
    code = "import pathlib, sys; from grader.solution_search import graded_cases; print(len(graded_cases(pathlib.Path(sys.argv[1]))))"
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and int(proc.stdout) > 10, proc.stderr[-2000:]


@pytest.mark.parametrize("tests", [["tests/public/no_such_test.py"], ["tests/public/test_warmup.py::no_such_test"]],
                         ids=["missing file", "node id matching nothing"])
def test_a_test_selection_naming_no_test_fails_the_grading_saying_so(tmp_path, tests):
    results = tmp_path / "results.json"
    proc = run(["grade", "--no-isolate", "--results", str(results), "--tests", *tests])
    expected = f"--tests {' '.join(tests)}: no test there"
    assert proc.returncode == 2 and expected in proc.stderr, proc.stdout + proc.stderr
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["score"] == 0 and expected in data["output"], data


def test_batch_refuses_a_test_path_that_is_not_in_the_repository_before_grading_anyone(tmp_path):
    (tmp_path / "alice").mkdir()
    proc = run(["batch", str(tmp_path), "--out", str(tmp_path / "out"), "--tests", "tests/public", "tests/nope.py"])
    assert proc.returncode == 2 and proc.stderr.startswith("batch: --tests tests/nope.py: not in the repository"), proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_submission_that_is_a_file_is_not_called_missing(tmp_path):
    (tmp_path / "upload.py").write_text("x = 1\n")
    results = tmp_path / "results.json"
    proc = run(["grade", "--submission", str(tmp_path / "upload.py"), "--results", str(results)])
    assert f"submission folder {tmp_path / 'upload.py'} is not a folder" in proc.stderr, proc.stderr
    assert "is not a folder" in json.loads(results.read_text(encoding="utf-8"))["output"]


def test_finding_out_whether_a_folder_can_be_made_leaves_nothing_made(tmp_path):
    from grader.formats import cannot_make

    (tmp_path / "file").write_text("")
    assert cannot_make(tmp_path / "a" / "b" / "c") is None and not (tmp_path / "a").exists()
    assert cannot_make(tmp_path / "file" / "b") == "a file is in the way"
    assert cannot_make(tmp_path) is None and tmp_path.is_dir()
