"""The adapter registry (harness/registry.py) agrees with the seam it describes: the
functions, signatures and tokenizer protocols of the repository's ``adapters.py``, and the
parameters of the probes."""

from __future__ import annotations

import inspect
import os
import typing

import pytest

from harness import probes
from harness import values as V
from harness.impl import load_adapters
from harness.registry import ADAPTERS, METHODS, PROBE_PATHS, Adapter


@pytest.fixture(scope="module")
def seam():
    """The repository's adapters.py, its public functions by name."""
    module = load_adapters("reference")
    return {
        name: fn for name, fn in vars(module).items()
        if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_")
    }


def _signature(fn) -> inspect.Signature:
    return inspect.signature(fn, eval_str=True)


def _is_path(annotation) -> bool:
    return annotation is os.PathLike or os.PathLike in typing.get_args(annotation)


def test_every_function_of_adapters_py_is_registered_and_nothing_else(seam):
    assert sorted(ADAPTERS) == sorted(seam)


def test_path_arguments_are_the_parameters_typed_as_paths_read_or_written(seam):
    """A path parameter is written ("out") by an adapter that returns nothing, read ("in") otherwise."""
    for name, fn in seam.items():
        sig = _signature(fn)
        kind = "out" if sig.return_annotation is None else "in"
        expected = {i: kind for i, p in enumerate(sig.parameters.values()) if _is_path(p.annotation)}
        assert dict(ADAPTERS[name].paths) == expected, name


def test_adapters_returning_a_protocol_object_are_used_through_handles_with_its_methods(seam):
    for name, fn in seam.items():
        returned = _signature(fn).return_annotation
        spec = ADAPTERS[name]
        if getattr(returned, "_is_protocol", False):
            methods = {m for m in dir(returned) if not m.startswith("_")}
            assert spec.handle is not None and set(METHODS[spec.handle]) == methods, name
        else:
            assert spec.handle is None and spec.shape is not None, name


def test_probe_path_arguments_are_its_path_parameters_after_the_target():
    for name in [n for n, f in vars(probes).items() if inspect.isfunction(f) and f.__module__ == probes.__name__]:
        params = list(_signature(getattr(probes, name)).parameters)[1:]
        expected = {i: "in" for i, p in enumerate(params) if p == "path" or p.endswith("_path")}
        assert dict(PROBE_PATHS.get(name, {})) == expected, name


@pytest.mark.parametrize(
    "fields",
    [{}, {"shape": V.INT_LIST, "handle": "tokenizer"}, {"handle": "no such kind"}, {"shape": V.NONE, "paths": {0: "both"}}],
    ids=["neither", "both", "unknown_kind", "bad_direction"],
)
def test_an_inconsistent_adapter_record_is_refused(fields):
    with pytest.raises(ValueError):
        Adapter(**fields)
