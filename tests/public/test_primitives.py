"""Part 2: the BPE primitives, checked against hand-worked examples and simple rules."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.oracles import merge_rule_violation
from tests.diff import assert_items_equal, assert_counts_equal, merge_call


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
    call = f"get_pair_counts({ids})"  # before the call: one that modifies ids must not change it
    assert_counts_equal(impl.run_get_pair_counts(ids), expected, call=call)
    if not expected:  # {} is also what code that does nothing returns: one more id makes a pair
        longer = [*ids, 7, 8]
        assert_counts_equal(impl.run_get_pair_counts(list(longer)), dict(Counter(zip(longer, longer[1:]))),
                            call=f"get_pair_counts({longer})")


def assert_merge_gives(impl, ids, pair, new_id, expected) -> None:
    """``merge(ids, pair, new_id)`` gives ``expected``; a difference shows the call, written
    before it is made (a merge that modifies ``ids`` must not change it)."""
    __tracebackhide__ = True
    call = merge_call(ids, pair, new_id)
    assert_items_equal(impl.run_merge(ids, pair, new_id), expected, what="id", call=call)


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
    assert_merge_gives(impl, ids, pair, new_id, expected)
    if not expected:  # [] is also what code that does nothing returns: the pair alone must merge
        assert_items_equal(impl.run_merge(list(pair), pair, new_id), [new_id], what="id", call=merge_call(pair, pair, new_id))


@given(st.lists(st.integers(0, 5), max_size=40))
def test_pair_counts_match_a_counter_of_zipped_neighbours(impl, ids):
    assert_counts_equal(impl.run_get_pair_counts(list(ids)), dict(Counter(zip(ids, ids[1:]))), call=f"get_pair_counts({ids})")



# ---- merge ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ids, pair",
    [([1, 2, 3, 1, 2], (1, 2)), ([5, 5, 5], (5, 5)), ([1, 2, 3], (3, 1))],
    ids=["present", "overlapping", "absent"],
)
def test_merge_does_not_modify_its_input(impl, ids, pair):
    before = list(ids)
    result = impl.run_merge(ids, pair, 99)
    assert_items_equal(ids, before, what="input id", call=merge_call(before, pair, 99))
    # and something was computed (code that does nothing cannot pass): the pair, when present,
    # was replaced somewhere; whether exactly right is the other merge tests' rule
    present = any(p == pair for p in zip(before, before[1:]))
    assert (99 in result) if present else bool(result), f"merge returned {result!r}: no result to check the input against"


@pytest.mark.parametrize(
    "ids, pair",
    [
        ([1, 2, 3], (3, 1)),  # both ids occur, never in this order
        ([2, 1], (1, 2)),  # the reversed pair is not the pair
        ([1], (1, 1)),  # a single id has no pair
        ([1, 1], (1, 2)),
        ([4, 4, 4, 4], (4, 5)),
    ],
    ids=["not_adjacent", "reversed", "single_id", "second_missing", "run"],
)
def test_merge_of_an_absent_pair_leaves_the_list_equal(impl, ids, pair):
    assert_items_equal(impl.run_merge(list(ids), pair, 99), ids, what="id", call=merge_call(ids, pair, 99))


@pytest.mark.parametrize(
    "ids, pair, new_id, expected",
    [
        # runs of one id: pairs taken from the left, an odd run leaves its last id
        ([5], (5, 5), 9, [5]),
        ([5, 5], (5, 5), 9, [9]),
        ([5, 5, 5], (5, 5), 9, [9, 5]),
        ([5, 5, 5, 5, 5], (5, 5), 9, [9, 9, 5]),
        ([5, 5, 5, 5, 5, 5], (5, 5), 9, [9, 9, 9]),
        # 5 5 5 | 1 | 5 5 5 5 5  ->  (5 5) 5 | 1 | (5 5) (5 5) 5
        ([5, 5, 5, 1, 5, 5, 5, 5, 5], (5, 5), 9, [9, 5, 1, 9, 9, 5]),
        # 1 2 1 2 1: (1 2) (1 2) 1
        ([1, 2, 1, 2, 1], (1, 2), 4, [4, 4, 1]),
        # 1 1 2 2: only the middle 1 2 is the pair
        ([1, 1, 2, 2], (1, 2), 4, [1, 4, 2]),
        # 2 1 2 1 2 with (2, 1): (2 1) (2 1) 2
        ([2, 1, 2, 1, 2], (2, 1), 7, [7, 7, 2]),
    ],
    ids=["run1", "run2", "run3", "run5", "run6", "two_runs", "alternating", "nested", "alternating_reversed"],
)
def test_merge_takes_overlapping_occurrences_from_the_left(impl, ids, pair, new_id, expected):
    assert_merge_gives(impl, ids, pair, new_id, expected)


@pytest.mark.parametrize(
    "ids, pair, new_id, expected",
    [
        # 1 2 2 -> (1 2) 2 = [1, 2]; scanning the output again would give [1]
        ([1, 2, 2], (1, 2), 1, [1, 2]),
        # 5 5 5 5 -> (5 5) (5 5) = [5, 5]; re-scanning would give [5]
        ([5, 5, 5, 5], (5, 5), 5, [5, 5]),
        # 3 4 4 -> (3 4) 4 with new id 3 = [3, 4]; re-scanning would give [3]
        ([3, 4, 4], (3, 4), 3, [3, 4]),
    ],
    ids=["new_id_is_left", "new_id_is_both", "new_id_again"],
)
def test_merge_never_rescans_the_new_id(impl, ids, pair, new_id, expected):
    assert_merge_gives(impl, ids, pair, new_id, expected)


def test_merge_accepts_ids_beyond_a_byte(impl):
    # BPE ids grow past 255: 256 = (97, 97), 300 = (256, 97)
    ids = [256, 97, 98, 256, 97]
    call = merge_call(ids, (256, 97), 300)
    assert_items_equal(impl.run_merge(ids, (256, 97), 300), [300, 98, 300], what="id", call=call)


def check_merge(impl, ids, pair, new_id) -> None:
    """``merge(ids, pair, new_id)`` follows the rules: with a new id occurring nowhere, the
    result undoes to the input, leaves no pair side by side and takes runs from the left
    (:func:`tests.oracles.merge_rule_violation`); with ``new_id`` itself (which may occur in
    ``ids`` or ``pair``: it is never re-examined) the result is that one with ``new_id`` in
    place of the fresh id. A failure shows the call made and says how it comes from the
    drawn one (Hypothesis's ``new_id=...``), whose new id it replaced."""
    __tracebackhide__ = True
    fresh = max([*ids, *pair, new_id]) + 1
    with_fresh = impl.run_merge(list(ids), pair, fresh)
    broken = merge_rule_violation(ids, pair, fresh, with_fresh)
    if broken is not None:
        raise AssertionError(
            f"{merge_call(ids, pair, fresh)} returned {with_fresh!r}: {broken}\n"
            f"  the drawn case is {merge_call(ids, pair, new_id)}; its new id {new_id} is replaced here by {fresh}, "
            f"an id found nowhere in the ids or the pair, so that each {fresh} in the result is one merged pair")
    expected = [new_id if x == fresh else x for x in with_fresh]
    assert_items_equal(impl.run_merge(list(ids), pair, new_id), expected, what="id", call=(
        f"{merge_call(ids, pair, new_id)}, the drawn case; expected: what {merge_call(ids, pair, fresh)} returned, "
        f"{fresh} read as {new_id}"))


@given(
    st.lists(st.integers(0, 3), max_size=60),
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
    st.integers(0, 6),
)
def test_merge_replaces_every_pair_left_to_right(impl, ids, pair, new_id):
    check_merge(impl, ids, pair, new_id)


@given(st.lists(st.integers(0, 2), min_size=2, max_size=60), st.data())
def test_merge_of_a_present_pair_replaces_it_left_to_right(impl, ids, data):
    i = data.draw(st.integers(0, len(ids) - 2), label="position of the pair")
    check_merge(impl, ids, (ids[i], ids[i + 1]), 1000)


# ---- pair counts ------------------------------------------------------------------------


def test_pair_counts_do_not_modify_their_input(impl):
    ids = [1, 2, 1, 2, 3]
    counts = impl.run_get_pair_counts(ids)
    assert_items_equal(ids, [1, 2, 1, 2, 3], what="input id")
    assert_counts_equal(counts, {(1, 2): 2, (2, 1): 1, (2, 3): 1}, call="get_pair_counts([1, 2, 1, 2, 3])")  # and counted


def test_pair_counts_keep_the_order_inside_a_pair(impl):
    # 1 2 1: the pairs are (1, 2) and (2, 1), one each
    assert_counts_equal(impl.run_get_pair_counts([1, 2, 1]), {(1, 2): 1, (2, 1): 1}, call="get_pair_counts([1, 2, 1])")


@pytest.mark.parametrize("length, alphabet", [(10_000, 3), (20_000, 50), (5_000, 1000)], ids=["dense", "medium", "sparse"])
def test_pair_counts_on_long_random_lists_match_a_counter(impl, rng, length, alphabet):
    ids = [rng.randrange(alphabet) for _ in range(length)]
    assert_counts_equal(impl.run_get_pair_counts(list(ids)), dict(Counter(zip(ids, ids[1:]))))


# ---- one BPE step, composed ------------------------------------------------------------
#
# The classic example "aaabdaaabac" in byte ids: a=97, b=98, c=99, d=100.
#   ids:  a a a b d a a a b a c = [97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99]
#   step 1 counts: (a,a) 4 (positions 0-1, 1-2, 5-6, 6-7); (a,b) 2; (b,d) (d,a) (b,a) (a,c) 1
#          the most frequent pair (a,a) becomes Z = 256, left to right without overlap:
#          (a a) a b d (a a) a b a c = Z a b d Z a b a c  ("ZabdZabac")
#   step 2 counts: (Z,a) 2; (a,b) 2; (b,d) (d,Z) (b,a) (a,c) 1
#          a tie at 2; this test breaks ties towards the greater pair of ids, (256, 97) >
#          (97, 98), so (Z,a) becomes Y = 257: (Z a) b d (Z a) b a c = Y b d Y b a c
#   step 3 counts: (Y,b) 2; (b,d) (d,Y) (b,a) (a,c) 1
#          (Y,b) becomes X = 258: (Y b) d (Y b) a c = X d X a c  ("XdXac")
#   step 4 counts: (X,d) (d,X) (X,a) (a,c) 1: no pair occurs twice, BPE stops.

a, b, c, d, Z, Y, X = 97, 98, 99, 100, 256, 257, 258
BPE_STEPS = [
    # (ids before the step, their pair counts, the pair merged, its new id, ids after)
    (
        [a, a, a, b, d, a, a, a, b, a, c],
        {(a, a): 4, (a, b): 2, (b, d): 1, (d, a): 1, (b, a): 1, (a, c): 1},
        (a, a), Z,
        [Z, a, b, d, Z, a, b, a, c],
    ),
    (
        [Z, a, b, d, Z, a, b, a, c],
        {(Z, a): 2, (a, b): 2, (b, d): 1, (d, Z): 1, (b, a): 1, (a, c): 1},
        (Z, a), Y,
        [Y, b, d, Y, b, a, c],
    ),
    (
        [Y, b, d, Y, b, a, c],
        {(Y, b): 2, (b, d): 1, (d, Y): 1, (b, a): 1, (a, c): 1},
        (Y, b), X,
        [X, d, X, a, c],
    ),
]
FINAL_COUNTS = {(X, d): 1, (d, X): 1, (X, a): 1, (a, c): 1}


@pytest.mark.parametrize("step", range(len(BPE_STEPS)), ids=["step1", "step2", "step3"])
def test_pair_counts_of_each_bpe_step_on_aaabdaaabac(impl, step):
    ids, counts, _, _, _ = BPE_STEPS[step]
    assert_counts_equal(impl.run_get_pair_counts(list(ids)), counts)


@pytest.mark.parametrize("step", range(len(BPE_STEPS)), ids=["step1", "step2", "step3"])
def test_merge_of_each_bpe_step_on_aaabdaaabac(impl, step):
    ids, _, pair, new_id, after = BPE_STEPS[step]
    assert_items_equal(impl.run_merge(list(ids), pair, new_id), after, what="id", call=merge_call(ids, pair, new_id))


def test_primitives_compose_into_bpe_on_aaabdaaabac(impl):
    ids = list("aaabdaaabac".encode("utf-8"))
    merges = []
    while True:
        counts = impl.run_get_pair_counts(list(ids))
        best = max(counts, key=lambda pair: (counts[pair], pair))
        if counts[best] < 2:
            break
        new_id = 256 + len(merges)
        merges.append((best, new_id))
        ids = impl.run_merge(list(ids), best, new_id)
    assert_items_equal(merges, [((a, a), Z), ((Z, a), Y), ((Y, b), X)], what="merge")
    assert_items_equal(ids, [X, d, X, a, c], what="id")
    assert_counts_equal(impl.run_get_pair_counts(ids), FINAL_COUNTS)
