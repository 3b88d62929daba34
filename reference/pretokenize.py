"""GPT-2 pre-tokenization and special-token splitting.

Text is first cut at special tokens (which are never split or merged), and each piece in
between is cut into pre-tokens by GPT-2's regular expression. BPE merges never cross the
boundary between two pre-tokens.
"""

from __future__ import annotations

import regex

# GPT-2's pattern: contractions, optional-space + letters / digits / other symbols,
# whitespace not followed by a non-space (so " word" keeps its space), other whitespace.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into GPT-2 pre-tokens: ``"Hi there!" -> ["Hi", " there", "!"]``."""
    return GPT2_REGEX.findall(text)


def special_tokens_regex(special_tokens: list[str]) -> regex.Pattern[str] | None:
    """A pattern matching any special token literally, longest first; ``None`` if there are none."""
    if not special_tokens:
        return None
    ordered = sorted(set(special_tokens), key=len, reverse=True)
    return regex.compile("|".join(regex.escape(tok) for tok in ordered))


def split_on_special_tokens(text: str, special_tokens: list[str]) -> list[str]:
    """Cut ``text`` so that each special token is a piece of its own.

    Where special tokens overlap, the longest wins. Empty pieces are dropped, so
    ``"".join(pieces) == text``.
    ``split_on_special_tokens("a<|endoftext|>b", ["<|endoftext|>"]) == ["a", "<|endoftext|>", "b"]``
    """
    for tok in special_tokens:
        if not isinstance(tok, str) or not tok:
            raise ValueError(f"special tokens must be non-empty strings, got {tok!r}")
    pattern = special_tokens_regex(special_tokens)
    if pattern is None:
        return [text] if text else []
    pieces: list[str] = []
    start = 0
    for m in pattern.finditer(text):
        if m.start() > start:
            pieces.append(text[start : m.start()])
        pieces.append(m.group())
        start = m.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces
