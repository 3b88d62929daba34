"""The handout's README tells students that a speed test scores only a correct result: a
training with a wrong tie-break loses the speed group's training points as well as its own
(the hidden speed test says "wrong result, and speed counts only for correct results"),
which the README's sentence on speed tests did not say."""

from __future__ import annotations

from grader.config import load_config
from grader.handout import handout_readme

from .support import ROOT


def test_handout_readme_says_speed_counts_only_for_correct_results():
    readme = " ".join(handout_readme([], load_config(ROOT / "grading.yaml")).split())
    assert "times the reference solution's time plus 1 s on the same input" in readme
    assert "count only for a correct result" in readme
