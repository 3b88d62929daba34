"""Part 5 (hidden): GPT-2 ids identical to tiktoken's on the hidden fixtures and on
generated corpora with <|endoftext|> between documents."""

from __future__ import annotations

import pytest

from tests.diff import assert_ids_equal
from tests.conftest import EOT


def read_text(path) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


@pytest.mark.parametrize("name", ["hidden/mixed.txt", "hidden/stories_hidden.txt"])
def test_ids_match_tiktoken_gpt2_on_hidden_fixture(impl, gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, fixture_path, name):
    text = read_text(fixture_path(name))
    assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


@pytest.mark.parametrize("vocab_words", [300, 20000])
def test_ids_match_tiktoken_gpt2_on_generated_corpus(impl, gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, rng, vocab_words):
    from fixtures.generate import zipf_corpus

    text = zipf_corpus(150_000, seed=rng.randrange(10**6), vocab_words=vocab_words, doc_sep=EOT)
    assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


def test_ids_match_tiktoken_gpt2_on_shuffled_hidden_lines(impl, gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, fixture_path, rng):
    """The hidden fixtures' lines shuffled and joined with random whitespace."""
    lines = read_text(fixture_path("hidden/mixed.txt")).splitlines() + read_text(fixture_path("hidden/stories_hidden.txt")).splitlines()
    rng.shuffle(lines)
    text = "".join(line + rng.choice(["\n", " \n", "\n\n", "  ", "\r\n", "\t", EOT, " " + EOT + " "]) for line in lines[:400])
    assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)
