"""Part 5: GPT-2's file format -- Tokenizer.from_files reads vocab.json and merges.txt,
save_tokenizer_files writes them. GPT-2 stores each byte as one printable character (its
bytes_to_unicode table); the tests decode files with an independent copy of that table."""

from __future__ import annotations

import json

import pytest

from tests.diff import assert_ids_equal, assert_items_equal, assert_pieces_encoded, assert_vocab_equal
from tests.conftest import fresh, gpt2_byte_decoder
from tests.conftest import EOT


def read_text(path) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


@pytest.fixture(scope="module")
def gpt2_from_files(impl, gpt2_files):
    return impl.get_tokenizer_from_files(str(gpt2_files["vocab"]), str(gpt2_files["merges"]), [EOT])


@pytest.mark.parametrize("name", ["multilingual.txt", "stories.txt"])
def test_gpt2_from_files_matches_tiktoken(impl, gpt2_from_files, gpt2_oracle, gpt2_vocab_merges, fixture_path, name):
    text = read_text(fixture_path(name))
    assert_ids_equal(gpt2_from_files.encode(text), gpt2_oracle(text), vocab=gpt2_vocab_merges[0], text=text,
                     pretokenize=impl.run_pretokenize)


def test_gpt2_from_files_loads_every_merge_whatever_its_line_starts_with(impl, gpt2_from_files, gpt2_vocab_merges):
    # Every line of merges.txt after its version line is a merge, even one that starts as a
    # comment would (GPT-2's "# #", "## ##"): the tokenizer loaded from GPT-2's files encodes the
    # result of each merge, one per line, as the one built from the same vocab and merges does.
    # Graded once the built one's ids spell the text (in GPT-2's vocab, not by the submission's
    # decode): else skipped, without points, as code returning no ids at all would pass.
    vocab = gpt2_vocab_merges[0]
    text = "\n".join((a + b).decode("utf-8", errors="replace") for a, b in gpt2_vocab_merges[1])
    built = impl.get_tokenizer(*fresh(gpt2_vocab_merges), [EOT])
    expected = built.encode(text)
    if b"".join(vocab.get(i, b"\0?") for i in expected) != text.encode("utf-8"):
        pytest.skip("not graded until encode, with GPT-2's vocab and merges given, gives ids whose bytes are the text")
    assert_ids_equal(gpt2_from_files.encode(text), expected, vocab=vocab, text=text,
                     what="ids of the tokenizer loaded from the files and of the one built from the same vocab and merges")


def test_gpt2_from_files_decodes_every_byte_token(gpt2_from_files, gpt2_vocab_merges):
    vocab = gpt2_vocab_merges[0]
    ids = sorted(i for i, token in vocab.items() if len(token) == 1)
    assert len(ids) == 256
    expected = b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
    assert gpt2_from_files.decode(ids) == expected, "decode of GPT-2's 256 single-byte ids differs from their bytes"


# ---- a small tokenizer saved and loaded back --------------------------------------------
# Merges over awkward bytes: space, newline, 0xFF (not UTF-8), the two bytes of "é", a
# merge of merges; merge k's result gets id 256 + k (GPT-2's layout).

SMALL_MERGES = [
    (b" ", b"t"),
    (b"h", b"e"),
    (b" t", b"he"),
    (b"\n", b"\n"),
    (b"\xff", b"\xff"),
    (b"\xc3", b"\xa9"),
    (b"c", b"a"),
    (b"ca", b"f"),
    (b"caf", b"\xc3\xa9"),
    (b" ", b" "),
    (b"  ", b"  "),
]


def small_vocab() -> dict[int, bytes]:
    vocab = {b: bytes([b]) for b in range(256)}
    for k, (a, b) in enumerate(SMALL_MERGES):
        vocab[256 + k] = a + b
    return vocab


@pytest.fixture
def saved_files(impl, tmp_path):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    result = impl.run_save_tokenizer(small_vocab(), list(SMALL_MERGES), str(vocab_path), str(merges_path))
    assert result is None
    return vocab_path, merges_path


def test_saved_vocab_json_maps_gpt2_strings_to_ids(saved_files):
    data = json.loads(saved_files[0].read_text(encoding="utf-8"))
    assert type(data) is dict, f"vocab.json should hold a JSON object (token string -> id), got {type(data).__name__}"
    table = gpt2_byte_decoder()
    vocab = {}
    for key, i in data.items():
        bad = [ch for ch in key if ch not in table]
        assert not bad, f"vocab.json key {key!r} has characters outside GPT-2's byte table: {bad}"
        assert type(i) is int, f"vocab.json[{key!r}] should be an int id, got {i!r}"
        vocab[i] = bytes(table[ch] for ch in key)
    assert_vocab_equal(vocab, small_vocab())


def test_saved_merges_txt_has_version_line_then_one_merge_per_line(saved_files):
    lines = saved_files[1].read_text(encoding="utf-8").split("\n")
    assert lines[0] == "#version: 0.2", f"merges.txt should start with '#version: 0.2', got {lines[0]!r}"
    body = lines[1:-1] if lines[-1] == "" else lines[1:]
    table = gpt2_byte_decoder()
    merges = []
    for n, line in enumerate(body, 2):
        parts = line.split(" ")
        assert len(parts) == 2, f"merges.txt line {n} should be two tokens separated by one space, got {line!r}"
        bad = [ch for ch in line.replace(" ", "") if ch not in table]
        assert not bad, f"merges.txt line {n} {line!r} has characters outside GPT-2's byte table: {bad}"
        merges.append(tuple(bytes(table[ch] for ch in part) for part in parts))
    assert_items_equal(merges, SMALL_MERGES, what="merge")


SAVED_TEXTS = {
    "the_and_spaces": "the cat sat on the mat    then\n\n\nthe end",
    "cafe": "café au lait, un café",
    "ascii_digits": "plain text 123",
}


@pytest.mark.parametrize("text", SAVED_TEXTS.values(), ids=SAVED_TEXTS.keys())
def test_loading_saved_files_gives_the_same_ids(impl, saved_files, text):
    vocab_path, merges_path = saved_files
    got = impl.get_tokenizer_from_files(str(vocab_path), str(merges_path)).encode(text)
    # the ids of the tokenizer the files were saved from (yours, from the same vocab and
    # merges): whether those are tiktoken's is the encode tests' rule, not the files'
    saved_from = impl.get_tokenizer(small_vocab(), list(SMALL_MERGES)).encode(text)
    assert_ids_equal(got, saved_from, vocab=small_vocab(), text=text, what="ids of the loaded tokenizer and of the one saved")
    # and ids that spell the text: a tokenizer encoding nothing gives the same [] both ways
    assert_pieces_encoded(got, [(text, False)], specials={}, vocab=small_vocab(), what="ids of the loaded tokenizer")


def test_loaded_tokenizer_decodes_non_utf8_tokens(impl, saved_files):
    loaded = impl.get_tokenizer_from_files(str(saved_files[0]), str(saved_files[1]))
    ff_ff = 256 + SMALL_MERGES.index((b"\xff", b"\xff"))
    assert loaded.decode([ff_ff, ord("a")]) == b"\xff\xffa".decode("utf-8", errors="replace")


def test_saving_gpt2_reproduces_its_files(impl, gpt2_files, gpt2_vocab_merges, tmp_path):
    vocab, merges = fresh(gpt2_vocab_merges)
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    impl.run_save_tokenizer(vocab, merges, str(vocab_path), str(merges_path))
    saved = json.loads(vocab_path.read_text(encoding="utf-8"))
    original = json.loads(gpt2_files["vocab"].read_text(encoding="utf-8"))
    assert_items_equal(sorted(saved.items(), key=lambda kv: kv[1]), sorted(original.items(), key=lambda kv: kv[1]), what="vocab.json entry")
    saved_lines = [line for line in merges_path.read_text(encoding="utf-8").split("\n")[1:] if line]
    original_lines = [line for line in gpt2_files["merges"].read_text(encoding="utf-8").split("\n")[1:] if line]
    assert_items_equal(saved_lines, original_lines, what="merges.txt line")
