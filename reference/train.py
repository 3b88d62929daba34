"""Byte-level BPE training in three steps (``tests/hidden/naive.py``'s naive trainer is the same
algorithm without the bookkeeping that makes it fast):

1. Count: how often each GPT-2 pre-token occurs in the file, special tokens being hard
   boundaries that are dropped (``count_file``, in ``pretoken_counts.py``: large files are
   counted in chunks by worker processes).
2. Index: each distinct pre-token becomes a "word", the list of its byte ids, with its
   count; every adjacent pair is counted once, weighted by its word's count, and an index
   lists the words holding each pair (``as_words``, ``index_pairs``).
3. Merge loop: repeatedly merge the most frequent pair, ties going to the lexicographically
   greatest pair of byte strings (``merge_loop``). Only the words holding that pair are
   touched, and in each of them only the pairs next to a merged position change.

Vocabulary layout (GPT-2's): ids 0-255 are the single bytes, merge i creates id 256 + i,
special tokens come last in the order given.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter, defaultdict

from .pretoken_counts import count_file

Pair = tuple[int, int]


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
    words, freqs = as_words(count_file(input_path, special_tokens))  # 1. count
    pair_counts, where = index_pairs(words, freqs)  # 2. index
    vocab, merges = merge_loop(words, freqs, pair_counts, where, n_merges)  # 3. merge loop
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab, merges


# ---- 2. words and the pair index ------------------------------------------------------


def as_words(word_counts: Counter[str]) -> tuple[list[list[int]], list[int]]:
    """The pre-tokens of two bytes or more as lists of byte ids, and their counts (a single
    byte holds no pair, so it can never change).

    >>> as_words(Counter({"hi": 3, "!": 1, "é": 2}))
    ([[104, 105], [195, 169]], [3, 2])
    """
    words: list[list[int]] = []
    freqs: list[int] = []
    for word, count in word_counts.items():
        ids = list(word.encode("utf-8"))
        if len(ids) > 1:
            words.append(ids)
            freqs.append(count)
    return words, freqs


def index_pairs(words: list[list[int]], freqs: list[int]) -> tuple[dict[Pair, int], dict[Pair, list[int]]]:
    """Each adjacent pair's count, weighted by its word's count, and the index pair -> the
    words holding it. The index keeps lists, not sets, to save memory: a word may be listed
    twice, or still listed after it lost the pair; merging it again then changes nothing.

    >>> counts, where = index_pairs([[1, 2, 1, 2], [2, 1]], [3, 5])
    >>> dict(counts), dict(where)
    ({(1, 2): 6, (2, 1): 8}, {(1, 2): [0, 0], (2, 1): [0, 1]})
    """
    pair_counts: dict[Pair, int] = defaultdict(int)
    where: dict[Pair, list[int]] = defaultdict(list)
    for w, ids in enumerate(words):
        freq = freqs[w]
        for pair in zip(ids, ids[1:]):
            pair_counts[pair] += freq
            where[pair].append(w)
    return pair_counts, where


# ---- 3. the merge loop ----------------------------------------------------------------


def merge_loop(
    words: list[list[int]], freqs: list[int], pair_counts: dict[Pair, int], where: dict[Pair, list[int]],
    n_merges: int,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Merge the most frequent pair ``n_merges`` times, or until no pair is left; returns
    the vocabulary of the bytes and merged tokens, and the merges. ``words``,
    ``pair_counts`` and ``where`` (from ``index_pairs``) are updated in place.

    The pairs wait in a lazy max-heap: each pair with a positive count has one entry,
    whose count may be too high (counts of old pairs only go down); ``pop_most_frequent``
    corrects it. Ties go to the greatest (bytes, bytes) pair: ``reversed_key`` orders them
    first. Here "ab" and "cd" (once each) tie, and (c, d) wins:

    >>> words, freqs = [[97, 98], [99, 100]], [1, 1]
    >>> merge_loop(words, freqs, *index_pairs(words, freqs), n_merges=5)[1]
    [(b'c', b'd'), (b'a', b'b')]
    """
    vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
    keys: dict[int, str] = {i: reversed_key(b) for i, b in vocab.items()}
    heap = [(-count, keys[p[0]], keys[p[1]], p) for p, count in pair_counts.items()]
    heapq.heapify(heap)
    merges: list[tuple[bytes, bytes]] = []
    merge = merge_word  # a local name is faster in the hot loop
    while len(merges) < n_merges and (pair := pop_most_frequent(heap, pair_counts)) is not None:
        new_id = 256 + len(merges)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        keys[new_id] = reversed_key(vocab[new_id])
        merges.append((vocab[pair[0]], vocab[pair[1]]))

        new_pairs: set[Pair] = set()
        for w in set(where.pop(pair)):
            merge(words[w], w, freqs[w], pair, new_id, pair_counts, where, new_pairs)
        del pair_counts[pair]
        for p in new_pairs:  # only pairs that gain are pushed at once: they are new
            count = pair_counts[p]
            if count > 0:
                heapq.heappush(heap, (-count, keys[p[0]], keys[p[1]], p))
    return vocab, merges


