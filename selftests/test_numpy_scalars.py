"""numpy's own integer and float scalars count as the plain ``int`` or ``float`` they hold
(``harness.values``): a CS336 tokenizer whose ``encode`` returns ``list(numpy_array)`` passes
CS336's own tests, which compare ids with ``==`` (``numpy.int64(5) == 5``). Only numpy's exact
types are taken, converted where the value is made (in the isolated worker, before it crosses):
a subclass, which could lie about equality, is refused as any other; so is an array.

The rule's checks run on a stand-in numpy module (numpy is no dependency of the harness); the
last one runs on numpy itself where it is installed (CI's extras stage)."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from harness import values as V

from .support import adapters_only, implementation_of


def stand_in_numpy() -> types.ModuleType:
    """A module named numpy whose int64 is no int (it converts with ``int()``) and claims to
    equal anything, and whose float64 is a float subclass, as numpy's are."""
    np = types.ModuleType("numpy")

    class int64:
        def __init__(self, value: int) -> None:
            self.value = value

        def __int__(self) -> int:
            return self.value

        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    class float64(float):
        pass

    np.int64, np.float64 = int64, float64
    return np


@pytest.fixture
def np(monkeypatch) -> types.ModuleType:
    module = stand_in_numpy()
    monkeypatch.setitem(sys.modules, "numpy", module)
    return module


def test_numpys_own_scalars_become_the_plain_numbers_they_hold(np):
    ids = V.to_plain([np.int64(5), 7, np.int64(9)], "encode(...)", V.INT_LIST)
    assert ids == [5, 7, 9] and set(map(type, ids)) == {int}
    vocab = V.to_plain({np.int64(256): b"ab"}, "vocab", V.VOCAB)
    assert vocab == {256: b"ab"} and [type(k) for k in vocab] == [int]
    ratio = V.to_plain(np.float64(3.5), "compression_ratio(...)", V.NUMBER)
    assert ratio == 3.5 and type(ratio) is float


def test_a_subclass_of_a_numpy_scalar_is_refused(np):
    lying = type("Lying", (np.int64,), {"__module__": "student.tok"})
    with pytest.raises(V.WrongResult) as err:
        V.to_plain([lying(5)], "encode(...)", V.INT_LIST)
    assert str(err.value) == "encode(...)[0] should be a plain int, got a student.tok.Lying"


def test_without_numpy_imported_a_class_named_like_its_scalar_is_refused(monkeypatch):
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    named = stand_in_numpy().int64
    named.__module__, named.__qualname__ = "numpy", "int64"
    with pytest.raises(V.WrongResult) as err:
        V.to_plain([named(5)], "encode(...)", V.INT_LIST)
    assert str(err.value) == "encode(...)[0] should be a plain int, got a numpy.int64"


ADAPTERS = '''
import numpy as np


def run_merge(ids, pair, new_id):
    return list(np.array([new_id, 3], dtype=np.int64))


class Tokenizer:
    def encode(self, text):
        return list(np.frombuffer(text.encode(), dtype=np.uint8))

    def encode_iterable(self, lines):
        for line in lines:
            yield from self.encode(line)


def get_tokenizer(vocab, merges, special_tokens=None):
    return Tokenizer()
'''


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_numpy_ids_are_graded_as_the_ints_they_hold(tmp_path, isolate):
    pytest.importorskip("numpy")
    sub = adapters_only(tmp_path / "sub", textwrap.dedent(ADAPTERS))
    (tmp_path / "lines.txt").write_text("ab\ncd\n")
    with implementation_of(sub, isolate) as impl:
        assert impl.run_merge([1, 2], (1, 2), 300) == [300, 3]
        tok = impl.get_tokenizer({}, [], None)
        assert tok.encode("ab") == [97, 98]
        assert list(tok.encode_iterable(["ab", "c"])) == [97, 98, 99]
        probe = tok.probe("encode_iterable_file", str(tmp_path / "lines.txt"))
        assert probe["count"] == 6, probe
