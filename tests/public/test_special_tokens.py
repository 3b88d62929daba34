"""Part 3 (pre-tokenization): cutting text at special tokens.

Expected values are hand-worked (the working is in the comments); on fixture and random
texts the pieces are checked against the rules (``tests.oracles.split_rule_violation``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracles import split_rule_violation
from tests.diff import assert_items_equal, assert_text_equal
from tests.conftest import EOT


CASES = [
    # (text, specials, expected)
    ("a<|endoftext|>b", [EOT], ["a", EOT, "b"]),
    # the text between specials is kept whole, spaces and punctuation included
    ("Hello, world! <|endoftext|>  x\n", [EOT], ["Hello, world! ", EOT, "  x\n"]),
    ("a\n<|endoftext|>\nb", [EOT], ["a\n", EOT, "\nb"]),
    # specials at the start and the end: no empty pieces around them
    ("<|endoftext|>a<|endoftext|>", [EOT], [EOT, "a", EOT]),
    ("<|endoftext|>", [EOT], [EOT]),
    # adjacent repeats: two pieces, nothing between them
    ("<|endoftext|><|endoftext|>", [EOT], [EOT, EOT]),
    ("x<|endoftext|><|endoftext|><|endoftext|>y", [EOT], ["x", EOT, EOT, EOT, "y"]),
    # a special that is a prefix of another: the longest starting at a position wins
    ("ab" + EOT + EOT + "c" + EOT, [EOT, EOT + EOT], ["ab", EOT + EOT, "c", EOT]),
    ("ab" + EOT + EOT + "c" + EOT, [EOT + EOT, EOT], ["ab", EOT + EOT, "c", EOT]),
    # three in a row: the pair first (longest at position 0), then the single one
    (EOT * 3, [EOT, EOT + EOT], [EOT + EOT, EOT]),
    (EOT * 3, [EOT + EOT, EOT], [EOT + EOT, EOT]),
    # an occurrence starting earlier wins over a longer one starting later
    ("abcd", ["ab", "bcd"], ["ab", "cd"]),
    ("abcd", ["bcd", "ab"], ["ab", "cd"]),
    # several different specials
    ("<|a|>x<|b|>y<|a|>", ["<|a|>", "<|b|>"], ["<|a|>", "x", "<|b|>", "y", "<|a|>"]),
    # a special inside what would be a word
    ("concatenate", ["cat"], ["con", "cat", "enate"]),
    # duplicates in the list change nothing
    ("a<|endoftext|>b", [EOT, EOT], ["a", EOT, "b"]),
    # unicode specials
    ("x<|é|>y", ["<|é|>"], ["x", "<|é|>", "y"]),
    ("hi🙂there🙂", ["🙂"], ["hi", "🙂", "there", "🙂"]),
    ("文<|終|>字", ["<|終|>"], ["文", "<|終|>", "字"]),
    # a special that does not occur
    ("just text", [EOT], ["just text"]),
]
CASE_IDS = [
    "middle", "text_kept_whole", "newlines", "start_and_end", "only_special", "adjacent_pair",
    "adjacent_triple", "longest_wins", "longest_wins_reversed_list", "triple_longest_first",
    "triple_longest_first_reversed_list", "leftmost_wins", "leftmost_wins_reversed_list",
    "two_specials", "inside_word", "duplicate_specials", "accented_special", "emoji_special",
    "cjk_special", "absent",
]


@pytest.mark.parametrize("text, specials, expected", CASES, ids=CASE_IDS)
def test_split_on_special_tokens_hand_worked(impl, text, specials, expected):
    assert split_rule_violation(text, specials, expected) is None  # the working agrees with the rules
    assert_items_equal(impl.run_split_on_special_tokens(text, specials), expected, what="piece")


@pytest.mark.parametrize(
    "text, special, expected",
    [
        # "." is not "any character": "axb" stays text
        ("axb a.b", "a.b", ["axb ", "a.b"]),
        # "[x]" is not a character class
        ("x[x]", "[x]", ["x", "[x]"]),
        # "(|)" is not an alternation that matches the empty string
        ("a|b(|)", "(|)", ["a|b", "(|)"]),
        # "|" alone: "a|b" has one occurrence, nothing else matches
        ("a|b", "|", ["a", "|", "b"]),
        # "$^" are not anchors
        ("^$$^", "$^", ["^$", "$^"]),
        # "\d" is a backslash and a d, not a digit
        ("1\\d2", "\\d", ["1", "\\d", "2"]),
        # ".*" and "+?" are not repetitions
        ("abc.*", ".*", ["abc", ".*"]),
        ("a+?b", "+?", ["a", "+?", "b"]),
        # "{2}" is not a quantifier
        ("aa{2}", "{2}", ["aa", "{2}"]),
        # "\n" as a special (a real newline)
        ("a\nb", "\n", ["a", "\n", "b"]),
    ],
    ids=["dot", "class", "alternation", "pipe", "anchors", "backslash_d", "dot_star", "lazy", "braces", "newline"],
)
def test_special_tokens_are_matched_literally(impl, text, special, expected):
    assert split_rule_violation(text, [special], expected) is None
    assert_items_equal(impl.run_split_on_special_tokens(text, [special]), expected, what="piece")


@pytest.mark.parametrize("text", ["no specials here", "<|endoftext|> is plain text now", " \n"], ids=["plain", "eot_text", "whitespace"])
def test_no_special_tokens_give_the_whole_text(impl, text):
    assert_items_equal(impl.run_split_on_special_tokens(text, []), [text], what="piece")


@pytest.mark.parametrize("specials", [[], [EOT]], ids=["no_specials", "eot"])
def test_empty_text_gives_no_pieces(impl, specials):
    assert_items_equal(impl.run_split_on_special_tokens("", specials), [], what="piece")
    # [] is also what code that does nothing returns: an ordinary text must come back whole
    assert_items_equal(impl.run_split_on_special_tokens("a", specials), ["a"], what="piece")


@pytest.mark.parametrize(
    "text, specials",
    [("abc", [""]), ("abc", [EOT, ""]), ("", [""])],
    ids=["only_empty", "empty_among_others", "empty_text"],
)
def test_empty_special_token_is_rejected(impl, text, specials):
    valid = [s for s in specials if s]
    assert_items_equal(impl.run_split_on_special_tokens(text, valid), [text] if text else [], what="piece")  # accepted without ""
    with pytest.raises(ValueError):
        impl.run_split_on_special_tokens(text, specials)


def test_stories_fixture_splits_at_every_endoftext(impl, fixture_path):
    text = fixture_path("stories.txt").read_bytes().decode("utf-8")
    assert text.count(EOT) > 1
    pieces = impl.run_split_on_special_tokens(text, [EOT])
    assert_split_follows_the_rules(text, [EOT], pieces)
    assert pieces.count(EOT) == text.count(EOT), f"{text.count(EOT)} {EOT!r} in the text, {pieces.count(EOT)} among the pieces"


@pytest.mark.parametrize("name", ["stories.txt", "multilingual.txt", "corpus_en.txt"])
def test_pieces_join_back_to_the_fixture_text(impl, fixture_path, name):
    text = fixture_path(name).read_bytes().decode("utf-8")
    pieces = impl.run_split_on_special_tokens(text, [EOT, "\n\n", ". "])
    assert_text_equal("".join(pieces), text, what="the pieces joined")
    assert_split_follows_the_rules(text, [EOT, "\n\n", ". "], pieces)


# Random texts over a small alphabet made of the specials' own characters, so that
# specials occur, overlap, repeat and nearly occur.
SPECIAL_ALPHABET = "<|>ab.*"
SPECIALS = st.lists(st.text(alphabet=SPECIAL_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=4)
TEXTS = st.text(alphabet=SPECIAL_ALPHABET + " \n", max_size=40)


def assert_split_follows_the_rules(text: str, specials: list[str], pieces: list[str]) -> None:
    __tracebackhide__ = True
    broken = split_rule_violation(text, specials, pieces)
    assert broken is None, f"split_on_special_tokens(text, {specials!r}): {broken}"


@settings(max_examples=100)
@given(TEXTS, SPECIALS)
def test_split_takes_the_leftmost_longest_special_on_random_text(impl, text, specials):
    assert_split_follows_the_rules(text, specials, impl.run_split_on_special_tokens(text, list(specials)))


@settings(max_examples=80)
@given(TEXTS, SPECIALS)
def test_pieces_join_back_and_none_is_empty(impl, text, specials):
    pieces = impl.run_split_on_special_tokens(text, specials)
    assert_text_equal("".join(pieces), text, what="the pieces joined")
    assert "" not in pieces, f"empty piece at position {pieces.index('')}"
