"""The collateral table's own-rule test (``mutants.collateral.classify``): a test is a mutant's
own when it checks the function the mutant breaks. Part 5a's whole-function glob ``*tiktoken*``
once made every test naming tiktoken the own rule of every encode and decode bug, so a decode
bug failing an encode-vs-tiktoken test was never reported as collateral (nor an encode bug
failing the decode of tiktoken's ids). Graded results are made up here: no grading runs."""

from __future__ import annotations

import pytest

from mutants.catalogue import by_name
from mutants.collateral import broken_function, checks, classify

ENCODE_VS_TIKTOKEN = "tests/hidden/test_tokenizer_hidden.py::test_random_strings_match_tiktoken"
DECODE_OF_TIKTOKEN = "tests/hidden/test_tokenizer_hidden.py::test_decode_of_tiktoken_ids_of_random_strings_gives_the_strings"
PUBLIC_VS_TIKTOKEN = "tests/public/test_tiktoken_agreement.py::test_ids_match_tiktoken_gpt2_on_fixture_file"
ROUND_TRIP = "tests/public/test_tokenizer.py::test_decode_of_encode_is_the_text"
SPECIAL_DECODE = "tests/public/test_tokenizer.py::test_new_special_ids_decode_to_their_text"
SHORT = {ENCODE_VS_TIKTOKEN: "encode_vs_tiktoken", DECODE_OF_TIKTOKEN: "decode_of_tiktoken_ids",
         PUBLIC_VS_TIKTOKEN: "public_vs_tiktoken", ROUND_TRIP: "round_trip", SPECIAL_DECODE: "special_decode"}


def _lost(test: str, points: float = 0.5) -> dict:
    """A graded results.json holding one Part 5a entry that lost ``points``."""
    entry = {"number": "5.1", "score": 0.0, "max_score": points, "tags": ["tokenizer"], "extra_data": {"test": f"{test}[0]"}}
    return {"tests": [entry]}


@pytest.mark.parametrize("mutant, test, where", [
    ("decode_token_by_token", ENCODE_VS_TIKTOKEN, "collateral"),  # an encode test: not a decode bug's
    ("decode_token_by_token", PUBLIC_VS_TIKTOKEN, "collateral"),
    ("decode_token_by_token", DECODE_OF_TIKTOKEN, "own"),
    ("decode_token_by_token", ROUND_TRIP, "own"),  # decode(encode(text)) checks both
    ("encode_merges_in_sorted_order", ENCODE_VS_TIKTOKEN, "own"),
    ("encode_merges_in_sorted_order", PUBLIC_VS_TIKTOKEN, "own"),
    ("encode_merges_in_sorted_order", DECODE_OF_TIKTOKEN, "collateral"),  # a decode test: not an encode bug's
    ("encode_merges_in_sorted_order", ROUND_TRIP, "own"),
    ("encode_ignores_special_tokens", SPECIAL_DECODE, "collateral"),  # its rule's glob *special*, but decode's test
    ("special_ids_from_vocab_length", SPECIAL_DECODE, "own"),  # the constructor's tables: encode's and decode's
], ids=lambda v: SHORT.get(v, v))
def test_a_test_is_a_mutants_own_only_if_it_checks_the_function_the_mutant_breaks(mutant, test, where):
    got = classify(by_name(mutant), _lost(test))
    other = "collateral" if where == "own" else "own"
    assert (got[where], got[other]) == (0.5, 0.0), f"{mutant} failing {test.split('::')[1]}: expected {where}, got {got}"
    assert bool(got["entries"]) == (where == "collateral"), f"the table names collateral entries only: {got['entries']}"


@pytest.mark.parametrize("test, functions", [
    ("test_random_strings_match_tiktoken", {"encode"}),
    ("test_decode_of_tiktoken_ids_of_random_strings_gives_the_strings", {"decode"}),
    ("test_merges_apply_by_rank_hand_worked", {"encode"}),
    ("test_encode_matches_reference_with_trained_merges", {"encode"}),
    ("test_decode_of_encode_is_the_text_with_trained_merges", {"encode", "decode"}),
    ("test_random_special_token_sets_round_trip", {"encode", "decode"}),
    ("test_gpt2_from_files_decodes_every_byte_token", {"decode"}),
])
def test_the_function_a_test_checks_is_read_from_its_name(test, functions):
    assert checks(test) == functions


def test_only_encode_and_decode_bugs_of_part_5a_are_narrowed_by_function():
    got = {name: broken_function(by_name(name)) for name in (
        "encode_first_mergeable_pair", "decode_strict_utf8", "duplicate_bytes_first_id", "save_ascii_escaped",
        "encode_iterable_strips_newlines", "encode_quadratic_list_concat", "byte_decode_strict")}
    assert got == {"encode_first_mergeable_pair": "encode", "decode_strict_utf8": "decode", "duplicate_bytes_first_id": None,
                   "save_ascii_escaped": None, "encode_iterable_strips_newlines": None,
                   "encode_quadratic_list_concat": None, "byte_decode_strict": None}
