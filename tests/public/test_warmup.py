"""Part 1 (warm-up): the character, byte and word tokenizers, and the compression ratio.

Expected values come from Python itself (``ord``/``chr``, ``str.encode``/``bytes.decode``),
from GPT-2's pre-tokenization pattern as tiktoken ships it (the ``gpt2_pretokenize``
fixture), and from hand-worked examples.
"""

from __future__ import annotations

import pytest

from tests.diff import assert_ids_equal, assert_text_equal, assert_word_ids_equal
from tests.conftest import PUBLIC_FILES, anchored, must_work_first, ratio_must_work_first, read_fixture

UNK = "<unk>"

# Short texts covering ASCII, Latin-1, other scripts, emoji (with modifiers, flags and
# zero-width joiners), combining marks, control characters and the extremes of Unicode.
TEXTS = {
    "empty": "",
    "ascii": "Hello, world! It's 2024.\n",
    "latin1": "café déjà vu, naïve façade",
    "euro": "hé€",
    "greek": "Καλημέρα κόσμε",
    "cyrillic": "Привет, мир",
    "cjk": "你好，世界。日本語のテキスト",
    "arabic": "مرحبا بالعالم ٣٤٥",
    "devanagari": "नमस्ते दुनिया १२३",
    "hangul": "안녕하세요",
    "emoji": "hi 👋🏽 🇫🇷 👨‍👩‍👧 😀!",
    "combining": "e\u0301 a\u0308\u0301 n\u0303",
    "controls": "\x00\t\r\n\x7f\x1b",
    "whitespace": "\u00a0\u3000\u2028 \u200b",
    "extremes": "\x00\uffff\U00010000\U0010ffff",
}
TEXT_IDS = list(TEXTS)
NONEMPTY_IDS = [k for k in TEXTS if TEXTS[k]]


# ---- character tokenizer ---------------------------------------------------------------


@pytest.mark.parametrize("key", TEXT_IDS)
def test_character_ids_are_code_points(impl, key):
    tok = impl.get_character_tokenizer()
    for text in anchored(TEXTS[key]):
        assert_ids_equal(tok.encode(text), [ord(ch) for ch in text], text=text)


@pytest.mark.parametrize("key", TEXT_IDS)
def test_character_decode_is_chr_of_each_id(impl, key):
    tok = impl.get_character_tokenizer()
    for text in anchored(TEXTS[key]):
        assert_text_equal(tok.decode([ord(ch) for ch in text]), text, what="decoded text")


@pytest.mark.parametrize("key", TEXT_IDS)
def test_character_round_trip(impl, key):
    tok = impl.get_character_tokenizer()
    for text in anchored(TEXTS[key]):
        assert_text_equal(tok.decode(tok.encode(text)), text, what="decode(encode(text))")


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_character_round_trip_on_fixture_files(impl, fixture_path, name):
    text = read_fixture(fixture_path, name)
    tok = impl.get_character_tokenizer()
    ids = tok.encode(text)
    assert_ids_equal(ids, [ord(ch) for ch in text], text=text)
    assert_text_equal(tok.decode(ids), text, what="decode(encode(text))")


def test_character_decode_accepts_lone_surrogates(impl):
    # every id 0..0x10FFFF is a code point, surrogates included, exactly as chr() allows
    ids = [0xD800, 0x41, 0xDFFF]
    assert_text_equal(impl.get_character_tokenizer().decode(ids), "\ud800A\udfff")


@pytest.mark.parametrize(
    "ids",
    [[-1], [0x110000], [72, 105, 0x110000], [2**40], [65, -5, 66]],
    ids=["minus_one", "0x110000", "after_valid_ids", "huge", "negative_in_middle"],
)
def test_character_decode_rejects_ids_outside_unicode(impl, ids):
    tok = impl.get_character_tokenizer()
    must_work_first("CharacterTokenizer().decode([72, 105])", lambda: tok.decode([72, 105]))
    with pytest.raises(ValueError):
        tok.decode(ids)


