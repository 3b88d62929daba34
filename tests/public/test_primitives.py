"""Part 2: the BPE primitives, checked against hand-worked examples and simple rules."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.diff import assert_items_equal


@pytest.mark.parametrize(
    "ids, expected",
    [
        ([], {}),
        ([7], {}),
        ([1, 2, 3, 1, 2], {(1, 2): 2, (2, 3): 1, (3, 1): 1}),
        ([5, 5, 5], {(5, 5): 2}),
    ],
)
def test_pair_counts_count_every_adjacent_pair(impl, ids, expected):
    assert impl.run_get_pair_counts(ids) == expected


@pytest.mark.parametrize(
    "ids, pair, new_id, expected",
    [
        ([5, 5, 5], (5, 5), 9, [9, 5]),
        ([5, 5, 5, 5], (5, 5), 9, [9, 9]),
        ([1, 2, 3, 1, 2], (1, 2), 4, [4, 3, 4]),
        ([1, 2, 3], (2, 1), 4, [1, 2, 3]),
        ([], (1, 2), 4, []),
    ],
)
def test_merge_replaces_left_to_right_without_overlap(impl, ids, pair, new_id, expected):
    assert_items_equal(impl.run_merge(ids, pair, new_id), expected, what="id")


@given(st.lists(st.integers(0, 5), max_size=40))
def test_pair_counts_match_a_counter_of_zipped_neighbours(impl, ids):
    assert impl.run_get_pair_counts(ids) == dict(Counter(zip(ids, ids[1:])))
