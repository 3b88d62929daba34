"""``forbidden_modules`` (issue 13): a submission cannot hand its work to tiktoken or HF tokenizers.

The attack (selftests/attacks/_delegate_to_libraries) implements nothing itself: its encode
is tiktoken's, its training a ``tokenizers`` package's. It is graded from a venv whose
site-packages hold tiktoken and a stand-in ``tokenizers`` (a copy of the reference solution
under that name, so that delegating to it would score full marks; HF's real package may not
be installed here). With the default ``forbidden_modules`` both parts score 0 with a message
naming the module; with ``forbidden_modules: []`` (the control) both score full marks, which
shows the attack works whenever the modules are importable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.config import ConfigError, load_config
from harness.childenv import child_env
from sandbox.imports import ForbiddenFinder, forbidden_files

from .prefetch import prefetched
from .support import ROOT, GradeRun, run_grade
from .venvs import make_venv, site_packages

pytestmark = pytest.mark.timeout(900)  # whole gradings: past the suite's 120 s per test on a loaded machine
ATTACK = Path(__file__).resolve().parent / "attacks" / "_delegate_to_libraries"
TESTS = [
    "tests/public/test_tiktoken_agreement.py::test_ids_match_tiktoken_gpt2_on_targeted_text",
    "tests/public/test_train_bpe.py::test_hand_worked_merges",
]
CONFIG = """\
version: 1
total: 20
timeout: 60
{forbidden}
groups:
  - name: encode
    points: 10
    select: ["tests/public/test_tiktoken_agreement.py::*"]
  - name: train
    points: 10
    select: ["tests/public/test_train_bpe.py::*"]
"""


@prefetched
def delegation(prefetch) -> Path:
    """A venv with a stand-in ``tokenizers`` package, and the attack submission; returns the base."""
    base = prefetch.mktemp("forbidden")
    python = make_venv(base / "venv", ROOT)
    shutil.copytree(ROOT / "reference", site_packages(base / "venv") / "tokenizers", ignore=shutil.ignore_patterns("__pycache__"))
    (site_packages(base / "venv") / "bpeasy.py").write_text("VALUE = 1\n")  # a single-file module
    sub = base / "submission"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    shutil.copyfile(ATTACK / "adapters.py", sub / "adapters.py")
    return base


def grade(base: Path, forbidden: str, name: str, submission: str = "submission", *, isolate: bool | None = None,
          tests: list[str] = TESTS) -> GradeRun:
    """Grade ``base/submission`` (with the venv's grader) on ``tests``, with ``forbidden`` as
    grading.yaml's forbidden_modules line (``isolate=False``: ``--no-isolate``)."""
    config = base / f"{name}.yaml"
    config.write_text(CONFIG.format(forbidden=forbidden))
    # graded beside the other grading: no busy-polling, as batch runs them
    return run_grade(base / name, python=base / "venv" / "bin" / "python", submission=base / submission, config=config,
                     isolate=isolate, tests=tests, side_by_side=True, timeout=600)


GRADINGS = {"default": "", "control": "forbidden_modules: []"}  # name -> grading.yaml's forbidden_modules line


@prefetched
def graded(prefetch) -> dict[str, GradeRun]:
    """The attack graded with the default forbidden modules and with none (the control), at once."""
    base = prefetch.get(delegation.setup)
    with ThreadPoolExecutor(max_workers=len(GRADINGS)) as pool:
        futures = {name: pool.submit(grade, base, line, name) for name, line in GRADINGS.items()}
        return {name: future.result() for name, future in futures.items()}


def by_group(data: dict) -> dict[str, tuple[float, float, list[str]]]:
    out: dict[str, tuple[float, float, list[str]]] = {}
    for t in data["tests"]:
        got, most, texts = out.get(t["tags"][0], (0.0, 0.0, []))
        out[t["tags"][0]] = (got + t["score"], most + t["max_score"], texts + [t.get("output", "")])
    return out


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="graded with a private root directory, which needs root")
def test_delegating_to_forbidden_libraries_scores_zero_naming_the_module(graded):
    run = graded["default"]
    assert run.code == 0, run.stderr
    groups = by_group(run.results)
    for group, module in (("encode", "tiktoken"), ("train", "tokenizers")):
        got, most, texts = groups[group]
        assert most > 0 and got == 0, (group, got, most)
        assert all(f"uses the forbidden module {module}" in text for text in texts), texts[:2]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="graded with a private root directory, which needs root")
def test_the_same_delegation_scores_full_marks_when_nothing_is_forbidden(graded):
    run = graded["control"]
    assert run.code == 0, run.stderr
    for group, (got, most, texts) in by_group(run.results).items():
        assert most > 0 and got == pytest.approx(most), (group, texts[:1])


VENDOR = Path(__file__).resolve().parent / "attacks" / "_vendor_compiled_core"
ROUTES = ("renamed", "vendored")  # tiktoken's compiled core alone under another name; all of tiktoken, hook removed


