r"""Part 3 (pre-tokenization): GPT-2's regular expression, and special tokens.

Before BPE runs, text is cut twice:

1. at *special tokens* (such as ``"<|endoftext|>"``), which are never split, merged or
   pre-tokenized: ``split_on_special_tokens``;
2. each piece between special tokens is cut into *pre-tokens* by GPT-2's regular
   expression ``GPT2_PATTERN``: ``pretokenize``.

BPE merges never cross the boundary between two pre-tokens, so ``" dog."`` can never become
one token and ``" dog"`` is learned once however it is followed.

Use the third-party ``regex`` module (``import regex``), not the standard ``re``: only
``regex`` understands the Unicode property classes ``\p{L}`` (letters) and ``\p{N}``
(numbers) the pattern uses.

Hints: compile patterns once, at import time or when a tokenizer is built, not on every
call. Special tokens can be found in one pass with a single alternation of the escaped
tokens (``regex.escape``), ordered so that the longest candidate is tried first.
"""

from __future__ import annotations

import regex

# GPT-2's pre-tokenization pattern (as in tiktoken's "gpt2" encoding). Alternatives are
# tried left to right at each position; the first that matches wins:
#   '(?:[sdmt]|ll|ve|re)  English contractions: 's 'd 'm 't 'll 've 're (lowercase only,
#                         ASCII apostrophe only; "'S" is "'" then "S")
#    ?\p{L}+              an optional single space, then a run of letters (" hello")
#    ?\p{N}+              an optional single space, then a run of digits (" 2024")
#    ?[^\s\p{L}\p{N}]+    an optional single space, then a run of symbols/punctuation
#                         (neither whitespace, letter nor number: " ...", "!?")
#   \s+(?!\S)             a run of whitespace not followed by a non-space: at the end of
#                         the text it takes everything; before a word it stops one
#                         character early so the word can take its leading space
#                         ("  x" -> " ", " x"; "a\n  b" -> "a", "\n ", " b")
#   \s+                   any other whitespace (e.g. the single "\n" in "a\nb")
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)


def pretokenize(text: str) -> list[str]:
    r"""Split ``text`` into GPT-2 pre-tokens.

    The pre-tokens are all non-overlapping matches of ``GPT2_PATTERN`` in ``text``, left
    to right (what ``findall`` of the ``regex`` module returns for this pattern, which has
    no capturing groups). The pattern matches every character, so nothing is lost:
    ``"".join(pretokenize(text)) == text``, and no pre-token is empty. Special tokens get
    no special treatment here (``"<|endoftext|>"`` becomes ``["<|", "endoftext", "|>"]``);
    cut them out first with ``split_on_special_tokens``.

    Args:
        text: any ``str`` (may be empty).

    Returns:
        A plain ``list`` of ``str``; ``""`` gives ``[]``.

    >>> pretokenize("Hello, world! It's 2024.  ok\n")
    ['Hello', ',', ' world', '!', ' It', "'s", ' 2024', '.', ' ', ' ok', '\n']
    >>> pretokenize("a\n  b")
    ['a', '\n ', ' b']
    """
    raise NotImplementedError


def split_on_special_tokens(text: str, special_tokens: list[str]) -> list[str]:
    r"""Cut ``text`` so that each occurrence of a special token is a piece of its own.

    Scan ``text`` left to right. At the leftmost position where some special token
    occurs, take the longest special token that starts there as one piece (so where one
    special is a prefix of another, e.g. ``"<|endoftext|>"`` and
    ``"<|endoftext|><|endoftext|>"``, the longer one wins), then continue scanning right
    after it. An occurrence that starts earlier wins over a longer one starting later:
    with specials ``["ab", "bcd"]``, ``"abcd"`` gives ``["ab", "cd"]``. The text between
    two special-token pieces is kept as one piece (it is not pre-tokenized). Empty pieces
    are dropped, so ``"".join(pieces) == text`` and no piece is ``""``.

    Special tokens are matched literally, character for character: regular-expression
    metacharacters in them (``|``, ``.``, ``*``, ``(``, ``[``, ``\``, ...) have no special
    meaning. The order of ``special_tokens`` does not matter and duplicates are allowed.

    Args:
        text: any ``str`` (may be empty).
        special_tokens: a list of non-empty ``str`` (may be empty).

    Returns:
        A plain ``list`` of ``str``. With no special tokens the result is ``[text]``, or ``[]`` when
        ``text == ""``. ``""`` always gives ``[]``.

    Raises:
        ValueError: if some special token is the empty string (or not a ``str``); this is
            checked first, even when ``text`` is empty.

    >>> split_on_special_tokens("a<|endoftext|>b", ["<|endoftext|>"])
    ['a', '<|endoftext|>', 'b']
    >>> eot = "<|endoftext|>"
    >>> split_on_special_tokens("ab" + eot + eot + "c" + eot, [eot, eot + eot])
    ['ab', '<|endoftext|><|endoftext|>', 'c', '<|endoftext|>']
    >>> split_on_special_tokens("x.y", ["."])
    ['x', '.', 'y']
    >>> split_on_special_tokens("no specials here", [])
    ['no specials here']
    """
    raise NotImplementedError
