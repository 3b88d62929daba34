"""Assertions that say where two results first differ, never dumping whole lists.

Each ``assert_*`` raises ``AssertionError`` with a short message: what was expected, what
came back, and the first place they part (merge #37, token 12, byte 5), with context.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from harness.values import short_repr

from .oracles import gpt2_pattern

CONTEXT = 5  # items of context shown on each side of a difference


def _count(n: int, noun: str) -> str:
    """``1 id``, ``3 ids``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _short(value: Any, limit: int = 80) -> str:
    return short_repr(value, limit)


def first_difference(expected: Sequence, actual: Sequence) -> int | None:
    """Index of the first differing item (or of the end of the shorter one); None if equal."""
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            return i
    if len(expected) != len(actual):
        return min(len(expected), len(actual))
    return None


def _token(i: Any, vocab: Mapping[int, bytes] | None) -> str:
    if vocab is None or i not in vocab:
        return _short(i)
    return f"{_short(i)} {_short(vocab[i])}"


def _tokens(ids: Sequence, vocab: Mapping[int, bytes] | None) -> str:
    """Ids as a list of :func:`_token`'s texts, not of their quoted reprs."""
    return "[" + ", ".join(_token(i, vocab) for i in ids) + "]"


def assert_ids_equal(
    actual: list[int],
    expected: list[int],
    *,
    vocab: Mapping[int, bytes] | None = None,
    text: str | None = None,
    what: str = "ids",
    pretokenize: Callable[[str], Sequence[str]] | None = None,
) -> None:
    """Equal id lists, or a message naming the first differing position, both tokens'
    bytes and the text around it. ``pretokenize``, the submission's (called only on a
    difference, for a ``text`` of at most :data:`PRETOKENIZED_CHARS`): when its pre-tokens of
    ``text`` part from GPT-2's at or before the byte where the ids part, the message says so
    (its ``encode`` may pre-tokenize with it: the expected ids are of GPT-2's pre-tokens)."""
    __tracebackhide__ = True
    pos = first_difference(expected, actual)
    if pos is None:
        return
    offset = byte_offset(expected, pos, vocab) if vocab is not None else None
    apart = None
    if offset is not None and text is not None and pretokenize is not None and len(text) <= PRETOKENIZED_CHARS:
        apart = pretokens_apart(text, pretokenize)
        apart = apart if apart is not None and apart.byte <= offset else None
    lines = [f"{what} differ at position {pos} (expected {_count(len(expected), 'id')}, got {len(actual)})"
             + (f"; your pretokenize parts from GPT-2's no later (below): if your encode pre-tokenizes with it, "
                f"{FIX_PRETOKENIZE}" if apart is not None else "")]
    exp = _token(expected[pos], vocab) if pos < len(expected) else "<end>"
    got = _token(actual[pos], vocab) if pos < len(actual) else "<end>"
    lines.append(f"  expected: {exp}")
    lines.append(f"  got:      {got}")
    lo = max(pos - CONTEXT, 0)
    lines.append(f"  expected[{lo}:{pos + CONTEXT + 1}] = {_tokens(expected[lo:pos + CONTEXT + 1], vocab)}")
    lines.append(f"  got[{lo}:{pos + CONTEXT + 1}]      = {_tokens(actual[lo:pos + CONTEXT + 1], vocab)}")
    if offset is not None and text is not None:
        data = text.encode("utf-8")
        lines.append(f"  at byte {offset} (character {character_at(data, offset)}) of the input")
        lines.append(f"  input around it: {data[max(offset - 20, 0):offset + 20]!r}")
        if apart is not None:
            lines.append(f"  {apart} at byte {apart.byte}, no later than the ids differ")
    elif offset is not None:
        lines.append(f"  at byte {offset} of the input")
    elif text is not None:
        lines.append(f"  input starts: {_short(text)}")
    raise AssertionError("\n".join(lines))


def byte_offset(ids: Sequence, pos: int, vocab: Mapping[int, bytes]) -> int | None:
    """The byte of the input where id ``pos`` of ``ids`` starts (None if an id before it is unknown)."""
    try:
        return sum(len(vocab[i]) for i in ids[:pos])
    except KeyError:
        return None


