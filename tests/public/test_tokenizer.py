"""Part 5: the Tokenizer -- round trips, special tokens, merges applied by rank, decode.

Expected ids come from tiktoken's GPT-2 encoding or from hand-worked examples (the working
is in the comments); nothing here depends on the reference solution. The special-token tests
check their rule apart from how ordinary text is merged (tiktoken's tests check that): each
special is its one id in its place, and the ids of the text between specials spell that text
through GPT-2's vocab (``assert_pieces_encoded``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.diff import assert_ids_equal, assert_pieces_encoded, assert_text_equal
from tests.conftest import EOT, PUBLIC_FILES, anchored, fresh, must_work_first

EOT_ID = 50256  # GPT-2's id of <|endoftext|>, also tiktoken's gpt2 eot_token

ROUND_TRIP_TEXTS = {
    "empty": "",
    "one_ascii_char": "a",
    "one_space": " ",
    "one_newline": "\n",
    "one_cjk_char": "字",
    "emoji_zwj_family": "👨\u200d👩\u200d👧\u200d👦",
    "emoji_flags": "🇯🇵🇫🇷🇧🇷",
    "emoji_skin_tones": "👍🏽 👋🏿 🧑🏻\u200d💻",
    "combining_marks": "e\u0301 a\u0308\u0304 Z\u0324\u0354\u0367\u0311a\u0308l\u036e",
    "scripts": "Привет, мир! Γειά σου. مرحبا بالعالم שלום עולם नमस्ते दुनिया สวัสดีชาวโลก 안녕하세요 こんにちは世界",
    "mixed_scripts_no_spaces": "abcАБВαβγ中文العربية123٣٤٥",
    "whitespace_oddities": "a\t\tb\r\n\r\nc\x0b\x0cd\u00a0e\u2028f\u3000g   \n  \n",
    "only_whitespace": " \t \n\n \r\n  ",
    "trailing_spaces": "end   ",
    "controls_and_nul": "\x00\x01\x1b[31mred\x1b[0m\x7f",
    "bom_and_private_use": "\ufeffstart\ue000\U000f0000",
    "highest_code_points": "\U0010ffff\ufffe\uffff\ufffd",
    "bytes_as_latin1": "".join(chr(c) for c in range(0x80, 0x100)),
}


def read_text(path) -> str:
    """The file's text with its line endings as they are (no newline translation)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def gpt2_byte_id(gpt2_vocab: dict[int, bytes], byte: int) -> int:
    """The GPT-2 id of the token made of one byte (looked up in the vocab itself)."""
    return next(i for i, token in gpt2_vocab.items() if token == bytes([byte]))


# ---- round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("text", ROUND_TRIP_TEXTS.values(), ids=ROUND_TRIP_TEXTS.keys())
def test_decode_of_encode_is_the_text(gpt2_tokenizer, text):
    for text in anchored(text):
        assert_text_equal(gpt2_tokenizer.decode(gpt2_tokenizer.encode(text)), text, what="decode(encode(text))")


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_decode_of_encode_is_the_fixture_file(gpt2_tokenizer, fixture_path, name):
    text = read_text(fixture_path(name))
    assert_text_equal(gpt2_tokenizer.decode(gpt2_tokenizer.encode(text)), text, what=f"decode(encode({name}))")


@settings(max_examples=150)
@given(st.text())
def test_decode_of_encode_is_any_unicode_text(gpt2_tokenizer, text):
    assert_text_equal(gpt2_tokenizer.decode(gpt2_tokenizer.encode(text)), text, what="decode(encode(text))")


@settings(max_examples=60)
@given(st.lists(st.one_of(st.text(max_size=20), st.just(EOT)), max_size=8))
def test_decode_of_encode_is_text_with_special_tokens(gpt2_tokenizer, pieces):
    text = "".join(pieces)
    assert_text_equal(gpt2_tokenizer.decode(gpt2_tokenizer.encode(text)), text, what="decode(encode(text))")


def test_encode_of_empty_text_is_empty_list(gpt2_tokenizer):
    assert gpt2_tokenizer.encode("") == []
    assert gpt2_tokenizer.encode("a") == [64]  # GPT-2's id of "a": [] is what code that does nothing returns


