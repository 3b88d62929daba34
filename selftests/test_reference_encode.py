"""The reference's fast encoding paths give the ids of the plain algorithm: the ASCII
pre-tokenizer (``re``) against GPT-2's pattern (``regex``), and encoding in several processes
(``reference/parallel.py``) against tiktoken, with no process left behind; building the
tables those paths read from the merges names the first merge it cannot build."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

import reference.parallel as parallel
import reference.tokenizer as reference_tokenizer
from reference.pretokenize import GPT2_ASCII_REGEX, GPT2_REGEX, pretokenize_fast

from .support import mixed_text

ROOT = Path(__file__).resolve().parent.parent
EOT = "<|endoftext|>"
GPT2_URLS = {  # read from tiktoken's download cache
    "vocab.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    "merges.txt": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
}


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """tiktoken's GPT-2 encoding, and GPT-2's vocabulary and merges as the reference reads them."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import read_file_cached

    from reference import load_tokenizer_files

    out = tmp_path_factory.mktemp("gpt2")
    for name, url in GPT2_URLS.items():
        (out / name).write_bytes(read_file_cached(url))
    return tiktoken.get_encoding("gpt2"), load_tokenizer_files(out / "vocab.json", out / "merges.txt")


def children_of_this_process() -> str:
    return open(f"/proc/self/task/{os.getpid()}/children").read().strip() if os.path.exists("/proc/self/task") else ""


# ---- pre-tokenization ----------------------------------------------------------------------


def test_ascii_pattern_matches_gpt2_pattern_on_random_ascii_text():
    rng = random.Random(0)
    alphabet = [chr(c) for c in range(128)] + list(" \n  aeZ9'") * 8  # every ASCII character, common ones more often
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        assert GPT2_ASCII_REGEX.findall(text) == GPT2_REGEX.findall(text), repr(text)


@pytest.mark.parametrize("density", [0.002, 0.05, 0.5])  # of non-ASCII pieces: sparse (stretches) to dense (whole)
def test_fast_pretokenize_equals_gpt2_pattern_around_non_ascii_characters(density):
    rng = random.Random(1)
    ascii_pieces = ["    def f(x):\n        return x\n", "\n\n\t  ", "  \r\n", "don't  stop", "1234 567", " ", "a", "x" * 70]
    other = ["é", "\u00a0", "\u3000", " ж", "字字", "\u2028", "½", "🙂 "]  # letters, spaces, numbers, symbols
    for _ in range(40):
        pieces = [rng.choice(other if rng.random() < density else ascii_pieces) for _ in range(rng.randrange(1, 400))]
        text = "".join(pieces)
        assert pretokenize_fast(text) == GPT2_REGEX.findall(text), repr(text)


# ---- several processes ---------------------------------------------------------------------


@pytest.fixture
def small_parts(monkeypatch):
    """Inputs of a few kB are cut into parts, one per (pretended) core of 3."""
    monkeypatch.setattr(reference_tokenizer, "PART_CHARS", 3000)
    monkeypatch.setattr(reference_tokenizer, "usable_cores", lambda: 3)


@pytest.mark.parametrize("specials", [[], [EOT], [EOT, "<|endo", "  \r"]])
def test_encode_in_parts_gives_tiktokens_ids_and_leaves_no_process(gpt2, small_parts, specials):
    encoding, files = gpt2
    tok = reference_tokenizer.Tokenizer(*files, specials)
    for seed in range(2):
        text = mixed_text(random.Random(seed), 12_000)
        assert len(tok._parallel_cuts(text)) == 2
        got = tok.encode(text)  # first, so that every process starts with a cold cache
        expected = tok._encode(text)  # in one piece, in this process
        if specials == [EOT]:
            assert expected == encoding.encode(text, allowed_special="all")
        assert got == expected
    assert children_of_this_process() == ""


def test_encode_in_parts_without_fork_gives_the_same_ids(gpt2, small_parts, monkeypatch):
    encoding, files = gpt2
    text = mixed_text(random.Random(5), 12_000)

    def no_fork():
        raise OSError(11, "Resource temporarily unavailable (RLIMIT_NPROC)")

    monkeypatch.setattr(os, "fork", no_fork)
    assert reference_tokenizer.Tokenizer(*files, [EOT]).encode(text) == encoding.encode(text, allowed_special="all")


def test_cuts_never_fall_inside_a_special_token(gpt2, small_parts):
    special = "<|a b c d e|>"  # has spaces after non-spaces: safe places if it were ordinary text
    tok = reference_tokenizer.Tokenizer(*gpt2[1], [special])
    text = "word " * 100 + (special * 2000)
    spans = [(i, i + len(special)) for i in range(500, len(text), len(special))]
    cuts = tok._parallel_cuts(text)
    assert cuts and all(not (a < cut < b) for cut in cuts for a, b in spans)


def test_fork_map_redoes_a_failed_child_and_keeps_order():
    parent = os.getpid()

    def work(i: int) -> bytes:
        if i == 2 and os.getpid() != parent:
            raise RuntimeError("this child fails")
        return b"part %d" % i

    assert parallel.fork_map(work, 4) == [b"part 0", b"part 1", b"part 2", b"part 3"]
    assert children_of_this_process() == ""


def test_fork_map_ends_its_children_when_this_process_fails():
    parent = os.getpid()

    def work(i: int) -> bytes:
        if os.getpid() == parent:
            raise KeyboardInterrupt  # e.g. a timeout's signal while this process does its part
        import time

        time.sleep(30)
        return b""

    with pytest.raises(KeyboardInterrupt):
        parallel.fork_map(work, 3)
    assert children_of_this_process() == ""


def test_speed_tests_time_the_single_process_reference(monkeypatch):
    """The hidden speed test encodes 1 MB; its limit is a multiple of the reference's time in
    one process (students' code runs in one), on any number of cores."""
    monkeypatch.setattr(reference_tokenizer, "usable_cores", lambda: 64)
    tok = reference_tokenizer.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    assert tok._parallel_cuts("ab " * 400_000) == []


@pytest.mark.parametrize("bad", [(b"x", b"yz"), ("a", b"b"), (b"a", "b")], ids=["missing-bytes", "str-left", "str-right"])
def test_the_reference_names_the_first_merge_it_cannot_build_whatever_its_parts(bad):
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    with pytest.raises(ValueError, match=rf"merge #1 {re.escape(repr(bad))} uses bytes missing from vocab"):
        reference_tokenizer.Tokenizer(vocab, [(b"a", b"b"), bad, (b"q", b"qq")])