def test_character_vocabulary_would_need_0x110000_ids(impl):
    # Why it fails: the largest code point is a valid id, so the vocabulary (an embedding
    # row per id) would need 0x10FFFF + 1 = 0x110000 = 1,114,112 entries.
    tok = impl.get_character_tokenizer()
    assert tok.encode("\U0010ffff") == [0x10FFFF]
    assert tok.decode([0x10FFFF]) == "\U0010ffff"


@pytest.mark.parametrize("key", ["euro", "greek", "cjk", "emoji", "hangul"])
def test_character_ids_exceed_a_byte_outside_latin1(impl, key):
    # Why it fails (2): ids of most scripts are far above 255: no small vocabulary covers them
    text = TEXTS[key]
    ids = impl.get_character_tokenizer().encode(text)
    big = [i for i in ids if i > 255]
    expected_big = [ord(ch) for ch in text if ord(ch) > 255]
    assert_ids_equal(big, expected_big, what="ids above 255")
    assert big, "this text should need ids above 255"


# ---- byte tokenizer -------------------------------------------------------------------


@pytest.mark.parametrize("key", TEXT_IDS)
def test_byte_ids_are_utf8_bytes(impl, key):
    tok = impl.get_byte_tokenizer()
    for text in anchored(TEXTS[key]):
        assert_ids_equal(tok.encode(text), list(text.encode("utf-8")), text=text)


@pytest.mark.parametrize("key", TEXT_IDS)
def test_byte_round_trip(impl, key):
    tok = impl.get_byte_tokenizer()
    for text in anchored(TEXTS[key]):
        assert_text_equal(tok.decode(tok.encode(text)), text, what="decode(encode(text))")


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_byte_round_trip_on_fixture_files(impl, fixture_path, name):
    text = read_fixture(fixture_path, name)
    tok = impl.get_byte_tokenizer()
    ids = tok.encode(text)
    assert_ids_equal(ids, list(text.encode("utf-8")), text=text)
    assert_text_equal(tok.decode(ids), text, what="decode(encode(text))")


def test_byte_decode_of_hand_worked_example(impl):
    # "€" is E2 82 AC in UTF-8; "!" is 0x21
    assert impl.get_byte_tokenizer().decode([0xE2, 0x82, 0xAC, 0x21]) == "€!"


@pytest.mark.parametrize(
    "ids",
    [
        [0xFF],
        [104, 0xC3],  # "h" then the first byte of a 2-byte character
        [0xE2, 0x82],  # "€" without its last byte
        [0xE2, 0x82, 0x41],  # truncated "€" followed by "A"
        [0xF0, 0x9F, 0x98],  # "😀" without its last byte
        [0x80, 0x80, 0x41],  # stray continuation bytes
        [0xC0, 0xAF],  # overlong encoding of "/"
        [0xED, 0xA0, 0x80],  # an encoded surrogate (invalid in UTF-8)
        [0xF4, 0x90, 0x80, 0x80],  # above U+10FFFF
        [0x61, 0xFE, 0x62, 0xC3, 0xA9, 0xC3],  # mixed valid and invalid
    ],
    ids=["ff", "truncated_2byte", "truncated_euro", "truncated_then_ascii", "truncated_emoji",
         "stray_continuations", "overlong", "surrogate", "above_max", "mixed"],
)
def test_byte_decode_replaces_invalid_utf8_like_python(impl, ids):
    expected = bytes(ids).decode("utf-8", errors="replace")
    assert "\ufffd" in expected
    assert_text_equal(impl.get_byte_tokenizer().decode(ids), expected, what="decoded text")


@pytest.mark.parametrize(
    "ids", [[256], [-1], [65, 256], [65, 66, -1], [1000]], ids=["256", "minus_one", "256_after_valid", "minus_one_later", "1000"]
)
def test_byte_decode_rejects_ids_outside_0_255(impl, ids):
    tok = impl.get_byte_tokenizer()
    must_work_first("ByteTokenizer().decode([104, 105])", lambda: tok.decode([104, 105]))
    with pytest.raises(ValueError):
        tok.decode(ids)


