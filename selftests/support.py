"""Helpers for the harness's own tests: run ``python -m grader`` as a user would."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.childenv import child_env

ROOT = Path(__file__).resolve().parent.parent
EOT = "<|endoftext|>"


@dataclass
class GradeRun:
    code: int
    stdout: str
    stderr: str
    results: dict | None
    junit: Path | None = None
    report: Path | None = None  # the grade command's --report, when the run wrote one

    @property
    def tests(self) -> list[dict]:
        return self.results["tests"] if self.results else []

    def group_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for t in self.tests:
            scores[t["tags"][0]] = scores.get(t["tags"][0], 0.0) + t["score"]
        return scores


def run_grader(*args: str, results: Path, timeout: float = 900) -> GradeRun:
    """``python -m grader <args> --results RESULTS`` in a subprocess; the parsed results."""
    env = child_env(keep=("PYTHONPATH",))
    proc = subprocess.run(
        [sys.executable, "-m", "grader", *args, "--results", str(results)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    data = json.loads(results.read_text(encoding="utf-8")) if results.exists() else None
    return GradeRun(proc.returncode, proc.stdout, proc.stderr, data)


def make_submission(dest: Path, from_reference: tuple[str, ...] = ()) -> Path:
    """A checkout laid out like this repo: the stubs, with the named modules taken from
    the reference solution."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    shutil.copytree(ROOT / "student", dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    for module in from_reference:
        shutil.copyfile(ROOT / "reference" / module, dest / "student" / module)
    return dest


def mixed_text(rng: random.Random, n_chars: int) -> str:
    """Lines of ASCII code and prose, non-ASCII words, runs of spaces and special tokens."""
    fixtures = [(ROOT / "fixtures" / name).read_text(encoding="utf-8") for name in ("multilingual.txt", "stories.txt")]
    pieces = ["    def f(x):\n        return x  # é\n", "\n\n\t  ", "  \r\n", "don't  stop", "1234 567", EOT, "<|endo"]
    out, size = [], 0
    while size < n_chars:
        piece = rng.choice(pieces) if rng.random() < 0.7 else rng.choice(fixtures)[rng.randrange(5000) :][: rng.randrange(1, 400)]
        out.append(piece)
        size += len(piece)
    return "".join(out)


LAYOUT_FIXTURES = ROOT / "selftests" / "layouts"
TRAINING_BUG = '''

_correct_train_bpe = train_bpe


def train_bpe(input_path, vocab_size, special_tokens):
    """Wrong on purpose (a selftest fixture): stops one merge early."""
    return _correct_train_bpe(input_path, vocab_size - 1, special_tokens)
'''


def reference_as(dest: Path) -> None:
    """The reference solution's modules copied into the package folder ``dest``, keeping
    the files ``dest`` already has."""
    dest.mkdir(parents=True, exist_ok=True)
    for module in (ROOT / "reference").glob("*.py"):
        if not (dest / module.name).exists():
            shutil.copyfile(module, dest / module.name)


def build_layout(layout: str, dest: Path) -> Path:
    """The reference solution submitted in ``layout``: ``stubs`` (adapters.py + student/),
    ``own`` (adapters.py edited to call mycode/), ``cs336`` (tests/adapters.py over
    cs336_basics/, importing torch; its package reads its own version from its metadata at
    import, its training logs memory with psutil when installed), ``cs336_buggy`` (the same
    with a bug in training), ``cs336:MUTANT`` (the same with a catalogued bug of
    ``mutants/catalogue``, by name)."""
    if layout.startswith("cs336:"):
        from mutants.build import mutated_sources
        from mutants.catalogue import by_name

        build_layout("cs336", dest)
        for name, text in mutated_sources(by_name(layout.partition(":")[2])).items():
            (dest / "cs336_basics" / name).write_text(text, encoding="utf-8")
        return dest
    if layout == "stubs":
        dest.mkdir(parents=True)
        shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
        shutil.copytree(ROOT / "reference", dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    elif layout == "own":
        shutil.copytree(LAYOUT_FIXTURES / "own", dest)
        reference_as(dest / "mycode")
    elif layout in ("cs336", "cs336_buggy"):
        shutil.copytree(LAYOUT_FIXTURES / "cs336", dest)
        reference_as(dest / "cs336_basics")
        with open(dest / "cs336_basics" / "__init__.py", "a") as f:
            f.write("\nfrom . import nn_utils  # another part of the course, imported at import time\n")
        if layout == "cs336_buggy":
            with open(dest / "cs336_basics" / "train.py", "a") as f:
                f.write(TRAINING_BUG)
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return dest


def grade_with_private_tmp(sub: Path, out: Path, *extra: str, tests: list[str] | None = None) -> dict:
    """``python -m grader grade`` on ``sub`` (``tests``: a ``--tests`` selection) with a
    private TMPDIR, run beside other gradings (no busy-polling for replies, as ``batch`` runs
    several at once): return code, output, results, group scores (``[got, most]``), seconds
    and what was left in the TMPDIR."""
    private = out / "tmp"
    private.mkdir(parents=True)
    env = child_env(drop=("PYTEST*", "BPE_*"), keep=("PYTHONPATH",), TMPDIR=str(private), BPE_GRADER_SPIN="0")
    results = out / "results.json"
    cmd = [sys.executable, "-m", "grader", "grade", "--submission", str(sub), "--results", str(results), *extra]
    if tests:
        cmd += ["--tests", *tests]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    data = json.loads(results.read_text()) if results.is_file() else {}
    groups: dict[str, list[float]] = {}
    for test in data.get("tests", []):
        got, most = groups.get(test["tags"][0], [0.0, 0.0])
        groups[test["tags"][0]] = [got + test["score"], most + test["max_score"]]
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr[-3000:], "results": data,
            "groups": groups, "seconds": time.monotonic() - started, "left": sorted(os.listdir(private))}


_RECORDER = """

import functools


def _recorded(name, function, log={log!r}):
    @functools.wraps(function)
    def call(*args, **kwargs):
        with open(log, "a") as f:
            f.write(name + "\\n")
        return function(*args, **kwargs)

    return call


for _name, _function in list(globals().items()):
    if getattr(_function, "__module__", None) == __name__ and callable(_function) and not _name.startswith("_"):
        globals()[_name] = _recorded(_name, _function)
"""


def record_adapter_calls(adapters: Path, log: Path) -> None:
    """Make the adapters file ``adapters`` append the name of each of its functions to
    ``log`` when called (in-process runs only: a sandboxed worker cannot reach ``log``)."""
    with open(adapters, "a", encoding="utf-8") as f:
        f.write(_RECORDER.format(log=str(log)))