def character_at(data: bytes, offset: int) -> int:
    """The character of a text (``data``, its UTF-8) where byte ``offset`` lies."""
    return len(data[:offset].decode("utf-8", errors="ignore"))


# a pre-tokenizer's difference is looked for on texts up to this long (the pre-tokens of a
# 1 MB text, a speed test's, would cost the submission's time and say what shorter tests say)
PRETOKENIZED_CHARS = 100_000
FIX_PRETOKENIZE = "fix pretokenize first (tests/public/test_pretokenize.py)"


@dataclass(frozen=True)
class PretokensApart:
    """Where a submission's pre-tokens of a text first part from GPT-2's: pre-token ``index``,
    GPT-2's and theirs there (``<end>`` past the last), and the byte of the text it starts at."""

    index: int
    expected: str
    got: str
    byte: int

    def __str__(self) -> str:
        return (f"your pretokenize already differs from GPT-2's on this text at pre-token #{self.index} "
                f"(expected {self.expected}, got {self.got})")


def pretokens_apart(text: str, theirs: Callable[[str], Sequence[str]], words: Sequence[str] | None = None) -> PretokensApart | None:
    """Where ``theirs(text)`` first parts from ``words`` (GPT-2's pre-tokens of ``text``, from
    its pattern when not given); None where they agree or ``theirs`` raises (not written yet, or
    broken: its own tests say so)."""
    try:
        got = list(theirs(text))
    except Exception:
        return None
    words = regex.findall(gpt2_pattern(), text) if words is None else words
    k = first_difference(words, got)
    if k is None:
        return None
    want, mine = (_short(w[k], 40) if k < len(w) else "<end>" for w in (words, got))
    return PretokensApart(k, want, mine, len("".join(words[:k]).encode("utf-8")))


def _segments(ids: Sequence, special_ids: set) -> list[tuple[int, list]]:
    """``(position, ids)``: each special id alone, the other ids in runs as long as they go."""
    out: list[tuple[int, list]] = []
    for k, i in enumerate(ids):
        if i not in special_ids and out and out[-1][1][-1] not in special_ids:
            out[-1][1].append(i)
        else:
            out.append((k, [i]))
    return out


def _segment_text(segment: list, names: Mapping, vocab: Mapping[int, bytes]) -> str:
    if len(segment) == 1 and segment[0] in names:
        return f"the special token {_short(names[segment[0]])} (id {segment[0]})"
    shown = _tokens(segment[:8], vocab) + (f" ... ({len(segment)} ids)" if len(segment) > 8 else "")
    spelled = b"".join(vocab.get(i, b"") for i in segment)
    return f"ids {shown} spelling {_short(spelled)}"


def _piece_problem(piece: str, is_special: bool, segment: list, names: Mapping, vocab: Mapping[int, bytes]) -> str | None:
    """What is wrong with ``segment`` (not empty) as the ids of one piece; None if nothing."""
    if is_special:
        return None if len(segment) == 1 and names.get(segment[0]) == piece else ""
    if len(segment) == 1 and segment[0] in names:
        return ""
    unknown = next((i for i in segment if i not in vocab), None)
    if unknown is not None:
        return f"id {_short(unknown)} is no ordinary token's id (a special token's, or unknown)"
    data, want = b"".join(vocab[i] for i in segment), piece.encode("utf-8")
    if data == want:
        return None
    at = first_difference(want, data)
    if at == len(want):
        return f"they spell more than the piece: its {_count(at, 'byte')} and then {_short(data[at:at + 16])}"
    if at == len(data):
        return f"they spell less than the piece: its first {_count(at, 'byte')}, without {_short(want[at:at + 16])}"
    return f"their bytes part from the piece's at byte {at}: expected {_short(want[at:at + 16])}, got {_short(data[at:at + 16])}"


