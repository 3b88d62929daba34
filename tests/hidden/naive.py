"""Deliberately naive, obviously-correct oracles for the hidden tests (grading only).

Written from the assignment's rules alone, never from ``reference/`` (nothing here imports
it): slow, but short enough to check by reading. Use them on inputs of a few KB.

This module is a complete (slow) solution of Parts 2 to 4, so it lives under ``tests/hidden``
and never ships in the handout: the public tests compare with hand-worked and precomputed
values (``fixtures/expected_training.json``, written by :func:`expected_training`) and
check properties (``tests/oracles.py``) instead.

BPE training (Part 4), step by step:

1. cut the text at special tokens (leftmost, longest first) and drop the specials: they are
   hard boundaries that nothing is learned from;
2. cut every remaining piece into pre-tokens with GPT-2's pattern, taken from tiktoken;
3. repeat: count every adjacent pair of symbols in every pre-token (overlapping, weighted by
   how often the pre-token occurs), take the pair with the highest count, ties going to the
   greatest ``(bytes, bytes)`` tuple, and merge it everywhere, left to right.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.oracles import WordCounts


def split_keeping_specials(text: str, special_tokens) -> list[tuple[str, bool]]:
    """``text`` cut at special tokens as ``(piece, is_special)``: scanning left to right, a
    special starting here is taken (the longest where several do), other text is kept."""
    specials = sorted(set(special_tokens), key=len, reverse=True)
    pieces, start, i = [], 0, 0
    while i < len(text):
        hit = next((s for s in specials if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        if i > start:
            pieces.append((text[start:i], False))
        pieces.append((hit, True))
        i = start = i + len(hit)
    if start < len(text):
        pieces.append((text[start:], False))
    return pieces


def split_pieces(text: str, special_tokens: Iterable[str]) -> list[str]:
    """The pieces of :func:`split_keeping_specials`, specials included."""
    return [piece for piece, _ in split_keeping_specials(text, special_tokens)]


def split_out_specials(text: str, special_tokens: Iterable[str]) -> list[str]:
    """The text between special tokens (the specials themselves dropped)."""
    return [piece for piece, special in split_keeping_specials(text, special_tokens) if not special]


def merge_ids(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """The merge rule as stated: scan left to right, replace each non-overlapping occurrence."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def pretoken_counts(text: str, special_tokens: Iterable[str] = ()) -> WordCounts:
    """How often each pre-token (as UTF-8 bytes) occurs, specials removed as boundaries; its
    ``pieces``, the text between them (what a failed training's message pre-tokenizes)."""
    return WordCounts.of(split_out_specials(text, special_tokens))


def _merge_word(word: tuple[bytes, ...], pair: tuple[bytes, bytes]) -> tuple[bytes, ...]:
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def train_merges(word_counts: Mapping[bytes, int], n_merges: int) -> list[tuple[bytes, bytes]]:
    """Up to ``n_merges`` merges learned from pre-token counts, recounting from scratch each step."""
    words = {tuple(bytes([b]) for b in w): n for w, n in word_counts.items()}
    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < n_merges:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))  # count first, then greatest (bytes, bytes)
        merges.append(best)
        merged: Counter[tuple[bytes, ...]] = Counter()
        for word, n in words.items():
            merged[_merge_word(word, best)] += n
        words = dict(merged)
    return merges


def train_bpe(
    text: str, vocab_size: int, special_tokens: list[str]
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """The whole training rule on a string: ``(vocab, merges)`` in GPT-2's layout."""
    special_tokens = list(dict.fromkeys(special_tokens))  # a repeated special counts once
    n_merges = vocab_size - 256 - len(special_tokens)
    if n_merges < 0:
        raise ValueError(f"vocab_size={vocab_size} is too small")
    merges = train_merges(pretoken_counts(text, special_tokens), n_merges)
    tokens = [bytes([i]) for i in range(256)] + [a + b for a, b in merges]
    tokens += [s.encode("utf-8") for s in special_tokens]
    return dict(enumerate(tokens)), merges


def train_bpe_file(path: str | os.PathLike, vocab_size: int, special_tokens: list[str]):
    """``train_bpe`` on a file read as bytes (so ``\\r\\n`` stays as it is)."""
    with open(path, "rb") as f:
        return train_bpe(f.read().decode("utf-8"), vocab_size, special_tokens)


def check_against_oracle(impl, tmp_path, text: str, vocab_size: int, specials: list[str]) -> None:
    """Train the implementation and the naive oracle on ``text``: the merges agree (the vocabulary's
    layout has tests of its own)."""
    __tracebackhide__ = True
    from tests.diff import assert_merges_equal
    from tests.public.test_train_bpe import train

    _, merges = train(impl, tmp_path, text, vocab_size, specials)
    _, want_merges = train_bpe(text, vocab_size, specials)
    assert_merges_equal(merges, want_merges, word_counts=pretoken_counts(text, specials), pretokenize=impl.run_pretokenize)


# ---- the precomputed expectations the public tests read ---------------------------------------

EXPECTED_TRAINING = Path(__file__).resolve().parent.parent.parent / "fixtures" / "expected_training.json"

# name -> (fixture file, characters used or None for all, vocab_size, special tokens)
FIXTURE_TRAININGS = {
    "stories_4k": ("stories.txt", 4000, 350, ["<|endoftext|>"]),
    "multilingual": ("multilingual.txt", None, 350, []),
}


def expected_training() -> dict:
    """What ``fixtures/expected_training.json`` holds: this naive trainer's merges on each
    of :data:`FIXTURE_TRAININGS` (byte strings as hex). Rewrite the file with
    ``python -m tests.hidden.naive``."""
    out = {}
    for name, (file, n_chars, vocab_size, specials) in FIXTURE_TRAININGS.items():
        text = (EXPECTED_TRAINING.parent / file).read_bytes().decode("utf-8")
        text = text if n_chars is None else text[:n_chars]
        _, merges = train_bpe(text, vocab_size, specials)
        out[name] = {"file": file, "n_chars": n_chars, "vocab_size": vocab_size, "special_tokens": specials,
                     "merges": [[a.hex(), b.hex()] for a, b in merges]}
    return out


if __name__ == "__main__":
    import json

    EXPECTED_TRAINING.write_text(json.dumps(expected_training(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {EXPECTED_TRAINING}")
