"""What the public tests compare with, when no hand-worked value is written out: GPT-2's
pattern (tiktoken's own constant), pre-token counts that explain a training failure, and
*checks* of a rule on a result your code returned.

Nothing here computes a result of a graded function: the checks take your result and say
which rule it breaks (``None`` when it follows them all), and the trainings on the fixture
texts are compared with precomputed merges (``fixtures/expected_training.json``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import regex

from harness.values import short_repr

EXPECTED_TRAINING = Path(__file__).resolve().parent.parent / "fixtures" / "expected_training.json"


def gpt2_pattern() -> str:
    """GPT-2's pre-tokenizer pattern, exactly as tiktoken defines it."""
    try:
        from tiktoken_ext.openai_public import r50k_pat_str  # the constant, no download

        return r50k_pat_str
    except ImportError:  # pragma: no cover - older tiktoken
        import tiktoken

        return tiktoken.get_encoding("gpt2")._pat_str


class WordCounts(Counter):
    """A corpus's GPT-2 pre-token counts (:func:`word_counts`), with ``pieces``: the text
    pieces between its special tokens, which were pre-tokenized."""

    pieces: list[str] = []

    @classmethod
    def of(cls, pieces: list[str]) -> WordCounts:
        """The counts of GPT-2's pre-tokens of each of ``pieces`` (a constructor of its own:
        Counter's, which copies and pickles use, stays as it is)."""
        pattern = regex.compile(gpt2_pattern())
        counts = cls(pre.encode("utf-8") for piece in pieces for pre in pattern.findall(piece))
        counts.pieces = pieces
        return counts


def word_counts(text: str, special: str | None = None) -> WordCounts:
    """How often each GPT-2 pre-token (as UTF-8 bytes) occurs in ``text`` cut at the one
    special token ``special`` (``str.split``): what a failed training's message uses to say
    how often each pair occurred at the step where the merges part."""
    return WordCounts.of(text.split(special) if special else [text])


def expected_training(name: str) -> tuple[str, int | None, int, list[str], list[tuple[bytes, bytes]]]:
    """``(fixture file, characters used or None for all, vocab_size, special tokens, merges)``
    of a precomputed training on a fixture text, from ``fixtures/expected_training.json``
    (written by the course staff's naive trainer, checked against the reference)."""
    entry = json.loads(EXPECTED_TRAINING.read_text(encoding="utf-8"))[name]
    merges = [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in entry["merges"]]
    return entry["file"], entry["n_chars"], entry["vocab_size"], entry["special_tokens"], merges


def merge_rule_violation(ids: Sequence[int], pair: tuple[int, int], new_id: int, result: Sequence[int]) -> str | None:
    """Which rule of ``merge`` ``result`` breaks, for ``new_id`` occurring neither in ``ids``
    nor in ``pair``; ``None`` if it follows them all. The rules: putting the pair back in
    place of each ``new_id`` gives ``ids``; no ``pair`` is left side by side; and in a run
    of a repeated id (pair ``(x, x)``) the pairs are taken from the left."""
    if new_id in ids or new_id in pair:
        raise ValueError("merge_rule_violation needs a new_id that is in neither ids nor pair")
    result = list(result)
    expanded = [x for token in result for x in (pair if token == new_id else (token,))]
    if expanded != list(ids):
        at = next((i for i, (a, b) in enumerate(zip(expanded, ids)) if a != b), min(len(expanded), len(ids)))
        return (f"putting the pair {pair} back in place of each new id {new_id} should give the input, "
                f"but they differ at id {at}: the input has {len(ids)} id{'' if len(ids) == 1 else 's'}, this gives {len(expanded)}")
    for i in range(len(result) - 1):
        if (result[i], result[i + 1]) == tuple(pair):
            return f"the pair {pair} is left unmerged at positions {i}, {i + 1} of the result"
        if pair[0] == pair[1] and result[i] == pair[0] and result[i + 1] == new_id:
            return (f"in a run of {pair[0]}s the pairs are taken from the left, but the result has "
                    f"{pair[0]} before {new_id} at position {i}")
    return None


def split_rule_violation(text: str, special_tokens: Sequence[str], pieces: Sequence[str]) -> str | None:
    """Which rule of ``split_on_special_tokens`` ``pieces`` breaks; ``None`` if it follows
    them all. The rules: the pieces join back to ``text`` and none is empty; a piece equal
    to a special token is the longest special starting at its position; a text piece
    contains no position where a special token starts, and two text pieces never follow
    each other."""
    pieces = list(pieces)
    if "" in pieces:
        return f"piece {pieces.index('')} is empty"
    if "".join(pieces) != text:
        return "the pieces do not join back to the text"
    specials = set(special_tokens)
    pos, after_text = 0, False
    for k, piece in enumerate(pieces):
        if piece in specials:
            longest = max((s for s in specials if text.startswith(s, pos)), key=len)
            if longest != piece:
                return f"piece {k} {piece!r} at character {pos}: the longest special token starting there is {longest!r}"
            after_text = False
        else:
            if after_text:
                return (f"pieces {k - 1} and {k} are both text: the text between two special tokens is one piece "
                        f"({short_repr(pieces[k - 1], 40)}, then {short_repr(piece, 40)} at character {pos}: "
                        "neither is a special token)")
            for j in range(pos, pos + len(piece)):
                hit = next((s for s in special_tokens if text.startswith(s, j)), None)
                if hit is not None:
                    return f"the special token {hit!r} starts at character {j}, inside the text piece {k} {piece!r}"
            after_text = True
        pos += len(piece)
    return None