def assert_pieces_encoded(
    actual: list[int],
    pieces: Sequence[tuple[str, bool]],
    *,
    specials: Mapping[str, int],
    vocab: Mapping[int, bytes],
    what: str = "ids",
) -> None:
    """encode's ids checked against the text cut at its special tokens, ``(piece,
    is_special)`` in order, apart from how ordinary text is merged: each special must be its
    one id ``specials[piece]`` in its place, and the ids of each piece of ordinary text
    between them SOME tokenization of it: ids of ``vocab`` (the ordinary tokens, no special
    token's id among them) whose bytes joined are the piece's UTF-8 bytes. The ids are cut
    the same way (each special id alone, the other ids in runs), so ids that only spell the
    specials, or leave out text, differ. Otherwise a message naming the first piece that
    differs: its index, where it starts in the ids and the text, what was expected and got."""
    __tracebackhide__ = True
    names = {i: s for s, i in specials.items()}
    segments = _segments(actual, set(names))
    for k in range(max(len(pieces), len(segments))):
        piece, is_special = pieces[k] if k < len(pieces) else ("", False)
        position, segment = segments[k] if k < len(segments) else (len(actual), [])
        problem = _piece_problem(piece, is_special, segment, names, vocab) if k < len(pieces) and segment else ""
        if problem is None:
            continue
        expected = ("<end>" if k >= len(pieces) else f"the special token {_short(piece)} as its one id {specials[piece]}"
                    if is_special else f"ordinary text {_short(piece)}")
        text, start = "".join(p for p, _ in pieces), sum(len(p) for p, _ in pieces[:k])
        lines = [f"{what} differ at piece #{k} of the text cut at its special tokens (expected {_count(len(pieces), 'piece')}, "
                 f"your ids make {len(segments)}; piece #{k} starts at character {start} of the text, at position {position} "
                 "of the ids)", f"  expected: {expected}",
                 f"  got:      {_segment_text(segment, names, vocab) if segment else '<end>'}"]
        lines += [f"  {problem}"] if problem else []
        lines.append(f"  the text around it: {_short(text[max(start - 20, 0):start + 40])}")
        raise AssertionError("\n".join(lines))


def assert_word_ids_equal(actual: list[int], expected: list[int], text: str, words: list[str], theirs) -> None:
    """:func:`assert_ids_equal` for a word tokenizer's ids, saying where ``theirs(text)`` (the
    submission's pre-tokens of ``text``, asked only on a difference) first parts from
    ``words`` (GPT-2's): its pieces are the words, and ids number words by first
    appearance, so they part later than the words do."""
    __tracebackhide__ = True
    if first_difference(expected, actual) is None:
        return
    apart = pretokens_apart(text, theirs, words)
    try:
        assert_ids_equal(actual, expected, text=text)
    except AssertionError as err:
        if apart is None:
            raise
        first, _, rest = str(err).partition("\n")
        raise AssertionError(f"{first}; your pretokenize parts from GPT-2's (below), and its pieces are the words: "
                             f"{FIX_PRETOKENIZE}\n{rest}\n  {apart}") from None


def assert_text_equal(actual: str, expected: str, *, what: str = "text") -> None:
    """Equal strings, or the first differing character with context."""
    __tracebackhide__ = True
    pos = first_difference(expected, actual)
    if pos is None:
        return
    lo = max(pos - 20, 0)
    raise AssertionError(
        f"{what} differs at character {pos} (expected {_count(len(expected), 'character')}, got {len(actual)})\n"
        f"  expected[{lo}:{pos + 20}] = {expected[lo:pos + 20]!r}\n"
        f"  got[{lo}:{pos + 20}]      = {actual[lo:pos + 20]!r}"
    )


def merge_call(ids: Sequence, pair: Any, new_id: Any) -> str:
    """``merge(ids, pair, new_id)`` as a call to read under a difference: a long ``ids`` shows
    its first items and its length, so that the pair and the new id always show."""
    whole = repr(list(ids)) if len(ids) <= 40 else ""
    shown = whole if whole and len(whole) <= 160 else f"{_short(list(ids), 120)} ({len(ids)} ids)"
    return f"merge({shown}, {_short(pair)}, {_short(new_id)})"


