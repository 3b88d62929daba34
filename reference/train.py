"""Byte-level BPE training.

1. Read the corpus, cut it at special tokens (hard boundaries that are then dropped), and
   count GPT-2 pre-tokens (in parallel for large inputs).
2. Represent each distinct pre-token as a list of byte ids with its count, and count
   every adjacent pair once, weighted by the pre-token's count.
3. Repeatedly merge the most frequent pair (ties: the lexicographically greatest pair of
   byte strings), updating only the counts of the pre-tokens that contain it.

Vocabulary layout (GPT-2's): ids 0-255 are the single bytes, merge i creates id 256 + i,
special tokens come last in the order given.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import regex

from .pretokenize import GPT2_REGEX, split_on_special_tokens
from .primitives import merge

PARALLEL_MIN_CHARS = 4_000_000  # below this, a process pool costs more than it saves
_SAFE_CUT = regex.compile(r"(?<=\S)\s")  # a pre-token always ends between these two characters


def read_corpus(input_path: str | os.PathLike) -> str:
    """The corpus as text; ``ValueError`` naming the file if it is missing or not UTF-8."""
    path = Path(input_path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"train_bpe: training file not found: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"train_bpe: training path is a directory: {path}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"train_bpe: {path} is not valid UTF-8 (byte {err.start})") from None


def _count_segments(segments: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for segment in segments:
        counts.update(GPT2_REGEX.findall(segment))
    return counts


def _split_large(segment: str, size: int) -> list[str]:
    """Cut one long special-free segment into pieces of about ``size`` at pre-token boundaries."""
    pieces, start = [], 0
    while len(segment) - start > size:
        m = _SAFE_CUT.search(segment, start + size)
        if m is None:
            break
        pieces.append(segment[start : m.start()])
        start = m.start()
    pieces.append(segment[start:])
    return pieces


def count_pretokens(text: str, special_tokens: list[str], workers: int | None = None) -> Counter[str]:
    """How often each pre-token occurs in ``text``, with special tokens removed as boundaries."""
    specials = set(special_tokens)
    segments = [p for p in split_on_special_tokens(text, special_tokens) if p not in specials]
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(text) < PARALLEL_MIN_CHARS:
        return _count_segments(segments)
    size = len(text) // (workers * 4) + 1
    batches: list[list[str]] = [[]]
    filled = 0
    for segment in segments:
        for piece in _split_large(segment, size):
            batches[-1].append(piece)
            filled += len(piece)
            if filled >= size:
                batches.append([])
                filled = 0
    total: Counter[str] = Counter()
    with ProcessPoolExecutor(workers) as pool:
        for counts in pool.map(_count_segments, batches):
            total.update(counts)
    return total


def _reversed_key(token: bytes) -> str:
    """A string whose order is the reverse of ``token``'s byte order (for a min-heap)."""
    return "".join(chr(256 - b) for b in token) + chr(300)


def train_bpe(
    input_path: str | os.PathLike, vocab_size: int, special_tokens: list[str]
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train a byte-level BPE tokenizer on a UTF-8 text file.

    Returns ``(vocab, merges)``: ``vocab`` maps id -> bytes (0-255 single bytes, 256 + i for
    merge i, then the special tokens), ``merges`` lists the merged pairs in creation order.
    """
    special_tokens = list(dict.fromkeys(special_tokens))
    n_merges = vocab_size - 256 - len(special_tokens)
    if n_merges < 0:
        raise ValueError(
            f"train_bpe: vocab_size={vocab_size} is too small: it must be at least "
            f"256 + {len(special_tokens)} special tokens = {256 + len(special_tokens)}"
        )
    text = read_corpus(input_path)
    word_counts = count_pretokens(text, special_tokens)

    vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
    keys: dict[int, str] = {i: _reversed_key(b) for i, b in vocab.items()}
    words: list[list[int]] = []
    freqs: list[int] = []
    for word, count in word_counts.items():
        ids = list(word.encode("utf-8"))
        if len(ids) > 1:
            words.append(ids)
            freqs.append(count)

    pair_counts: dict[tuple[int, int], int] = defaultdict(int)
    where: dict[tuple[int, int], set[int]] = defaultdict(set)  # pair -> words containing it
    for w, ids in enumerate(words):
        for pair in zip(ids, ids[1:]):
            pair_counts[pair] += freqs[w]
            where[pair].add(w)

    def entry(pair: tuple[int, int], count: int) -> tuple[int, str, str, tuple[int, int]]:
        return (-count, keys[pair[0]], keys[pair[1]], pair)

    heap = [entry(pair, count) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < n_merges and heap:
        neg_count, _, _, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -neg_count or neg_count == 0:
            continue  # stale entry: this pair's count changed after it was pushed
        new_id = 256 + len(merges)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        keys[new_id] = _reversed_key(vocab[new_id])
        merges.append((vocab[pair[0]], vocab[pair[1]]))

        changed: set[tuple[int, int]] = set()
        for w in where.pop(pair):
            old = words[w]
            new = merge(old, pair, new_id)
            if len(new) == len(old):
                continue
            freq = freqs[w]
            for p in zip(old, old[1:]):
                pair_counts[p] -= freq
                changed.add(p)
            for p in zip(new, new[1:]):
                pair_counts[p] += freq
                where[p].add(w)
                changed.add(p)
            words[w] = new
        pair_counts.pop(pair, None)
        changed.discard(pair)
        for p in changed:
            count = pair_counts[p]
            if count > 0:
                heapq.heappush(heap, entry(p, count))
            else:
                del pair_counts[p]

    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab, merges

