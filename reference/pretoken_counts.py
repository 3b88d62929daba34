"""Step 1 of training, fast: how often each pre-token occurs in a corpus file.

``count_file(path, special_tokens)`` is ``count_pretokens`` of the file's text. A small
file is read whole and counted here. A large one is cut into chunks of about
``CHUNK_BYTES`` at safe places (just before a special token, or between a non-space and a
space: no pre-token spans either), and a pool of worker processes counts the chunks, each
reading only its own byte range, so no process ever holds the whole corpus; the chunks'
counts add up to the whole file's.
"""

from __future__ import annotations

import io
import os
from collections import Counter

from .pretokenize import _SAFE_CUT, GPT2_REGEX, special_tokens_regex, split_on_special_tokens

PARALLEL_MIN_CHARS = 4_000_000  # below this, a process pool costs more than it saves
CHUNK_BYTES = 2_000_000  # size of the pieces a large file is counted in (bounds worker memory)


def read_corpus(input_path: str | os.PathLike) -> str:
    """The corpus as text; ``ValueError`` naming the file if it is missing, a directory or
    not UTF-8.

    >>> read_corpus("no/such/file.txt")
    Traceback (most recent call last):
    ValueError: train_bpe: training file not found: no/such/file.txt
    """
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


def count_pretokens(text: str, special_tokens: list[str]) -> Counter[str]:
    """How often each pre-token occurs in ``text``, special tokens being boundaries that are
    dropped.

    >>> count_pretokens("a b<|endoftext|>a b", ["<|endoftext|>"])
    Counter({'a': 2, ' b': 2})
    """
    specials = set(special_tokens)
    counts: Counter[str] = Counter()
    for piece in split_on_special_tokens(text, special_tokens):
        if piece not in specials:
            counts.update(GPT2_REGEX.findall(piece))
    return counts


def count_file(input_path: str | os.PathLike, special_tokens: list[str], workers: int | None = None) -> Counter[str]:
    """``count_pretokens`` of a file's text, with the errors of ``read_corpus``. Files of
    ``PARALLEL_MIN_CHARS`` bytes or more are counted in chunks by a pool of ``workers``
    processes (default: one per core), each reading its own byte range."""
    workers = workers or os.cpu_count() or 1
    try:
        size = os.path.getsize(input_path)
    except OSError:
        size = 0  # read_corpus below raises the right error
    if workers == 1 or size < PARALLEL_MIN_CHARS:
        return count_pretokens(read_corpus(input_path), special_tokens)
    try:
        split_on_special_tokens("", special_tokens)  # invalid special tokens: ValueError
    except ValueError:
        read_corpus(input_path)  # a bad file is reported first, as for small files
        raise
    offsets = chunk_offsets(input_path, CHUNK_BYTES, special_tokens)
    n = len(offsets) - 1
    from concurrent.futures import ProcessPoolExecutor  # imported only when needed: it is slow to import

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


def _count_file_chunk(path: str, start: int, end: int, special_tokens: list[str]) -> Counter[str]:
    """Pre-token counts of the bytes ``start:end`` of a file (run in a worker process)."""
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(end - start).decode("utf-8")  # UnicodeDecodeError: see count_file
    return count_pretokens(text, special_tokens)


# ---- cutting a file into chunks that can be counted apart -----------------------------


def chunk_offsets(path: str | os.PathLike, size: int, special_tokens: list[str]) -> list[int]:
    """Byte offsets cutting a file into chunks of about ``size`` bytes at safe places (see
    ``_find_cut``); the first is 0 and the last is the file's size. Here the first safe
    place at or after byte 4 is before `` three``, and ``three`` has none:

    >>> import os, tempfile
    >>> d = tempfile.TemporaryDirectory()  # removed by d.cleanup() at the end
    >>> path = os.path.join(d.name, "corpus.txt")
    >>> with open(path, "w", encoding="utf-8") as f:
    ...     _ = f.write("one two three")
    >>> chunk_offsets(path, 4, [])
    [0, 7, 13]
    >>> d.cleanup()
    """
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


def _next_cut(f: io.BufferedReader, pos: int, total: int, special_tokens: list[str]) -> int | None:
    """Byte offset of a safe cut (see ``_find_cut``) at or soon after ``pos`` in the open
    file ``f`` of ``total`` bytes, reading a window that grows until one is found; ``None``
    if there is none before the end.

    >>> _next_cut(io.BytesIO(b"one two three"), 4, 13, []), _next_cut(io.BytesIO(b"a bc"), 2, 4, [])
    (7, None)
    """
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


def _find_cut(text: str, start: int, end: int, special_tokens: list[str]) -> int | None:
    """The first position in ``text[start:end]`` where the text may be cut in two and each
    part counted on its own with the same result: just before a special token, or else
    between a non-space and a space (a pre-token always ends there), and never inside a
    special token. ``None`` if there is none.

    >>> _find_cut("ab cd<|e|>", 0, 10, ["<|e|>"]), _find_cut("ab cd", 0, 5, [])
    (5, 2)
    """
    special_regex = special_tokens_regex(special_tokens)
    for pattern in [special_regex, _SAFE_CUT]:
        if pattern is None:
            continue
        for m in pattern.finditer(text, start, end):
            if not _spans_special(text, m.start(), special_tokens):
                return m.start()
    return None


def _spans_special(text: str, cut: int, special_tokens: list[str]) -> bool:
    """Whether some occurrence of a special token starts before ``cut`` and ends after it.

    >>> _spans_special("a<| |>b", 3, ["<| |>"]), _spans_special("a<| |>b", 1, ["<| |>"])
    (True, False)
    """
    return any(tok in text[max(cut - len(tok) + 1, 0) : cut + len(tok) - 1] for tok in special_tokens)
