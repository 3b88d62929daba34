"""Failure messages for ``encode_iterable``: the first differing id (as ``assert_ids_equal``
says it) plus where the chunk boundaries fell around it, since a boundary inside a
pre-token or a special token is the usual cause."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate

from .diff import assert_ids_equal, byte_offset, character_at, first_difference

WINDOW = 30  # characters of text shown on each side of the difference
MAX_PIECES = 8  # chunk pieces shown at most


def char_offset(expected: Sequence[int], pos: int, vocab: Mapping[int, bytes], text: str) -> int | None:
    """The character of ``text`` where expected id ``pos`` starts (None if an id is unknown)."""
    nbytes = byte_offset(expected, pos, vocab)
    return None if nbytes is None else character_at(text.encode("utf-8"), nbytes)


def chunks_around(chunks: Sequence[str], at: int) -> str:
    """The chunks that cover characters ``at - WINDOW`` to ``at + WINDOW`` of the joined
    text, clipped to that window, as ``'…lo\\n' | '   wor' | 'ld…'``: ``|`` is a boundary."""
    ends = list(accumulate(len(c) for c in chunks))
    lo, hi = max(at - WINDOW, 0), at + WINDOW
    pieces, start = [], 0
    for chunk, end in zip(chunks, ends):
        if end > lo and start < hi:
            piece = chunk[max(lo - start, 0) : hi - start]
            pieces.append(("…" if start < lo else "") + repr(piece) + ("…" if end > hi else ""))
        start = end
        if start >= hi:
            break
    if len(pieces) > MAX_PIECES:
        pieces = pieces[: MAX_PIECES // 2] + ["..."] + pieces[-MAX_PIECES // 2 :]
    return " | ".join(pieces)


def assert_stream_ids_equal(
    actual: list[int],
    expected: list[int],
    chunks: Sequence[str],
    *,
    vocab: Mapping[int, bytes] | None = None,
    what: str = "encode_iterable ids",
    encode: Callable[[str], list[int]] | None = None,
) -> None:
    """Equal ids, or ``assert_ids_equal``'s message plus the chunk boundaries around the
    first difference (``chunks`` joined is the text that was encoded). ``encode``, the same
    tokenizer's (called only on a difference, for a text of at most :data:`WHOLE_CHARS`): when
    its ids of the whole text already differ there, the message says so instead of blaming
    the chunks, whose boundaries are then not the cause."""
    __tracebackhide__ = True
    text = "".join(chunks)
    try:
        assert_ids_equal(actual, expected, vocab=vocab, text=text, what=what)
        return
    except AssertionError as err:
        message = str(err)
    pos = first_difference(expected, actual)
    whole = encode_apart(encode, text, expected, pos) if encode is not None and len(text) <= WHOLE_CHARS else None
    if whole is not None:
        raise AssertionError(f"{message}\n  {whole}") from None
    at = char_offset(expected, pos, vocab, text) if vocab is not None else None
    if pos == len(actual) < len(expected):
        # the ids are a prefix of the expected ones: they end before the input does, whether the
        # stream stopped reading there or read on and never encoded what it held back at the end
        where = "" if at is None else f" at character {at} of {len(text)}, in chunk {chunk_at(chunks, at) + 1} of {len(chunks)}"
        first, _, rest = message.partition("\n")
        message = (
            f"{first}: encode_iterable's ids end{where}, before its input does: the text from there on was never "
            "encoded (read the iterable to its end, then encode the text still held back)" + (f"\n{rest}" if rest else "")
        )
    if at is None:
        note = f"  {len(chunks)} chunks; the first ones: {chunks_around(chunks, 0)}"
    else:
        note = f"  chunk boundaries (|) around character {at} (of {len(chunks)} chunks): {chunks_around(chunks, at)}"
        stopped = pos >= len(actual)  # a stream that ended early is not blamed on a boundary
        spanned = None if stopped else spanned_boundary(chunks, at, vocab.get(expected[pos], b"") if pos < len(expected) else b"")
        if spanned is not None and cut_at(actual, pos, vocab, text, at, spanned):
            # on the first line, which is all a hidden test shows and what a long message keeps
            first, _, rest = message.partition("\n")
            before, after = chunk_at(chunks, spanned - 1) + 1, chunk_at(chunks, spanned) + 1
            message = (
                f"{first}: the expected token {vocab[expected[pos]]!r} spans the chunk boundary at character "
                f"{spanned} (between chunk {before} and chunk {after} of {len(chunks)}), as if each chunk (for a file: "
                "each line) were encoded on its own; pre-tokens and special tokens must not be split at chunk boundaries"
                + (f"\n{rest}" if rest else "")
            )
            note += (
                "\n  a pre-token or special token may continue in the next chunk: encode_iterable must give the ids "
                "of the whole text, so keep the text after the last safe cut (the last place where no pre-token or "
                "special token can continue) and encode it with the next chunk"
            )
    raise AssertionError(message + "\n" + note) from None


# encode's ids of the whole text are asked for on texts up to this long (a fixture file)
WHOLE_CHARS = 200_000


def encode_apart(encode: Callable[[str], list[int]], text: str, expected: Sequence[int], pos: int) -> str | None:
    """The line saying that ``encode(text)`` (the same tokenizer's ids of the whole text) already
    differs from ``expected`` at or before position ``pos``, where the stream's ids part; None
    when it agrees there or raises (encode's own tests say what is wrong with it)."""
    try:
        ids = list(encode(text))
    except Exception:
        return None
    apart = first_difference(expected, ids)
    if apart is None or apart > pos:
        return None
    return (f"encode of the whole text, without chunks, already differs from the expected ids at position {apart}: "
            "the chunk boundaries are not the cause; fix encode first (tests/public/test_tiktoken_agreement.py)")


def cut_at(actual: Sequence[int], pos: int, vocab: Mapping[int, bytes], text: str, at: int, boundary: int) -> bool:
    """Whether the submission's ids from ``pos`` (which start at character ``at`` of ``text``)
    end a token exactly at character ``boundary``, as encoding each chunk on its own does; a
    token of theirs across it (another bug: specials ignored, other merges) is not that. An id
    missing from ``vocab`` leaves the question open: True."""
    offset, end = len(text[:at].encode("utf-8")), len(text[:boundary].encode("utf-8"))
    for i in actual[pos:]:
        if offset >= end:
            break
        if i not in vocab:
            return True
        offset += len(vocab[i])
    return offset == end


def chunk_at(chunks: Sequence[str], at: int) -> int:
    """The index of the chunk holding character ``at`` of the joined text (the last chunk
    for the end of the text)."""
    return next((i for i, end in enumerate(accumulate(len(c) for c in chunks)) if at < end), max(len(chunks) - 1, 0))


def first_id(ids, piece: str) -> int:
    """The first id ``ids`` (an ``encode_iterable`` over an endless stream of ``piece``)
    yields; a stream that ends without one fails saying so, not with a bare StopIteration."""
    __tracebackhide__ = True
    first = next(iter(ids), _NONE)
    assert first is not _NONE, (
        f"encode_iterable stopped without yielding an id while its input ({piece!r}, repeated) went on: "
        "it must yield ids as it reads, and end only when the iterable does"
    )
    return first


_NONE = object()


def spanned_boundary(chunks: Sequence[str], at: int, token: bytes) -> int | None:
    """The chunk boundary (a character offset of the joined text) strictly inside the token
    that starts at character ``at``, or None: a boundary there means the chunks were
    tokenized apart where the whole text makes one token."""
    width = len(token.decode("utf-8", errors="ignore"))
    return next((end for end in accumulate(len(c) for c in chunks) if at < end < at + width), None)


def explain_file_mismatch(tokenizer, path: str, expected: list[int], vocab: Mapping[int, bytes], rebuild: str) -> None:
    """For a probe whose id count or digest was wrong: stream the file's lines through
    ``tokenizer.encode_iterable`` again, keeping the ids this time, and fail with the first
    difference, how to make the input (``rebuild``, right after the difference's first line:
    feedback keeps a failure's first lines) and the chunk boundaries around it.
    Returns only if this second run gives the expected ids."""
    __tracebackhide__ = True
    with open(path, encoding="utf-8", newline="") as f:
        lines = list(f)
    actual = list(tokenizer.encode_iterable(iter(lines)))
    try:
        assert_stream_ids_equal(actual, expected, lines, vocab=vocab, encode=getattr(tokenizer, "encode", None))
    except AssertionError as err:
        message = str(err)
    else:
        return
    first, _, rest = message.partition("\n")  # how to make the input second: a long difference is cut at its end
    raise AssertionError(f"{first}\n  the input: {rebuild}, read line by line (open(path, newline=''))\n{rest}") from None
