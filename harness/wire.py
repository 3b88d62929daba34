"""The wire format: plain data (:mod:`harness.values`) as one line of tagged JSON.

What crosses the process boundary between the isolated worker and the trusted side, both
ways. JSON alone cannot carry bytes, tuples or non-string dict keys; tagged objects do
(``{"$b": base64}``, ``{"$t": [...]}``, ``{"$d": [[key, value], ...]}``), and the bulky
results travel packed: long lists of ids as the hex of an integer array (``$i4``/``$i8``), a
vocabulary (``$vb``) and merges (``$pb``) as one base64 string and the lengths. Decoding
builds only built-in values and never runs code; malformed input is a ``ValueError``.
"""

from __future__ import annotations

import base64
import json
from array import array
from typing import Any

from .values import only


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


PACK_MIN = 64  # lists of ints at least this long travel as packed 32- or 64-bit integers


def _pack_ints(value: list) -> dict | list:
    """A long list of ints as the hex of its 32-bit (``$i4``) or 64-bit (``$i8``) array."""
    for code, tag in (("i", "$i4"), ("q", "$i8")):
        try:
            return {tag: array(code, value).tobytes().hex()}
        except OverflowError:
            continue
    return value  # an int beyond 64 bits: plain JSON keeps it exact


def _unpack_ints(body: Any, code: str) -> list[int]:
    if type(body) is not str:
        raise ValueError("malformed packed integers on the wire")
    raw = bytes.fromhex(body)
    out = array(code)
    if len(raw) % out.itemsize:
        raise ValueError("packed integers on the wire do not add up")
    out.frombytes(raw)
    return out.tolist()


def _is_merges(value: list) -> bool:
    return all(type(v) is tuple and len(v) == 2 and type(v[0]) is bytes and type(v[1]) is bytes for v in value)


def _is_vocab(value: dict) -> bool:
    return bool(value) and only(value, int) and only(value.values(), bytes)


def packed_whole(value: Any) -> bool:
    """Whether ``value`` travels packed as a whole: merges (``$pb``) or a vocabulary
    (``$vb``). Two such values that are equal, in the same order, have the same wire text
    (no ``1 == True`` or ``1 == 1.0`` between them)."""
    kind = type(value)
    if kind is list:
        return bool(value) and _is_merges(value)
    return kind is dict and _is_vocab(value)


def _tag(value: Any) -> Any:
    kind = type(value)
    if kind is list:
        if only(value, int):  # the common case: ids
            return _pack_ints(value) if len(value) >= PACK_MIN else value
        if only(value, str):  # pre-tokens need no tags either
            return value
        if _is_merges(value):  # packed: one base64 string and the lengths
            return {"$pb": [_b64(b"".join(a + b for a, b in value)), [n for a, b in value for n in (len(a), len(b))]]}
        return [_tag(v) for v in value]
    if kind is dict:
        if _is_vocab(value):
            return {"$vb": [list(value), _b64(b"".join(value.values())), [len(v) for v in value.values()]]}
        return {"$d": [[_tag(k), _tag(v)] for k, v in value.items()]}
    if kind is bytes:
        return {"$b": _b64(value)}
    if kind is tuple:
        return {"$t": [_tag(v) for v in value]}
    return value


def _unpack(data: Any, lengths: Any) -> list[bytes]:
    """Cut one base64 string into pieces of the given lengths."""
    if type(data) is not str or type(lengths) is not list or not all(type(n) is int and n >= 0 for n in lengths):
        raise ValueError("malformed packed bytes on the wire")
    raw = base64.b64decode(data, validate=True)
    if sum(lengths) != len(raw):
        raise ValueError("packed bytes on the wire do not add up")
    pieces, pos = [], 0
    for n in lengths:
        pieces.append(raw[pos : pos + n])
        pos += n
    return pieces


class TooManyValues(ValueError):
    """A message holding more packed ids than :func:`loads` was allowed to build."""


def _untag(obj: dict, budget: list[int] | None = None) -> Any:
    if len(obj) != 1:
        raise ValueError(f"malformed wire object with keys {sorted(obj)[:5]}")
    ((tag, body),) = obj.items()
    if tag == "$b":
        return base64.b64decode(body, validate=True)
    if tag == "$i4" or tag == "$i8":
        if budget is not None and type(body) is str:  # counted before they are built
            budget[0] -= len(body) // (8 if tag == "$i4" else 16)
            if budget[0] < 0:
                raise TooManyValues("more packed integers than allowed on the wire")
        return _unpack_ints(body, "i" if tag == "$i4" else "q")
    if tag == "$vb":
        if type(body) is not list or len(body) != 3 or type(body[0]) is not list or len(body[0]) != len(body[2]):
            raise ValueError("malformed packed vocabulary on the wire")
        if any(type(k) in (list, dict) for k in body[0]):
            raise ValueError("unhashable dict key on the wire")
        return dict(zip(body[0], _unpack(body[1], body[2])))
    if tag == "$pb":
        if type(body) is not list or len(body) != 2 or type(body[1]) is not list or len(body[1]) % 2:
            raise ValueError("malformed packed pairs on the wire")
        pieces = _unpack(body[0], body[1])
        return list(zip(pieces[::2], pieces[1::2]))
    if tag == "$t":
        if type(body) is not list:  # a string or bytes would become a tuple of as many items, uncounted
            raise ValueError("malformed tuple on the wire")
        return tuple(body)
    if tag == "$d":
        out = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("malformed dict entry on the wire")
            key = pair[0]
            if type(key) in (list, dict):
                raise ValueError("unhashable dict key on the wire")
            out[key] = pair[1]
        return out
    raise ValueError(f"unknown wire tag {tag!r}")


def dumps(value: Any) -> str:
    """Plain data -> one line of tagged JSON."""
    return json.dumps(_tag(value), separators=(",", ":"), allow_nan=True)


def loads(text: str | bytes, max_packed: int | None = None) -> Any:
    """Tagged JSON -> plain data. Builds only built-in values; never runs code. Given
    ``max_packed``, :class:`TooManyValues` (before they are built) when the packed lists of ints
    hold more ids than that together, however the JSON is written (escaped tags, spaces): every
    other value a message holds costs a comma (a tuple's items are a list's)."""
    if max_packed is None:
        return json.loads(text, object_hook=_untag)
    budget = [max_packed]
    return json.loads(text, object_hook=lambda obj: _untag(obj, budget))
