"""Part 3 (pre-tokenization), hidden cases of special-token splitting: random special-token
sets inserted at random places in hidden fixture text, against a naive scan."""

from __future__ import annotations

import pytest

from tests.hidden.naive import split_pieces as split_oracle
from tests.diff import assert_items_equal, assert_text_equal
from tests.conftest import EOT, read_fixture
from tests.hidden import HIDDEN_FILES

ROUNDS = range(8)


def random_specials(rng) -> list[str]:
    """Specials made of regex metacharacters, words and non-ASCII characters, some of them
    prefixes or repeats of others."""
    parts = [".", "*", "+", "?", "|", "(", ")", "[", "]", "{", "}", "^", "$", "\\", "\\d", "<|", "|>",
             "end", "of", "text", "é", "終", "\U0001f642", "-", "/", " "]
    specials = []
    for _ in range(rng.randrange(1, 6)):
        tok = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 5)))
        specials.append(tok)
        if rng.random() < 0.4:
            specials.append(tok + rng.choice(parts))  # a longer special sharing a prefix
        if rng.random() < 0.2:
            specials.append(tok * 2)
    rng.shuffle(specials)
    return specials


def insert_specials(rng, text: str, specials: list[str], n: int) -> str:
    """``text`` with ``n`` specials inserted at random places (sometimes back to back)."""
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(n))
    out, last = [], 0
    for cut in cuts:
        out.append(text[last:cut])
        out.append(rng.choice(specials))
        last = cut
    out.append(text[last:])
    return "".join(out)


@pytest.mark.parametrize("round_", ROUNDS)
def test_random_specials_in_hidden_text_match_the_naive_scan(impl, fixture_path, rng, round_):
    text = read_fixture(fixture_path, HIDDEN_FILES[round_ % 2])
    start = rng.randrange(len(text) // 2)
    specials = random_specials(rng)
    text = insert_specials(rng, text[start : start + 3000], specials, 40)
    assert_items_equal(impl.run_split_on_special_tokens(text, list(specials)), split_oracle(text, specials), what="piece")


@pytest.mark.parametrize("round_", ROUNDS)
def test_substrings_of_the_text_as_specials_match_the_naive_scan(impl, fixture_path, rng, round_):
    # specials cut from the text itself: they occur, overlap and contain multi-byte characters
    text = read_fixture(fixture_path, HIDDEN_FILES[round_ % 2])[:4000]
    specials = []
    for _ in range(rng.randrange(1, 7)):
        i = rng.randrange(len(text) - 8)
        specials.append(text[i : i + rng.randrange(1, 8)])
    assert_items_equal(impl.run_split_on_special_tokens(text, list(specials)), split_oracle(text, specials), what="piece")


@pytest.mark.parametrize("round_", range(4))
def test_random_specials_pieces_join_back_and_none_is_empty(impl, fixture_path, rng, round_):
    text = read_fixture(fixture_path, HIDDEN_FILES[round_ % 2])[:3000]
    specials = random_specials(rng)
    text = insert_specials(rng, text, specials, 30)
    pieces = impl.run_split_on_special_tokens(text, specials)
    assert_text_equal("".join(pieces), text, what="the pieces joined")
    assert "" not in pieces, f"empty piece at position {pieces.index('')}"


@pytest.mark.parametrize("name", HIDDEN_FILES)
def test_hidden_files_split_at_endoftext(impl, fixture_path, name):
    text = read_fixture(fixture_path, name)
    assert_items_equal(impl.run_split_on_special_tokens(text, [EOT]), split_oracle(text, [EOT]), what="piece")


@pytest.mark.parametrize("round_", range(4))
def test_endoftext_repeats_with_a_doubled_special(impl, fixture_path, rng, round_):
    # runs of 1-5 <|endoftext|> with both EOT and EOT+EOT special: pairs first, longest wins
    text = read_fixture(fixture_path, "hidden/stories_hidden.txt")[:3000]
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(15))
    out, last = [], 0
    for cut in cuts:
        out += [text[last:cut], EOT * rng.randrange(1, 6)]
        last = cut
    text = "".join(out) + text[last:]
    specials = [EOT, EOT + EOT] if round_ % 2 else [EOT + EOT, EOT]
    assert_items_equal(impl.run_split_on_special_tokens(text, list(specials)), split_oracle(text, specials), what="piece")


@pytest.mark.parametrize("round_", range(4))
def test_random_text_without_specials_is_one_piece(impl, fixture_path, rng, round_):
    text = read_fixture(fixture_path, HIDDEN_FILES[round_ % 2])
    start = rng.randrange(len(text) - 1)
    text = text[start : start + rng.randrange(1, 2000)]
    assert_items_equal(impl.run_split_on_special_tokens(text, []), [text], what="piece")
