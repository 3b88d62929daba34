"""Part 5: the Tokenizer gives exactly tiktoken's ids -- GPT-2's, and those of an encoding
built by tiktoken from a prefix of GPT-2's merges (merges applied by rank)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.diff import assert_ids_equal
from tests.conftest import merges_prefix_vocab, tiktoken_for_merges
from tests.conftest import EOT, PUBLIC_FILES


TARGETED = {
    "contractions": "I'm sure you're right: we'll see, they've said he'd go, it's John's, don't.",
    "uppercase_contractions": "DON'T WE'LL I'M It'S",
    "contraction_after_space": "rock 'n' roll 's 're 've",
    "curly_apostrophe": "don’t won’t",
    "digits": "0 12 345 6789 1234567890 3.14159 1,000,000 2024-01-01",
    "digits_glued_to_letters": "abc123def 4ever x86_64",
    "other_scripts_digits": "٣٤٥ ௧௨௩ 一二三 ½ ²",
    "spaces_before_words": "one  two   three    four",
    "space_before_punctuation": "hello ! world ?? end ...",
    "trailing_spaces": "trailing   ",
    "trailing_spaces_then_newline": "trailing   \n",
    "leading_spaces": "   leading",
    "newlines": "a\nb\n\nc\n\n\nd\n",
    "newline_then_spaces": "line\n    indented\n\t\ttabbed",
    "crlf": "windows\r\nline\r\n\r\n",
    "only_newlines": "\n\n\n",
    "unicode_spaces": "a\u00a0b\u2009c\u3000d\u2028e",
    "punctuation_runs": "?!?!... ---- **bold** (parens) [x] {y} <tag/>",
    "code": "def f(x):\n    return x**2  # square\n",
    "urls": "https://example.com/path?q=1&r=two#frag",
    "mixed_case_words": "camelCase PascalCase snake_case SCREAMING",
    "emoji_and_symbols": "I ❤️ 🍕! €5 £3 ¥100 ©®™",
    "accents": "café naïve résumé Ångström façade",
    "cjk": "我喜欢自然语言处理。日本語の文章です。",
    "long_word": "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "long_number": "31415926535897932384626433832795028841971693993751",
    "long_space_run": "a" + " " * 50 + "b",
}


def read_text(path) -> str:
    """The file's text with its line endings as they are (no newline translation)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_ids_match_tiktoken_gpt2_on_fixture_file(impl, gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, fixture_path, name):
    text = read_text(fixture_path(name))
    assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


@pytest.mark.parametrize("text", TARGETED.values(), ids=TARGETED.keys())
def test_ids_match_tiktoken_gpt2_on_targeted_text(impl, gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, text):
    assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


@settings(max_examples=150)
@given(st.text())
def test_ids_match_tiktoken_gpt2_on_any_unicode_text(impl, gpt2_tokenizer, gpt2_encoding, gpt2_vocab_merges, text):
    expected = gpt2_encoding.encode(text, allowed_special={EOT}, disallowed_special=())
    assert_ids_equal(gpt2_tokenizer.encode(text), expected, vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


@settings(max_examples=100)
@given(st.text(alphabet=st.sampled_from(list("ab '1.\n\t!é€ ")), max_size=60))
def test_ids_match_tiktoken_gpt2_on_pretoken_edge_cases(impl, gpt2_tokenizer, gpt2_oracle, gpt2_vocab_merges, text):
    """Few characters, many boundaries: spaces, newlines, apostrophes, digits, punctuation."""
    assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


# ---- a tokenizer with the first 1000 merges of GPT-2 -----------------------------------
# Its vocab is the 256 bytes (id = byte value) then merge k's result as id 256 + k. The
# oracle is a tiktoken Encoding built from the same merges (rank = id), GPT-2's pattern.

PREFIX = 1000


@pytest.fixture(scope="module")
def prefix_merges(gpt2_vocab_merges):
    return gpt2_vocab_merges[1][:PREFIX]


@pytest.fixture(scope="module")
def prefix_oracle(prefix_merges):
    return tiktoken_for_merges(prefix_merges, [EOT])


@pytest.fixture(scope="module")
def prefix_tokenizer(impl, prefix_merges):
    return impl.get_tokenizer(merges_prefix_vocab(prefix_merges), list(prefix_merges), [EOT])  # the oracle's are not its to change


def prefix_expected(tok, oracle, text: str) -> list[int]:
    """tiktoken's ids, with its id of <|endoftext|> replaced by the tokenizer's own."""
    ids = tok.encode(EOT)
    assert len(ids) == 1, f"encode({EOT!r}) should be one id, got {ids}"
    eot = oracle.encode(EOT, allowed_special={EOT})[0]
    return [ids[0] if i == eot else i for i in oracle.encode(text, allowed_special={EOT})]


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_first_1000_gpt2_merges_match_tiktoken_on_fixture_file(impl, prefix_tokenizer, prefix_oracle, prefix_merges, fixture_path, name):
    text = read_text(fixture_path(name))
    expected = prefix_expected(prefix_tokenizer, prefix_oracle, text)
    assert_ids_equal(prefix_tokenizer.encode(text), expected, vocab=merges_prefix_vocab(prefix_merges), text=text,
                     pretokenize=impl.run_pretokenize)


@pytest.mark.parametrize("text", TARGETED.values(), ids=TARGETED.keys())
def test_first_1000_gpt2_merges_match_tiktoken_on_targeted_text(impl, prefix_tokenizer, prefix_oracle, prefix_merges, text):
    expected = prefix_expected(prefix_tokenizer, prefix_oracle, text)
    assert_ids_equal(prefix_tokenizer.encode(text), expected, vocab=merges_prefix_vocab(prefix_merges), text=text,
                     pretokenize=impl.run_pretokenize)


@pytest.mark.parametrize("count", [1, 10, 100])
def test_shorter_merge_prefixes_match_tiktoken(impl, gpt2_vocab_merges, fixture_path, count):
    merges = gpt2_vocab_merges[1][:count]
    vocab = merges_prefix_vocab(merges)
    text = read_text(fixture_path("multilingual.txt"))
    expected = tiktoken_for_merges(merges).encode_ordinary(text)
    assert_ids_equal(impl.get_tokenizer(vocab, merges).encode(text), expected, vocab=vocab, text=text,
                     pretokenize=impl.run_pretokenize)
