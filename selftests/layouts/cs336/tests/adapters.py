"""A CS336-style adapters file written for the harness's selftests (not from any course
repository): the tests call these functions, which call the package ``cs336_basics``.
Like the real thing it imports packages for other parts of the course (``torch``,
``jaxtyping``, ``numpy``) at the top, whether or not the tokenizer needs them."""

from __future__ import annotations

import os
from typing import Any

import numpy.typing as npt
import torch
from jaxtyping import Float, Int
from torch import Tensor

from cs336_basics.bpe_tokenizer import BPETokenizer
from cs336_basics.train_bpe import train_bpe
from cs336_basics import nn_utils  # noqa: F401  (imports torch itself)
from cs336_basics.gpt2_files import save_tokenizer_files
from cs336_basics.pretokenize import pretokenize, split_on_special_tokens
from cs336_basics.primitives import get_pair_counts, merge
from cs336_basics.warmup import ByteTokenizer, CharacterTokenizer, WordTokenizer, compression_ratio


def run_linear(d_in: int, d_out: int, weights: Float[Tensor, " d_out d_in"], in_features: Float[Tensor, " ... d_in"]) -> Float[Tensor, " ... d_out"]:
    """An adapter of another part of the course: the tokenizer tests never call it."""
    return nn_utils.linear(weights, in_features)


def run_get_batch(dataset: npt.NDArray, batch_size: int, context_length: int, device: str) -> tuple[Tensor, Tensor]:
    raise NotImplementedError


def get_character_tokenizer():
    return CharacterTokenizer()


def get_byte_tokenizer():
    return ByteTokenizer()


def get_word_tokenizer(training_text: str):
    return WordTokenizer(training_text)


def run_compression_ratio(text: str, ids: list[int]) -> float:
    return compression_ratio(text, ids)


def run_get_pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    return get_pair_counts(ids)


def run_merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return merge(ids, pair, new_id)


def run_pretokenize(text: str) -> list[str]:
    return pretokenize(text)


def run_split_on_special_tokens(text: str, special_tokens: list[str]) -> list[str]:
    return split_on_special_tokens(text, special_tokens)


def get_tokenizer(
    vocab: dict[int, bytes],
    merges: list[tuple[bytes, bytes]],
    special_tokens: list[str] | None = None,
) -> Any:
    return BPETokenizer(vocab, merges, special_tokens)


def get_tokenizer_from_files(vocab_path: str | os.PathLike, merges_path: str | os.PathLike, special_tokens: list[str] | None = None) -> Any:
    return BPETokenizer.from_files(vocab_path, merges_path, special_tokens)


def run_save_tokenizer(vocab, merges, vocab_path, merges_path) -> None:
    save_tokenizer_files(vocab, merges, vocab_path, merges_path)


def run_train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: list[str],
    **kwargs: Any,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    return train_bpe(input_path, vocab_size, special_tokens)
