"""Warm-up tokenizers: the three simple schemes that each fail for their own reason.

* ``CharacterTokenizer``: one id per Unicode code point. Lossless, but the vocabulary is
  huge (0x110000 ids) and mostly unused, and rare characters get ids the model never sees.
* ``ByteTokenizer``: one id per UTF-8 byte. Lossless with a tiny vocabulary (256), but it
  compresses nothing: sequences are as long as the byte string.
* ``WordTokenizer``: one id per GPT-2 pre-token seen in a training text. Short sequences,
  but any word not seen in training becomes ``<unk>`` and is lost on decode.
"""

from __future__ import annotations

from .pretokenize import pretokenize

UNK = "<unk>"


class CharacterTokenizer:
    """Unicode code points as ids: ``encode("hi") == [104, 105]``."""

    def encode(self, text: str) -> list[int]:
        return [ord(ch) for ch in text]

    def decode(self, ids: list[int]) -> str:
        for pos, i in enumerate(ids):
            if not 0 <= i < 0x110000:
                raise ValueError(f"id {i} at position {pos} is not a Unicode code point")
        return "".join(chr(i) for i in ids)


class ByteTokenizer:
    """UTF-8 bytes as ids: ``encode("é") == [195, 169]``."""

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        for pos, i in enumerate(ids):
            if not 0 <= i < 256:
                raise ValueError(f"id {i} at position {pos} is not a byte value")
        return bytes(ids).decode("utf-8", errors="replace")


class WordTokenizer:
    """GPT-2 pre-tokens as words; id 0 is ``<unk>``, then words in order of first appearance."""

    def __init__(self, training_text: str) -> None:
        self.vocab: dict[int, str] = {0: UNK}
        self._ids: dict[str, int] = {}
        for word in pretokenize(training_text):
            if word not in self._ids:
                self._ids[word] = len(self.vocab)
                self.vocab[len(self.vocab)] = word

    def encode(self, text: str) -> list[int]:
        return [self._ids.get(word, 0) for word in pretokenize(text)]

    def decode(self, ids: list[int]) -> str:
        for pos, i in enumerate(ids):
            if i not in self.vocab:
                raise ValueError(f"unknown token id {i} at position {pos}")
        return "".join(self.vocab[i] for i in ids)


def compression_ratio(text: str, ids: list[int]) -> float:
    """UTF-8 bytes per token: ``len(text.encode("utf-8")) / len(ids)``."""
    if not ids:
        raise ValueError("compression_ratio: ids is empty, the ratio is undefined")
    return len(text.encode("utf-8")) / len(ids)
