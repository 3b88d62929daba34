"""Part 4 (hidden): differential property test of training against the reference.

test_train_bpe_hidden.py compares small corpora with the naive oracle using two fixed special
tokens; here hypothesis also draws the SPECIAL-TOKEN SET (overlapping specials, specials
with regex metacharacters, specials glued to text) and multi-byte text, and the expected
(vocab, merges) come from the reference (``ref``) on the same file. Failing examples are
shrunk and printed by hypothesis; the plugin's profile is derandomized.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.diff import assert_merges_equal, assert_vocab_equal
from tests.hidden.naive import pretoken_counts

SPECIAL_POOL = ["<|endoftext|>", "<|end|>", "<|end|><|end|>", "[a|b]", "a.b", "ab", " ", "é"]
CHUNKS = ["a", "b", "ab", "ba", "aab", " a", " b", "  ", "\n", "\r\n", "é", "ñu", "1", "22", ".", "!", "<|", "|>",
          "end", "<|end|>", "<|endoftext|>", "[a|b]", "a.b", "axb", "字", "😀"]
corpora = st.lists(st.sampled_from(CHUNKS), min_size=1, max_size=40).map("".join)
special_sets = st.lists(st.sampled_from(SPECIAL_POOL), unique=True, max_size=3)


@settings(max_examples=25)
@given(text=corpora, specials=special_sets, extra=st.integers(0, 30))
def test_training_matches_reference_with_random_special_tokens(impl, ref, corpus_files, text, specials, extra):
    path = corpus_files.write(text)
    vocab_size = 256 + len(specials) + extra
    want_vocab, want_merges = ref.run_train_bpe(str(path), vocab_size, specials)
    vocab, merges = impl.run_train_bpe(str(path), vocab_size, specials)
    assert_merges_equal(merges, want_merges, word_counts=pretoken_counts(text, specials), pretokenize=impl.run_pretokenize)
    assert_vocab_equal(vocab, want_vocab)