# ---- special tokens -------------------------------------------------------------------

# each text as its pieces: the special tokens and the text between them
SPECIAL_PLACEMENTS = {
    "alone": [EOT],
    "at_start": [EOT, "Once upon a time"],
    "at_end": ["The end.", EOT],
    "start_and_end": [EOT, "middle", EOT],
    "adjacent_repeats": [EOT, EOT, EOT],
    "repeats_with_text": ["a", EOT, EOT, "b", EOT],
    "inside_a_word": ["pre", EOT, "fix"],
    "spaces_around": ["word ", EOT, " word"],
    "newlines_around": ["line\n\n", EOT, "\n\nline"],
    "punctuation_around": ["!!", EOT, "??"],
    "after_partial_special": ["<|endoftext|", EOT, "|>"],  # no special starts before character 12
}


@pytest.mark.parametrize("pieces", SPECIAL_PLACEMENTS.values(), ids=SPECIAL_PLACEMENTS.keys())
def test_special_token_is_one_id_wherever_it_appears(gpt2_tokenizer, gpt2_ordinary_vocab, pieces):
    text = "".join(pieces)
    assert_pieces_encoded(gpt2_tokenizer.encode(text), [(p, p == EOT) for p in pieces], specials={EOT: EOT_ID},
                          vocab=gpt2_ordinary_vocab)


def test_special_token_present_in_vocab_keeps_its_vocab_id(gpt2_tokenizer):
    assert gpt2_tokenizer.encode(EOT) == [EOT_ID]


@pytest.mark.parametrize("ids", [[EOT_ID], [EOT_ID, EOT_ID], [464, EOT_ID, 464]], ids=["alone", "twice", "between"])
def test_decode_of_special_id_is_the_special_text(gpt2_tokenizer, gpt2_vocab_merges, ids):
    vocab = gpt2_vocab_merges[0]
    expected = b"".join(vocab[i] for i in ids).decode("utf-8")
    assert_text_equal(gpt2_tokenizer.decode(ids), expected, what=f"decode({ids})")


@pytest.mark.parametrize(
    "text",
    ["<|endoftext|", "<|endoftext", "|endoftext|>", "<|EndOfText|>", "< |endoftext|>", "<<|endoftext>"],
)
def test_text_that_only_resembles_a_special_token_is_ordinary(gpt2_tokenizer, gpt2_ordinary_vocab, text):
    # one piece of ordinary text: no special's id, ids spelling the text
    assert_pieces_encoded(gpt2_tokenizer.encode(text), [(text, False)], specials={EOT: EOT_ID}, vocab=gpt2_ordinary_vocab)


@pytest.mark.parametrize("specials", ["omitted", None, []], ids=["omitted", "None", "empty_list"])
def test_without_special_tokens_endoftext_is_ordinary_text(impl, gpt2_ordinary_vocab, gpt2_vocab_merges, specials):
    vocab, merges = fresh(gpt2_vocab_merges)
    tok = impl.get_tokenizer(vocab, merges) if specials == "omitted" else impl.get_tokenizer(vocab, merges, specials)
    text = "a" + EOT + "b " + EOT
    # one piece of ordinary text: ids spelling it, none of them 50256 (<|endoftext|>'s, no
    # ordinary token: no merge makes it)
    assert_pieces_encoded(tok.encode(text), [(text, False)], specials={}, vocab=gpt2_ordinary_vocab)


# Two special tokens where one contains the other: the longer one must win wherever both
# could match (scanning left to right), in whichever order they were given.
DOUBLE = EOT + EOT


@pytest.fixture(scope="module", params=["short_first", "long_first"])
def overlap_tokenizer(request, impl, gpt2_vocab_merges):
    specials = [EOT, DOUBLE] if request.param == "short_first" else [DOUBLE, EOT]
    return impl.get_tokenizer(*fresh(gpt2_vocab_merges), specials)


def double_id(tok, vocab) -> int:
    ids = tok.encode(DOUBLE)
    assert len(ids) == 1, f"encode({DOUBLE!r}) should be one id (the longer special token), got {ids}"
    assert ids[0] not in vocab, f"the special {DOUBLE!r} is not in the vocab: it needs a new id, got {ids[0]} = {vocab[ids[0]]!r}"
    return ids[0]