@pytest.mark.parametrize("key", NONEMPTY_IDS)
def test_byte_compression_ratio_is_exactly_one(impl, key):
    # Why it fails: one token per byte compresses nothing, whatever the text
    ratio_must_work_first(impl)  # 1.0 is also what a compression_ratio returning 1.0 always gives
    text = TEXTS[key]
    ids = impl.get_byte_tokenizer().encode(text)
    assert impl.run_compression_ratio(text, ids) == 1.0


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_byte_compression_ratio_is_exactly_one_on_fixture_files(impl, fixture_path, name):
    ratio_must_work_first(impl)
    text = read_fixture(fixture_path, name)
    ids = impl.get_byte_tokenizer().encode(text)
    assert impl.run_compression_ratio(text, ids) == 1.0


# ---- word tokenizer -------------------------------------------------------------------


def word_oracle(pretokens_of, training: str, text: str) -> tuple[list[int], str]:
    """Expected (encode(text), decode(encode(text))) of a word tokenizer trained on ``training``."""
    ids: dict[str, int] = {}
    for word in pretokens_of(training):
        ids.setdefault(word, len(ids) + 1)
    pieces = pretokens_of(text)
    return [ids.get(p, 0) for p in pieces], "".join(p if p in ids else UNK for p in pieces)


@pytest.mark.parametrize("training", ["the cat sat on the mat", "", "hello world"], ids=["cat", "empty", "hello"])
def test_word_id_zero_decodes_to_unk(impl, training):
    assert impl.get_word_tokenizer(training).decode([0]) == UNK


@pytest.mark.parametrize(
    "training, expected",
    [
        # pre-tokens: "the" " cat" " sat" " on" " the" " mat": " the" is not "the"
        ("the cat sat on the mat", [1, 2, 3, 4, 5, 6]),
        # "a" " b" " a"
        ("a b a", [1, 2, 3]),
        # "a" " a" " a": the repeats reuse id 2
        ("a a a", [1, 2, 2]),
        # "Hi" " there" "!" " Hi" " there" "!"
        ("Hi there! Hi there!", [1, 2, 3, 4, 2, 3]),
        # "x" "  " " y" "\n": a run of spaces keeps one space for the next word
        ("x   y\n", [1, 2, 3, 4]),
    ],
    ids=["cat", "aba", "aaa", "hi_there", "spaces"],
)
def test_word_ids_follow_order_of_first_appearance_from_1(impl, training, expected):
    assert_ids_equal(impl.get_word_tokenizer(training).encode(training), expected, text=training)


def test_word_each_id_decodes_to_its_word(impl):
    # "the cat sat on the mat" -> 1 "the", 2 " cat", 3 " sat", 4 " on", 5 " the", 6 " mat"
    tok = impl.get_word_tokenizer("the cat sat on the mat")
    words = [tok.decode([i]) for i in range(7)]
    expected = [UNK, "the", " cat", " sat", " on", " the", " mat"]
    for i, (got, want) in enumerate(zip(words, expected)):
        assert got == want, f"decode([{i}]) should be {want!r}, got {got!r}"


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_word_vocabulary_is_the_gpt2_pretokens_of_the_training_text(impl, fixture_path, gpt2_pretokenize, name):
    text = read_fixture(fixture_path, name)
    tok = impl.get_word_tokenizer(text)
    expected_ids, _ = word_oracle(gpt2_pretokenize, text, text)
    assert_word_ids_equal(tok.encode(text), expected_ids, text, gpt2_pretokenize(text), impl.run_pretokenize)


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_word_decode_of_every_id_gives_distinct_pretokens_in_order(impl, fixture_path, gpt2_pretokenize, name):
    text = read_fixture(fixture_path, name)
    words = list(dict.fromkeys(gpt2_pretokenize(text)))
    tok = impl.get_word_tokenizer(text)
    for i, word in enumerate(words[:50], start=1):
        got = tok.decode([i])
        assert got == word, f"decode([{i}]) should be {word!r} (distinct pre-token #{i}), got {got!r}"
    all_ids = list(range(1, len(words) + 1))
    assert_text_equal(tok.decode(all_ids), "".join(words), what=f"decode([1, ..., {len(words)}])")
    with pytest.raises(ValueError):
        tok.decode([len(words) + 1])


