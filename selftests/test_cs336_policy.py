"""The CS336 grading policy (issue 28): chosen for a CS336-layout repository, selectable by
name, running its own test folder beside ours; its rule table in docs/cs336.md names tests that
exist and that the policy grades for points. (Grading with it: selftests/test_layouts.py.)"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

import pytest

from grader.config import DEFAULT_PATHS, ConfigError, load_config
from grader.policies import policy_path
from harness.impl import ROOT

from .support import build_layout, pytest_outcomes

CS336 = ROOT / "grading-cs336.yaml"


@pytest.mark.parametrize("layout, policy", [("cs336", "grading-cs336.yaml"), ("stubs", "grading.yaml"), ("own", "grading.yaml")])
def test_the_policy_is_chosen_by_the_layout(tmp_path, layout, policy):
    assert policy_path(None, build_layout(layout, tmp_path / "sub")) == ROOT / policy


def test_without_a_submission_the_policy_is_grading_yaml():
    assert policy_path(None, None) == ROOT / "grading.yaml"


@pytest.mark.parametrize("name, policy", [("cs336", "grading-cs336.yaml"), ("default", "grading.yaml")])
def test_a_policy_is_selectable_by_name_whatever_the_layout(tmp_path, name, policy):
    assert policy_path(name, build_layout("stubs", tmp_path / "sub")) == ROOT / policy


def test_an_explicit_policy_file_wins(tmp_path):
    own = tmp_path / "mine.yaml"
    assert policy_path(own, build_layout("cs336", tmp_path / "sub")) == own


def test_grading_yaml_runs_public_and_hidden_and_the_cs336_policy_its_own_tests_too():
    assert load_config(ROOT / "grading.yaml").paths == DEFAULT_PATHS
    policy = load_config(CS336)
    assert policy.paths == (*DEFAULT_PATHS, "tests/cs336")
    assert [g.points for g in policy.groups if g.name == "beyond_cs336"] == [0]
    assert policy.groups[-1].select == ("*",), "beyond_cs336 must come last and take every other test"


@pytest.mark.parametrize("paths", ["[tests/nowhere]", "[/etc]", "[../tests]"])
def test_paths_outside_the_repositorys_tests_are_refused_in_one_line(tmp_path, paths):
    text = (ROOT / "grading.yaml").read_text().replace("groups:\n", f"paths: {paths}\n\ngroups:\n", 1)
    (tmp_path / "g.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"g\.yaml:\d+: paths: .* is not a test folder or file of this repository"):
        load_config(tmp_path / "g.yaml")


def cs336_section() -> str:
    """The CS336 page of the docs (the README links to it), its rule table included."""
    return (ROOT / "docs" / "cs336.md").read_text(encoding="utf-8")


def test_every_test_the_readme_table_names_exists_and_earns_cs336_points():
    policy = load_config(CS336)
    named = set(re.findall(r"`(test_[a-z0-9_]+)", cs336_section()))
    defined: dict[str, tuple[str, set[str]]] = {}  # test function -> (node id, markers)
    for folder in policy.paths:
        for path in (ROOT / folder).glob("test_*.py"):
            text = path.read_text(encoding="utf-8")
            for marks, name in re.findall(r"^((?:@.*\n)*)def (test_[a-z0-9_]+)", text, re.M):
                defined.setdefault(name, (f"{path.relative_to(ROOT).as_posix()}::{name}", set(re.findall(r"@pytest\.mark\.(\w+)", marks))))
    ours = {n for n in named if n in defined}
    assert len(ours) >= 30, sorted(named - ours)
    unknown = {n for n in named - ours if n not in CS336_TESTS and not (
        n.endswith("_") and any(d.startswith(n) for d in [*defined, *CS336_TESTS]))}
    assert not unknown, f"docs/cs336.md's table names tests that exist neither here nor in CS336: {sorted(unknown)}"
    for name in ours:
        nodeid, markers = defined[name]
        group = next(g for g in policy.groups if markers & set(g.markers) or any(
            fnmatch.fnmatchcase(nodeid, p) or fnmatch.fnmatchcase(nodeid + "[x]", p) or p.startswith(nodeid + "?") for p in g.select))
        assert (group.name == "beyond_cs336") == (name in BEYOND_EXAMPLES), f"{name}: in docs/cs336.md's table, graded by {group.name}"


CS336_TESTS = {  # CS336's own tests the README's table names (its tests/test_train_bpe.py and tests/test_tokenizer.py)
    "test_train_bpe", "test_train_bpe_special_tokens", "test_train_bpe_speed", "test_overlapping_special_tokens",
    "test_encode_iterable_memory_usage", "test_encode_iterable_tinystories_matches_tiktoken", "test_roundtrip_empty",
    "test_encode_special_token_trailing_newlines", "test_unicode_string_matches_tiktoken",
}
BEYOND_EXAMPLES = {  # named in docs/cs336.md as beyond CS336 (the second trains without a special token)
    "test_special_token_ids_follow_the_order_given_so_no_hash_seed_changes_them",
    "test_pair_counts_after_a_merge_count_the_pair_between_two_occurrences_once",
}


class _SpecialsInASet:
    """The reference's training, with the special tokens' ids handed out in set order."""

    def __init__(self, order) -> None:
        from harness.impl import Implementation, LocalBackend

        self.reference, self.order = Implementation(LocalBackend("reference")), order

    def run_train_bpe(self, path, vocab_size, specials):
        vocab, merges = self.reference.run_train_bpe(path, vocab_size, specials)
        first = min(i for i, t in vocab.items() if t in {s.encode() for s in specials})
        for k, special in enumerate(self.order(specials)):
            vocab[first + k] = special.encode()
        return vocab, merges


@pytest.mark.parametrize("order, caught", [(lambda s: list(reversed(s)), True), (list, False)], ids=["set_order", "order_given"])
def test_specials_kept_in_a_set_are_named_beyond_cs336(tmp_path, order, caught):
    from tests.cs336.test_cs336_contract import test_special_token_ids_follow_the_order_given_so_no_hash_seed_changes_them as check

    if not caught:
        check(_SpecialsInASet(order), tmp_path)
        return
    with pytest.raises(AssertionError, match="hash seed.*beyond CS336: no points"):
        check(_SpecialsInASet(order), tmp_path)
    assert load_config(CS336).group_of(
        "tests/cs336/test_cs336_contract.py::test_special_token_ids_follow_the_order_given_so_no_hash_seed_changes_them", set()
    ).name == "beyond_cs336"


COLLECTOR = """
import json, os