def assert_items_equal(actual: Sequence, expected: Sequence, *, what: str = "item", call: str = "") -> None:
    """Equal sequences (pre-tokens, pieces), or the first differing item with neighbours;
    ``call``: the call that returned ``actual``, shown under the first line."""
    __tracebackhide__ = True
    pos = first_difference(expected, actual)
    if pos is None:
        return
    lo = max(pos - 3, 0)
    exp = _short(expected[pos]) if pos < len(expected) else "<end>"
    got = _short(actual[pos]) if pos < len(actual) else "<end>"
    shown = f"  call: {call[:200]}\n" if call else ""
    raise AssertionError(
        f"{what} at position {pos} differs (expected {_count(len(expected), what)}, got {len(actual)})\n{shown}"
        f"  expected: {exp}\n  got:      {got}\n"
        f"  expected[{lo}:{pos + 4}] = {_short(list(expected[lo:pos + 4]), 200)}\n"
        f"  got[{lo}:{pos + 4}]      = {_short(list(actual[lo:pos + 4]), 200)}"
    )


def _named(items: list[str], limit: int = 5) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def assert_counts_equal(actual: Mapping, expected: Mapping, *, call: str = "") -> None:
    """Equal pair counts, or the first pair (in sorted order) whose count differs, with both
    counts: a missing or extra pair is named as such, not put beside its neighbour; where more
    than one differs, the missing, extra and wrong-count pairs each by pair. ``call``: the
    call that returned ``actual``, shown under the first line."""
    __tracebackhide__ = True
    shown = f"\n  call: {call[:200]}" if call else ""
    if not isinstance(actual, Mapping):
        raise AssertionError(f"pair counts should be a dict of pair -> count, got {type(actual).__name__}: "
                             f"{_short(actual)}{shown}\n  expected: {_short(dict(expected), 200)}")
    if dict(actual) == dict(expected):
        return
    pairs = set(actual) | set(expected)
    try:
        ordered = sorted(pairs)
    except TypeError:  # keys of mixed types: still one order
        ordered = sorted(pairs, key=repr)
    differing = [p for p in ordered if actual.get(p) != expected.get(p)]
    pair = differing[0]

    def count(counts: Mapping, absent: str) -> str:
        return _short(counts[pair]) if pair in counts else f"none ({absent})"

    lines = [f"pair counts differ first at pair {_short(pair)} (expected {_count(len(expected), 'pair')}, got {len(actual)}; "
             f"{_count(len(differing), 'pair')} differ{'s' if len(differing) == 1 else ''}){shown}",
             f"  expected: {count(expected, 'the pair does not occur in the ids')}",
             f"  got:      {count(actual, 'the pair is missing')}"]
    if len(differing) > 1:
        kinds = {
            "missing (expected, not in yours)": [_short(p) for p in differing if p not in actual],
            "extra (in yours, not expected)": [f"{_short(p)}: {_short(actual[p])}" for p in differing if p not in expected],
            "wrong count": [f"{_short(p)}: {_short(actual[p])} instead of {_short(expected[p])}"
                            for p in differing if p in actual and p in expected],
        }
        lines += [f"  {kind}: {_named(named)}" for kind, named in kinds.items() if named]
    raise AssertionError("\n".join(lines))


def pair_counts_after(
    word_counts: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]
) -> Counter[tuple[bytes, bytes]]:
    """Pair counts over pre-tokens (bytes -> count) after applying ``merges`` in order.
    Deliberately naive and independent of any implementation: used to explain failures."""
    counts: Counter[tuple[bytes, bytes]] = Counter()
    for word, n in word_counts.items():
        parts = [bytes([b]) for b in word]
        for a, b in merges:
            i, out = 0, []
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        for pair in zip(parts, parts[1:]):
            counts[pair] += n
    return counts


