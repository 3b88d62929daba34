"""Byte-level BPE training.

1. Count GPT-2 pre-tokens in the corpus, with special tokens as hard boundaries that are
   then dropped. Large files are cut into chunks at safe places (before a special token, or
   between a non-space and a space) and counted by worker processes that each read their
   own byte range, so no process ever holds the whole corpus.
2. Represent each distinct pre-token as a list of byte ids with its count, and count
   every adjacent pair once, weighted by the pre-token's count; remember which pre-tokens
   contain each pair.
3. Repeatedly merge the most frequent pair (ties: the lexicographically greatest pair of
   byte strings). Only the pre-tokens containing that pair are touched, and in each of them
   only the pairs next to a merged position change.

Vocabulary layout (GPT-2's): ids 0-255 are the single bytes, merge i creates id 256 + i,
special tokens come last in the order given.
"""

from __future__ import annotations

import heapq
import io
import os
from collections import Counter, defaultdict

import regex

from .pretokenize import GPT2_REGEX, special_tokens_regex, split_on_special_tokens

PARALLEL_MIN_CHARS = 4_000_000  # below this, a process pool costs more than it saves
CHUNK_BYTES = 2_000_000  # size of the pieces a large file is counted in (bounds worker memory)
_SAFE_CUT = regex.compile(r"(?<=\S)\s")  # a pre-token always ends between these two characters


