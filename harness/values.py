"""Plain data: what an implementation may return, and how it is checked.

Everything a submission returns is first turned into *plain data* (exact ``int``, ``float``,
``str``, ``bytes``, ``bool``, ``None``, ``list``, ``tuple``, ``dict``), then checked against the
shape the adapter promises (``list[int]``, ``dict[int, bytes]``, ...). Objects of other
classes, including subclasses of ``list`` or ``int`` that could lie about equality, are
rejected with a message saying what came back. The standard library's dict subclasses
(``Counter``, ``defaultdict``, ``OrderedDict``) are accepted as plain dicts, and numpy's own
integer and float scalars (``numpy.int64``, exactly numpy's types) as the ``int`` or ``float``
they hold: CS336's tests compare ids with ``==``, where ``numpy.int64(5) == 5``.

The same plain data crosses the process boundary as tagged JSON (:mod:`harness.wire`).
"""

from __future__ import annotations

import collections
import os
import reprlib
import sys
from dataclasses import dataclass
from typing import Any

from .printable import printable

_SCALARS = (int, float, str, bytes, bool, type(None))
_STD_DICTS = (dict, collections.Counter, collections.defaultdict, collections.OrderedDict)


class WrongResult(AssertionError):
    """A submission returned a value of the wrong type or shape."""


class _BoundedRepr(reprlib.Repr):
    def repr_bytes(self, value: bytes, level: int) -> str:  # reprlib would repr them whole
        if len(value) <= self.maxstring:
            return repr(value)
        half = max(self.maxstring // 2 - 2, 1)
        return repr(value[:half])[:-1] + "..." + repr(value[-half:])[2:]

    repr_bytearray = repr_bytes


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters, in time and memory bounded by
    ``limit`` whatever the value's size (strings and bytes are cut before ``repr``,
    containers show their first items, huge ints their number of digits)."""
    r = _BoundedRepr()
    r.maxstring = r.maxother = max(limit, 12)
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = r.maxfrozenset = r.maxdeque = r.maxarray = 8
    r.maxlevel = 4
    r.maxlong = 40
    if type(value) is int and value.bit_length() > 4000:
        return f"<an int of {value.bit_length()} bits>"
    try:
        text = r.repr(value)
    except Exception:
        text = f"<a {type(value).__qualname__} that cannot be shown>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _key(k: Any) -> str:
    """A dict key as shown in a path like ``vocab[256]`` (short, fast for the usual keys)."""
    kind = type(k)
    if (kind is int and -(1 << 64) < k < 1 << 64) or (kind in (str, bytes) and len(k) <= 40):
        return repr(k)
    if kind is tuple and len(k) <= 4 and all(type(x) is int and -(1 << 64) < x < 1 << 64 for x in k):
        return repr(k)  # pair counts' keys
    return short_repr(k, 40)


def _type_name(kind: type) -> str:
    """``tuple``, ``generator`` (built-ins), else with its module: ``numpy.ndarray``."""
    module = getattr(kind, "__module__", None)
    name = getattr(kind, "__qualname__", None) or kind.__name__
    name = name if module == "builtins" or type(module) is not str else f"{module}.{name}"
    return printable(name, 60)  # the submission names its classes: on one line whatever they hold


def _describe(value: Any) -> str:
    """``int 116``, ``str 'ab'``, ``None``, or ``a tuple`` (with its length) for containers,
    ``a numpy.ndarray`` for other objects (``an`` before a vowel)."""
    kind = type(value)
    if value is None:
        return "None"
    if kind in _SCALARS:
        text = f"{kind.__name__} {short_repr(value, 60)}"
    else:
        name = _type_name(kind)
        text = ("an " if name[:1].lower() in "aeiou" else "a ") + name
        if isinstance(value, (list, tuple, dict)):
            try:
                text += f" of length {len(value)}"
            except Exception:  # a subclass's own __len__
                pass
    return text if len(text) <= 60 else text[:57] + "..."


class _NotPlain(Exception):
    """Raised inside :func:`_plain` at the offending item; the path is collected on the way out."""

    def __init__(self, value: Any, deep: bool = False) -> None:
        self.value, self.deep, self.path = value, deep, []
        self.steps: list[tuple[str, Any]] = []  # the path as ("item", i), ("key", k), ("value", k)


_SCALAR_SET = frozenset(_SCALARS)
# numpy's scalar types taken as the plain number they hold, by their names in the numpy module
_NUMPY_NUMBERS = {int: ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intc", "uintc", "intp",
                        "uintp", "longlong", "ulonglong", "long", "ulong", "byte", "ubyte", "short", "ushort", "int_", "uint"),
                  float: ("float16", "float32", "float64", "half", "single", "double")}
_numpy_types: list[Any] = [None, {}]  # the numpy module imported, and its scalar types -> int or float


def numpy_number(value: Any) -> Any:
    """``value`` as a plain ``int`` or ``float`` when its type is exactly one of numpy's integer
    or float scalar types (never a subclass; numpy is imported already, or no value has them),
    else None."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    if _numpy_types[0] is not np:
        _numpy_types[:] = [np, {t: plain for plain, names in _NUMPY_NUMBERS.items()
                                for t in (getattr(np, n, None) for n in names) if isinstance(t, type)}]
    plain = _numpy_types[1].get(type(value))
    if plain is None:
        return None
    try:
        number = plain(value)
    except Exception:  # a module standing in for numpy, whose "scalar" converts to nothing
        return None
    return number if type(number) is plain else None


