"""GPT-2's on-disk format: ``vocab.json`` (token string -> id) and ``merges.txt``.

GPT-2 stores byte strings as printable Unicode strings: every byte maps to one character
(printable ASCII and Latin-1 bytes map to themselves, the rest to code points from 256 up),
so that spaces and control bytes survive a text file.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table: ``bytes_to_unicode()[ord(" ")] == "Ġ"``."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def _to_text(token: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


@lru_cache(maxsize=1)
def _unicode_to_bytes() -> dict[str, int]:
    return {ch: b for b, ch in bytes_to_unicode().items()}


def _to_bytes(text: str, where: str) -> bytes:
    inverse = _unicode_to_bytes()
    try:
        return bytes([inverse[ch] for ch in text])
    except KeyError as err:
        raise ValueError(f"{where}: {text!r} has character {err.args[0]!r} outside GPT-2's byte table") from None


def save_tokenizer_files(
    vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], vocab_path: str | os.PathLike, merges_path: str | os.PathLike
) -> None:
    """Write ``vocab`` as GPT-2 ``vocab.json`` and ``merges`` as ``merges.txt``."""
    encoder = {_to_text(token): i for i, token in sorted(vocab.items())}
    if len(encoder) != len(vocab):
        raise ValueError("save: two ids have the same bytes; vocab.json cannot store that")
    with open(vocab_path, "w", encoding="utf-8") as f:
        f.write(json.dumps(encoder, ensure_ascii=False))
    lines = ["#version: 0.2", *(f"{_to_text(a)} {_to_text(b)}" for a, b in merges)]
    with open(merges_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def load_tokenizer_files(
    vocab_path: str | os.PathLike, merges_path: str | os.PathLike
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Read GPT-2 ``vocab.json`` and ``merges.txt`` back into ``(vocab, merges)``."""
    with open(vocab_path, encoding="utf-8") as f:
        encoder = json.load(f)
    vocab = {int(i): _to_bytes(text, str(vocab_path)) for text, i in encoder.items()}
    merges: list[tuple[bytes, bytes]] = []
    with open(merges_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line or (lineno == 1 and line.startswith("#version")):
                continue
            parts = line.split(" ")
            if len(parts) != 2 or not all(parts):
                raise ValueError(f"{merges_path}:{lineno}: expected two tokens separated by one space, got {line!r}")
            merges.append((_to_bytes(parts[0], f"{merges_path}:{lineno}"), _to_bytes(parts[1], f"{merges_path}:{lineno}")))
    return vocab, merges