@prefetched
def vendored(prefetch) -> dict[str, GradeRun]:
    """The attack that brings tiktoken's compiled core along (selftests/attacks/_vendor_compiled_core),
    both ways, graded isolated and, the control, in-process (``--no-isolate``), two at a time."""
    base = prefetch.get(delegation.setup)
    tiktoken = site_packages(base / "venv") / "tiktoken"
    core = next(tiktoken.glob("_tiktoken*.so"))
    for route in ROUTES:
        sub = base / f"vendor-{route}"
        (sub / "student" / "fastbpe").mkdir(parents=True)
        (sub / "student" / "__init__.py").write_text("")
        (sub / "student" / "fastbpe" / "__init__.py").write_text("")
        (sub / "ROUTE").write_text(route)
        shutil.copyfile(VENDOR / "adapters.py", sub / "adapters.py")
        if route == "renamed":
            shutil.copyfile(core, sub / "student" / "fastbpe" / core.name)
        else:
            shutil.copytree(tiktoken, sub / "tiktoken", ignore=shutil.ignore_patterns("__pycache__"))
    runs = {f"{route}{how}": (route, how) for route in ROUTES for how in ("", "-control")}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(grade, base, "", name, f"vendor-{route}", isolate=False if how else None, tests=TESTS[:1])
            for name, (route, how) in runs.items()
        }
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="graded with a private root directory, which needs root")
@pytest.mark.parametrize("route", ROUTES)
def test_compiled_code_brought_along_scores_zero_saying_so(vendored, route):
    """Whether the submission brings a library's compiled core under another name or vendors
    the whole library and takes the import hook away, the kernel will not load its compiled
    code: 0, with the message naming the file. The control (the same submission run
    in-process) scores full marks, so the attack itself works."""
    run = vendored[route]
    assert run.code == 0, run.stderr[-2000:]
    got, most, texts = by_group(run.results)["encode"]
    assert most > 0 and got == 0, (got, most, texts[:1])
    where = "student/fastbpe/_tiktoken" if route == "renamed" else "tiktoken/_tiktoken"
    assert all(f"your code loads compiled code ({where}" in t and "grading allows only Python source" in t for t in texts), texts[:1]
    control = vendored[f"{route}-control"]
    assert control.code == 0, control.stderr[-2000:]
    got, most, texts = by_group(control.results)["encode"]
    assert most > 0 and got == pytest.approx(most), texts[:1]


def test_the_import_hook_refuses_forbidden_names_and_their_submodules():
    hook = ForbiddenFinder(["tiktoken", "tokenizers"])
    for name in ("tiktoken", "tiktoken.load", "tokenizers.models"):
        with pytest.raises(ModuleNotFoundError, match=f"uses the forbidden module {name.partition('.')[0]}"):
            hook.find_spec(name)
    assert hook.find_spec("regex") is None and hook.find_spec("tiktokenizer") is None


def test_forbidden_files_finds_packages_modules_and_extensions(tmp_path):
    for name in ("tiktoken/", "tiktoken-0.7.dist-info/", "rustbpe.cpython-311-x86_64-linux-gnu.so", "bpeasy.py", "regex/", "tiktoken_ext/"):
        (tmp_path / name.rstrip("/")).mkdir() if name.endswith("/") else (tmp_path / name).write_text("")
    found = {Path(p).name for p in forbidden_files(["tiktoken", "rustbpe", "bpeasy"], [str(tmp_path)])}
    assert found == {"tiktoken", "rustbpe.cpython-311-x86_64-linux-gnu.so", "bpeasy.py"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", ("tiktoken", "tokenizers", "sentencepiece", "transformers", "rustbpe", "bpeasy")),
        ("forbidden_modules: []\n", ()),
        ("forbidden_modules: [tiktoken, json, tiktoken]\n", ("tiktoken", "json")),
    ],
)
def test_forbidden_modules_default_and_override(tmp_path, text, expected):
    path = tmp_path / "grading.yaml"
    path.write_text(text + "groups:\n  - {name: a, points: 1, select: ['*']}\n")
    assert load_config(path).forbidden_modules == expected


@pytest.mark.parametrize("value", ["[tiktoken.load]", "[../x]", "[1]", "{a: 1}"])
def test_forbidden_modules_must_be_module_names(tmp_path, value):
    path = tmp_path / "grading.yaml"
    path.write_text(f"forbidden_modules: {value}\ngroups:\n  - {{name: a, points: 1, select: ['*']}}\n")
    with pytest.raises(ConfigError, match=r"grading\.yaml:1: forbidden_modules"):
        load_config(path)


UNHOOK = '''
import os, sys

def run_pretokenize(text):
    """Takes the import hook away, then tries the forbidden module: what the files allow."""
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ForbiddenFinder"]
    try:
        __import__(text)
    except ImportError as err:
        return ["absent", type(err).__name__]
    return ["imported"]
'''


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the private root directory needs root")
def test_forbidden_packages_are_absent_from_the_worker_even_without_the_hook(delegation):
    sub = delegation / "unhook"
    (sub / "student").mkdir(parents=True, exist_ok=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(UNHOOK)
    script = (
        "import json,sys\nfrom sandbox.backend import WorkerBackend\n"
        f"b = WorkerBackend('student', {str(sub)!r})\n"
        "print(json.dumps({m: b.call('run_pretokenize', (m,), False) for m in sys.argv[1:]}))\nb.close()\n"
    )
    env = child_env(keep=("BPE_IMPL", "PYTEST_ADDOPTS"))
    out = subprocess.run([str(delegation / "venv" / "bin" / "python"), "-c", script, "tiktoken", "tokenizers", "bpeasy", "regex"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    absent = ["absent", "ModuleNotFoundError"]
    assert seen == {"tiktoken": absent, "tokenizers": absent, "bpeasy": absent, "regex": ["imported"]}
