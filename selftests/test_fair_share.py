"""Each group's share of the time budget (:mod:`grader.fair_share`): correct but slow code in
one part costs at most that part's own tests, never the tests of the parts after it."""

from __future__ import annotations

import pytest

from grader.fair_share import FLOOR, Shares
from mutants.build import build
from mutants.catalogue import Append, Mutant

from .prefetch import prefetched
from .support import GradeRun, run_grade


def order(shares: Shares, groups: list[str], seconds: dict[str, list[float]]) -> list[str]:
    """The groups of the tests as they run when the tests of each group take ``seconds`` (in
    turn, in their order) and each next test is ``shares.first`` of those left."""
    left, taken, ran = list(groups), {g: 0 for g in seconds}, []
    while left:
        group = left.pop(shares.first(left))
        shares.spend(group, seconds[group][taken[group]])
        taken[group] += 1
        ran.append(group)
    return ran


def test_shares_are_the_groups_shares_of_the_points_at_least_a_floor():
    shares = Shares.of_points({"train": 30, "encode": 69, "beyond": 0, "speed": 1}, budget=500)
    assert shares.seconds == {"train": 150, "encode": 345, "beyond": 500 * FLOOR, "speed": 500 * FLOOR}


def test_a_run_within_every_share_keeps_the_collected_order():
    groups = ["a", "a", "b", "a", "c", "b", "c"]
    shares = Shares.of_points({"a": 1, "b": 1, "c": 1}, budget=90)  # 30 s each
    assert order(shares, groups, {g: [9.0] * 3 for g in "abc"}) == groups


def test_a_group_past_its_share_waits_behind_the_other_groups():
    shares = Shares.of_points({"slow": 1, "then": 1}, budget=100)  # 50 s each
    ran = order(shares, ["slow"] * 5 + ["then"] * 2, {"slow": [40.0, 20.0, 1.0, 1.0, 1.0], "then": [1.0, 1.0]})
    assert ran == ["slow", "slow", "then", "then", "slow", "slow", "slow"]


def test_once_every_group_left_is_past_its_share_the_tests_run_in_the_collected_order():
    shares = Shares.of_points({"a": 1, "b": 1}, budget=20)  # 10 s each
    ran = order(shares, ["a", "a", "b", "b", "a"], {"a": [11.0, 1.0, 1.0], "b": [11.0, 1.0]})
    assert ran == ["a", "b", "a", "b", "a"]


# correct training taking 3 s a call: the training tests alone would take minutes
SLOW_TRAINER = Mutant("variant_slow_trainer", "train_bpe", "correct but slow training", (Append("train.py", '''
_reference_train_bpe = train_bpe


def train_bpe(input_path, vocab_size, special_tokens):
    import time

    time.sleep(3)
    return _reference_train_bpe(input_path, vocab_size, special_tokens)
''', ("train_bpe",)),))

# both groups hidden, so that the slow one runs first (hidden tests run in policy order)
POLICY = """\
version: 1
hidden_visibility: hidden
visibility: hidden
groups:
  - name: training
    points: 50
    select: ["tests/*/test_train_bpe*.py::*"]
  - name: warmup
    points: 50
    select: ["tests/*/test_warmup*.py::*"]
"""
BUDGET = "the grading's time budget of 60 s"  # what a test not reached or not finished says
TESTS = ["tests/public/test_train_bpe.py", "tests/public/test_warmup.py::test_character_round_trip"]


@prefetched
def slow_training_graded(prefetch) -> GradeRun:
    """The slow trainer graded by POLICY under a 60 s budget (3 s a training call: the training
    tests alone would take minutes): mostly sleep, so prefetched beside other set-ups."""
    base = prefetch.mktemp("fair-share")
    (base / "grading.yaml").write_text(POLICY, encoding="utf-8")
    sub = build(SLOW_TRAINER, base / "submission")
    return run_grade(base / "out", submission=sub, config=base / "grading.yaml", tests=TESTS,
                     max_time=60, quiet=True, self_checked=True, side_by_side=True)


@pytest.mark.slow
def test_correct_but_slow_training_costs_only_training_tests_under_the_budget(slow_training_graded):
    run = slow_training_graded
    groups = {"training": [], "warmup": []}
    for test in run.tests:
        groups[test["tags"][0]].append(test)
    training, warmup = groups["training"], groups["warmup"]
    # the budget binds: training tests are not reached, and each that ran passed (or was
    # stopped by the budget: "not finished")
    assert any("not reached" in t.get("output", "") for t in training), run.context()
    assert all(t["score"] == t["max_score"] or BUDGET in t.get("output", "") for t in training), run.context()
    # the warm-up's tests, after the training tests in the collected order, all ran and passed
    assert warmup and all(t["score"] == t["max_score"] for t in warmup), run.context()
    # and the results say why training's later tests came last
    share = "training spent more than its share of the time budget ("
    assert share in run.results.get("output", ""), run.context()
    assert "the other groups' tests ran before the rest of its tests" in run.results["output"], run.context()