@pytest.mark.parametrize(
    "training, text, expected",
    [
        # every pre-token of the text ("the" " mat" " sat" " on" " the" " cat") was seen
        ("the cat sat on the mat", "the mat sat on the cat", "the mat sat on the cat"),
        # " dog" was never seen
        ("the cat sat on the mat", "the dog sat", "the<unk> sat"),
        # case matters: "The" is not "the"
        ("the cat sat on the mat", "The cat", "<unk> cat"),
        # the leading space matters: only " dog" and "cat" were seen
        ("cat dog", "dog cat", "<unk><unk>"),
        # "!" seen, "?" not; "\n" seen
        ("Hi there!\n", "Hi there?\n", "Hi there<unk>\n"),
        # an empty training text knows no word at all
        ("", "a b", "<unk><unk>"),
        ("anything", "", ""),
    ],
    ids=["all_seen", "unseen_word", "case", "leading_space", "punctuation", "empty_training", "empty_text"],
)
def test_word_round_trip_replaces_exactly_the_unseen_words(impl, gpt2_pretokenize, training, text, expected):
    _, oracle = word_oracle(gpt2_pretokenize, training, text)
    assert oracle == expected  # the hand-worked answer agrees with GPT-2's pattern
    tok = impl.get_word_tokenizer(training)
    assert_text_equal(tok.decode(tok.encode(text)), expected, what="decode(encode(text))")
    if not expected and training:  # an empty answer passes on code that does nothing: a training word must come back
        word = gpt2_pretokenize(training)[0]
        assert_text_equal(tok.decode(tok.encode(word)), word, what="decode(encode(a training word))")


@pytest.mark.parametrize(
    "training, text, expected",
    [
        # vocab: 1 "the", 2 " cat", 3 " sat", 4 " on", 5 " the", 6 " mat"
        ("the cat sat on the mat", "the dog sat", [1, 0, 3]),
        ("the cat sat on the mat", " mat the", [6, 5]),
        # vocab: 1 "hello", 2 " world"; " there" is unseen
        ("hello world", "hello there world", [1, 0, 2]),
        ("", "x y", [0, 0]),
    ],
    ids=["dog", "reordered", "hello", "empty_training"],
)
def test_word_encode_gives_zero_exactly_for_unseen_words(impl, training, text, expected):
    assert_ids_equal(impl.get_word_tokenizer(training).encode(text), expected, text=text)


@pytest.mark.parametrize("train_name, text_name", [("stories.txt", "multilingual.txt"), ("corpus_en.txt", "stories.txt")])
def test_word_round_trip_on_fixture_files_loses_only_unseen_words(impl, fixture_path, gpt2_pretokenize, train_name, text_name):
    training, text = read_fixture(fixture_path, train_name), read_fixture(fixture_path, text_name)
    expected_ids, expected_text = word_oracle(gpt2_pretokenize, training, text)
    tok = impl.get_word_tokenizer(training)
    ids = tok.encode(text)
    assert_word_ids_equal(ids, expected_ids, text, gpt2_pretokenize(text), impl.run_pretokenize)
    assert_text_equal(tok.decode(ids), expected_text, what="decode(encode(text))")


def test_word_tokenizer_loses_unseen_words(impl):
    # Why it fails: a word never seen in training cannot come back
    tok = impl.get_word_tokenizer("the cat sat on the mat")
    text = "the zebra sat"
    decoded = tok.decode(tok.encode(text))
    assert decoded != text
    assert decoded == "the<unk> sat"


@pytest.mark.parametrize("ids", [[1, 7], [3], [-1], [0, 1, 2, 99]], ids=["7_after_valid", "3", "minus_one", "99_at_end"])
def test_word_decode_rejects_unknown_ids(impl, ids):
    # "hello world" -> vocab {0: "<unk>", 1: "hello", 2: " world"}
    tok = impl.get_word_tokenizer("hello world")
    must_work_first("WordTokenizer('hello world').decode([1, 0, 2])", lambda: tok.decode([1, 0, 2]))
    with pytest.raises(ValueError):
        tok.decode(ids)


