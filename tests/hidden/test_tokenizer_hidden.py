"""Part 5 (hidden): the Tokenizer on randomized special-token sets, random strings, random
prefixes of GPT-2's merges and random id lists. Oracles: tiktoken (GPT-2, or an encoding
built from the same merges), a plain left-to-right special-token scanner, and the bytes: the
special-token sets are checked apart from how ordinary text is merged (each special its one
id in its place, the ids between them spelling the text there), tiktoken's tests check that."""

from __future__ import annotations

import random

import pytest

from tests.diff import assert_ids_equal, assert_pieces_encoded, assert_text_equal
from tests.conftest import fresh, merges_prefix_vocab, must_work_first, tiktoken_for_merges
from tests.hidden.naive import split_keeping_specials
from tests.conftest import EOT


def random_text(rng: random.Random, length: int) -> str:
    """Mostly ASCII words and spaces, with whitespace runs, digits, punctuation, accents,
    CJK, emoji, combining marks and arbitrary code points (never surrogates)."""
    out = []
    for _ in range(length):
        x = rng.random()
        if x < 0.45:
            out.append(rng.choice("etaoinshrdlucmfwypvbgkETAOIN"))
        elif x < 0.6:
            out.append(rng.choice("     \n\n\t\r\u00a0\u3000"))
        elif x < 0.7:
            out.append(rng.choice("0123456789"))
        elif x < 0.8:
            out.append(rng.choice("'.,;:!?-\"()[]{}<>|/\\*&^%$#@~`_+="))
        elif x < 0.85:
            out.append(rng.choice("éèüöäñçåøíáôłśœß"))
        elif x < 0.88:
            out.append(chr(rng.randrange(0x4E00, 0x9FFF)))
        elif x < 0.91:
            out.append(chr(rng.randrange(0x1F300, 0x1FAFF)))
        elif x < 0.93:
            out.append(chr(rng.randrange(0x300, 0x370)))
        else:
            c = rng.randrange(0x80, 0x110000)
            out.append(chr(c if not 0xD800 <= c < 0xE000 else c + 0x800))
    return "".join(out)


def random_specials(rng: random.Random) -> list[str]:
    """1-5 special tokens over a small alphabet with regex metacharacters, so that they
    overlap and contain one another; sometimes with <|endoftext|> and its doubles."""
    alphabet = "<|>[]().*+?\\^$ab é{}"
    specials = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 7))) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.5:
        specials.append(EOT)
        if rng.random() < 0.5:
            specials.append(EOT * 2)
    for s in list(specials):
        if rng.random() < 0.3 and len(s) > 2:  # a special containing another one
            specials.append(s + rng.choice(alphabet))
    rng.shuffle(specials)
    return list(dict.fromkeys(specials))


def text_with_specials(rng: random.Random, specials: list[str], pieces: int) -> str:
    parts = []
    for _ in range(pieces):
        x = rng.random()
        if x < 0.35:
            parts.append(rng.choice(specials))
        elif x < 0.5:
            s = rng.choice(specials)
            parts.append(s[: rng.randint(1, len(s))])  # a fragment of a special
        else:
            parts.append(random_text(rng, rng.randint(0, 12)))
    return "".join(parts)


def special_id_table(tok, specials: list[str], vocab: dict[int, bytes]) -> dict[str, int]:
    """Each special's id as the tokenizer encodes it alone: one id; the vocab's own id
    when its bytes are in the vocab, otherwise an id the vocab does not have."""
    ids_of = {token: i for i, token in vocab.items()}
    table = {}
    for special in specials:
        got = tok.encode(special)
        assert len(got) == 1, f"special token {special!r} (of {specials}) should encode to one id, got {got}"
        known = ids_of.get(special.encode("utf-8"))
        if known is not None:
            assert got[0] == known, f"special {special!r} is in the vocab as id {known}, but encodes to {got[0]}"
        else:
            assert got[0] not in vocab, f"special {special!r} is not in the vocab; it got id {got[0]}, which is {vocab[got[0]]!r}"
        table[special] = got[0]
    assert len(set(table.values())) == len(table), f"two special tokens share an id: {table}"
    return table


