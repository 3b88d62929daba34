"""``python -m grader handout``: the student repository runs on its own, fails on the
stubs, passes with the reference solution, and holds no solution code.

The module's pytest and autograder runs (subprocesses) start together in one module fixture,
two at a time, each on its own copy of what it runs in; each test waits for its own."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from harness.childenv import child_env
from harness import SHARED_TIKTOKEN_CACHE
from grader.config import load_config
from grader.handout import INSTRUCTOR_SIDE, solution_leaks
from grader.solution_search import solution_functions

from .prefetch import prefetched

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # a test may wait for the module's other runs to finish first


def student_env() -> dict[str, str]:
    """A student's environment: nothing points at this repository."""
    env = child_env(drop=("BPE_SEED",))
    if SHARED_TIKTOKEN_CACHE.is_dir():
        env.setdefault("TIKTOKEN_CACHE_DIR", str(SHARED_TIKTOKEN_CACHE))
    return env


def run_pytest(where: Path, *args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, dict[str, list]]:
    """``python -m pytest`` inside ``where`` (its own pyproject.toml), with outcomes from JUnit XML."""
    junit = where / "junit.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", f"--junitxml={junit}", *args],
        cwd=where, env=student_env(), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    outcomes: dict[str, list] = {"passed": [], "failed": [], "skipped": []}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = f"{case.get('classname')}::{case.get('name')}"
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            if bad is not None:
                outcomes["failed"].append((name, (bad.get("message") or "") + (bad.text or "")))
            elif case.find("skipped") is not None:
                outcomes["skipped"].append((name, case.find("skipped").get("message")))
            else:
                outcomes["passed"].append(name)
    return proc, outcomes


@prefetched
def exported(prefetch) -> tuple[Path, Path, str]:
    """One ``python -m grader handout OUT --gradescope ZIP``: the student repository, the
    Gradescope autograder zip and what the export printed."""
    out = prefetch.mktemp("export") / "bpe-assignment"
    bundle = prefetch.mktemp("gradescope") / "autograder.zip"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "handout", str(out), "--gradescope", str(bundle)], cwd=ROOT, env=student_env(),
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out, bundle, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def handout(exported) -> Path:
    return exported[0]


def test_handout_has_what_students_need_and_nothing_else(handout):
    files = {p.relative_to(handout).as_posix() for p in handout.rglob("*") if p.is_file()}
    for needed in ("adapters.py", "student/__init__.py", "tests/conftest.py", "tests/__init__.py", "tests/public/__init__.py",
                   "harness/plugin.py", "harness/impl.py", "pyproject.toml", "README.md", "grading.yaml",
                   ".github/workflows/classroom.yml"):
        assert needed in files, f"the handout lacks {needed}"
    assert {f"student/{p.name}" for p in (ROOT / "student").glob("*.py")} <= files
    assert {f"tests/public/{p.name}" for p in (ROOT / "tests" / "public").glob("test_*.py")} <= files
    for forbidden in ("reference/", "mutants/", "tests/hidden/", "fixtures/hidden/"):
        assert not any(f.startswith(forbidden) for f in files), f"the handout contains {forbidden}"
    shipped = sorted(f for f in files if f.split("/")[0] in INSTRUCTOR_SIDE)
    assert not shipped, f"instructor-side modules shipped: {shipped}"
    public = yaml.safe_load((handout / "grading.yaml").read_text())
    assert not {"seed", "isolation", "hidden_visibility", "hidden_output"} & set(public), "grading.yaml keeps grading-only keys"
    config = load_config(ROOT / "grading.yaml")
    assert [(g["name"], g["points"]) for g in public["groups"]] == [(g.name, g.points) for g in config.groups]
    assert ".venv/" in (handout / ".gitignore").read_text().splitlines(), "the README creates .venv there"
    text = "\n".join((handout / f).read_text(encoding="utf-8", errors="replace") for f in files)
    assert "fixtures/hidden" not in text and "tests/hidden" not in text.replace("tests/hidden_", "")
    hidden_names = [p.name for p in (ROOT / "fixtures" / "hidden").iterdir() if p.suffix == ".txt"]
    described = [name for name in hidden_names if name in text]
    assert not described, f"the handout names hidden test files: {described}"


