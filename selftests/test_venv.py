"""Grading is right wherever the grader is installed (issue 16).

The project is installed into a venv under a temporary folder and into a ``.venv`` inside a
copy of the checkout (:mod:`selftests.venvs`: the venv's own site-packages, no download),
then graded from there, isolated. The worker must see the interpreter and the venv's
site-packages, and nothing else of their surroundings; when it cannot import what the
reference needs, the start-up self-check stops grading with a harness error.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.childenv import child_env

from .prefetch import prefetched
from .support import ROOT, make_submission, run_grade
from .venvs import make_venv

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the private root directory needs root"),
    pytest.mark.timeout(900),  # whole gradings: well past the suite's 120 s per test on a loaded machine
]

PART = ["tests/public/test_tokenizer_files.py"]  # the reference's regex, files in and out of the worker


def first_test_of_every_file() -> list[str]:
    """The first test function of every file of the graded suite, as ``--tests`` node ids:
    every fixture family, adapter and probe (files, speed, memory), visible and hidden (the
    folders grading.yaml grades: ``DEFAULT_PATHS``)."""
    from grader.config import DEFAULT_PATHS

    ids = []
    for path in sorted(p for folder in DEFAULT_PATHS for p in (ROOT / folder).rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = next(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_"))
        ids.append(f"{path.relative_to(ROOT).as_posix()}::{name}")
    return ids
COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", ".hypothesis", "results", "batch-results", ".venv")


def scored(data: dict) -> tuple[float, float]:
    return sum(t["score"] for t in data["tests"]), sum(t["max_score"] for t in data["tests"])


@prefetched
def tmp_venv(prefetch) -> Path:
    """A venv under /tmp with the checkout installed editable."""
    return make_venv(prefetch.mktemp("venv") / "venv", ROOT)


@prefetched
def checkout_venv(prefetch) -> tuple[Path, Path]:
    """A copy of the checkout with a ``.venv`` inside it; (checkout, python)."""
    checkout = prefetch.mktemp("checkout") / "bpe-harness"
    shutil.copytree(ROOT, checkout, ignore=COPY_IGNORE)
    return checkout, make_venv(checkout / ".venv", checkout)


WHO = ["reference", "correct submission"]


@prefetched
def venv_gradings(prefetch):
    """This module's gradings, queued together in the session's pool (two run at a time):
    the reference on the first test of every file from the venv under /tmp (the whole suite
    is graded once, by graded_reference), and each of ``WHO`` on ``PART`` from the ``.venv``
    inside the checkout copy."""
    gradings, tmp_python = prefetch.gradings, prefetch.get(tmp_venv.setup)
    out = prefetch.mktemp("venv-gradings")
    checkout, python = prefetch.get(checkout_venv.setup)
    gradings.start("venv under /tmp: reference", python=tmp_python, impl="reference", tests=first_test_of_every_file())
    sub = make_submission(out / "sub", from_reference=tuple(p.name for p in (ROOT / "reference").glob("*.py")))
    for who, request in zip(WHO, ({"impl": "reference"}, {"submission": sub})):
        gradings.start(f".venv inside the checkout: {who}", python=python, cwd=checkout, tests=PART, **request)
    gradings.wait()
    return gradings


def test_venv_under_tmp_grades_the_reference_with_full_marks_on_every_test_file(venv_gradings):
    run = venv_gradings.get("venv under /tmp: reference")
    assert run.code == 0, run.stderr
    files = {t["extra_data"]["test"].split("::")[0] for t in run.tests}
    assert len(files) == len(first_test_of_every_file()), sorted(files)
    assert scored(run.results) == (pytest.approx(100.0), pytest.approx(100.0)), run.results["output"][-2000:]
    assert "isolation: own user id, private root directory" in run.stdout


# the reference from the venv under /tmp: above; a correct submission graded from
# there differs from the checkout's case only in where the venv is. The stubs score 0 however
# broken the set-up is: graded once, by graded_stubs.
@pytest.mark.parametrize("who", WHO)
def test_grading_from_a_venv_inside_the_checkout_scores_by_the_code_alone(who, venv_gradings):
    run = venv_gradings.get(f".venv inside the checkout: {who}")
    assert run.code == 0, run.stderr
    got, possible = scored(run.results)
    assert possible > 0 and got == pytest.approx(possible), run.results["output"][-2000:]
    assert "private root directory" in run.stdout


PEEK = '''
import os

def run_pretokenize(text):
    """What the worker sees at the path given: "missing", "unreadable" or the names there."""
    try:
        return sorted(os.listdir(text))
    except FileNotFoundError:
        return ["missing"]
    except OSError:
        return ["unreadable"]
'''


def test_a_venv_inside_the_checkout_shows_the_worker_nothing_else_of_it(checkout_venv, tmp_path):
    checkout, python = checkout_venv
    sub = tmp_path / "peek"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(PEEK)
    site = next((checkout / ".venv" / "lib").glob("python3*/site-packages"))
    script = (
        "import json,sys\nfrom sandbox.backend import WorkerBackend\n"
        f"b = WorkerBackend('student', {str(sub)!r})\n"
        "print(json.dumps({p: b.call('run_pretokenize', (p,), False) for p in sys.argv[1:]}))\nb.close()\n"
    )
    paths = [str(checkout), str(checkout / "tests"), str(checkout / "reference"), str(checkout.parent), str(site)]
    env = child_env(keep=("BPE_IMPL", "PYTEST_ADDOPTS"))
    out = subprocess.run([str(python), "-c", script, *paths], cwd=checkout, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen[str(checkout)] == [".venv"]  # the venv, not the checkout's tests or reference
    assert seen[str(checkout / "tests")] == ["missing"] and seen[str(checkout / "reference")] == ["missing"]
    assert seen[str(checkout.parent)] == ["bpe-harness"]
    assert "regex" in seen[str(site)] and "tiktoken" in seen[str(site)]


@pytest.fixture(scope="module")
def venv_without_regex(tmp_path_factory) -> tuple[Path, dict]:
    """A venv lacking ``regex``, which the grading process finds through PYTHONPATH only:
    the grader can import it, the worker (which sees only the environment's own site
    directories) cannot."""
    base = tmp_path_factory.mktemp("noregex")
    python = make_venv(base / "venv", ROOT, leave_out=("regex",))
    import regex

    shutil.copytree(Path(regex.__file__).parent, base / "extra" / "regex")
    env = dict(os.environ)
    return python, env, base / "extra"


def test_the_self_check_stops_grading_when_the_worker_cannot_import_regex(venv_without_regex, tmp_path):
    python, env, extra = venv_without_regex
    run = run_grade(tmp_path, python=python, impl="reference", env=child_env(base=env, PYTHONPATH=str(extra)), timeout=300)
    assert run.code == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grade: harness error") and "'regex'" in lines[0], run.stderr
    data = run.results
    assert data["tests"] == [] and "score" not in data  # nothing blamed on a submission
    assert "could not run" in data["output"] and "'regex'" in data["output"]


def test_batch_grades_no_one_when_the_self_check_fails(venv_without_regex, tmp_path):
    python, env, extra = venv_without_regex
    env = child_env(base=env, PYTHONPATH=str(extra))
    make_submission(tmp_path / "subs" / "alice")
    proc = subprocess.run(
        [str(python), "-m", "grader", "batch", str(tmp_path / "subs"), "--out", str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert "harness error" in proc.stderr and "'regex'" in proc.stderr
    assert not (tmp_path / "out" / "results").exists() and not (tmp_path / "out" / "grades.csv").exists()