def _plain(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _SCALAR_SET:
        return value
    if depth > 20:
        raise _NotPlain(value, deep=True)
    if kind is list or kind is tuple:
        if set(map(type, value)) <= _SCALAR_SET:  # ids, pre-tokens: no path strings to build
            return list(value) if kind is list else tuple(value)
        items = []
        for i, v in enumerate(value):
            try:
                items.append(_plain(v, depth + 1))
            except _NotPlain as err:
                err.path.append(f"[{i}]")
                err.steps.append(("item", i))
                raise
        return items if kind is list else tuple(items)
    if kind in _STD_DICTS:
        out = {}
        for k, v in value.items():
            try:
                key = _plain(k, depth + 1)
            except _NotPlain as err:
                err.path.append(" key")
                err.steps.append(("key", k))
                raise
            try:
                out[key] = _plain(v, depth + 1)
            except _NotPlain as err:
                err.path.append(f"[{_key(k)}]")
                err.steps.append(("value", k))
                raise
        return out
    number = numpy_number(value)
    if number is not None:
        return number
    raise _NotPlain(value)


def to_plain(value: Any, where: str, shape: "Shape | None" = None, _depth: int = 0) -> Any:
    """A copy of ``value`` made of exact built-in types only; ``WrongResult`` otherwise, one
    line naming the offending item's place and type and, given the ``shape`` the result should
    have, what it should be: ``encode(...) should return a plain list of ints, got a
    mypkg.Ids of length 3 (a subclass of list)``, ``encode(...)[3] should be a plain int, got a
    numpy.int64``."""
    try:
        return _plain(value, _depth)
    except _NotPlain as err:
        place = where + "".join(reversed(err.path))
        if err.deep:
            raise WrongResult(f"{place}: the value is nested more than 20 levels deep") from None
        kind = type(err.value)
        bases = [b.__name__ for b in kind.__mro__[1:] if b in (list, tuple, dict, int, str, bytes, float)]
        wanted = _inner(shape, reversed(err.steps)) if shape is not None else None
        if wanted is not None:
            hint = f" (a subclass of {bases[0]})" if bases else ""
            verb = "should return" if place.endswith("(...)") else "should be"  # the call's result, or a part or item
            raise WrongResult(f"{place} {verb} {wanted.wanted}, got {_describe(err.value)}{hint}") from None
        hint = f" (a subclass of {bases[0]}; return a plain {bases[0]})" if bases else ""
        raise WrongResult(f"{place} is {_describe(err.value)}{hint}, which is not plain data") from None


def _inner(shape: "Shape | None", steps: Any) -> "Shape | None":
    """The shape of the part of a ``shape``-d value at ``steps`` (as :class:`_NotPlain` records
    them, outermost first); None where the shape says nothing of it."""
    for step, at in steps:
        if isinstance(shape, ListOf) and step == "item":
            shape = shape.item
        elif isinstance(shape, TupleOf) and step == "item" and at < len(shape.items):
            shape = shape.items[at]
        elif isinstance(shape, DictOf) and step in ("key", "value"):
            shape = shape.key if step == "key" else shape.value
        else:
            return None
    return shape


def describe_import_error(err: BaseException, *, short_paths: bool = False, base: str | None = None) -> str:
    """One line naming the file and line of an error raised while importing a submission,
    before its message (``ImportError in student/tokenizer.py, line 5: cannot import ...``; an
    error raised in a library it called, jaxtyping or json, also names the submission's own line
    that called it, given ``base``, the submission's folder); ``short_paths`` shows paths relative to ``base`` (the submission's copy in the isolated
    worker, whose own paths mean nothing to a student), or file names without one."""

    def name(path: str | None) -> str:
        path = path or "?"
        if not short_paths:
            return path
        if base and path.startswith(base.rstrip("/") + "/"):
            return path[len(base.rstrip("/")) + 1:]
        return os.path.basename(path)

    if isinstance(err, SyntaxError):
        return f"SyntaxError in {name(err.filename)}, line {err.lineno}: {err.msg}"
    tb = err.__traceback__
    where = own = ""  # the innermost frame, and the innermost of the submission's own files
    inside = os.path.realpath(base).rstrip("/") + "/" if base else None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        where = f"{name(filename)}, line {tb.tb_lineno}"
        if inside and os.path.realpath(filename).startswith(inside):
            own = where
        tb = tb.tb_next
    if own and own != where:  # raised in a library the submission called: its own line first
        where = f"{own}; raised in {where}"
    message = str(err)
    if short_paths and base:
        message = message.replace(base.rstrip("/") + "/", "")
    # where first, as for a SyntaxError: a line cut to a terminal's width keeps the file and line
    return f"{type(err).__name__}" + (f" in {where}" if where else "") + f": {message}"


def only(items: Any, kind: type) -> bool:
    """Whether every item is exactly of type ``kind`` (``bool`` is not ``int``); fast."""
    return set(map(type, items)) <= {kind}


# ---- shapes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """An expected shape: a type name for messages and a checker."""

    name: str

    @property
    def wanted(self) -> str:
        """What a value of this shape is, as a message says it: ``a plain list of ints``."""
        return f"a plain {self.name}"

    def fits(self, value: Any) -> bool:
        """Whether ``value`` itself (not its items) has the right type; a shape that does not
        say lets :meth:`check` decide."""
        return True

    def check(self, value: Any, where: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


_WANTED = {"int": "a plain int", "str": "a plain str", "bytes": "plain bytes", "None": "None", "float": "a float"}
_PLURAL = {"int": "ints", "str": "strs"}


@dataclass(frozen=True)
class Exact(Shape):
    types: tuple[type, ...] = ()

    @property
    def wanted(self) -> str:
        return _WANTED.get(self.name, self.name)

    def fits(self, value: Any) -> bool:
        return type(value) in self.types

    def check(self, value: Any, where: str) -> None:
        if type(value) not in self.types:
            raise WrongResult(f"{where} should be {self.name}, got {_describe(value)}")


@dataclass(frozen=True)
class ListOf(Shape):
    item: Shape = None  # type: ignore[assignment]

    @property
    def wanted(self) -> str:
        plural = _PLURAL.get(self.item.name)
        return f"a plain list of {plural}" if plural else f"a plain {self.name}"

    def fits(self, value: Any) -> bool:
        return type(value) is list

    def check(self, value: Any, where: str) -> None:
        if type(value) is not list:
            raise WrongResult(f"{where} should be {self.name}, got {_describe(value)}")
        if isinstance(self.item, Exact) and len(self.item.types) == 1:
            wanted = self.item.types[0]
            if only(value, wanted):
                return
            for i, v in enumerate(value):
                if type(v) is not wanted:
                    raise WrongResult(f"{where}[{i}] should be {self.item.name}, got {_describe(v)}")
            return
        for i, v in enumerate(value):
            self.item.check(v, f"{where}[{i}]")


@dataclass(frozen=True)
class TupleOf(Shape):
    items: tuple[Shape, ...] = ()
    labels: tuple[str, ...] = ()  # names of the items in messages (``merges[0][0]``), if any

    def fits(self, value: Any) -> bool:
        return type(value) is tuple and len(value) == len(self.items)

    def check(self, value: Any, where: str) -> None:
        if type(value) is not tuple or len(value) != len(self.items):
            raise WrongResult(f"{where} should be {self.name}, got {_describe(value)}")
        for i, (v, shape) in enumerate(zip(value, self.items)):
            shape.check(v, self.labels[i] if self.labels else f"{where}[{i}]")


@dataclass(frozen=True)
class DictOf(Shape):
    key: Shape = None  # type: ignore[assignment]
    value: Shape = None  # type: ignore[assignment]

    def fits(self, value: Any) -> bool:
        return type(value) is dict

    def check(self, value: Any, where: str) -> None:
        if type(value) is not dict:
            raise WrongResult(f"{where} should be {self.name}, got {_describe(value)}")
        for k, v in value.items():
            self.key.check(k, f"{where} key {k!r}")
            self.value.check(v, f"{where}[{_key(k)}]")


INT = Exact("int", (int,))
STR = Exact("str", (str,))
BYTES = Exact("bytes", (bytes,))
NONE = Exact("None", (type(None),))
NUMBER = Exact("float", (float, int))
INT_LIST = ListOf("list[int]", INT)
STR_LIST = ListOf("list[str]", STR)
PAIR = TupleOf("tuple[int, int]", (INT, INT))
PAIR_COUNTS = DictOf("dict[tuple[int, int], int]", PAIR, INT)
VOCAB = DictOf("dict[int, bytes]", INT, BYTES)
MERGES = ListOf("list[tuple[bytes, bytes]]", TupleOf("tuple[bytes, bytes]", (BYTES, BYTES)))
TRAINED = TupleOf("tuple[dict[int, bytes], list[tuple[bytes, bytes]]]", (VOCAB, MERGES), ("vocab", "merges"))


def wrong_result(what: str, shape: Shape, value: Any) -> None:
    """Check ``value`` against ``shape``; ``WrongResult`` says what ``what`` returned wrong:
    ``adapters.run_train_bpe(...) returned the wrong type: merges[0][0] should be bytes, got int 116``,
    or for a value of the wrong type itself ``encode(...) should return a plain list of ints, got
    a tuple of length 3`` (as :func:`to_plain` says it of a subclass, in the worker or here)."""
    if not shape.fits(value):
        raise WrongResult(f"{what} should return {shape.wanted}, got {_describe(value)}")
    try:
        shape.check(value, "the result")
    except WrongResult as err:
        raise WrongResult(f"{what} returned the wrong type: {err}") from None