def test_longer_overlapping_special_is_its_own_single_new_id(overlap_tokenizer, gpt2_vocab_merges):
    double_id(overlap_tokenizer, gpt2_vocab_merges[0])


@pytest.mark.parametrize(
    "pieces",
    [
        # three in a row: the longest match at the left (the double), then the single
        [DOUBLE, EOT],
        [DOUBLE, DOUBLE],
        ["a", DOUBLE, "b", EOT, "c"],
        [EOT, " ", DOUBLE, "\n", EOT],
    ],
    ids=["triple", "quadruple", "double_then_single", "separated"],
)
def test_overlapping_specials_prefer_the_longest_match(overlap_tokenizer, gpt2_ordinary_vocab, gpt2_vocab_merges, pieces):
    dbl = double_id(overlap_tokenizer, gpt2_vocab_merges[0])
    text = "".join(pieces)
    assert_pieces_encoded(overlap_tokenizer.encode(text), [(p, p in (EOT, DOUBLE)) for p in pieces],
                          specials={EOT: EOT_ID, DOUBLE: dbl}, vocab=gpt2_ordinary_vocab)


def test_decode_of_overlapping_special_id_is_its_text(overlap_tokenizer, gpt2_vocab_merges):
    # the double's id by the rule of new specials (max id + 1; <|endoftext|> keeps 50256), not
    # encode's: a wrong encode costs the encode tests above, not decode's
    dbl = max(gpt2_vocab_merges[0]) + 1
    assert_text_equal(overlap_tokenizer.decode([EOT_ID, dbl]), EOT * 3, what=f"decode([{EOT_ID}, {dbl}]) ({dbl}: the double's new id)")


NEW_SPECIALS = ["<pad>", "<|im_start|>", "[.*+?]", "a.c", "(x|y)", r"\d+", "^$", "ü€"]


@pytest.fixture(scope="module")
def new_specials_tokenizer(impl, gpt2_vocab_merges):
    return impl.get_tokenizer(*fresh(gpt2_vocab_merges), list(NEW_SPECIALS))  # a copy: the tests read NEW_SPECIALS after


def special_ids(tok, vocab) -> dict[str, int]:
    ids = {}
    for special in NEW_SPECIALS:
        got = tok.encode(special)
        assert len(got) == 1, f"special token {special!r} should encode to one id, got {got}"
        assert got[0] not in vocab, f"special {special!r} is missing from the vocab: it needs a new id, got {got[0]} = {vocab[got[0]]!r}"
        ids[special] = got[0]
    return ids


def test_specials_missing_from_vocab_get_distinct_new_ids(new_specials_tokenizer, gpt2_vocab_merges):
    ids = special_ids(new_specials_tokenizer, gpt2_vocab_merges[0])
    assert len(set(ids.values())) == len(ids), f"two special tokens share an id: {ids}"


def test_new_special_ids_decode_to_their_text(new_specials_tokenizer, gpt2_vocab_merges):
    # the new ids by the rule of new specials (max id + 1 each), not encode's: a wrong encode
    # costs the encode tests, not decode's; in any order (the order is another test's rule)
    first = max(gpt2_vocab_merges[0]) + 1
    new_ids = range(first, first + len(NEW_SPECIALS))
    got = {i: new_specials_tokenizer.decode([i]) for i in new_ids}
    missing = [special for special in NEW_SPECIALS if special not in got.values()]
    assert sorted(got.values()) == sorted(NEW_SPECIALS), (
        f"decode of the new ids {first}..{new_ids[-1]} should give the new special tokens {NEW_SPECIALS}, "
        f"one each: none gave {missing}; got {got}"
    )


