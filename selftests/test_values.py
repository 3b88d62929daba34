"""The plain-data checks and the wire format that carry results across the trust boundary."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from harness import values as V
from harness import wire


class LyingList(list):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize(
    "value",
    [
        [1, 2, 3],
        {(1, 2): 3},
        ({0: b"\x00", 1: b"ab"}, [(b"a", b"b")]),
        ["x", None, 1.5, True],
        {b"k": [(), ()]},
        list(range(-5, 300)),  # long lists of ints travel packed (32-bit)
        [2**40, -(2**63), 2**63 - 1] * 30,  # 64-bit
        [2**64, 1] * 40,  # beyond 64 bits: plain JSON
        [True] * 100,  # bools stay bools
        [1] * 99 + [True],
    ],
    ids=["ints", "pair_counts", "trained", "mixed", "bytes_key", "packed32", "packed64", "bigints", "bools", "one_bool"],
)
def test_wire_round_trip_preserves_plain_data(value):
    back = wire.loads(wire.dumps(value))
    assert back == value
    assert type(back) is type(value)
    if type(value) is list:
        assert [type(v) for v in back] == [type(v) for v in value]


@pytest.mark.parametrize("value", [LyingList([1]), [True.__class__(1), LyingList()], object()])
def test_to_plain_rejects_objects_that_are_not_plain_data(value):
    with pytest.raises(V.WrongResult):
        V.to_plain(value, "result")


def test_to_plain_accepts_standard_dict_subclasses():
    plain = V.to_plain(Counter({(1, 2): 3}), "counts")
    assert type(plain) is dict and plain == {(1, 2): 3}
    assert type(V.to_plain(defaultdict(int, {1: 2}), "d")) is dict


@pytest.mark.parametrize(
    "shape, value",
    [
        (V.INT_LIST, [1, "2"]),
        (V.INT_LIST, (1, 2)),
        (V.INT_LIST, [1, True]),
        (V.PAIR_COUNTS, {(1, 2): 1.0}),
        (V.TRAINED, ({0: "a"}, [])),
        (V.MERGES, [[b"a", b"b"]]),
    ],
)
def test_shapes_reject_wrong_types(shape, value):
    with pytest.raises(V.WrongResult):
        shape.check(value, "result")


@pytest.mark.parametrize(
    "shape, value, message",
    [
        (V.TRAINED, ({0: b"a"}, [(116, 104)]), "run_train_bpe(...) returned the wrong type: merges[0][0] should be bytes, got int 116"),
        (V.TRAINED, ({"0": b"a"}, []), "vocab key '0' should be int, got str '0'"),
        (V.TRAINED, ([], []), "vocab should be dict[int, bytes], got a list of length 0"),
        (V.INT_LIST, (1, 2, 3), "adapters.run_train_bpe(...) should return a plain list of ints, got a tuple of length 3"),
        (V.INT_LIST, [1, True], "the result[1] should be int, got bool True"),
        (V.STR, b"ab", "adapters.run_train_bpe(...) should return a plain str, got bytes b'ab'"),
    ],
    ids=["merges_of_ids", "vocab_str_key", "vocab_not_dict", "tuple_of_ids", "bool_id", "bytes_not_str"],
)
def test_wrong_type_messages_name_the_part_and_what_came_back(shape, value, message):
    with pytest.raises(V.WrongResult) as err:
        V.wrong_result("adapters.run_train_bpe(...)", shape, value)
    assert message in str(err.value)


@pytest.mark.parametrize("text", ['{"$x": 1}', '{"$b": "!!"}', '{"$d": [[1]]}', '{"$d": [[[1], 2]]}'])
def test_wire_loads_rejects_malformed_input(text):
    with pytest.raises(ValueError):
        wire.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"$vb": [[1, 2], "YWI=", [1]]}',
        '{"$vb": [[[1]], "YQ==", [1]]}',
        '{"$vb": [[1], "YWI=", [5]]}',
        '{"$pb": ["YWI=", [1]]}',
        '{"$pb": ["YWI=", [1, -1]]}',
        '{"$i4": "0500000006"}',
        '{"$i8": "zz"}',
        '{"$i4": [5]}',
    ],
    ids=[
        "lengths_and_keys_differ", "unhashable_key", "lengths_exceed_data", "odd_lengths", "negative_length",
        "ints_cut_short", "ints_not_hex", "ints_not_a_string",
    ],
)
def test_wire_loads_rejects_malformed_packed_values(text):
    with pytest.raises(ValueError):
        wire.loads(text)
