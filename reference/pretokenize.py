"""GPT-2 pre-tokenization and special-token splitting.

Text is first cut at special tokens (which are never split or merged), and each piece in
between is cut into pre-tokens by GPT-2's regular expression. BPE merges never cross the
boundary between two pre-tokens.
"""

from __future__ import annotations

import re

import regex

# GPT-2's pattern: contractions, optional-space + letters / digits / other symbols,
# whitespace not followed by a non-space (so " word" keeps its space), other whitespace.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)

# The same pattern for text made only of ASCII characters, for the standard library's ``re``,
# which runs it about twice as fast. On ASCII, ``\p{L}`` is exactly ``[A-Za-z]``, ``\p{N}`` is
# ``[0-9]`` and ``regex``'s ``\s`` is ``re.ASCII``'s (space, tab, \n, \v, \f, \r); all else is
# unchanged, so on ASCII text the matches are the same.
GPT2_ASCII_PATTERN = (
    GPT2_PATTERN.replace(r"[^\s\p{L}\p{N}]", r"[^\sA-Za-z0-9]").replace(r"\p{L}", "[A-Za-z]").replace(r"\p{N}", "[0-9]")
)
GPT2_ASCII_REGEX = re.compile(GPT2_ASCII_PATTERN, re.ASCII)
_SAFE_CUT = regex.compile(r"(?<=\S)\s")  # a place where a pre-token must end
_LAST_SAFE_CUT = regex.compile(r"(?r)(?<=\S)\s")  # the same, searched backwards
NEAR = 64  # pretokenize_fast: non-ASCII characters closer than this share a stretch
_NON_ASCII_STRETCH = regex.compile(r"[^\x00-\x7f](?:[\x00-\x7f]{0,%d}[^\x00-\x7f])*" % (NEAR - 1))


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into GPT-2 pre-tokens: ``"Hi there!" -> ["Hi", " there", "!"]``."""
    return GPT2_REGEX.findall(text)


def safe_cut_near(text: str, start: int, end: int) -> int:
    """A place to cut ``text`` after ``start``: the last one before ``end``, else the first
    one after it, else ``len(text)``. A safe place lies between a non-space and a space: no
    GPT-2 pre-token spans it, so cutting there changes no pre-token."""
    m = _LAST_SAFE_CUT.search(text, start + 1, end) or _SAFE_CUT.search(text, end)
    return m.start() if m else len(text)


def pretokenize_fast(text: str) -> list[str]:
    """``pretokenize(text)``, faster on text that is mostly ASCII (source code, English).

    Each stretch of text around non-ASCII characters (less than ``NEAR`` apart), widened to
    safe places on both sides, goes through ``GPT2_REGEX``; the ASCII text between stretches
    through ``GPT2_ASCII_REGEX``. Text with many non-ASCII characters goes wholly through
    ``GPT2_REGEX``: there the stretches would cost more than they save."""
    if text.isascii():
        return GPT2_ASCII_REGEX.findall(text)
    if NEAR * (len(text.encode("utf-8", "surrogatepass")) - len(text)) > len(text):
        return GPT2_REGEX.findall(text)
    words: list[str] = []
    start = 0  # the text before start is done
    for m in _NON_ASCII_STRETCH.finditer(text):
        if m.start() < start:  # inside the stretch just done
            continue
        safe = _LAST_SAFE_CUT.search(text, start + 1, m.start() + 1)
        a = safe.start() if safe else start
        safe = _SAFE_CUT.search(text, m.end())
        b = safe.start() if safe else len(text)
        words += GPT2_ASCII_REGEX.findall(text, start, a)
        words += GPT2_REGEX.findall(text, a, b)
        start = b
    words += GPT2_ASCII_REGEX.findall(text, start)
    return words


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
