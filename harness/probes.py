"""Measurements that must run in the same process as the implementation (memory)."""

from __future__ import annotations

import array
import hashlib
import tracemalloc
from typing import Any

from .values import WrongResult


def ids_digest(ids: list[int]) -> str:
    """A digest of a list of ids that :func:`encode_iterable_file` reproduces incrementally."""
    return hashlib.blake2b(array.array("q", ids).tobytes(), digest_size=16).hexdigest()


def encode_iterable_file(tokenizer: Any, path: str) -> dict[str, Any]:
    """Stream a file line by line through ``tokenizer.encode_iterable`` without keeping the
    ids; return their count, digest, and the peak memory Python allocated meanwhile."""
    digest = hashlib.blake2b(digest_size=16)
    pending = array.array("q")
    count = 0
    tracemalloc.start()
    try:
        with open(path, encoding="utf-8", newline="") as lines:
            for i in tokenizer.encode_iterable(lines):
                if type(i) is not int:
                    raise WrongResult(f"encode_iterable(...) item {count} should be int, got {type(i).__qualname__}")
                pending.append(i)
                count += 1
                if len(pending) >= 8192:
                    digest.update(pending.tobytes())
                    del pending[:]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    digest.update(pending.tobytes())
    return {"count": count, "digest": digest.hexdigest(), "peak": peak}