@pytest.mark.parametrize(
    "pieces",
    [
        ["1", "[.*+?]", "2"],
        ["abc ", "a.c", " abc"],  # "abc" must not match the special "a.c" as a regex would
        ["x|y x y ", "(x|y)", "x"],
        ["123 ", r"\d+", " 456"],
        ["start ", "^$", " end"],
        ["über", "ü€", "€"],
        ["<pa", "<pad>", "d>"],
    ],
    ids=["brackets", "dot", "alternation", "escape", "anchors", "non_ascii", "partial"],
)
def test_special_tokens_with_regex_metacharacters_match_literally(new_specials_tokenizer, gpt2_ordinary_vocab, gpt2_vocab_merges,
                                                                   pieces):
    ids = special_ids(new_specials_tokenizer, gpt2_vocab_merges[0])
    text = "".join(pieces)
    # odd positions are the special tokens
    assert_pieces_encoded(new_specials_tokenizer.encode(text), [(p, k % 2 == 1) for k, p in enumerate(pieces)], specials=ids,
                          vocab=gpt2_ordinary_vocab)


def test_added_specials_leave_ordinary_text_unchanged(new_specials_tokenizer, gpt2_tokenizer, gpt2_ordinary_vocab):
    text = "Plain text, with numbers 12345 and words: it's fine.\n"
    got = new_specials_tokenizer.encode(text)
    # one piece of ordinary text (no special's id, ids spelling it), and the ids the same vocab
    # and merges give without the added specials (with <|endoftext|> only): whether they are
    # tiktoken's is the tiktoken tests' rule
    assert_pieces_encoded(got, [(text, False)], specials={}, vocab=gpt2_ordinary_vocab)
    assert_ids_equal(got, gpt2_tokenizer.encode(text), vocab=gpt2_ordinary_vocab, text=text,
                     what="ids with the added specials and without them")


# ---- merges applied by rank (hand-worked) ---------------------------------------------


def small_vocab(merges: list[tuple[bytes, bytes]]) -> dict[int, bytes]:
    """All 256 bytes under shuffled ids ((7 * b + 3) % 256, a bijection since 7 is odd),
    then the merge results from id 1000 up: ids are deliberately not byte values."""
    vocab = {(7 * b + 3) % 256: bytes([b]) for b in range(256)}
    for k, (a, b) in enumerate(merges):
        vocab[1000 + k] = a + b
    return vocab


