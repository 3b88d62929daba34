"""The two operations BPE is built from: counting adjacent pairs, and merging one pair."""

from __future__ import annotations

from collections import Counter


def get_pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    """Count every adjacent pair, overlapping: ``[1, 1, 1] -> {(1, 1): 2}``."""
    return dict(Counter(zip(ids, ids[1:])))


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace each occurrence of ``pair`` by ``new_id``, left to right, without overlaps.

    ``merge([5, 5, 5], (5, 5), 9) == [9, 5]``
    """
    first, second = pair
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        if i + 1 < n and ids[i] == first and ids[i + 1] == second:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
