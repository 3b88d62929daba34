"""Part 5 (hidden): differential tests of encode/decode with TRAINED tokenizers.

GPT-2 agreement with tiktoken on random text is covered in test_tiktoken_agreement.py; here
the vocabulary and merges come from the reference's training on a small corpus (so ids are
not GPT-2's, merges are few and ties were involved), and hypothesis draws the text and the
special-token set (overlapping specials, regex metacharacters). Expected ids: the
reference's encode with the same vocab, merges and specials. Failing examples are shrunk
and printed by hypothesis; the plugin's profile is derandomized.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.diff import assert_ids_equal, assert_text_equal

TRAINING_TEXT = (
    "the cat sat on the mat. The cat's hat is a hat!\n"
    "a naïve café owner said: 'we'll see' -- 12 cats, 345 hats; ñandú ñu.\n"
    "aaa aaaa abab baba  spaced   out\n\n\ttabs\r\nwindows\r\n"
) * 3
SPECIAL_POOL = ["<|endoftext|>", "<|end|>", "<|endoftext|><|endoftext|>", "[a|b]", "a.b", "<s>"]
CHUNKS = [
    "the", " cat", " hat", "'s", "'ll", " ", "  ", "\n", "\r\n", "\t", "aaa", "ab", "ba", "12", " 345",
    "é", "ï", "ñ", "!", ".", "<|", "|>", "end", "<|end", "oftext|>", "[a", "|b]", "a.b", "axb", "<s>", "😀", "字",
]
texts = st.lists(st.one_of(st.sampled_from(CHUNKS), st.text(max_size=3)), max_size=25).map("".join)
special_sets = st.lists(st.sampled_from(SPECIAL_POOL), unique=True, max_size=4)


@pytest.fixture(scope="module")
def trained(ref, tmp_path_factory):
    """(vocab, merges) the reference learns from TRAINING_TEXT with 80 merges, no specials."""
    path = tmp_path_factory.mktemp("differential") / "corpus.txt"
    path.write_bytes(TRAINING_TEXT.encode("utf-8"))
    return ref.run_train_bpe(str(path), 256 + 80, [])


@pytest.fixture(scope="module")
def tokenizers(impl, ref, trained):
    """``pair(specials)``: (submission's tokenizer, reference's tokenizer), built once per set."""
    vocab, merges = trained
    cache: dict[tuple[str, ...], tuple] = {}

    def pair(specials: list[str]):
        key = tuple(specials)
        if key not in cache:
            # the submission gets copies: the reference's tokenizer and the expected vocab are made from these
            cache[key] = (impl.get_tokenizer(dict(vocab), list(merges), list(specials)), ref.get_tokenizer(vocab, merges, list(specials)))
        return cache[key]

    return pair


@settings(max_examples=40)
@given(text=texts, specials=special_sets)
def test_encode_matches_reference_with_trained_merges(tokenizers, trained, text, specials):
    mine, theirs = tokenizers(specials)
    expected = theirs.encode(text)
    vocab = {**trained[0], **{max(trained[0]) + 1 + k: s.encode() for k, s in enumerate(specials)}}
    assert_ids_equal(mine.encode(text), expected, vocab=vocab, text=text)


@settings(max_examples=40)
@given(text=texts, specials=special_sets)
def test_decode_of_encode_is_the_text_with_trained_merges(tokenizers, text, specials):
    mine, _ = tokenizers(specials)
    assert_text_equal(mine.decode(mine.encode(text)), text, what="decode(encode(text))")