def reversed_key(token: bytes) -> str:
    """A string whose order is the reverse of ``token``'s byte order (for a min-heap).

    >>> sorted([b"a", b"ab", b"b"], key=reversed_key)
    [b'b', b'ab', b'a']
    """
    return "".join(chr(256 - b) for b in token) + chr(300)


def pop_most_frequent(heap: list[tuple[int, str, str, Pair]], pair_counts: dict[Pair, int]) -> Pair | None:
    """Pop the heap's best pair whose entry holds its current count; a stale entry met on
    the way is pushed back with the current count, or dropped if that is 0. ``None`` when
    no pair is left. Here (1, 2) went down from 5 to 3 since it was pushed:

    >>> heap = [(-5, "a", "a", (1, 2)), (-4, "b", "b", (3, 4))]
    >>> pop_most_frequent(heap, {(1, 2): 3, (3, 4): 4}), heap
    ((3, 4), [(-3, 'a', 'a', (1, 2))])
    """
    while heap:
        neg_count, key_a, key_b, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if count == -neg_count:
            return pair
        if count > 0:
            heapq.heappush(heap, (-count, key_a, key_b, pair))
    return None


def merge_word(
    word: list[int], w: int, freq: int, pair: Pair, new_id: int,
    pair_counts: dict[Pair, int], where: dict[Pair, list[int]], new_pairs: set[Pair],
) -> None:
    """Merge every occurrence of ``pair`` in ``word`` (word number ``w``, seen ``freq``
    times) in place, left to right, and update the counts of the neighbouring pairs:
    in ``x a b y`` -> ``x N y`` the pairs (x, a) and (b, y) lose ``freq``, (x, N) and (N, y)
    gain it. Pairs that gain are new (they contain ``new_id``): they are added to
    ``new_pairs``, and ``w`` to their lists in the index ``where``. The count of ``pair``
    itself is not maintained.

    >>> word, counts, where, new = [1, 2, 3], {(1, 2): 2, (2, 3): 2}, defaultdict(list), set()
    >>> merge_word(word, 0, 2, (1, 2), 9, counts, where, new)
    >>> word, counts, dict(where), new
    ([9, 3], {(1, 2): 2, (2, 3): 0, (9, 3): 2}, {(9, 3): [0]}, {(9, 3)})
    """
    a, b = pair
    find = word.index
    get = pair_counts.get
    i = 0
    n = len(word)
    while True:
        try:
            i = find(a, i, n - 1)  # a at the last position cannot start the pair
        except ValueError:
            return
        if word[i + 1] != b:
            i += 1
            continue
        if i > 0:
            x = word[i - 1]  # may already be new_id, merged just before
            pair_counts[x, a] -= freq
            left = (x, new_id)
            pair_counts[left] = get(left, 0) + freq
            new_pairs.add(left)
            where[left].append(w)
        if i + 2 < n:
            y = word[i + 2]
            pair_counts[b, y] -= freq
            right = (new_id, y)
            pair_counts[right] = get(right, 0) + freq
            new_pairs.add(right)
            where[right].append(w)
        word[i : i + 2] = [new_id]
        n -= 1
        i += 1
