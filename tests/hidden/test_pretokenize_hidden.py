"""Part 3 (pre-tokenization), hidden cases: hidden fixture files, generated corpora and
random texts, against ``regex.findall`` with tiktoken's GPT-2 pattern (``gpt2_pretokenize``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.diff import assert_items_equal, assert_text_equal
from tests.hidden import HIDDEN_FILES


# Fragments random texts are glued from, without separators, so that every boundary
# between two alternatives of the pattern gets exercised.
FRAGMENTS = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'LL", "'", "\u2019", "'x",
    "don", "DON", "we", "I", "It", "word", "Wörter", "слово", "λέξη", "词", "단어", "كلمة",
    "शब्द", "e\u0301", "\u0301", "ǅ", "ß",
    "0", "42", "2024", "9" * 25, "\u0663\u0664", "\u0967\u0968", "\uff11\uff12", "\u00b2", "\u2167", "\u00bd",
    ".", "!?", "...", ",", "--", "<|endoftext|>", "$", "\u20ac", "@", "(", ")", "\U0001f600",
    "\U0001f44b\U0001f3fd", "\u200d", "\U0001f1eb\U0001f1f7",
    " ", " ", " ", "  ", "   ", "\n", "\n\n", "\r\n", "\t", " \n", "\n ", "\u00a0", "\u3000", "\u2028", "\x0b", "\x85",
]


def glued_text(rng, n: int) -> str:
    return "".join(rng.choice(FRAGMENTS) for _ in range(n))


@pytest.mark.parametrize("name", HIDDEN_FILES)
def test_pretokenize_matches_gpt2_pattern_on_hidden_files(impl, gpt2_pretokenize, fixture_path, name):
    text = fixture_path(name).read_bytes().decode("utf-8")
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@pytest.mark.parametrize("round_", range(10))
def test_pretokenize_matches_gpt2_pattern_on_glued_fragments(impl, gpt2_pretokenize, rng, round_):
    text = glued_text(rng, 400)
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@pytest.mark.parametrize("round_", range(1))
def test_pretokenize_matches_gpt2_pattern_on_generated_corpora(impl, gpt2_pretokenize, rng, round_):
    from fixtures.generate import zipf_corpus

    text = zipf_corpus(20_000, seed=rng.randrange(10**6))
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@pytest.mark.parametrize("round_", range(4))
def test_pretokens_of_glued_fragments_join_back(impl, rng, round_):
    text = glued_text(rng, 300)
    pieces = impl.run_pretokenize(text)
    assert_text_equal("".join(pieces), text, what="the pre-tokens joined")
    assert "" not in pieces, f"empty pre-token at position {pieces.index('')}"


# characters by Unicode category: letters of every kind, marks, numbers of every kind,
# punctuation, symbols, separators and controls
CATEGORY_TEXT = st.text(
    alphabet=st.characters(
        categories=["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd", "Nl", "No", "Pc", "Pd", "Po", "Sm", "So", "Zs", "Zl", "Cc"]
    ),
    max_size=30,
)


@settings(max_examples=150)
@given(CATEGORY_TEXT)
def test_pretokenize_matches_gpt2_pattern_on_every_category(impl, gpt2_pretokenize, text):
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")


@settings(max_examples=100)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join))
def test_pretokenize_matches_gpt2_pattern_on_fragment_lists(impl, gpt2_pretokenize, text):
    assert_items_equal(impl.run_pretokenize(text), gpt2_pretokenize(text), what="pre-token")
