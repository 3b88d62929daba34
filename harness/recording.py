"""The submission's calls during a test, kept so that a failure can be compared with known bugs.

What is kept is bounded in total, whatever the submission returns: a call whose arguments
or outcome are larger than :data:`MAX_ITEMS` (items or characters, counted cheaply by
:func:`weight`) keeps a :class:`Large` note in place of the value, and the records of one
test hold at most :data:`BUDGET` of them together, the oldest dropped first. The records
are the running test's only (the harness plugin drops them when the test's call ends)."""

from __future__ import annotations

from typing import Any

KEEP = 20  # the last calls are kept: hypothesis replays the failing example last
MAX_ITEMS = 300_000  # a recorded argument or outcome larger than this is kept as a Large note
BUDGET = 2_000_000  # items and characters kept by one test's records together


class Large:
    """Stands for a value too large to keep: equal to nothing (so no known bug can match a
    call that returned it), shown with its type and size."""

    __slots__ = ("kind", "size")

    def __init__(self, value: Any, size: int) -> None:
        self.kind, self.size = type(value).__name__, size

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<a {self.kind} of {self.size} items, not kept>"


def weight(value: Any, depth: int = 0) -> int:
    """Items and characters in ``value``, counted in time bounded by its top two levels
    (a container's own length, plus its items' lengths when it is short); 1 for a scalar."""
    kind = type(value)
    if kind in (str, bytes, bytearray):
        return len(value) + 1
    if kind in (list, tuple, dict, set, frozenset):
        n = len(value)
        if depth >= 1 or n > 1000:
            return n * (2 if depth == 0 and kind is dict else 1) + 1
        items = value.items() if kind is dict else value
        return n + 1 + sum(weight(v, depth + 1) for v in items)
    return 1


def _kept(value: Any) -> tuple[Any, int]:
    """``value`` (or its :class:`Large` note) and what it costs the budget."""
    size = weight(value)
    return (value, size) if size <= MAX_ITEMS else (Large(value, size), 1)


class CallLog:
    """A recorder for :class:`harness.impl.Implementation`: while :attr:`records` is a list
    (the running test's, set by the harness plugin), each call and its outcome (result or
    exception) is appended to it, the oldest dropped beyond :data:`KEEP` calls or
    :data:`BUDGET` items; else nothing is kept."""

    def __init__(self) -> None:
        self.records: list[tuple[tuple, Any]] | None = None
        self._sizes: list[int] = []  # cost of each record in ``records``, in order

    def start(self, records: list) -> None:
        """Record into ``records`` (a new, empty list) from now on."""
        self.records, self._sizes = records, []

    def stop(self) -> None:
        self.records, self._sizes = None, []

    def __call__(self, call: tuple, outcome: Any) -> None:
        records = self.records
        if records is None:
            return
        call, outcome, size = _bounded_call(call, outcome)
        sizes = self._sizes
        if len(sizes) != len(records):  # someone else changed the list: start counting again
            sizes[:] = [0] * len(records)
        records.append((call, outcome))
        sizes.append(size)
        while len(records) > KEEP or (len(records) > 1 and sum(sizes) > BUDGET):
            del records[0], sizes[0]


def _bounded_call(call: tuple, outcome: Any) -> tuple[tuple, Any, int]:
    """The call with its too-large arguments (and the outcome, if too large) as notes."""
    total = 0
    if call and call[0] == "call":  # ("call", adapter, args)
        args, cost = _kept_args(call[2])
        call, total = (call[0], call[1], args), cost
    elif call and call[0] == "method":  # ("method", (adapter, args), name, args)
        recipe_args, c1 = _kept_args(call[1][1])
        recipe = call[1] if recipe_args is call[1][1] else (call[1][0], recipe_args)  # the same tokenizer: the same recipe
        args, c2 = _kept_args(call[3])
        call, total = ("method", recipe, call[2], args), c1 + c2
    if isinstance(outcome, BaseException):
        return call, outcome, total + 1
    outcome, cost = _kept(outcome)
    return call, outcome, total + cost


def _kept_args(args: tuple) -> tuple[tuple, int]:
    kept = [_kept(a) for a in args]
    if all(k[0] is a for k, a in zip(kept, args)):  # nothing replaced: keep the very tuple
        return args, sum(k[1] for k in kept)
    return tuple(k[0] for k in kept), sum(k[1] for k in kept)