HAND_WORKED = {
    # merges b c (rank 0), a b (rank 1), ab c (rank 2); "abc": pairs (a,b)=1, (b,c)=0 ->
    # merge b c -> [a, bc]; (a, bc) is no merge -> stop. Leftmost-first would give [abc].
    "lowest_rank_first_not_leftmost": ([(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], "abc", [b"a", b"bc"]),
    # merges a b (0), ab c (1), b c (2); "abc": (a,b)=0 < (b,c)=2 -> [ab, c] -> (ab,c)=1 -> [abc]
    "chain_of_merges": ([(b"a", b"b"), (b"ab", b"c"), (b"b", b"c")], "abc", [b"abc"]),
    # merge a a; "aaa": both pairs rank 0, merged left to right without overlap -> [aa, a]
    "left_to_right_without_overlap": ([(b"a", b"a")], "aaa", [b"aa", b"a"]),
    # "aaaa" -> [aa, aa] (not [a, aa, a])
    "repeated_pair": ([(b"a", b"a")], "aaaa", [b"aa", b"aa"]),
    # merges a a (0), aa aa (1): "aaaaa" -> [aa, aa, a] -> [aaaa, a]
    "merge_of_merges": ([(b"a", b"a"), (b"aa", b"aa")], "aaaaa", [b"aaaa", b"a"]),
    # merges a space (0), space b (1): "a b" is pre-tokenized as "a", " b"; the pair (a, space)
    # crosses that boundary and never applies -> [a, " b"]
    "no_merge_across_pretokens": ([(b"a", b" "), (b" ", b"b")], "a b", [b"a", b" b"]),
    # same merge in several pre-tokens: "ab ab" -> "ab", " ab" -> [ab], [" ", ab]
    "every_pretoken": ([(b"a", b"b")], "ab ab", [b"ab", b" ", b"ab"]),
    # "é" is c3 a9, "t" is 74; merges a9 74 (0), c3 a9 (1): pairs (c3,a9)=1, (a9,74)=0 ->
    # [c3, a9t]; (c3, a9t) is no merge. Merges work on bytes, not characters.
    "merges_inside_utf8": ([(b"\xa9", b"t"), (b"\xc3", b"\xa9")], "ét", [b"\xc3", b"\xa9t"]),
    # with no merges at all every byte is its own token
    "no_merges": ([], "hé!", [b"h", b"\xc3", b"\xa9", b"!"]),
    # a merge whose pair never occurs changes nothing
    "unused_merge": ([(b"x", b"y")], "yx", [b"y", b"x"]),
}


@pytest.mark.parametrize("merges, text, tokens", HAND_WORKED.values(), ids=HAND_WORKED.keys())
def test_merges_apply_by_rank_hand_worked(impl, merges, text, tokens):
    vocab = small_vocab(merges)
    ids_of = {token: i for i, token in vocab.items()}
    tok = impl.get_tokenizer(vocab, merges)
    assert_ids_equal(tok.encode(text), [ids_of[t] for t in tokens], vocab=vocab, text=text,
                     pretokenize=impl.run_pretokenize)



def test_each_tokenizer_encodes_with_its_own_merges(impl):
    # two tokenizers alive at once, one text: a cache of ids by pre-token shared by every
    # tokenizer (a class attribute, a module's dict) gives the first one's ids to the second
    text, merges = "ab ab abc", [(b"a", b"b")]
    tokens = {"merging a b": [b"ab", b" ", b"ab", b" ", b"ab", b"c"],
              "without merges": [bytes([b]) for b in text.encode("utf-8")]}
    made = {"merging a b": (small_vocab(merges), merges), "without merges": (small_vocab([]), [])}
    # copies: the expected ids are read from the vocabularies kept here
    tokenizers = {name: impl.get_tokenizer(dict(v), list(m)) for name, (v, m) in made.items()}
    for name in ["merging a b", "without merges", "merging a b"]:
        vocab = made[name][0]
        ids_of = {token: i for i, token in vocab.items()}
        assert_ids_equal(tokenizers[name].encode(text), [ids_of[t] for t in tokens[name]], vocab=vocab, text=text,
                         what=f"ids of the tokenizer {name} (two tokenizers made, each used in turn)")


# ---- decode ---------------------------------------------------------------------------


def test_decode_of_empty_list_is_empty_string(gpt2_tokenizer):
    assert gpt2_tokenizer.decode([]) == ""
    assert gpt2_tokenizer.decode([64]) == "a"  # "" is what code that does nothing returns


@pytest.mark.parametrize(
    "byte_values",
    [[0xFF], [0xC3], [0xE2, 0x82], [0xE2, 0x82, ord("a")], [0x80, 0x80], [ord("a"), 0xF0, 0x9F, 0x98], [0xED, 0xA0, 0x80]],
    ids=["ff", "half_of_e_acute", "two_thirds_of_euro", "truncated_then_ascii", "lone_continuations", "truncated_emoji", "surrogate_bytes"],
)
def test_decode_of_invalid_utf8_uses_replacement_character(gpt2_tokenizer, gpt2_vocab_merges, byte_values):
    ids = [gpt2_byte_id(gpt2_vocab_merges[0], b) for b in byte_values]
    expected = bytes(byte_values).decode("utf-8", errors="replace")
    assert_text_equal(gpt2_tokenizer.decode(ids), expected, what=f"decode of the bytes {bytes(byte_values)!r}")


@pytest.mark.parametrize("char", ["é", "€", "😀", "字"])
def test_decode_joins_bytes_across_ids_before_decoding_utf8(gpt2_tokenizer, gpt2_vocab_merges, char):
    ids = [gpt2_byte_id(gpt2_vocab_merges[0], b) for b in char.encode("utf-8")]
    assert_text_equal(gpt2_tokenizer.decode(ids), char, what=f"decode of {char!r} one byte per id")


@pytest.mark.parametrize("ids", [[50257], [-1], [464, 10**9]], ids=["one_past_vocab", "negative", "huge_after_valid"])
def test_decode_of_unknown_id_raises_value_error(gpt2_tokenizer, ids):
    must_work_first("decode([464]) of GPT-2's tokenizer", lambda: gpt2_tokenizer.decode([464]))
    with pytest.raises(ValueError):
        gpt2_tokenizer.decode(ids)
