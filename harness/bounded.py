"""Failure explanations of ``assert left == right`` on large values, in bounded time and size.

pytest's own explanation diffs the two values whole: on a string of tens of megabytes (a
submission returning something huge) that takes minutes and hundreds of megabytes. For
values past ``LARGE`` items or characters this explanation is used instead: both sizes,
the first index where they differ and a short window of each around it.

The explanation is given through pytest's public ``pytest_assertrepr_compare`` hook
(``harness.plugin``, ``tryfirst``: pytest keeps the first answer). pytest still calls its
own implementation of the hook too, and some versions (before 9.2) diff the values whole
there, so :func:`install` also spares that work: it wraps the private function behind it
and, for a comparison :func:`explain` answers, hands it two tiny stand-in values instead
(its answer is discarded anyway). That speed-up is guarded: the arguments are bound by the
original's own signature, and any mismatch or error passes the call through untouched, so a
pytest whose internals moved gets its own (slower) explanation, never an error.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any

from .values import short_repr

LARGE = 2000  # items or characters from which a value counts as large
WINDOW = 5  # items (or 40 characters) of context on each side of the first difference
_BLOCK = 4096


def _size(value: Any) -> int | None:
    return len(value) if type(value) in (str, bytes, list, tuple, dict) else None


def first_difference(left: Sequence, right: Sequence) -> int | None:
    """Index of the first differing item of two sequences (or where the shorter ends);
    None when equal. Compares blocks with C-level slice equality first."""
    n = min(len(left), len(right))
    start = 0
    while start < n and left[start:start + _BLOCK] == right[start:start + _BLOCK]:
        start += _BLOCK
    for i in range(start, min(start + _BLOCK, n)):
        if left[i] != right[i]:
            return i
    return None if len(left) == len(right) else n


def explain(op: str, left: Any, right: Any) -> list[str] | None:
    """Lines explaining why ``left == right`` failed, or None to leave it to pytest."""
    sizes = (_size(left), _size(right))
    if op != "==" or None in sizes or max(sizes) < LARGE:
        return None
    what = "characters" if type(left) is str else "bytes" if type(left) is bytes else "items"
    lines = [f"{short_repr(left, 50)} == {short_repr(right, 50)}", f"left has {sizes[0]} {what}, right has {sizes[1]}"]
    if type(left) is dict or type(right) is dict or type(left) is not type(right):
        if type(left) is dict and type(right) is dict:
            for key in right:
                if key not in left or left[key] != right[key]:
                    got = short_repr(left[key], 60) if key in left else "<missing>"
                    lines.append(f"first differing key {short_repr(key, 60)}: left {got}, right {short_repr(right[key], 60)}")
                    break
            else:
                extra = next(k for k in left if k not in right)
                lines.append(f"left has the extra key {short_repr(extra, 60)}")
        return lines
    pos = first_difference(left, right)
    if pos is None:  # pragma: no cover - equal after all
        return None
    span = 40 if what != "items" else WINDOW
    lo, hi = max(pos - span, 0), pos + span + 1
    lines.append(f"first difference at index {pos}")
    lines.append(f"left[{lo}:{hi}]  = {short_repr(left[lo:hi], 200)}")
    lines.append(f"right[{lo}:{hi}] = {short_repr(right[lo:hi], 200)}")
    return lines


_STAND_IN = 0  # what pytest's own explanation gets instead of values explain() answers for


def install() -> None:
    """Spare pytest's own explanation the work of diffing values :func:`explain` answers
    for (idempotent; best effort: does nothing when pytest's internals are laid out
    otherwise, and never changes a call it cannot read)."""
    try:
        from _pytest.assertion import util

        original = util.assertrepr_compare
        signature = inspect.signature(original)
        if not {"op", "left", "right"} <= signature.parameters.keys():
            return
    except Exception:  # another pytest layout: keep its own explanations
        return
    if getattr(original, "_bpe_bounded", False):
        return

    @functools.wraps(original)
    def assertrepr_compare(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
            if explain(bound.arguments["op"], bound.arguments["left"], bound.arguments["right"]) is not None:
                bound.arguments["left"] = bound.arguments["right"] = _STAND_IN
                args, kwargs = bound.args, bound.kwargs
        except Exception:
            pass
        return original(*args, **kwargs)

    assertrepr_compare._bpe_bounded = True  # type: ignore[attr-defined]
    util.assertrepr_compare = assertrepr_compare
