"""A test gives points for the rule it names only: the decode tests of new special tokens'
ids once took those ids from the submission's own encode (and first checked that encode gave
each special one new id), so an encode bug of special tokens lost decode's points too. They
now decode the ids the rule of new specials gives (max id + 1 each; <|endoftext|> keeps its
id): an encode bug passes them, a tokenizer that never adds the specials still fails them."""

from __future__ import annotations

import pytest

from selftests.support import pytest_outcomes

FILE = "tests/public/test_tokenizer.py"
TESTS = ("test_decode_of_overlapping_special_id_is_its_text", "test_new_special_ids_decode_to_their_text")


def _outcomes(mutant: str, tmp_path) -> set[str]:
    """The outcomes of the cases of the two decode tests on the catalogued bug ``mutant``."""
    from mutants.build import build
    from mutants.catalogue import by_name

    sub = build(by_name(mutant), tmp_path / "sub")
    got = pytest_outcomes(sub, False, False, tmp_path / "out.xml", [f"{FILE}::{t}" for t in TESTS])
    assert {n.split("::")[1].split("[")[0] for n in got} == set(TESTS), got
    return set(got.values())


@pytest.mark.parametrize("mutant, outcomes", [
    ("encode_specials_shortest_first", {"passed"}),  # encode of overlapping specials: encode's tests
    ("encode_ignores_special_tokens", {"passed"}),  # encode of every special: encode's tests
    ("specials_not_added_to_vocab", {"failed"}),  # no new ids at all: nothing to decode
], ids=["encode_bug_overlapping", "encode_bug_specials", "specials_never_added"])
def test_decode_of_new_special_ids_does_not_depend_on_encode(tmp_path, mutant, outcomes):
    assert _outcomes(mutant, tmp_path) == outcomes
