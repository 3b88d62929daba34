"""What the harness knows about each adapter of ``adapters.py``: the shape of its result (or
the kind of object it returns, used through a handle) and which of its arguments are file
paths. :class:`harness.impl.Implementation` checks results against it; the isolated
worker's trusted side copies path arguments in and out of the sandbox by it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import values as V


@dataclass(frozen=True)
class Adapter:
    """One adapter: ``shape`` of its plain result, or ``handle``, the kind (a key of
    :data:`METHODS`) of the object it returns; ``paths``: positional argument -> ``"in"``
    (a file it reads, copied into the sandbox) or ``"out"`` (a file it writes, copied back);
    ``pathlib``: the positional arguments the submission gets as a ``pathlib.Path`` whatever
    the test gave (as CS336's tests give ``run_train_bpe`` its corpus), in-process and isolated;
    ``keywords``: the names CS336's tests pass the arguments by, in order (``run_train_bpe(
    input_path=..., vocab_size=..., special_tokens=...)``): an adapter whose signature takes
    them by those names gets them so (keyword-only, in another order, ``**kwargs``), any other
    positionally (:func:`harness.dispatch.arguments`)."""

    shape: V.Shape | None = None
    handle: str | None = None
    paths: Mapping[int, str] = field(default_factory=dict)
    pathlib: frozenset[int] = frozenset()
    keywords: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.shape is None) == (self.handle is None):
            raise ValueError(f"an adapter has a result shape or returns a handle, not both or neither: {self!r}")
        if self.handle is not None and self.handle not in METHODS:
            raise ValueError(f"unknown handle kind {self.handle!r} (known: {', '.join(METHODS)})")
        if set(self.paths.values()) - {"in", "out"}:
            raise ValueError(f"path arguments are 'in' or 'out', got {dict(self.paths)!r}")


# kind of object -> its methods and the shapes of their results
METHODS: dict[str, dict[str, V.Shape]] = {
    "simple": {"encode": V.INT_LIST, "decode": V.STR},
    "tokenizer": {"encode": V.INT_LIST, "decode": V.STR, "encode_iterable": V.INT_LIST},
}

ADAPTERS: dict[str, Adapter] = {
    "get_character_tokenizer": Adapter(handle="simple"),
    "get_byte_tokenizer": Adapter(handle="simple"),
    "get_word_tokenizer": Adapter(handle="simple"),
    "run_compression_ratio": Adapter(V.NUMBER),
    "run_get_pair_counts": Adapter(V.PAIR_COUNTS),
    "run_merge": Adapter(V.INT_LIST),
    "run_pretokenize": Adapter(V.STR_LIST),
    "run_split_on_special_tokens": Adapter(V.STR_LIST),
    "run_train_bpe": Adapter(V.TRAINED, paths={0: "in"}, pathlib=frozenset({0}),
                             keywords=("input_path", "vocab_size", "special_tokens")),
    "get_tokenizer": Adapter(handle="tokenizer"),
    "get_tokenizer_from_files": Adapter(handle="tokenizer", paths={0: "in", 1: "in"}),
    "run_save_tokenizer": Adapter(V.NONE, paths={2: "out", 3: "out"}),
}

# probe (a function of harness.probes) -> its path arguments, counted after the target
PROBE_PATHS: dict[str, Mapping[int, str]] = {"encode_iterable_file": {0: "in"}}

# adapter, or "probe:NAME" -> which positional arguments are file paths ("in" or "out")
PATH_ARGS: dict[str, Mapping[int, str]] = {
    **{name: a.paths for name, a in ADAPTERS.items() if a.paths},
    **{f"probe:{name}": paths for name, paths in PROBE_PATHS.items()},
}


def method_shape(name: str) -> V.Shape | None:
    """The shape of method ``name``'s result, the same for every kind of object that has it
    (``encode``: ``list[int]``); None if kinds differ or none has it."""
    shapes = {methods[name] for methods in METHODS.values() if name in methods}
    return shapes.pop() if len(shapes) == 1 else None
