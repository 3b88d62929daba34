"""Helpers for the harness's own tests: run ``python -m grader`` as a user would."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
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
