"""The only seam between the tests and your implementation.

The tests never import your code directly: they call the functions below. If your code is
laid out differently from the ``student/`` stubs, edit the bodies here (and only here) so
that each function calls yours. Names and signatures must stay as they are; they match
Stanford CS336's ``adapters.py`` for ``get_tokenizer`` and ``run_train_bpe``.

The package used is ``student`` by default; ``BPE_IMPL=reference`` (what ``pytest --impl
reference`` sets) switches to the reference solution where it is present.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

_impl = importlib.import_module(os.environ.get("BPE_IMPL", "student"))


class TextTokenizer(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


class BPETokenizer(TextTokenizer, Protocol):
    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]: ...


# ---- part 1: warm-up tokenizers ------------------------------------------------------


def get_character_tokenizer() -> TextTokenizer:
    return _impl.CharacterTokenizer()


def get_byte_tokenizer() -> TextTokenizer:
    return _impl.ByteTokenizer()


def get_word_tokenizer(training_text: str) -> TextTokenizer:
    return _impl.WordTokenizer(training_text)


def run_compression_ratio(text: str, ids: list[int]) -> float:
    return _impl.compression_ratio(text, ids)


# ---- part 2: BPE primitives ----------------------------------------------------------


def run_get_pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    return _impl.get_pair_counts(ids)


def run_merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return _impl.merge(ids, pair, new_id)


# ---- part 3: pre-tokenization --------------------------------------------------------


def run_pretokenize(text: str) -> list[str]:
    return _impl.pretokenize(text)


def run_split_on_special_tokens(text: str, special_tokens: list[str]) -> list[str]:
    return _impl.split_on_special_tokens(text, special_tokens)


# ---- part 4: training ----------------------------------------------------------------


def run_train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: list[str],
    **kwargs: Any,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    return _impl.train_bpe(input_path, vocab_size, special_tokens)


# ---- part 5: the tokenizer -----------------------------------------------------------


def get_tokenizer(
    vocab: dict[int, bytes],
    merges: list[tuple[bytes, bytes]],
    special_tokens: list[str] | None = None,
) -> BPETokenizer:
    return _impl.Tokenizer(vocab, merges, special_tokens)


def get_tokenizer_from_files(
    vocab_path: str | os.PathLike,
    merges_path: str | os.PathLike,
    special_tokens: list[str] | None = None,
) -> BPETokenizer:
    return _impl.Tokenizer.from_files(vocab_path, merges_path, special_tokens)


def run_save_tokenizer(
    vocab: dict[int, bytes],
    merges: list[tuple[bytes, bytes]],
    vocab_path: str | os.PathLike,
    merges_path: str | os.PathLike,
) -> None:
    _impl.save_tokenizer_files(vocab, merges, vocab_path, merges_path)