def assert_merges_equal(
    actual: list[tuple[bytes, bytes]],
    expected: list[tuple[bytes, bytes]],
    *,
    word_counts: Mapping[bytes, int] | None = None,
    pretokenize: Callable[[str], Sequence[str]] | None = None,
) -> None:
    """Equal merge lists, or the first differing merge index, both pairs and, given the
    corpus's pre-token counts, how often each pair occurred at that step. ``pretokenize``, the
    submission's (called only on a difference): when its pre-tokens of the corpus's pieces
    (``word_counts.pieces``, :class:`tests.oracles.WordCounts`) part from GPT-2's, the message
    says so, since training counts pairs inside them."""
    __tracebackhide__ = True
    pos = first_difference(expected, actual)
    if pos is None:
        return
    hint = _training_pretokens(word_counts, pretokenize)
    fix = f"; your pretokenize parts from GPT-2's on the training text (below): {FIX_PRETOKENIZE}" if hint else ""
    if pos >= len(actual) or pos >= len(expected):
        raise AssertionError(
            f"expected {_count(len(expected), 'merge')}, got {len(actual)}; the first {pos} agree"
            + (f"; the next expected merge is #{pos} {_short(expected[pos])}" if pos < len(expected) else f"; extra merge #{pos} {_short(actual[pos])}")
            + fix + hint
        )
    lines = [f"merge #{pos} differs (the first {pos} merges agree){fix}", f"  expected: {_short(expected[pos])}", f"  got:      {_short(actual[pos])}"]
    if word_counts is not None:
        counts = pair_counts_after(word_counts, expected[:pos])
        want, got = counts.get(expected[pos], 0), counts.get(actual[pos], 0)
        lines[1] += f"  occurring {want} times at that step"
        lines[2] += f"  occurring {got} times at that step"
        if got == 0 and want > 0:
            lines.append("  your pair occurs inside no pre-token at that step: pairs are counted between adjacent "
                         "tokens of one pre-token only (never across two pre-tokens or a special token), as they "
                         "are after the earlier merges; look for text not cut into pre-tokens, or a count an "
                         "earlier merge should have lowered")
        elif got < want:
            lines.append(f"  your pair is not the most frequent at that step ({got} < {want}): your pair counts "
                         "differ from these: counts updated wrongly after an earlier merge, pre-tokens not "
                         "weighted by how often they occur, or text cut or dropped where it is split or read")
        if want == got:
            lines.append("  the counts tie: the tie must go to the lexicographically greatest pair of byte strings; "
                         "if yours does, your counts differ from these: text cut or dropped where it is split or "
                         "read in chunks (say at a chunk's end), or counts updated wrongly after an earlier merge "
                         "(say where a pre-token holds the merged pair twice in a row: merging (b, a) in 'baba' "
                         "removes its one (a, b) once, not twice)")
    raise AssertionError("\n".join(lines) + hint)


def _training_pretokens(word_counts: Any, pretokenize: Callable[[str], Sequence[str]] | None) -> str:
    """The line (newline first) saying where ``pretokenize`` parts from GPT-2's pre-tokens of the
    training text's longest piece, or "" (no pieces or pretokenize given, a piece longer than
    :data:`PRETOKENIZED_CHARS`, or they agree). One call only: a known-bug diagnosis replays a
    failing test's last few calls, and the training call must stay among them."""
    pieces = getattr(word_counts, "pieces", None)
    if pretokenize is None or not pieces:
        return ""
    piece = max(pieces, key=len)
    apart = pretokens_apart(piece, pretokenize) if len(piece) <= PRETOKENIZED_CHARS else None
    if apart is None:
        return ""
    return (f"\n  {apart}, in the training text's piece {_short(piece, 40)}: training counts pairs inside "
            f"pre-tokens, so its merges follow yours")


def assert_vocab_equal(actual: Mapping[int, bytes], expected: Mapping[int, bytes]) -> None:
    """Equal vocabularies, or the first id (in order) where they differ."""
    __tracebackhide__ = True
    if actual == expected:
        return
    for i in sorted(set(actual) | set(expected)):
        if actual.get(i) != expected.get(i):
            raise AssertionError(
                f"vocab differs first at id {i} (expected {len(expected)} entries, got {len(actual)})\n"
                f"  expected: {_short(expected.get(i, '<missing>'))}\n  got:      {_short(actual.get(i, '<missing>'))}"
            )
