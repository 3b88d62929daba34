"""Every public test gives the same outcome in-process (``pytest``) and under isolated grading
(``pytest --isolate``), in either order, for spec-compliant variants of the reference and for
buggy submissions (held-out bugs and catalogued mutants): paths a test makes exist where the
submission runs, and randomized tests draw the same examples for the same seed whatever ran
before (Hypothesis draws no constants from the modules loaded so far)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from mutants.build import build
from mutants.catalogue import Append, Mutant, by_name

from .prefetch import prefetched
from .support import pytest_outcomes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

FILES = ["tests/public/test_train_bpe.py", "tests/public/test_primitives.py",
         "tests/public/test_special_tokens.py", "tests/public/test_tokenizer.py"]

# spec-compliant: checks for a directory first and lets FileNotFoundError through for a
# missing file (the docstring allows either); passed only where the directory the test made
# exists in the worker too
ISDIR_FIRST = Mutant("variant_isdir_first", "train_bpe", "a spec-compliant variant", (Append("train.py", '''
_reference_train_bpe = train_bpe


def train_bpe(input_path, vocab_size, special_tokens):
    import os

    if vocab_size >= 256 + len(dict.fromkeys(special_tokens)) and all(special_tokens):
        if os.path.isdir(input_path):
            raise ValueError(f"{input_path} is a directory, not a training file")
        open(input_path, "rb").close()  # a missing file: FileNotFoundError, as the docstring allows
    return _reference_train_bpe(input_path, vocab_size, special_tokens)
''', ("train_bpe",)),))

# held out of the catalogue: encode drops the text after the first special token
DROPS_AFTER_SPECIAL = Mutant("heldout_drops_text_after_special", "tokenizer", "a held-out bug", (Append("tokenizer.py", '''
_ReferenceTokenizer = Tokenizer


class Tokenizer(_ReferenceTokenizer):
    def __init__(self, vocab, merges, special_tokens=None):
        super().__init__(vocab, merges, special_tokens)
        self._kept = [s for s in (special_tokens or []) if s]

    def encode(self, text):
        ends = [text.find(s) + len(s) for s in self._kept if s in text]
        return super().encode(text[: min(ends)] if ends else text)
''', ("Tokenizer",)),))

SUBMISSIONS = {
    "variant_isdir_first": ISDIR_FIRST,
    "heldout_drops_text_after_special": DROPS_AFTER_SPECIAL,
    **{name: by_name(name) for name in ("merge_right_to_left", "specials_shortest_first", "ties_smallest_pair",
                                         "directory_not_a_value_error")},
}
# (isolated, reversed): in-process in file order, isolated in reverse order
RUNS = [(False, False), (True, True)]


@prefetched
def runs(prefetch) -> dict[str, list[dict[str, str]]]:
    base = prefetch.mktemp("same-outcome")
    dirs = {name: build(m, base / name) for name, m in SUBMISSIONS.items()}
    jobs = {(name, run): (dirs[name], *run, base / f"{name}-{int(run[0])}{int(run[1])}.xml")
            for name in SUBMISSIONS for run in RUNS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        # Hypothesis's draws cannot depend on the modules it loads: the in-process run loads the
        # submission's and the isolated one does not, which this module checks
        futures = {key: pool.submit(pytest_outcomes, *args, FILES) for key, args in jobs.items()}
        return {name: [futures[name, run].result() for run in RUNS] for name in SUBMISSIONS}


@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_every_public_test_has_the_same_outcome_in_process_and_isolated(runs, name):
    local, isolated = runs[name]
    assert set(local) == set(isolated) and len(local) > 100
    differ = sorted(n for n in local if local[n] != isolated[n])
    assert not differ, f"{name}: {len(differ)} tests differ, first: " + ", ".join(
        f"{n} ({local[n]} in-process, {isolated[n]} isolated)" for n in differ[:3])


def test_the_spec_compliant_variant_passes_and_each_bug_fails_something(runs):
    for name, (local, _) in runs.items():
        failed = [n for n, o in local.items() if o == "failed"]
        if name.startswith("variant"):
            assert not failed, f"{name} is spec-compliant but fails {failed[:3]}"
        else:
            assert failed, f"{name} fails no test of {FILES}"
    drops = runs["heldout_drops_text_after_special"][0]
    assert drops["tests.public.test_tokenizer::test_decode_of_encode_is_text_with_special_tokens"] == "failed"


# bugs that change an argument in place: in-process the test's own object changes; isolated,
# the worker's copy does, and the change must come back to the test's object all the same
IN_PLACE = {
    "merge_modifies_input": ["tests/public/test_primitives.py::test_merge_does_not_modify_its_input",
                             "tests/hidden/test_primitives_hidden.py::test_merge_leaves_random_input_unmodified"],
    "tokenizer_modifies_callers_vocab": ["tests/public/test_tokenizer_rules.py::test_callers_vocab_and_merges_are_not_modified"],
}


@prefetched
def in_place_runs(prefetch) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Each of ``IN_PLACE`` on its rule's tests, (in-process, isolated), two runs at a time."""
    base = prefetch.mktemp("in-place")
    dirs = {name: build(by_name(name), base / name) for name in IN_PLACE}
    jobs = [(name, isolate) for name in IN_PLACE for isolate in (False, True)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(jobs, pool.map(lambda job: pytest_outcomes(dirs[job[0]], job[1], False, base / f"{job[0]}-{job[1]}.xml",
                                                            IN_PLACE[job[0]]), jobs)))
    return {name: (done[name, False], done[name, True]) for name in IN_PLACE}


@pytest.mark.parametrize("name", list(IN_PLACE))
def test_a_call_changing_its_argument_fails_the_same_tests_isolated_as_in_process(in_place_runs, name):
    local, isolated = in_place_runs[name]
    assert "failed" in local.values(), f"in-process, {name} should fail its rule's tests: {local}"
    assert isolated == local, f"isolated, {name} gives {isolated}; in-process {local}"
