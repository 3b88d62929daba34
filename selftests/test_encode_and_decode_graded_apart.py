"""A test gives points for the rule it names only: a wrong decode must not cost the points of
encode's agreement with tiktoken, nor a wrong encode those of decode. The hidden random-strings
tests once checked both in one test (decode of the submission's own ids), so either bug lost
the other rule's points; the decode test now decodes tiktoken's ids."""

from __future__ import annotations

import pytest

from selftests.support import pytest_outcomes

FILE = "tests/hidden/test_tokenizer_hidden.py"
ENCODE = "test_random_strings_match_tiktoken"
DECODE = "test_decode_of_tiktoken_ids_of_random_strings_gives_the_strings"


def _outcomes(mutant: str, tmp_path) -> dict[str, str]:
    """Outcome of each case of the two random-strings tests on the catalogued bug ``mutant``."""
    from mutants.build import build
    from mutants.catalogue import by_name

    sub = build(by_name(mutant), tmp_path / "sub")
    return pytest_outcomes(sub, False, False, tmp_path / "out.xml", [f"{FILE}::{ENCODE}", f"{FILE}::{DECODE}"])


def _of(outcomes: dict[str, str], test: str) -> set[str]:
    return {o for n, o in outcomes.items() if n.split("::")[1].split("[")[0] == test}


@pytest.mark.parametrize("mutant, own, other", [
    ("decode_token_by_token", DECODE, ENCODE),  # decode's bytes of a character split over ids
    ("encode_merges_in_sorted_order", ENCODE, DECODE),  # encode's merges ranked in sorted order
], ids=["decode_bug", "encode_bug"])
def test_a_bug_of_encode_or_decode_fails_its_own_test_and_passes_the_others(tmp_path, mutant, own, other):
    got = _outcomes(mutant, tmp_path)
    assert _of(got, own) == {"failed"}, f"{mutant} should fail every case of {own}: {got}"
    assert _of(got, other) == {"passed"}, f"{mutant} should pass every case of {other}, another rule's test: {got}"
