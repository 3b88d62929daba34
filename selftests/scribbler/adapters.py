"""The reference's answers, computed from copies of the arguments; then every list, dict and set
the call was given is scribbled on in place (reversed, its first item once more; a dict's values
in reverse order), as a submission may do to its caller's objects, isolated as in-process
(docs/isolation.md). Graded, it may fail only the tests of the rule that arguments are left
alone: a test that fails otherwise computes what it expects from an argument after the call,
or from a session object handed to the submission (test_expected_values_kept.py)."""
from __future__ import annotations

import functools

import student.base_adapters as _base
from student.base_adapters import *  # noqa: F401,F403

_METHODS = ("encode", "decode")  # a tokenizer's methods taking arguments it could change (not streams)


def _copy(value):
    return type(value)(value) if type(value) in (list, dict, set) else value


def _scribble(value) -> None:
    if type(value) is list and value:
        value[:] = [*reversed(value), value[-1]]
    elif type(value) is dict and value:
        keys, values = list(value), list(value.values())
        value.update(zip(keys, reversed(values)))
        if len(value) == 1:
            value.clear()
    elif type(value) is set:
        value.clear()


def _answering_then_scribbling(function):
    @functools.wraps(function)
    def call(*args, **kwargs):
        result = function(*map(_copy, args), **{k: _copy(v) for k, v in kwargs.items()})
        for value in (*args, *kwargs.values()):
            _scribble(value)
        return _Scribbling(result) if hasattr(result, "encode") and hasattr(result, "decode") else result

    return call


class _Scribbling:
    """A tokenizer whose methods scribble on what they were given, after answering."""

    def __init__(self, inner) -> None:
        self._inner = inner
        for name in _METHODS:
            setattr(self, name, _answering_then_scribbling(getattr(inner, name)))

    def __getattr__(self, name):
        return getattr(self._inner, name)


for _name in dir(_base):
    if _name.startswith(("run_", "get_")) and callable(getattr(_base, _name)):
        globals()[_name] = _answering_then_scribbling(getattr(_base, _name))
