"""A result that is not plain data (a ``list`` subclass, a tuple, an array) fails with one line
naming what came back and what was wanted, the same in-process and in the isolated worker.

Subclasses stay rejected: one could override ``__eq__`` to fake results (the ``lying_values``
and ``sneaky_values`` attacks), and values cross from the worker as plain data anyway; the
``student/`` docstrings say "a plain ``list`` of ``int``"."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from harness.impl import Implementation, LocalBackend
from harness.values import WrongResult

STUDENT = '''
import array


class TokenIds(list):
    """A list of ids that remembers its text: a convenience students write."""


class ndarray:
    """What numpy's array looks like to the harness (numpy is not installed here)."""

    def __init__(self, values):
        self.values = list(values)

    def __len__(self):
        return len(self.values)

    def __eq__(self, other):
        return True


ndarray.__module__ = "numpy"


def ids(text):
    return [ord(c) for c in text]


RETURNS = {
    "subclass": lambda t: TokenIds(ids(t)),
    "tuple": lambda t: tuple(ids(t)),
    "numpy": lambda t: ndarray(ids(t)),
    "array": lambda t: array.array("l", ids(t)),
    "generator": lambda t: (i for i in ids(t)),
    "numpy_items": lambda t: [ndarray([i]) for i in ids(t)],
}


class Tokenizer:
    def __init__(self, kind):
        self.kind = kind

    def encode(self, text):
        return RETURNS[self.kind](text)

    def encode_iterable(self, chunks):
        for chunk in chunks:
            yield from self.encode(chunk)
'''

ADAPTERS = """
from student.tok import RETURNS, Tokenizer


def get_tokenizer(vocab, merges, special_tokens=None):
    return Tokenizer(special_tokens[0])


def run_merge(ids, pair, new_id):
    return RETURNS[str(new_id)]("ab")
"""

# what came back -> the one line the test fails with
EXPECTED = {
    "subclass": "encode(...) should return a plain list of ints, got a student.tok.TokenIds of length 3 (a subclass of list)",
    "tuple": "encode(...) should return a plain list of ints, got a tuple of length 3",
    "numpy": "encode(...) should return a plain list of ints, got a numpy.ndarray",
    "array": "encode(...) should return a plain list of ints, got an array.array",
    "generator": "encode(...) should return a plain list of ints, got a generator",
    "numpy_items": "encode(...)[0] should be a plain int, got a numpy.ndarray",
}


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plain") / "sub"
    (root / "student").mkdir(parents=True)
    (root / "student" / "__init__.py").write_text("")
    (root / "student" / "tok.py").write_text(textwrap.dedent(STUDENT))
    (root / "adapters.py").write_text(textwrap.dedent(ADAPTERS))
    return root


@pytest.fixture(scope="module", params=["in-process", "isolated"])
def impl(request, submission):
    if request.param == "in-process":
        yield Implementation(LocalBackend("student", submission))
        return
    if not hasattr(os, "fork"):
        pytest.skip("the worker needs a POSIX system")
    from sandbox.backend import WorkerBackend
    from sandbox.limits import IsolationLimits

    backend = WorkerBackend("student", submission, IsolationLimits(call_timeout=10.0, term_grace=0.3))
    yield Implementation(backend)
    backend.close()


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_encode_not_returning_a_plain_list_names_what_came_back(impl, kind):
    tok = impl.get_tokenizer({}, [], [kind])
    with pytest.raises(WrongResult) as err:
        tok.encode("abc")
    assert str(err.value) == EXPECTED[kind]


def test_an_adapter_returning_a_subclass_says_a_plain_list_of_ints(impl):
    with pytest.raises(WrongResult) as err:
        impl.run_merge([1], (1, 2), "subclass")
    assert str(err.value) == (
        "adapters.run_merge(...) should return a plain list of ints, got a student.tok.TokenIds of length 2 (a subclass of list)"
    )


def test_an_encode_iterable_item_that_is_not_plain_names_its_type(impl):
    tok = impl.get_tokenizer({}, [], ["numpy_items"])
    with pytest.raises(WrongResult) as err:
        list(tok.encode_iterable(["abc"]))
    assert str(err.value) == "encode_iterable(...) item 0 should be a plain int, got a numpy.ndarray"


def test_a_class_name_with_control_characters_stays_on_one_line():
    from harness import values as V

    odd = type("Ids\nnext line", (list,), {})
    odd.__module__ = "mod\x1b[2J"
    with pytest.raises(WrongResult) as err:
        V.to_plain(odd([1]), "encode(...)", V.INT_LIST)
    assert str(err.value) == (
        "encode(...) should return a plain list of ints, got a mod\\x1b[2J.Ids\\nnext line of length 1 (a subclass of list)"
    )