def read_corpus(input_path: str | os.PathLike) -> str:
    """The corpus as text; ``ValueError`` naming the file if it is missing or not UTF-8."""
    path = os.fspath(input_path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ValueError(f"train_bpe: training file not found: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"train_bpe: training path is a directory: {path}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"train_bpe: {path} is not valid UTF-8 (byte {err.start})") from None


# ---- 1. counting pre-tokens ----------------------------------------------------------


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
    from concurrent.futures import ProcessPoolExecutor  # imported only when needed: it is slow to import

    total: Counter[str] = Counter()
    with ProcessPoolExecutor(workers) as pool:
        for counts in pool.map(_count_segments, batches):
            total.update(counts)
    return total


def _spans_special(text: str, cut: int, special_tokens: list[str]) -> bool:
    """Whether some occurrence of a special token starts before ``cut`` and ends after it."""
    return any(tok in text[max(cut - len(tok) + 1, 0) : cut + len(tok) - 1] for tok in special_tokens)


def _find_cut(text: str, start: int, end: int, special_tokens: list[str]) -> int | None:
    """The first position in ``text[start:end]`` where the text may be cut in two and each
    part counted on its own with the same result: just before a special token, or else
    between a non-space and a space (a pre-token always ends there), and never inside a
    special token. ``None`` if there is none."""
    special_regex = special_tokens_regex(special_tokens)
    for pattern in [special_regex, _SAFE_CUT]:
        if pattern is None:
            continue
        for m in pattern.finditer(text, start, end):
            if not _spans_special(text, m.start(), special_tokens):
                return m.start()
    return None


def _next_cut(f: io.BufferedReader, pos: int, total: int, special_tokens: list[str]) -> int | None:
    """Byte offset of a safe cut (see ``_find_cut``) at or soon after ``pos`` in the open
    file ``f`` of ``total`` bytes, reading a window that grows until one is found."""
    margin = max((len(t) for t in special_tokens), default=1)  # context needed on each side
    window = 1 << 16
    while True:
        f.seek(pos)
        data = f.read(window)
        at_end = pos + len(data) >= total
        skip = 0  # start at a character boundary: skip UTF-8 continuation bytes
        while skip < len(data) and data[skip] & 0xC0 == 0x80:
            skip += 1
        text = data[skip:].decode("utf-8", errors="ignore")  # a bad file fails later, exactly
        end = len(text) if at_end else len(text) - 2 * margin
        cut = _find_cut(text, margin, end, special_tokens)
        if cut is not None:
            return pos + skip + len(text[:cut].encode("utf-8"))
        if at_end:
            return None
        window *= 4


def chunk_offsets(path: str | os.PathLike, size: int, special_tokens: list[str]) -> list[int]:
    """Byte offsets cutting a file into chunks of about ``size`` bytes at safe places; the
    first is 0 and the last is the file's size."""
    total = os.path.getsize(path)
    offsets = [0]
    with open(path, "rb") as f:
        while offsets[-1] + size < total:
            cut = _next_cut(f, offsets[-1] + size, total, special_tokens)
            if cut is None:
                break
            offsets.append(cut)
    offsets.append(total)
    return offsets


def _count_file_chunk(path: str, start: int, end: int, special_tokens: list[str]) -> Counter[str]:
    """Pre-token counts of the bytes ``start:end`` of a file (run in a worker process)."""
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(end - start).decode("utf-8")  # UnicodeDecodeError: see count_file
    return count_pretokens(text, special_tokens, workers=1)


def count_file(input_path: str | os.PathLike, special_tokens: list[str], workers: int | None = None) -> Counter[str]:
    """``count_pretokens`` of a file's text, with the errors of ``read_corpus``. Large files are
    counted in chunks by a pool of worker processes, each reading its own byte range."""
    workers = workers or os.cpu_count() or 1
    try:
        size = os.path.getsize(input_path)
    except OSError:
        size = 0  # read_corpus below raises the right error
    if workers == 1 or size < PARALLEL_MIN_CHARS:
        return count_pretokens(read_corpus(input_path), special_tokens, workers=1)
    try:
        split_on_special_tokens("", special_tokens)  # invalid special tokens: ValueError
    except ValueError:
        read_corpus(input_path)  # a bad file is reported first, as for small files
        raise
    offsets = chunk_offsets(input_path, CHUNK_BYTES, special_tokens)
    n = len(offsets) - 1
    from concurrent.futures import ProcessPoolExecutor

    total: Counter[str] = Counter()
    try:
        # Only picklable arguments and a module-level function: works with 'fork' and 'spawn'.
        with ProcessPoolExecutor(min(workers, n)) as pool:
            for counts in pool.map(
                _count_file_chunk, [str(input_path)] * n, offsets[:-1], offsets[1:], [special_tokens] * n
            ):
                total.update(counts)
    except UnicodeDecodeError:
        read_corpus(input_path)  # raises the ValueError naming the first bad byte
        raise
    return total


# ---- 2-3. merging --------------------------------------------------------------------


def _reversed_key(token: bytes) -> str:
    """A string whose order is the reverse of ``token``'s byte order (for a min-heap)."""
    return "".join(chr(256 - b) for b in token) + chr(300)


def _merge_word(
    word: list[int], w: int, freq: int, pair: tuple[int, int], new_id: int,
    pair_counts: dict[tuple[int, int], int], where: dict[tuple[int, int], list[int]],
    new_pairs: set[tuple[int, int]],
) -> None:
    """Merge every occurrence of ``pair`` in ``word`` (pre-token number ``w``, seen ``freq``
    times) in place, left to right, and update the counts of the neighbouring pairs:
    in ``x a b y`` -> ``x N y`` the pairs (x, a) and (b, y) lose ``freq``, (x, N) and (N, y)
    gain it. Pairs that gain are new (they contain ``new_id``): they are added to
    ``new_pairs``, and ``w`` to their lists in the index ``where``. The count of ``pair``
    itself is not maintained.
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
    word_counts = count_file(input_path, special_tokens)

    vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
    keys: dict[int, str] = {i: _reversed_key(b) for i, b in vocab.items()}
    words: list[list[int]] = []
    freqs: list[int] = []
    for word, count in word_counts.items():
        ids = list(word.encode("utf-8"))
        if len(ids) > 1:
            words.append(ids)
            freqs.append(count)
    del word_counts

    pair_counts: dict[tuple[int, int], int] = defaultdict(int)
    # pair -> the words containing it. Lists, not sets, to save memory: a word may be listed
    # twice, or still listed after it lost the pair; merging it again then changes nothing.
    where: dict[tuple[int, int], list[int]] = defaultdict(list)
    for w, ids in enumerate(words):
        freq = freqs[w]
        for pair in zip(ids, ids[1:]):
            pair_counts[pair] += freq
            where[pair].append(w)

    # A lazy max-heap: each pair with a positive count has one entry, whose count may be
    # too high (counts of old pairs only go down). A popped entry with a stale count is
    # pushed back with the current one; only pairs that gain (new pairs) are pushed at once.
    # Ties go to the greatest (bytes, bytes) pair: the reversed keys order them first.
    heap = [(-count, keys[p[0]], keys[p[1]], p) for p, count in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[bytes, bytes]] = []
    merge_word = _merge_word  # a local name is faster in the hot loop
    while len(merges) < n_merges and heap:
        neg_count, key_a, key_b, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if count != -neg_count:
            if count > 0:
                heapq.heappush(heap, (-count, key_a, key_b, pair))
            continue
        new_id = 256 + len(merges)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        keys[new_id] = _reversed_key(vocab[new_id])
        merges.append((vocab[pair[0]], vocab[pair[1]]))

        new_pairs: set[tuple[int, int]] = set()
        for w in set(where.pop(pair)):
            merge_word(words[w], w, freqs[w], pair, new_id, pair_counts, where, new_pairs)
        del pair_counts[pair]
        for p in new_pairs:
            count = pair_counts[p]
            if count > 0:
                heapq.heappush(heap, (-count, keys[p[0]], keys[p[1]], p))

    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab, merges
