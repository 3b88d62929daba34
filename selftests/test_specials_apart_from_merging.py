"""A test gives points for the rule it names only: Part 5's special-token tests once compared
every id of their text with tiktoken's, so an encode bug in ORDINARY text (merges applied in
the wrong order, merges across pre-tokens) lost their points too, about 2.6 points a bug
(mutants/COLLATERAL.md, 2026-11-27). They now check their rule apart from the merging
(``tests.diff.assert_pieces_encoded``): each special is its one id in its place, and the ids
between specials spell the text there through GPT-2's vocab. The test of saved and loaded
files compares the loaded tokenizer with the one it was saved from, not with tiktoken.

Seen failing before the change: the merge bugs failed every one of these tests but the
overlapping-specials ones. A check that is lax must still fail code that does nothing: ids
that only spell the specials, none, or text left out."""

from __future__ import annotations

import pytest

from selftests.support import pytest_outcomes
from tests.diff import assert_pieces_encoded

# hand-made: a, b, "ab" (a merge), space; the special "<s>" gets id 10
VOCAB = {0: b"a", 1: b"b", 2: b"ab", 3: b" "}
SPECIALS = {"<s>": 10}
PIECES = [("ab", False), ("<s>", True), (" b", False)]  # the text "ab<s> b"


@pytest.mark.parametrize("ids", [[2, 10, 3, 1], [0, 1, 10, 3, 1]], ids=["merged", "one_id_per_byte"])
def test_any_tokenization_of_the_ordinary_text_passes(ids):
    assert_pieces_encoded(ids, PIECES, specials=SPECIALS, vocab=VOCAB)


WRONG = {
    # what the ids are -> (ids, the piece and what the message names)
    "nothing": ([], ["piece #0", "expected: ordinary text 'ab'", "got:      <end>"]),
    "only_the_special": ([10], ["piece #0", "got:      the special token '<s>' (id 10)"]),
    "special_as_text": ([2, 3, 1], ["piece #0", "spell more than the piece"]),  # no id for "<s>" here: the rest of the text
    "text_left_out": ([2, 10], ["piece #2 ", "character 5", "position 2", "expected: ordinary text ' b'", "got:      <end>"]),
    "text_cut_short": ([2, 10, 3], ["piece #2 ", "spell less than the piece"]),
    "wrong_bytes": ([2, 10, 3, 0], ["piece #2 ", "part from the piece's at byte 1: expected b'b', got b'a'"]),
    "special_inside_text": ([0, 10, 1, 10, 3, 1], ["piece #0", "spell less than the piece"]),
    "unknown_id": ([2, 10, 3, 99], ["piece #2 ", "id 99 is no ordinary token's id"]),
    "extra_special_at_end": ([2, 10, 3, 1, 10], ["piece #3 ", "expected: <end>", "got:      the special token"]),
}


@pytest.mark.parametrize("ids, named", WRONG.values(), ids=WRONG.keys())
def test_ids_that_break_the_rule_or_do_nothing_fail_naming_the_first_piece_that_differs(ids, named):
    with pytest.raises(AssertionError) as err:
        assert_pieces_encoded(ids, PIECES, specials=SPECIALS, vocab=VOCAB)
    message = str(err.value)
    assert all(part in message for part in named), f"the message should name {named}:\n{message}"


def test_an_ordinary_text_with_no_specials_given_fails_on_a_special_id():
    # "<|endoftext|> is ordinary text": the vocab given is the ordinary tokens, without its id
    with pytest.raises(AssertionError, match="id 10 is no ordinary token's id"):
        assert_pieces_encoded([2, 10], [("ab<s>", False)], specials={}, vocab=VOCAB)


PUBLIC, HIDDEN, FILES = "tests/public/test_tokenizer.py", "tests/hidden/test_tokenizer_hidden.py", "tests/public/test_tokenizer_files.py"
TESTS = [
    f"{HIDDEN}::test_random_special_token_sets_are_matched_longest_first",
    f"{PUBLIC}::test_special_token_is_one_id_wherever_it_appears",
    f"{PUBLIC}::test_text_that_only_resembles_a_special_token_is_ordinary",
    f"{PUBLIC}::test_without_special_tokens_endoftext_is_ordinary_text",
    f"{PUBLIC}::test_overlapping_specials_prefer_the_longest_match",
    f"{PUBLIC}::test_special_tokens_with_regex_metacharacters_match_literally",
    f"{PUBLIC}::test_added_specials_leave_ordinary_text_unchanged",
    f"{FILES}::test_loading_saved_files_gives_the_same_ids",
]


def _failed(mutant: str, tmp_path) -> set[str]:
    """The tests of :data:`TESTS` with a failing case on the catalogued bug ``mutant``."""
    from mutants.build import build
    from mutants.catalogue import by_name

    sub = build(by_name(mutant), tmp_path / "sub")
    got = pytest_outcomes(sub, False, False, tmp_path / "out.xml", TESTS)
    assert {n.split("::")[1].split("[")[0] for n in got} == {t.split("::")[1] for t in TESTS}, got
    return {n.split("::")[1].split("[")[0] for n, outcome in got.items() if outcome != "passed"}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["encode_merges_in_sorted_order", "encode_greedy_longest_match", "encode_across_pretokens"])
def test_a_bug_of_merging_ordinary_text_passes_the_special_token_and_files_tests(tmp_path, mutant):
    assert _failed(mutant, tmp_path) == set()


@pytest.mark.slow
def test_encode_ignoring_special_tokens_still_fails_the_tests_of_where_they_go(tmp_path):
    assert _failed("encode_ignores_special_tokens", tmp_path) == {
        "test_random_special_token_sets_are_matched_longest_first", "test_special_token_is_one_id_wherever_it_appears",
        "test_overlapping_specials_prefer_the_longest_match", "test_special_tokens_with_regex_metacharacters_match_literally",
    }