def test_handout_ships_the_grading_lock_its_readme_and_workflow_install(handout):
    assert (handout / "grading.lock").read_bytes() == (ROOT / "grading.lock").read_bytes()
    workflow = (handout / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8")
    assert "pip install -r grading.lock" in workflow
    assert "pip install -r grading.lock" in (handout / "README.md").read_text(encoding="utf-8")


def readme_doctest_command(readme: str) -> list[str]:
    """The README's command for the examples of every docstring (the whole student/ folder)."""
    found = re.findall(r"`(python -m pytest --doctest-modules student/)`", readme)
    assert found, "the handout README gives no `python -m pytest --doctest-modules student/` command"
    return shlex.split(found[0])


def docstrings_with_examples(folder: Path) -> Counter[tuple[str, str]]:
    """(file, name) of every module, class or function docstring in ``folder`` holding a
    ``>>>`` example (one doctest item each), with how often it occurs (methods of different
    classes may share a name)."""
    import ast

    found: Counter[tuple[str, str]] = Counter()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ">>>" in (ast.get_docstring(node) or ""):
                found[path.name, getattr(node, "name", "")] += 1
    return found


def transplanted(handout: Path, solved: Path) -> Path:
    """A copy of the handout whose student/ is the reference wearing the stubs' docstrings."""
    from .transplant import transplant

    shutil.copytree(handout, solved)
    transplant(ROOT / "reference", handout / "student", solved / "student")
    return solved


def run_readme_doctests(solved: Path, tmp: Path) -> subprocess.CompletedProcess:
    """The README's doctest command run in ``solved``, its temporary files in ``tmp``."""
    command = readme_doctest_command((solved / "README.md").read_text(encoding="utf-8"))
    env = {**student_env(), "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, *command[1:]], cwd=solved, env=env, capture_output=True, text=True, timeout=300)


def test_the_readmes_doctest_command_passes_on_the_reference_wearing_the_stubs_docstrings(handout, runs):
    solved, proc = runs["doctest"].result()
    stubs = docstrings_with_examples(handout / "student")
    assert stubs.total() >= 10
    # the stubs' examples, and those of the reference's own helpers (which have no stub)
    run = docstrings_with_examples(solved / "student")
    assert stubs <= run, f"stub examples lost by the transplant: {sorted(stubs - run)}"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{run.total()} passed" in proc.stdout, proc.stdout[-2000:]


def test_readme_lists_the_parts_in_order_and_says_what_each_platform_scores(handout):
    readme = (handout / "README.md").read_text(encoding="utf-8")
    titles = [ln.split("|")[1].strip() for ln in readme.splitlines() if re.match(r"\| (Part \d|Speed)", ln)]
    assert titles and titles[0].startswith("Part 1"), titles
    parts = [int(m.group(1)) for t in titles if (m := re.match(r"Part (\d+)", t))]
    assert parts == sorted(parts) and len(set(titles)) == len(titles), titles
    assert "all or nothing" in readme and "partial credit" in readme and "Gradescope" in readme
    workflow = (handout / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8")
    assert "all or nothing" in workflow


def test_pytest_runs_the_public_tests_part_by_part(handout):
    # `pytest -x` stops in the first part that fails, not in whichever file sorts first
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly"], cwd=handout,
                          env=student_env(), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    files = list(dict.fromkeys(ln.split("::")[0] for ln in proc.stdout.splitlines() if "::" in ln))
    assert files[:2] == ["tests/public/test_warmup.py", "tests/public/test_primitives.py"], files
    assert files.index("tests/public/test_train_bpe.py") < files.index("tests/public/test_tokenizer.py"), files


def test_readme_says_which_later_functions_to_write_first(handout):
    # a module of part N importing from a module of a later part breaks "part by part"
    doc = (handout / "student" / "__init__.py").read_text(encoding="utf-8")
    parts = {name: int(n) for n, files in re.findall(r"Part (\d+)\b[^:\n]*:(.*)", doc) for name in re.findall(r"(\w+)\.py", files)}
    readme = (handout / "README.md").read_text(encoding="utf-8")
    later = []
    for module, part in parts.items():
        source = (handout / "student" / f"{module}.py").read_text(encoding="utf-8")
        for target, names in re.findall(r"^from \.(\w+) import ([\w, ]+)", source, re.M):
            if parts.get(target, 0) > part:
                later += [(module, target, n.strip()) for n in names.split(",")]
    assert later, "expected at least Part 1's use of pretokenize (Part 3)"
    for module, target, name in later:
        line = next((line for line in readme.splitlines() if f"`{name}`" in line and f"student/{module}.py" in line), "")
        assert f"student/{target}.py" in line and "first" in line, f"the README should say to write {name} ({target}.py) before {module}.py"


def test_no_reference_function_body_appears_in_the_handout(handout, tmp_path):
    assert solution_leaks(handout) == []
    # and the check does find a body when there is one
    planted = tmp_path / "planted"
    shutil.copytree(handout / "student", planted)
    source = (ROOT / "reference" / "primitives.py").read_text(encoding="utf-8")
    (planted / "notes.txt").write_text("  ".join(source.split()), encoding="utf-8")  # whitespace changed
    assert any("primitives.py" in leak for leak in solution_leaks(planted))


def with_a_planted_solution(handout: Path, planted: Path) -> Path:
    """The hidden tests' naive trainer planted in a tree of its own, beside the handout's
    ``tests`` package files it imports (the search over the whole handout is the export's)."""
    (planted / "tests").mkdir(parents=True)
    for name in ("__init__.py", "oracles.py"):
        shutil.copyfile(handout / "tests" / name, planted / "tests" / name)
    shutil.copyfile(ROOT / "tests" / "hidden" / "naive.py", planted / "tests" / "planted_naive.py")
    (planted / "tests" / "test_planted_marks.py").write_text(PLANTED_TESTS.format(marks=str(planted.parent / "marks")))
    return planted


# two tests that leave a mark when called: the search calls a plain one (a function of no
# arguments, as bytes_to_unicode), never one under Hypothesis's @given (it can only return None)
PLANTED_TESTS = """
from pathlib import Path

from hypothesis import given, strategies as st

MARKS = Path({marks!r})


@given(st.integers())
def test_under_given(n):
    MARKS.mkdir(exist_ok=True)
    (MARKS / "given").touch()


def test_plain():
    MARKS.mkdir(exist_ok=True)
    (MARKS / "plain").touch()
"""


def test_a_function_search_finds_no_solution_outside_student_and_finds_a_planted_one(exported, runs):
    # the export tried every function and class shipped outside student/ as the student's
    # implementation of each graded function (grader.solution_search) and found none (else it
    # fails); the same search finds the naive trainer of the hidden tests, planted (run with the
    # module's runs, in a tree of its own: searching the whole handout again took 12 s of CPU)
    searched = re.search(r"function search: none of the (\d+) functions and classes shipped outside student/", exported[2])
    assert searched and int(searched.group(1)) > 100, f"the export's search covered too little:\n{exported[2]}"
    _, (tried, found) = runs["function search"].result()
    assert tried > 0, "the search over the planted tree tried nothing"
    where = {f["function"].split(":")[0] for f in found}
    assert where == {"tests/planted_naive.py"}, f"solutions found outside the planted file: {found}"
    assert {"train_bpe", "merge", "split_on_special_tokens"} <= {f["graded"] for f in found}, found


def test_the_function_search_calls_no_test_under_hypothesis(runs):
    planted, _ = runs["function search"].result()
    marks = planted.parent / "marks"
    assert (marks / "plain").exists(), "the search did not call the planted plain test"
    assert not (marks / "given").exists(), "the search ran a Hypothesis test, which can only return None"


LEAVES_A_FOLDER = """
import os
import tempfile


def make_a_folder():  # as the harness's per-process folders are made: in a grading's state folder
    where = os.environ.get("BPE_GRADER_STATE") or tempfile.gettempdir()
    os.mkdir(os.path.join(where, f"made-by-{{os.getpid()}}"))
    os.mkdir({called!r})
"""


def test_the_function_search_leaves_nothing_in_a_gradings_state_folder(tmp_path):
    # the export run where a grading's BPE_GRADER_STATE is set: a candidate making a folder
    # there (and ending with os._exit, removing nothing) would leave it behind
    tree, state, called = tmp_path / "tree", tmp_path / "state", tmp_path / "called"
    tree.mkdir()
    state.mkdir()
    (tree / "maker.py").write_text(LEAVES_A_FOLDER.format(called=str(called)))
    proc = subprocess.run([sys.executable, "-m", "grader.solution_search", str(tree)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=student_env() | {"BPE_GRADER_STATE": str(state)})
    assert proc.returncode == 0 and called.is_dir(), proc.stdout + proc.stderr
    assert not any(state.iterdir()), sorted(os.listdir(state))


def test_the_handouts_docstring_examples_hold_for_the_reference(handout, tmp_path, monkeypatch):
    import tempfile

    from .docexamples import docstring_examples, load_package, run_example

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    examples = docstring_examples(load_package(handout / "student", "handout_student"))
    assert len(examples) >= len(docstring_examples(__import__("student"))), "the handout lost docstring examples"
    failures = [report for failed, report in map(run_example, examples) if failed]
    assert not failures, f"{len(failures)} docstring(s) of the handout fail with the reference:\n" + "\n".join(failures)


def test_the_handout_imports_its_own_grader_not_this_repository(handout):
    proc = subprocess.run(
        [sys.executable, "-c", "import harness.plugin, tests.conftest; print(harness.plugin.__file__)"],
        cwd=handout, env=student_env(), capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve().is_relative_to(handout.resolve()), proc.stdout


STUB_TESTS = ("tests/public/test_primitives.py", "tests/public/test_warmup.py")


def test_public_tests_fail_on_the_stubs_with_not_implemented(runs):
    proc, outcomes = runs["stubs"].result()
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert outcomes["failed"] and not outcomes["passed"], f"passed on the stubs: {outcomes['passed'][:5]}"
    wrong = [name for name, text in outcomes["failed"] if "not implemented" not in text]
    assert not wrong, f"{len(wrong)} failures do not say 'not implemented', first: {wrong[:3]}"


def with_the_reference(handout: Path, solved: Path) -> Path:
    """A copy of the handout with the reference's modules in student/."""
    shutil.copytree(handout, solved)
    for module in (ROOT / "reference").glob("*.py"):
        shutil.copyfile(module, solved / "student" / module.name)
    return solved


def test_every_public_test_passes_with_the_reference_as_student_code(runs):
    proc, outcomes = runs["public on the reference"].result()
    assert not outcomes["failed"], f"{len(outcomes['failed'])} failed, first: {outcomes['failed'][:2]}"
    assert not outcomes["skipped"], f"public tests that skip without reference/ (they use `ref`): {outcomes['skipped'][:5]}"
    assert proc.returncode == 0 and outcomes["passed"], proc.stdout[-3000:] + proc.stderr[-3000:]


def test_classroom_workflow_has_one_step_per_group_with_public_tests(handout):
    workflow = yaml.safe_load((handout / ".github" / "workflows" / "classroom.yml").read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader")]
    public = yaml.safe_load((handout / "grading.yaml").read_text())["groups"]
    expected = [(g["name"], g["points"]) for g in public if g["public_tests"]]
    assert [(s["id"], s["with"]["max-score"]) for s in graders] == expected
    for step in graders:
        for arg in step["with"]["command"].split()[6:]:
            assert (handout / arg.split("::")[0].strip("'")).is_file(), f"{step['id']}: {arg} is not in the handout"
    reporter = steps[-1]
    assert reporter["with"]["runners"].split(",") == [name for name, _ in expected]


# ---- the Gradescope autograder bundle -------------------------------------------------

SMALL_POLICY = """\
version: 1
timeout: 60
groups:
  - name: primitives
    title: "Part 2: pair counts and merge"
    points: 10
    select: ["tests/*/test_primitives*.py::*"]
"""


@pytest.fixture(scope="module")
def bundle(exported) -> Path:
    return exported[1]


def test_gradescope_zip_holds_the_scripts_and_everything_grading_needs(bundle, tmp_path):
    import zipfile

    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
        zf.extractall(tmp_path)
    for needed in ("setup.sh", "run_autograder", "grading.yaml", "adapters.py", "grader/grade.py", "grader/__main__.py",
                   "reference/__init__.py", "tests/conftest.py", "student/__init__.py"):
        assert needed in names, f"the bundle lacks {needed}"
    for tree in ("tests/public/", "tests/hidden/", "fixtures/hidden/"):
        assert any(n.startswith(tree) for n in names), f"the bundle lacks {tree}"
    assert not any("__pycache__" in n for n in names)
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111, "the scripts must be executable"
    for script in ("setup.sh", "run_autograder"):
        check = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
        assert check.returncode == 0, f"{script}: {check.stderr}"
    setup = (tmp_path / "setup.sh").read_text()
    assert "pip install" in setup and "tiktoken" in setup and "hypothesis" in setup
    assert "--results \"$RESULTS/results.json\"" in (tmp_path / "run_autograder").read_text()


def fake_autograder(bundle: Path, root: Path) -> Path:
    """A temporary directory laid out as Gradescope's /autograder after set-up."""
    import zipfile

    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    return root


def run_autograder(root: Path, policy: Path | None = None, extra: str = "") -> dict:
    import json

    env = student_env() | {"AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable, "AUTOGRADER_EXTRA_ARGS": extra,
                           "BPE_GRADER_SPIN": "0"}  # run beside other gradings, as batch does: no busy-polling
    if policy is not None:
        env["AUTOGRADER_CONFIG"] = str(policy)
    proc = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def autograde_the_reference(bundle: Path, tmp: Path) -> dict:
    """The reference solution uploaded as student code, beside a tests/ that must not
    replace the graders' copy, graded on the primitives (public and hidden)."""
    root = fake_autograder(bundle, tmp / "autograder")
    (root / "submission" / "student").mkdir()
    for module in (ROOT / "reference").glob("*.py"):
        shutil.copyfile(module, root / "submission" / "student" / module.name)
    shutil.copyfile(ROOT / "adapters.py", root / "submission" / "adapters.py")
    (root / "submission" / "tests").mkdir()
    (root / "submission" / "tests" / "conftest.py").write_text("raise SystemExit('not the graders tests')\n")
    policy = tmp / "small.yaml"
    policy.write_text(SMALL_POLICY)
    return run_autograder(root, policy, "--tests tests/public/test_primitives.py tests/hidden/test_primitives_hidden.py")


def test_run_autograder_grades_the_submission_into_results_json(runs):
    results = runs["reference"].result()
    assert results["score"] == pytest.approx(10.0), results["output"]
    assert results["tests"] and all(t["status"] == "passed" for t in results["tests"])
    assert any("/hidden/" in t["extra_data"]["test"] for t in results["tests"]), "hidden tests should run in the autograder"
    for t in results["tests"]:
        assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(t)


def autograde_a_cs336_repository(bundle: Path, tmp: Path) -> dict:
    """A correct CS336-layout repository (tests/adapters.py over cs336_basics/) uploaded as it
    is to a CS336 course's bundle (its policy the CS336 one: AUTOGRADER_CONFIG here, as
    `handout --config cs336 --gradescope` names it), graded on two CS336 rules."""
    from .support import build_layout

    root = fake_autograder(bundle, tmp / "autograder")
    shutil.rmtree(root / "submission")
    build_layout("cs336", root / "submission")
    # --no-install-declared: the selftests never reach a package index (test_install_declared installs from a folder)
    return run_autograder(root, Path("cs336"),
                          "--no-install-declared --tests tests/cs336/test_cs336_contract.py::test_hand_worked_merges_with_a_special_token_given")


def test_run_autograder_grades_a_cs336_repository_by_the_cs336_policy(runs):
    results = runs["cs336"].result()
    titles = tuple(g.title for g in load_config(ROOT / "grading-cs336.yaml").groups)
    names = [t["name"] for t in results["tests"]]
    assert names and all(n.startswith(titles) for n in names), f"not graded by the CS336 policy: {names[:3]}"
    assert all(t["status"] == "passed" for t in results["tests"]), results["output"][-2000:]


def autograde_a_wrapped_upload(bundle: Path, tmp: Path) -> dict:
    """A correct submission zipped inside one folder (my_bpe_repo/adapters.py, my_bpe_repo/student/),
    graded by the bundle's policy on test_layouts' selection, which calls every adapter
    function and touches every group but speed. (The whole suite through the autograder, full
    marks for the reference uploaded as a student's package, is CI's locked stage, .ci/run.)"""
    from .test_layouts import SELECTION

    root = fake_autograder(bundle, tmp / "autograder")
    repo = root / "submission" / "my_bpe_repo"
    (repo / "student").mkdir(parents=True)
    for module in (ROOT / "reference").glob("*.py"):
        shutil.copyfile(module, repo / "student" / module.name)
    shutil.copyfile(ROOT / "adapters.py", repo / "adapters.py")
    (repo / "README.md").write_text("my BPE\n")
    return run_autograder(root, None, "--tests " + " ".join(SELECTION))


def test_run_autograder_unwraps_an_upload_inside_one_folder_and_says_so(runs):
    results = runs["wrapped"].result()
    most = sum(t["max_score"] for t in results["tests"])
    assert most > 0 and results["score"] == pytest.approx(most), results["output"][-3000:]
    assert all(t["status"] == "passed" for t in results["tests"]), results["output"][-3000:]
    assert "unwrapped: everything in the submission is inside one folder, my_bpe_repo/" in results["output"]


def autograde_a_bare_module(bundle: Path, tmp: Path) -> dict:
    """An upload of primitives.py alone (no student/ folder), graded on primitives and warm-up."""
    root = fake_autograder(bundle, tmp / "autograder")
    shutil.copyfile(ROOT / "reference" / "primitives.py", root / "submission" / "primitives.py")
    policy = tmp / "small.yaml"
    policy.write_text(SMALL_POLICY + '  - name: warmup\n    points: 5\n    select: ["tests/*/test_warmup*.py::*"]\n')
    return run_autograder(root, policy, "--tests tests/public/test_primitives.py tests/public/test_warmup.py")


def test_run_autograder_accepts_bare_modules_and_scores_missing_ones_zero(runs):
    results = runs["bare module"].result()
    assert results["score"] == pytest.approx(10.0), results["output"]
    assert any(t["status"] == "failed" and "not implemented" in t["output"] for t in results["tests"])


def autograde_a_link_out(bundle: Path, tmp: Path, shape: str) -> dict:
    """An upload whose student code is a link into the autograder's own reference solution."""
    root = fake_autograder(bundle, tmp / "autograder")
    if shape == "student folder":
        shutil.copyfile(ROOT / "adapters.py", root / "submission" / "adapters.py")
        (root / "submission" / "student").symlink_to(root / "source" / "reference", target_is_directory=True)
    else:
        (root / "submission" / "primitives.py").symlink_to(root / "source" / "reference" / "primitives.py")
    policy = tmp / "small.yaml"
    policy.write_text(SMALL_POLICY)
    return run_autograder(root, policy, "--tests tests/public/test_primitives.py::test_merge_accepts_ids_beyond_a_byte "
                                        "tests/public/test_primitives.py::test_pair_counts_keep_the_order_inside_a_pair")


LINK_SHAPES = ["student folder", "bare module"]


@pytest.mark.parametrize("shape", LINK_SHAPES)
def test_run_autograder_never_follows_links_out_of_the_upload(runs, shape):
    results = runs[f"link out: {shape}"].result()
    assert results["tests"] and results["score"] == 0, results["output"]


# ---- the module's runs, two at a time ----------------------------------------------------


@prefetched
def runs(prefetch) -> dict[str, Future]:
    """name -> the (ended) future result of each subprocess run of this module, run two at a
    time, the longest first. The copies of the handout are made here, before any run starts
    (runs write in theirs)."""
    handout, bundle, _ = prefetch.get(exported.setup)
    base = prefetch.mktemp("runs")
    solved = with_the_reference(handout, base / "solved")
    stubs = base / "stubs"
    shutil.copytree(handout, stubs)
    doctest = transplanted(handout, base / "doctest" / "solved")
    planted = with_a_planted_solution(handout, base / "planted")
    jobs = {
        "wrapped": lambda: autograde_a_wrapped_upload(bundle, base / "autograde-wrapped"),
        "cs336": lambda: autograde_a_cs336_repository(bundle, base / "autograde-cs336"),
        "public on the reference": lambda: run_pytest(solved),
        "reference": lambda: autograde_the_reference(bundle, base / "autograde-reference"),
        "bare module": lambda: autograde_a_bare_module(bundle, base / "autograde-bare"),
        **{f"link out: {shape}": (lambda shape=shape: autograde_a_link_out(bundle, base / f"autograde-{shape}", shape))
           for shape in LINK_SHAPES},
        "stubs": lambda: run_pytest(stubs, *STUB_TESTS),
        "function search": lambda: (planted, solution_functions(planted)),
        "doctest": lambda: (doctest, run_readme_doctests(doctest, base / "doctest")),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:  # 2 cores; each run mostly waits on its subprocess
        futures = {name: pool.submit(job) for name, job in jobs.items()}
    return futures
