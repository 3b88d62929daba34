"""Part 5: the rules ``Tokenizer.__init__``, ``save_tokenizer_files`` and
``load_tokenizer_files`` state in their docstrings, one test per rule: which vocabularies
and merge lists are errors, which id wins when two ids share bytes, which rank a repeated
merge keeps, where new special tokens go, and which files are malformed.

Expected values are hand-worked (the working is in the comments) or read with an
independent copy of GPT-2's byte table; nothing here depends on the reference solution.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.diff import assert_ids_equal, assert_text_equal
from tests.conftest import gpt2_byte_decoder, must_work_first

BYTES = {b: bytes([b]) for b in range(256)}


def vocab_with(*tokens: bytes, first: int = 1000) -> dict[int, bytes]:
    """The 256 single bytes under ids 0..255, then ``tokens`` from id ``first`` up."""
    return {**BYTES, **{first + k: t for k, t in enumerate(tokens)}}


def names_number(message: str, number: int) -> bool:
    """``number`` appears in ``message`` as a whole number (not as a digit of another)."""
    return re.search(rf"(?<![\d.]){number}(?![\d.]?\d)", message) is not None


def names_byte(message: str, b: int) -> bool:
    """The message names byte ``b``: as a number (``65``), in hex (``0x41``) or as bytes."""
    lower = message.lower()
    return names_number(message, b) or f"0x{b:02x}" in lower or f"\\x{b:02x}" in lower or repr(bytes([b])) in message


def valid_tokenizer_must_work_first(impl) -> None:
    must_work_first("Tokenizer(vocab, [(b'a', b'b')], ['<pad>']) with every byte and b'ab' in the vocab",
                    lambda: impl.get_tokenizer(vocab_with(b"ab"), [(b"a", b"b")], ["<pad>"]))


# ---- Tokenizer(vocab, merges, special_tokens): what is an error ---------------------------


@pytest.mark.parametrize("missing", [0, ord(" "), ord("a"), 0xC3, 255])
def test_vocab_without_a_single_byte_is_a_value_error_naming_it(impl, missing):
    valid_tokenizer_must_work_first(impl)
    vocab = {i: t for i, t in vocab_with(b"ab").items() if t != bytes([missing])}
    with pytest.raises(ValueError) as err:
        impl.get_tokenizer(vocab, [])
    assert names_byte(str(err.value), missing), (
        f"the vocabulary lacks the single byte {missing} ({bytes([missing])!r}): the message should name it, got: {err.value}"
    )


# merges 0 and 1 are fine; merge 2 uses bytes the vocab lacks (its left part, its right
# part, or the concatenation of both)
BAD_MERGES = {
    "left_part_missing": ((b"qz", b"a"), [b"qza"]),
    "right_part_missing": ((b"a", b"qz"), [b"aqz"]),
    "result_missing": ((b"c", b"a"), []),
}


@pytest.mark.parametrize("bad, extra", BAD_MERGES.values(), ids=BAD_MERGES.keys())
def test_merge_using_bytes_missing_from_vocab_is_a_value_error_naming_it(impl, bad, extra):
    valid_tokenizer_must_work_first(impl)
    merges = [(b"a", b"b"), (b"c", b"d"), bad]
    vocab = vocab_with(b"ab", b"cd", *extra)
    with pytest.raises(ValueError) as err:
        impl.get_tokenizer(vocab, merges)
    message = str(err.value)
    # the merge's index (2, or 3 counted from 1) and its pair
    assert names_number(message, 2) or names_number(message, 3), f"the message should name merge #2 {bad!r}: {message}"
    named = [repr(part) in message or part.decode() in message for part in bad]
    assert any(named), f"the message should show the merge {bad!r}: {message}"


@pytest.mark.parametrize("specials", [[""], ["<pad>", ""]], ids=["only_empty", "empty_after_another"])
def test_empty_special_token_is_a_value_error(impl, specials):
    valid_tokenizer_must_work_first(impl)
    with pytest.raises(ValueError):
        impl.get_tokenizer(vocab_with(), [], specials)


def test_merge_onto_a_special_tokens_bytes_is_an_error_or_works(impl):
    valid_tokenizer_must_work_first(impl)
    # Open question, decided: whether merges are checked against the vocab before or after
    # __init__ adds the special tokens is not graded. (a, b) makes b"ab", which only the
    # special "ab" brings: a ValueError is fine, and so is a tokenizer that works.
    try:
        tok = impl.get_tokenizer(vocab_with(), [(b"a", b"b")], ["ab"])
    except ValueError:
        return
    ids = tok.encode("ab")
    assert len(ids) == 1, f"'ab' is a special token: encode('ab') should be its one id, got {ids}"
    got = tok.decode(ids + [ord("x")])
    assert got == "abx", f"'ab' is a special token with id {ids[0]}: decode({ids + [ord('x')]}) should be 'abx', got {got!r}"


# ---- which id, which rank ----------------------------------------------------------------

# Two ids with the same bytes: the one that comes LAST in the vocab's iteration order is
# the id used for those bytes (not the first, not the largest).
DUPLICATES = {
    # 97 and 300 are both b"a"; 300 comes last -> "a" encodes to 300
    "byte_again_after": ({**BYTES, 300: b"a"}, [], "a", [300]),
    # 300 comes first, then 0..255: the byte's own id 97 comes last -> 97
    "byte_again_before": ({300: b"a", **BYTES}, [], "a", [97]),
    # the merge result b"ab" under 400, then 401 (iteration order), then "b" "a" "ab" -> 401
    "merged_token_twice": ({**BYTES, 400: b"ab", 401: b"ab"}, [(b"a", b"b")], "ab", [401]),
    "merged_token_twice_reversed": ({**BYTES, 401: b"ab", 400: b"ab"}, [(b"a", b"b")], "ab", [400]),
}


@pytest.mark.parametrize("vocab, merges, text, expected", DUPLICATES.values(), ids=DUPLICATES.keys())
def test_bytes_with_several_ids_use_the_id_that_comes_last(impl, vocab, merges, text, expected):
    assert_ids_equal(impl.get_tokenizer(vocab, merges).encode(text), expected, vocab=vocab, text=text,
                     pretokenize=impl.run_pretokenize)


# A pair listed twice keeps its FIRST (lowest) rank. merges (a,b) rank 0, (b,c) rank 1,
# (a,b) again at rank 2: in "abc", (a,b) has rank 0 < (b,c) 1 -> [ab, c]. With the last
# rank (2), (b,c) would win -> [a, bc].
def test_repeated_merge_keeps_its_first_rank(impl):
    merges = [(b"a", b"b"), (b"b", b"c"), (b"a", b"b")]
    vocab = vocab_with(b"ab", b"bc")
    assert_ids_equal(impl.get_tokenizer(vocab, merges).encode("abc"), [1000, ord("c")], vocab=vocab, text="abc",
                     pretokenize=impl.run_pretokenize)


# ---- special tokens' ids ------------------------------------------------------------------


def test_new_special_tokens_get_max_id_plus_one_in_the_order_given(impl):
    # ids need not be contiguous: the bytes under 5..260, b"zz" under 900. The specials
    # missing from the vocab get 901, 902 (max + 1 each time), in the order given; "zz" is
    # in the vocab and keeps 900 (it takes no new id).
    vocab = {b + 5: bytes([b]) for b in range(256)}
    vocab[900] = b"zz"
    tok = impl.get_tokenizer(vocab, [], ["<b>", "zz", "<a>"])
    got = {s: tok.encode(s) for s in ["<b>", "zz", "<a>"]}
    assert got == {"<b>": [901], "zz": [900], "<a>": [902]}, (
        f"vocab ids go up to 900 (b'zz'); new specials take 901, 902 in the order given, 'zz' keeps 900: got {got}"
    )


def test_callers_vocab_and_merges_are_not_modified(impl):
    vocab, merges = vocab_with(b"ab"), [(b"a", b"b")]
    vocab_before, merges_before = dict(vocab), list(merges)
    tok = impl.get_tokenizer(vocab, merges, ["<pad>", "<|endoftext|>"])
    try:  # a tokenizer adding the specials only as it meets them changes the vocab here
        tok.encode("ab<pad>")
    except Exception:  # encoding the specials is the encode tests' rule, not this test's
        pass
    assert vocab == vocab_before, "Tokenizer(vocab, ...) changed the caller's vocab: work on a copy"
    assert merges == merges_before, "Tokenizer(vocab, merges, ...) changed the caller's merges"
    # and the tokenizer did its work (code that does nothing leaves both untouched too): the
    # ids of ordinary text decode to it
    ids = tok.encode("ab")
    assert_text_equal(tok.decode(list(ids)), "ab", what=f"decode(encode('ab')) (ids {ids!r})")


def test_decode_error_names_the_first_unknown_id_and_its_position(impl):
    with pytest.raises(ValueError) as err:
        impl.get_tokenizer(vocab_with(b"ab"), [(b"a", b"b")]).decode([104, 1000, 105, 999, 5000])
    message = str(err.value)
    assert names_number(message, 999) and names_number(message, 3), (
        f"decode([104, 1000, 105, 999, 5000]): the message should name id 999 and its position 3: {message}"
    )


# ---- save_tokenizer_files -----------------------------------------------------------------


def test_saving_a_vocab_with_duplicate_bytes_is_a_value_error_writing_nothing(impl, tmp_path):
    (tmp_path / "valid").mkdir()
    must_work_first("saving a valid vocab and merges", lambda: impl.run_save_tokenizer(
        {**BYTES, 256: b"ab"}, [(b"a", b"b")], str(tmp_path / "valid" / "vocab.json"), str(tmp_path / "valid" / "merges.txt")))
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab = {**BYTES, 256: b"ab", 257: b"ab"}  # vocab.json cannot hold the key "ab" twice
    with pytest.raises(ValueError):
        impl.run_save_tokenizer(vocab, [(b"a", b"b")], str(vocab_path), str(merges_path))
    written = [p.name for p in (vocab_path, merges_path) if p.exists()]
    assert not written, f"nothing should be written when saving fails, but {written} exist"


def test_saved_files_layout(impl, tmp_path):
    # ids given out of order, a non-ASCII token: vocab.json lists ids in increasing order,
    # writes "é"'s bytes as their characters (no \u escapes), merges.txt ends with "\n"
    vocab = {**{256: b"\xc3\xa9", 257: b" t"}, **BYTES}
    merges = [(b"\xc3", b"\xa9"), (b" ", b"t")]
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    impl.run_save_tokenizer(vocab, merges, str(vocab_path), str(merges_path))
    raw = vocab_path.read_text(encoding="utf-8")
    ids = list(json.loads(raw).values())
    assert ids == sorted(ids), f"vocab.json should list the ids in increasing order, got {ids[:5]} ... {ids[-5:]}"
    assert "\\u" not in raw, "vocab.json should write non-ASCII characters as themselves (json.dump(..., ensure_ascii=False))"
    assert merges_path.read_bytes().decode("utf-8") == "#version: 0.2\nÃ ©\nĠ t\n", (
        f"merges.txt should be '#version: 0.2', then one line per merge, every line ending in \\n: got "
        f"{merges_path.read_bytes()!r}"
    )


# ---- load_tokenizer_files (through Tokenizer.from_files) ----------------------------------


def gpt2_string(token: bytes) -> str:
    table = {b: ch for ch, b in gpt2_byte_decoder().items()}
    return "".join(table[b] for b in token)


def write_files(tmp_path, merge_lines: list[str], extra: dict[str, int] | None = None, newline: str = "\n"):
    """vocab.json with the 256 bytes, "ab" (256) and ``extra``; merges.txt of these lines."""
    encoder = {gpt2_string(bytes([b])): b for b in range(256)}
    encoder[gpt2_string(b"ab")] = 256
    encoder.update(extra or {})
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab_path.write_bytes(json.dumps(encoder, ensure_ascii=False, indent=1).replace("\n", newline).encode("utf-8"))
    merges_path.write_bytes("".join(line + newline for line in merge_lines).encode("utf-8"))
    return vocab_path, merges_path


def valid_loading_must_work_first(impl, tmp_path) -> None:
    (tmp_path / "valid").mkdir()
    vocab_path, merges_path = write_files(tmp_path / "valid", ["#version: 0.2", "a b"])
    must_work_first("loading valid files (from_files)", lambda: impl.get_tokenizer_from_files(str(vocab_path), str(merges_path)))


def without_dir(message: str, tmp_path) -> str:
    return message.replace(str(tmp_path), "")


@pytest.mark.parametrize(
    "bad_line", ["ab", "a b c", "a  b", "a\tb"], ids=["one_token", "three_tokens", "two_spaces", "tab"]
)
def test_malformed_merges_line_is_a_value_error_naming_file_and_line(impl, tmp_path, bad_line):
    vocab_path, merges_path = write_files(tmp_path, ["#version: 0.2", "a b", bad_line, "a b"])
    with pytest.raises(ValueError) as err:
        impl.get_tokenizer_from_files(str(vocab_path), str(merges_path))
    message = str(err.value)
    assert "merges.txt" in message and names_number(without_dir(message, tmp_path), 3), (
        f"line 3 of merges.txt is {bad_line!r}: the message should name the file and line 3, got: {message}"
    )


@pytest.mark.parametrize("bad_line", ["a ", " b"], ids=["empty_right", "empty_left"])
def test_merges_line_with_an_empty_part_is_a_value_error(impl, tmp_path, bad_line):
    valid_loading_must_work_first(impl, tmp_path)
    # decided: a token string is never empty, so "a " is malformed like "ab"
    vocab_path, merges_path = write_files(tmp_path, ["#version: 0.2", bad_line])
    with pytest.raises(ValueError):
        impl.get_tokenizer_from_files(str(vocab_path), str(merges_path))


@pytest.mark.parametrize("where", ["vocab.json", "merges.txt"])
def test_character_outside_gpt2_byte_table_is_a_value_error_naming_the_file(impl, tmp_path, where):
    valid_loading_must_work_first(impl, tmp_path)
    # "€" (U+20AC) is not one of bytes_to_unicode's 256 characters
    if where == "vocab.json":
        vocab_path, merges_path = write_files(tmp_path, ["#version: 0.2", "a b"], extra={"a€": 257})
    else:
        vocab_path, merges_path = write_files(tmp_path, ["#version: 0.2", "a b", "a €"])
    with pytest.raises(ValueError) as err:
        impl.get_tokenizer_from_files(str(vocab_path), str(merges_path))
    assert where in str(err.value), f"the message should name {where}: {err.value}"


LAYOUTS = {
    # merges (a,b) -> 256; "abab ab" -> "abab", " ab" -> [256, 256], [32, 256]
    "lf": (["#version: 0.2", "a b"], "\n"),
    "crlf": (["#version: 0.2", "a b"], "\r\n"),  # decided: Windows line endings load the same
    "no_version_line": (["a b"], "\n"),
    "blank_lines": (["#version: 0.2", "", "a b", ""], "\n"),
}


@pytest.mark.parametrize("lines, newline", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_files_load_whatever_their_line_endings_and_blank_lines(impl, tmp_path, lines, newline):
    vocab_path, merges_path = write_files(tmp_path, lines, newline=newline)
    tok = impl.get_tokenizer_from_files(str(vocab_path), str(merges_path))
    assert_ids_equal(tok.encode("abab ab"), [256, 256, 32, 256], vocab={**BYTES, 256: b"ab"}, text="abab ab",
                     pretokenize=impl.run_pretokenize)


def test_last_merges_line_without_newline_is_read(impl, tmp_path):
    vocab_path, merges_path = write_files(tmp_path, [])
    merges_path.write_text("#version: 0.2\na b", encoding="utf-8")
    tok = impl.get_tokenizer_from_files(str(vocab_path), str(merges_path))
    assert_ids_equal(tok.encode("ab"), [256], vocab={**BYTES, 256: b"ab"}, text="ab", pretokenize=impl.run_pretokenize)
