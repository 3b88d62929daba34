"""Measurements that must run in the same process as the implementation (memory)."""

from __future__ import annotations

import array
import hashlib
import time
import tracemalloc
from typing import Any

from .values import WrongResult, numpy_number


def ids_digest(ids: list[int]) -> str:
    """A digest of a list of ids that :func:`encode_iterable_file` reproduces incrementally."""
    return hashlib.blake2b(array.array("q", ids).tobytes(), digest_size=16).hexdigest()


HELD_EVERY = 16  # ids between two readings of the memory held (each costs a few microseconds)
FREE_LIST_LENGTHS = range(1, 20)  # CPython keeps freed tuples of these lengths for reuse ...
FREE_LIST_SIZE = 2000  # ... up to this many of each


def fill_free_lists() -> None:
    """Fill CPython's free lists of small tuples before measuring. A tuple freed while its
    length's list has room is kept there for reuse, not returned to the allocator, so
    tracemalloc still counts it: a tokenizer making a tuple per pre-token (of bytes, say) and
    dropping it at once would seem to grow with the input until those lists are full (a
    bounded few MB; CPython's own, not the tokenizer's). Filled first, they take no more."""
    junk = [tuple(range(n)) for n in FREE_LIST_LENGTHS for _ in range(FREE_LIST_SIZE)]
    del junk


class _Until:
    """A file's lines until a time (``perf_counter``): past it, the lines end (``ran_out``), so
    an encoder that takes long between ids stops reading too. Other attributes (``read``) are
    the file's."""

    def __init__(self, lines: Any, end: float) -> None:
        self._lines, self._end, self.ran_out = lines, end, False

    def __iter__(self) -> "_Until":
        return self

    def __next__(self) -> str:
        if time.perf_counter() > self._end:
            self.ran_out = True
            raise StopIteration
        return next(self._lines)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lines, name)


def encode_iterable_file(tokenizer: Any, path: str, seconds: float | None = None) -> dict[str, Any]:
    """Stream a file line by line through ``tokenizer.encode_iterable`` without keeping the
    ids; return their count, digest, the peak memory Python allocated meanwhile (CPython's
    free lists filled first, :func:`fill_free_lists`), ``held``: the most of it the encoder
    held while it waited, having handed over an id (read at the first id and every
    :data:`HELD_EVERY` ids after it; a block allocated and freed in between is not in it, however
    large: it raises the peak only), and the stream's time.
    Given ``seconds``, the stream is stopped once it has run that long, checked as ids come
    and as lines are read (past it, the lines end): then ``stopped`` is true and the count is
    of the ids read so far."""
    digest = hashlib.blake2b(digest_size=16)
    pending = array.array("q")
    count, stopped, held = 0, False, 0
    traced = tracemalloc.get_traced_memory
    fill_free_lists()
    tracemalloc.start()
    start = time.perf_counter()
    end = start + seconds if seconds is not None else None
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f if end is None else _Until(f, end)
            items = iter(tokenizer.encode_iterable(lines))
            try:
                for i in items:
                    if type(i) is not int:  # numpy's own integer scalars count as the int they hold (harness.values)
                        number = numpy_number(i)
                        if type(number) is not int:
                            raise WrongResult(f"encode_iterable(...) item {count} should be int, got {type(i).__qualname__}")
                        i = number
                    if not count % HELD_EVERY:
                        held = max(held, traced()[0])
                    pending.append(i)
                    count += 1
                    if len(pending) >= 8192:
                        digest.update(pending.tobytes())
                        del pending[:]
                    if end is not None and time.perf_counter() > end:
                        stopped = True
                        break
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    close()
        elapsed = time.perf_counter() - start
        stopped = stopped or getattr(lines, "ran_out", False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    digest.update(pending.tobytes())
    return {"count": count, "digest": digest.hexdigest(), "peak": peak, "held": held, "seconds": elapsed, "stopped": stopped}
