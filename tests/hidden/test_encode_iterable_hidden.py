"""Part 5 (hidden): encode_iterable on randomly chunked hidden fixtures, generated corpora
and randomized special tokens: always the ids of the whole text."""

from __future__ import annotations

import random

import pytest

from harness.probes import ids_digest
from tests.streamdiff import assert_stream_ids_equal, explain_file_mismatch
from tests.hidden.naive import split_keeping_specials
from tests.conftest import EOT, fresh


def read_text(path) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def random_chunks(rng: random.Random, text: str, max_len: int) -> list[str]:
    """``text`` cut at random places (empty chunks included now and then)."""
    chunks, i = [], 0
    while i < len(text):
        n = rng.randint(0, max_len)
        chunks.append(text[i : i + n])
        i += n
    return chunks


@pytest.mark.parametrize("name", ["hidden/mixed.txt", "hidden/stories_hidden.txt"])
@pytest.mark.parametrize("max_len", [3, 40, 400])
def test_encode_iterable_of_randomly_chunked_hidden_fixture(gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, fixture_path, rng, name, max_len):
    text = read_text(fixture_path(name))
    chunks = random_chunks(rng, text, max_len)
    actual = list(gpt2_tokenizer.encode_iterable(iter(chunks)))
    assert_stream_ids_equal(actual, gpt2_oracle(text), chunks, vocab=gpt2_vocab_merges[0], encode=gpt2_tokenizer.encode)


def test_encode_iterable_of_hidden_fixture_lines(gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, fixture_path):
    path = fixture_path("hidden/mixed.txt")
    with open(path, encoding="utf-8", newline="") as lines:
        actual = list(gpt2_tokenizer.encode_iterable(lines))
    with open(path, encoding="utf-8", newline="") as f:
        lines = list(f)
    assert_stream_ids_equal(actual, gpt2_oracle("".join(lines)), lines, vocab=gpt2_vocab_merges[0], encode=gpt2_tokenizer.encode)


def test_encode_iterable_of_chunked_whitespace_and_specials(gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, rng):
    """Text made of whitespace runs, short words and specials, cut into 1-6 character chunks."""
    parts = [" ", "  ", "\n", "\n\n", " \n ", "\t", "\r\n", "a", "bc", "'s", "12", "!", EOT, "<|endo", "ftext|>", "é"]
    for _ in range(20):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 40)))
        chunks = random_chunks(rng, text, 6)
        actual = list(gpt2_tokenizer.encode_iterable(iter(chunks)))
        assert_stream_ids_equal(actual, gpt2_oracle(text), chunks, vocab=gpt2_vocab_merges[0], encode=gpt2_tokenizer.encode)


@pytest.mark.parametrize("case", range(3))
def test_encode_iterable_with_random_specials_split_across_chunks(impl, gpt2_vocab_merges, gpt2_encoding, rng, case):
    vocab, merges = fresh(gpt2_vocab_merges)
    specials = list(dict.fromkeys(["".join(rng.choice("<|>[]*ab ") for _ in range(rng.randint(2, 8))) for _ in range(3)] + [EOT]))
    tok = impl.get_tokenizer(vocab, merges, specials)
    table = {}
    for special in specials:
        got = tok.encode(special)
        assert len(got) == 1, f"special token {special!r} (of {specials}) should encode to one id, got {got}"
        table[special] = got[0]
    for _ in range(15):
        text = "".join(rng.choice([*specials, *(s[:-1] for s in specials), "x", " y", "\n", "  "]) for _ in range(rng.randint(1, 25)))
        expected = []
        for piece, is_special in split_keeping_specials(text, specials):
            expected += [table[piece]] if is_special else gpt2_encoding.encode_ordinary(piece)
        chunks = random_chunks(rng, text, 5)
        actual = list(tok.encode_iterable(iter(chunks)))
        with_specials = {**vocab, **{i: s.encode("utf-8") for s, i in table.items()}}
        assert_stream_ids_equal(actual, expected, chunks, vocab=with_specials, what=f"encode_iterable ids (special tokens {specials})",
                                encode=tok.encode)


def test_encode_iterable_file_probe_matches_tiktoken_on_generated_corpus(gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, tmp_path, rng):
    from fixtures.generate import write_zipf_corpus

    seed = rng.randrange(10**6)
    path = write_zipf_corpus(tmp_path / "zipf.txt", 150_000, seed=seed, vocab_words=5000, doc_sep=EOT)
    got = gpt2_tokenizer.probe("encode_iterable_file", str(path))
    expected = gpt2_oracle(read_text(path))
    if got["count"] != len(expected) or got["digest"] != ids_digest(expected):
        rebuild = f"fixtures.generate.write_zipf_corpus(path, 150_000, seed={seed}, vocab_words=5000, doc_sep={EOT!r})"
        explain_file_mismatch(gpt2_tokenizer, str(path), expected, gpt2_vocab_merges[0], rebuild)
    assert got["count"] == len(expected), f"encode_iterable gave {got['count']} ids, tiktoken {len(expected)}"
    assert got["digest"] == ids_digest(expected), f"encode_iterable gave {got['count']} ids as expected, but not tiktoken's ids"
