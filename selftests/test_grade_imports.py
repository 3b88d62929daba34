"""The ``grade`` process imports what grading needs and leaves pytest and Hypothesis to the
test run it starts: ``grade`` imported pytest (through the text of a raised exception's header
line) for 0.2 s of CPU a grading, some hundreds of times a CI run."""

from __future__ import annotations

import re
import subprocess
import sys

from harness.childenv import child_env

from .support import ROOT

TEST = "tests/public/test_primitives.py::test_pair_counts_count_every_adjacent_pair"
TEST_RUN_ONLY = ("pytest", "_pytest", "hypothesis")


def test_a_grading_imports_neither_pytest_nor_hypothesis_in_the_grade_process(tmp_path):
    cmd = [sys.executable, "-X", "importtime", "-m", "grader", "grade", "--impl", "reference",
           "--results", str(tmp_path / "results.json"), "--tests", TEST]
    proc = subprocess.run(cmd, cwd=ROOT, env=child_env(drop=("PYTEST*", "BPE_*", "PYTHONPROFILEIMPORTTIME"), keep=("PYTHONPATH",)),
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = set(re.findall(r"^import time:.*\|\s+([\w.]+)$", proc.stderr, re.M))
    assert len(imported) > 50, proc.stderr[-3000:]  # -X importtime told grade's own imports
    assert not {m for m in imported if m.split(".")[0] in TEST_RUN_ONLY}
