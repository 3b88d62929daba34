"""fixtures/generate.py: a corpus depends only on its arguments. The one of ``n`` bytes is
the start of every longer one (cut at a character boundary), its chunks join to it whatever
their size, and its length is ``n`` bytes or up to 3 less."""

from __future__ import annotations

import pytest

from fixtures.generate import iter_zipf_corpus, zipf_corpus

# (bytes, keyword arguments): both document separators, small vocabularies with accented words
CORPORA = [
    (1, {"seed": 0}),
    (2_000, {"seed": 3, "vocab_words": 300}),
    (25_000, {"seed": 4, "vocab_words": 3000, "doc_sep": None}),
    (150_000, {"seed": 8, "vocab_words": 5000}),
]
LONGER = 1_200_000  # over one chunk of the generator (its 1 MiB of characters)


@pytest.mark.parametrize(("n", "kw"), CORPORA)
def test_a_corpus_is_the_start_of_every_longer_one(n, kw):
    text = zipf_corpus(n, **kw).encode("utf-8")
    longer = zipf_corpus(LONGER, **kw).encode("utf-8")
    assert n - 3 <= len(text) <= n
    # the first n bytes of the longer corpus, less only a character they would split
    assert text == longer[:n].decode("utf-8", "ignore").encode("utf-8")


@pytest.mark.parametrize("chunk_chars", [1, 500, 40_000])
@pytest.mark.parametrize(("n", "kw"), CORPORA[1:])
def test_the_chunks_join_to_the_same_corpus_whatever_their_size(n, kw, chunk_chars):
    assert "".join(iter_zipf_corpus(n, chunk_chars=chunk_chars, **kw)) == zipf_corpus(n, **kw)


def test_no_bytes_is_no_text():
    assert zipf_corpus(0) == "" and list(iter_zipf_corpus(0)) == []