def test_word_tokenizers_do_not_share_a_vocabulary(impl):
    first = impl.get_word_tokenizer("a b")  # 1 "a", 2 " b"
    second = impl.get_word_tokenizer("c d")  # 1 "c", 2 " d"
    assert_ids_equal(first.encode("a b c d"), [1, 2, 0, 0], what="ids of the first tokenizer")
    assert_ids_equal(second.encode("a b c d"), [0, 0, 0, 2], what="ids of the second tokenizer")


# ---- compression ratio ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, ids, expected",
    [
        ("hello world", [1, 2], 5.5),  # 11 bytes / 2 ids
        ("héllo", [1, 2, 3], 2.0),  # "é" is 2 bytes: 6 bytes / 3 ids
        ("€", [0], 3.0),  # E2 82 AC
        ("😀😀", [1, 2, 3, 4, 5, 6, 7, 8], 1.0),  # 8 bytes / 8 ids
        ("abc", [1, 2, 3, 4], 0.75),  # more ids than bytes
        ("", [5], 0.0),  # an empty text with ids
        ("abcd", [999, -5], 2.0),  # only the number of ids matters
    ],
    ids=["hello_world", "e_acute", "euro", "emoji", "below_one", "empty_text", "id_values_ignored"],
)
def test_compression_ratio_is_utf8_bytes_per_id(impl, text, ids, expected):
    assert impl.run_compression_ratio(text, list(ids)) == expected
    # 0.0 is also what code that does nothing returns, 1.0 what a constant 1.0 does: another ratio must be right too
    if expected in (0.0, 1.0):
        assert impl.run_compression_ratio("abcd", list(ids)) == 4 / len(ids)


@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_compression_ratio_matches_the_formula_on_fixture_files(impl, fixture_path, name):
    text = read_fixture(fixture_path, name)
    for n in (1, 7, len(text), 3 * len(text) + 1):
        got = impl.run_compression_ratio(text, list(range(n)))
        assert got == pytest.approx(len(text.encode("utf-8")) / n, rel=1e-12), f"with {n} ids"


@pytest.mark.parametrize("text", ["abc", ""], ids=["text", "empty_text"])
def test_compression_ratio_rejects_empty_ids(impl, text):
    n_bytes = len((text or "a").encode())
    assert impl.run_compression_ratio(text or "a", [1]) == n_bytes  # valid ids are accepted
    with pytest.raises(ValueError):
        impl.run_compression_ratio(text, [])


def test_compression_ratio_is_a_number(impl):
    ratio = impl.run_compression_ratio("héllo", [1, 2, 3])
    assert isinstance(ratio, (int, float)) and not isinstance(ratio, bool)
    assert float(ratio) == 2.0


# ---- decode errors name the first bad id and its position ---------------------------------

BAD_DECODES = {
    # tokenizer, ids: the first bad id is at position 3 (and a second bad one follows)
    "character": (lambda impl: impl.get_character_tokenizer(), [72, 105, 33, 0x110000, -1], 0x110000),
    "byte": (lambda impl: impl.get_byte_tokenizer(), [104, 105, 106, 256, 300], 256),
    "word": (lambda impl: impl.get_word_tokenizer("hello world"), [1, 2, 0, 7, 9], 7),
}


@pytest.mark.parametrize("make, ids, bad", BAD_DECODES.values(), ids=BAD_DECODES.keys())
def test_decode_error_names_the_first_bad_id_and_its_position(impl, make, ids, bad):
    import re

    with pytest.raises(ValueError) as err:
        make(impl).decode(ids)
    message = str(err.value)
    whole = lambda n: re.search(rf"(?<![\d.x]){n}(?![\d.]?\d)", message) is not None  # noqa: E731
    assert whole(bad) or hex(bad) in message.lower(), f"decode({ids}): the message should name the bad id {bad}: {message}"
    assert whole(3), f"decode({ids}): the message should give the bad id's position 3: {message}"