def pytest_collection_finish(session):
    with open(os.environ["BPE_COLLECTED"], "w") as f:
        json.dump({item.nodeid: sorted(m.name for m in item.iter_markers()) for item in session.items}, f)
"""


def test_every_rule_of_the_cs336_policy_selects_tests_and_every_test_has_a_group(tmp_path):
    import json
    import subprocess
    import sys

    from grader.config import check_selection
    from harness.childenv import child_env

    (tmp_path / "bpe_collector.py").write_text(COLLECTOR)
    out = tmp_path / "collected.json"
    policy = load_config(CS336)
    env = child_env(keep=("PYTHONPATH",), BPE_COLLECTED=str(out))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "bpe_collector", "--impl", "reference",
                           *policy.paths], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    collected = {nodeid: set(markers) for nodeid, markers in json.loads(out.read_text()).items()}
    assigned = check_selection(policy, collected)  # a group matching no test is a ConfigError
    dead = [p for g in policy.groups for p in g.select if not any(fnmatch.fnmatchcase(n, p) for n in collected)]
    assert not dead, f"grading-cs336.yaml patterns matching no test (renamed?): {dead}"
    points = {g.name for g in policy.groups if g.points}
    assert {g.name for g in assigned.values()} >= points


class _NeverStops:
    """The reference, but training goes on merging once no pair is left (pairs of count 0, as
    some CS336 students' trainers do) until the vocabulary has ``vocab_size`` entries."""

    def __init__(self) -> None:
        from harness.impl import Implementation, LocalBackend

        self.reference = Implementation(LocalBackend("reference"))

    def run_pretokenize(self, text):  # what a failed training's message asks of every submission
        return self.reference.run_pretokenize(text)

    def run_train_bpe(self, path, vocab_size, specials):
        vocab, merges = self.reference.run_train_bpe(path, vocab_size, specials)
        for k in range(1, vocab_size - len(vocab) + 1):
            pair = (b"\x00", bytes([k // 256, k % 256]))  # pairs no text here holds: their count is 0
            merges.append(pair)
            vocab[len(vocab)] = pair[0] + pair[1]
        return vocab, merges


def _metachar_cases():
    from tests.public.test_train_bpe import METACHAR_CASES

    return METACHAR_CASES


@pytest.mark.parametrize("case", list(_metachar_cases()))
def test_training_past_the_last_pair_costs_only_the_early_stop_rule(tmp_path, case):
    from tests.public.test_train_bpe import test_special_tokens_are_matched_literally as literal
    from tests.public.test_train_bpe import test_training_stops_early_when_no_pair_is_left as stops_early

    (tmp_path / "literal").mkdir(), (tmp_path / "stop").mkdir()
    literal(_NeverStops(), tmp_path / "literal", *_metachar_cases()[case])  # literal matching is all it checks
    with pytest.raises(AssertionError, match=r"expected 1 merge, got \d+"):
        stops_early(_NeverStops(), tmp_path / "stop")  # the rule the bug breaks names it


class _Relaid:
    """The reference's training with its result changed by ``change(vocab, merges)``."""

    def __init__(self, change) -> None:
        from harness.impl import Implementation, LocalBackend

        self.reference, self.change = Implementation(LocalBackend("reference")), change

    def run_train_bpe(self, path, vocab_size, specials):
        return self.change(*self.reference.run_train_bpe(path, vocab_size, specials))

    def start_afresh(self) -> None:
        self.reference.start_afresh()  # in-process: nothing to start again


def _specials_first(vocab, merges):  # CS336 students' common layout: the special tokens get ids 0, 1, ...
    specials = [t for t in vocab.values() if t.startswith(b"<|")]
    rest = [t for t in vocab.values() if not t.startswith(b"<|")]
    return dict(enumerate(specials + rest)), merges


def _two_merges_swapped(vocab, merges):
    return vocab, [merges[1], merges[0], *merges[2:]]


@pytest.mark.parametrize("change, correct", [(_specials_first, True), (_two_merges_swapped, False)],
                         ids=["own_vocab_layout", "wrong_merge_order"])
def test_the_training_speed_test_judges_correctness_without_the_vocab_layout(change, correct):
    from harness.impl import Implementation, LocalBackend
    from harness.timing import result_difference
    from tests.hidden.test_speed_hidden import test_training_on_corpus_en_correct_and_within_the_speed_limit as speed

    differences = []

    def check_speed(what, run_impl, run_ref, expected=None, hint=""):  # the correctness half of the real fixture
        differences.append(result_difference(run_ref(), run_impl()))

    speed(_Relaid(change), Implementation(LocalBackend("reference")), lambda name: ROOT / "fixtures" / name, check_speed)
    assert (differences[0] is None) == correct, differences


# CS336's handout words it "appending them to the vocabulary": many students' tokenizers add
# missing specials to the very dict they were given. That costs this assignment's own rule
# (the caller's dict stays as it was, beyond CS336) and must cost no test of the specials.
SPECIALS_TESTS = [
    "tests/public/test_tokenizer.py::test_specials_missing_from_vocab_get_distinct_new_ids",
    "tests/public/test_tokenizer.py::test_new_special_ids_decode_to_their_text",
    "tests/public/test_tokenizer.py::test_longer_overlapping_special_is_its_own_single_new_id",
    "tests/hidden/test_tokenizer_hidden.py::test_random_special_token_sets_round_trip",
]
OWN_RULE = "tests/public/test_tokenizer_rules.py::test_callers_vocab_and_merges_are_not_modified"


def test_a_tokenizer_adding_specials_to_the_callers_vocab_loses_only_that_rule(tmp_path):
    from mutants.build import build
    from mutants.catalogue import by_name

    sub = build(by_name("tokenizer_modifies_callers_vocab"), tmp_path / "sub")
    # the rule's own test first, then the specials' tests, in one session (their shared vocab)
    got = pytest_outcomes(sub, True, False, tmp_path / "out.xml", [OWN_RULE, *SPECIALS_TESTS])
    failed = sorted(n for n, o in got.items() if o == "failed")
    assert failed == ["tests.public.test_tokenizer_rules::test_callers_vocab_and_merges_are_not_modified"], failed


def test_the_streaming_tests_and_the_workers_calls_get_the_speed_groups_time():
    # a slow but correct tokenizer loses the speed points (relative to the reference) and no
    # others: CS336's own memory test has no time limit, so ours (1.1 MB streamed in one
    # probe call) may not stop sooner than a speed test would
    policy = load_config(CS336)
    speed = next(g for g in policy.groups if g.name == "speed").timeout
    streaming = next(g for g in policy.groups if g.name == "encode_iterable")
    assert (streaming.timeout or policy.timeout) >= speed and policy.isolation.call_timeout >= speed, (
        streaming.timeout, policy.timeout, policy.isolation.call_timeout, speed)