@pytest.mark.parametrize("case", range(6))
def test_random_special_token_sets_are_matched_longest_first(impl, rng, gpt2_vocab_merges, gpt2_ordinary_vocab, case):
    specials = random_specials(rng)
    tok = impl.get_tokenizer(*fresh(gpt2_vocab_merges), list(specials))  # the expected ids come from these
    table = special_id_table(tok, specials, gpt2_vocab_merges[0])
    for _ in range(30):
        text = text_with_specials(rng, specials, rng.randint(1, 10))
        # a special in the vocab (say "ab") keeps its id, which no ordinary piece needs: the scanner
        # leaves no special's text inside one
        assert_pieces_encoded(tok.encode(text), split_keeping_specials(text, table), specials=table, vocab=gpt2_ordinary_vocab,
                              what=f"ids (special tokens {specials})")


@pytest.mark.parametrize("case", range(3))
def test_random_special_token_sets_round_trip(impl, rng, gpt2_vocab_merges, case):
    specials = random_specials(rng)
    tok = impl.get_tokenizer(*fresh(gpt2_vocab_merges), specials)  # a copy: the specials may be new
    for _ in range(30):
        text = text_with_specials(rng, specials, rng.randint(1, 10))
        assert_text_equal(tok.decode(tok.encode(text)), text, what=f"decode(encode(text)) with specials {specials}")


@pytest.mark.parametrize("case", range(5))
def test_random_strings_match_tiktoken(impl, gpt2_tokenizer, gpt2_encoding, gpt2_vocab_merges, rng, case):
    for _ in range(100):
        text = random_text(rng, rng.randint(0, 80))
        assert_ids_equal(gpt2_tokenizer.encode(text), gpt2_encoding.encode_ordinary(text), vocab=gpt2_vocab_merges[0], text=text,
                         pretokenize=impl.run_pretokenize)


@pytest.mark.parametrize("case", range(5))
def test_decode_of_tiktoken_ids_of_random_strings_gives_the_strings(gpt2_tokenizer, gpt2_encoding, rng, case):
    # tiktoken's ids, not the submission's encode: a wrong encode costs the test above only
    for _ in range(100):
        text = random_text(rng, rng.randint(0, 80))
        ids = gpt2_encoding.encode_ordinary(text)
        assert_text_equal(gpt2_tokenizer.decode(ids), text, what=f"decode({ids}), tiktoken's GPT-2 ids of the text,")


@pytest.mark.parametrize("case", range(3))
def test_random_prefix_of_gpt2_merges_matches_tiktoken(impl, rng, gpt2_vocab_merges, fixture_path, case):
    count = rng.randint(1, len(gpt2_vocab_merges[1]))
    merges = gpt2_vocab_merges[1][:count]
    vocab = merges_prefix_vocab(merges)
    with open(fixture_path("hidden/mixed.txt"), encoding="utf-8", newline="") as f:
        text = f.read()
    expected = tiktoken_for_merges(merges).encode_ordinary(text)
    assert_ids_equal(impl.get_tokenizer(vocab, merges).encode(text), expected, vocab=vocab, text=text,
                     what=f"ids with the first {count} merges", pretokenize=impl.run_pretokenize)


@pytest.mark.parametrize("case", range(3))
def test_decode_of_random_ids_is_their_bytes_decoded_with_replacement(gpt2_tokenizer, gpt2_vocab_merges, rng, case):
    vocab = gpt2_vocab_merges[0]
    for _ in range(50):
        ids = [rng.randrange(len(vocab)) for _ in range(rng.randint(0, 30))]
        expected = b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
        assert_text_equal(gpt2_tokenizer.decode(ids), expected, what=f"decode({ids})")


def test_decode_of_random_single_bytes_is_their_bytes_decoded_with_replacement(gpt2_tokenizer, gpt2_vocab_merges, rng):
    byte_id = {token[0]: i for i, token in gpt2_vocab_merges[0].items() if len(token) == 1}
    for _ in range(100):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))
        expected = data.decode("utf-8", errors="replace")
        assert_text_equal(gpt2_tokenizer.decode([byte_id[b] for b in data]), expected, what=f"decode of the bytes {data!r}")


def test_decode_of_random_unknown_ids_raises_value_error(gpt2_tokenizer, gpt2_vocab_merges, rng):
    size = len(gpt2_vocab_merges[0])
    must_work_first("decode([464]) of GPT-2's tokenizer", lambda: gpt2_tokenizer.decode([464]))
    for _ in range(5):
        ids = [rng.randrange(size) for _ in range(rng.randint(0, 5))]
        ids.insert(rng.randint(0, len(ids)), rng.choice([size + rng.randrange(10**6), -1 - rng.randrange(100)]))
        with pytest.raises(ValueError):
            gpt2_tokenizer.decode(ids)
