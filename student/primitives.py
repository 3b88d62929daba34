r"""Part 2 (BPE primitives): the two operations byte-pair encoding is built from.

BPE repeatedly finds the most frequent pair of adjacent ids (``get_pair_counts``) and
replaces every occurrence of it by one new id (``merge``). Here they work on a single list
of ids; Parts 4 and 5 use the same ideas on many pre-tokens at once.

Hint: both are a single pass over the list (``zip(ids, ids[1:])`` walks the adjacent
pairs). They are the *naive* building blocks: calling ``get_pair_counts`` on the whole
corpus after every merge is far too slow for training (Part 4); there you update the
counts incrementally instead.
"""

from __future__ import annotations


def get_pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    r"""Count every pair of adjacent ids in ``ids``.

    Every adjacent position counts, overlapping ones included: in ``[1, 1, 1]`` the pair
    ``(1, 1)`` occurs at positions 0-1 and 1-2, so its count is 2. The order inside a pair
    matters: ``(1, 2)`` and ``(2, 1)`` are different pairs.

    Args:
        ids: a list of ``int`` (may be empty). It is not modified.

    Returns:
        ``dict[tuple[int, int], int]`` mapping each pair ``(ids[i], ids[i + 1])`` that
        occurs to its number of occurrences (always >= 1; pairs that do not occur are
        absent). A plain ``dict`` or a ``collections.Counter`` is fine. An empty or
        one-element list gives ``{}``.

    >>> get_pair_counts([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    True
    >>> get_pair_counts([1, 1, 1]) == {(1, 1): 2}
    True
    >>> get_pair_counts([7]) == {}
    True
    """
    raise NotImplementedError


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    r"""Replace each occurrence of ``pair`` in ``ids`` by ``new_id``.

    Scan left to right; wherever ``ids[i] == pair[0]`` and ``ids[i + 1] == pair[1]``, emit
    ``new_id`` and continue after the pair (at ``i + 2``), otherwise emit ``ids[i]`` and
    continue at ``i + 1``. Occurrences therefore never overlap, and the leftmost one wins:
    ``merge([5, 5, 5], (5, 5), 9) == [9, 5]`` (not ``[5, 9]``), and
    ``merge([5, 5, 5, 5], (5, 5), 9) == [9, 9]``. ``new_id`` is never re-examined in the
    same call (the output is not scanned again).

    Args:
        ids: a list of ``int``; it is NOT modified.
        pair: ``(left, right)``, the two adjacent ids to replace (``left == right`` is
            allowed).
        new_id: the ``int`` that replaces each occurrence.

    Returns:
        A new plain ``list`` of ``int`` (never ``ids`` itself, even when nothing was
        replaced). If the pair does not occur, the result equals ``ids``. ``[]`` gives
        ``[]``.

    >>> merge([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]
    >>> merge([5, 5, 5], (5, 5), 9)
    [9, 5]
    >>> merge([1, 2, 3], (2, 1), 4)
    [1, 2, 3]
    """
    raise NotImplementedError
