"""Part 3 (pre-tokenization): GPT-2's regular expression.

The oracle is ``regex.findall`` with the pattern tiktoken itself uses for GPT-2
(``tiktoken.get_encoding("gpt2")._pat_str``, the ``gpt2_pretokenize`` fixture).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.diff import assert_items_equal, assert_text_equal
from tests.conftest import PUBLIC_FILES, anchored


# One case per alternative of the pattern (and per tricky corner of it).
CASES = {
    # '(?:[sdmt]|ll|ve|re): lowercase English contractions, ASCII apostrophe only
    "contraction_s": "it's",
    "contraction_t": "don't",
    "contraction_re": "we're",
    "contraction_ve": "I've",
    "contraction_m": "I'm",
    "contraction_ll": "we'll",
    "contraction_d": "he'd",
    "contractions_in_sentence": "She'd said they're sure it'll rain, and we've got what's left.",
    "contraction_alone": "'s 't 're 've 'm 'll 'd",
    "contraction_chain": "y'all'd've",
    "apostrophe_not_contraction": "'x 'ab rock'n'roll 'tis",
    "uppercase_dont": "DON'T",
    "uppercase_ill": "I'LL",
    "uppercase_mixed": "IT'S WE'VE THEY'RE YOU'D I'M He'S",
    "curly_apostrophe": "it\u2019s don\u2019t we\u2019ll",
    "quotes": "'quoted' \"double\" \u201ccurly\u201d",
    # ' ?\p{L}+: letters with one optional leading space
    "leading_space_words": " hello world",
    "two_spaces_before_word": "  hello",
    "letters_of_many_scripts": "Καλημέρα Привет שלום مرحبا 你好 こんにちは 안녕 สวัสดี",
    "mixed_case": "iPhone McDonald XMLHttpRequest",
    "combining_marks": "cafe\u0301 na\u0308ive a\u0308\u0301 \u0301x",
    "devanagari_signs": "नमस्ते हिन्दी",
    "letter_digit_boundaries": "abc123def 4x4 h2o",
    # ' ?\p{N}+: digits (and other numbers) with one optional leading space
    "ascii_digits": "2024 and 42",
    "long_digit_run": "12345678901234567890123456789 0000000",
    "arabic_indic_digits": "\u0663\u0664\u0665 \u0661\u0662",
    "devanagari_digits": "\u0967\u0968\u0969 \u096a",
    "fullwidth_digits": "\uff11\uff12\uff13 \uff14",
    "other_numbers": "x\u00b2 \u00bd \u216b \u2460",
    "decimal_and_signs": "3.14 -7 +1e10 1,000,000",
    # ' ?[^\s\p{L}\p{N}]+: runs of anything else
    "punctuation_runs": "Wait!!! What?! ... --- ;)",
    "punctuation_after_space": "a ,b ...c",
    "brackets_and_symbols": "(x) [y] {z} <|endoftext|> @#$%^&*",
    "special_token_not_special": "<|endoftext|>",
    "emoji": "hi \U0001f44b\U0001f3fd there \U0001f1eb\U0001f1f7 \U0001f468\u200d\U0001f469\u200d\U0001f467!",
    "currency": "$5 \u20ac10 \u00a3 \u00a5",
    # \s+(?!\S): whitespace not followed by a non-space
    "spaces_between_words": "a   b",
    "two_spaces_between_words": "a  b",
    "trailing_spaces": "a   ",
    "trailing_newline": "end\n",
    "only_spaces": "     ",
    "spaces_before_punctuation": "x   !",
    "spaces_before_digits": "x   12",
    # \s+: other whitespace
    "newline": "a\nb",
    "blank_line": "a\n\nb",
    "blank_line_then_indent": "a\n\n  b",
    "crlf": "line one\r\nline two\r\n",
    "tab": "a\tb",
    "tabs_and_spaces": "\t\tx \t y",
    "newline_then_space_word": "a\n  b",
    "unicode_spaces": "a\u00a0b c\u3000d\u2028e\u2003 f",
    "vertical_whitespace": "a\x0bb\x0cc\x85d",
    # everything at once
    "hand_worked_docstring": "Hello, world! It's 2024.  ok\n",
    "empty": "",
}


@pytest.mark.parametrize("key", list(CASES))
def test_pretokenize_matches_gpt2_pattern(impl, gpt2_pretokenize, key):
    for text in anchored(CASES[key], " a"):
        assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@pytest.mark.parametrize(
    "text, expected",
    [
        # contraction, then " 2024" keeps its space, "  ok": one space alone, one for "ok"
        ("Hello, world! It's 2024.  ok\n", ["Hello", ",", " world", "!", " It", "'s", " 2024", ".", " ", " ok", "\n"]),
        # the run of 3 spaces leaves its last space to the word that follows
        ("a   b", ["a", "  ", " b"]),
        # "\n " is whitespace not followed by a non-space; the last space joins "b"
        ("a\n  b", ["a", "\n ", " b"]),
        # uppercase contractions are not contractions: "'" is punctuation, "T" letters
        ("DON'T", ["DON", "'", "T"]),
        ("I'LL", ["I", "'", "LL"]),
        # the curly apostrophe is punctuation
        ("it\u2019s", ["it", "\u2019", "s"]),
        # special tokens are not special here
        ("<|endoftext|>", ["<|", "endoftext", "|>"]),
        # trailing whitespace is one piece
        ("hi  \n", ["hi", "  \n"]),
        # "\r\n" before a letter: whitespace-not-followed-by-non-space backs off to "\r",
        # then the lone "\n" (followed by "b") is taken by the last alternative, \s+
        ("a\r\nb\nc", ["a", "\r", "\n", "b", "\n", "c"]),
        # digits from other scripts are numbers
        ("x \u0663\u0664", ["x", " \u0663\u0664"]),
    ],
    ids=["docstring", "three_spaces", "newline_spaces", "DONT", "ILL", "curly", "eot", "trailing", "crlf", "arabic_digits"],
)
def test_pretokenize_hand_worked_examples(impl, gpt2_pretokenize, text, expected):
    assert gpt2_pretokenize(text) == expected  # the working agrees with GPT-2's pattern
    assert_items_equal(impl.run_pretokenize(text), expected, what="pre-token")


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_pretokenize_matches_gpt2_pattern_on_fixture_files(impl, gpt2_pretokenize, fixture_path, name):
    text = fixture_path(name).read_bytes().decode("utf-8")
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


# Characters that exercise every alternative: spaces, newlines, apostrophes, contraction
# letters, other letters, digits of several scripts, punctuation, marks and emoji.
BIASED = st.text(
    alphabet=st.sampled_from(
        [" ", " ", " ", "\n", "\n", "\t", "\r", "\u00a0", "'", "'", "\u2019",
         "s", "t", "m", "d", "l", "v", "e", "r", "S", "L", "a", "Z", "\u00e9", "\u0416", "\u4e2d",
         "0", "7", "\u0663", "\u0967", "\uff11", "\u00b2", ".", "!", ",", "-", "<", "|", "\u0301",
         "\U0001f600", "\u200d"]
    ),
    max_size=40,
)


@settings(max_examples=200)
@given(BIASED)
def test_pretokenize_matches_gpt2_pattern_on_random_text(impl, gpt2_pretokenize, text):
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@settings(max_examples=100)
@given(st.text(max_size=40))
def test_pretokenize_matches_gpt2_pattern_on_any_unicode(impl, gpt2_pretokenize, text):
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@settings(max_examples=200)
@given(st.one_of(BIASED, st.text(max_size=40)))
def test_pretokens_join_back_to_the_text(impl, text):
    pieces = impl.run_pretokenize(text)
    assert_text_equal("".join(pieces), text, what="the pre-tokens joined")
    assert "" not in pieces, f"empty pre-token at position {pieces.index('')}"
