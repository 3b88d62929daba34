"""Implements nothing itself: encoding is done by tiktoken's compiled core, brought along in the
submission. ``student/fastbpe/`` holds the core alone under another package's name; ``tiktoken/``
(beside this file) the whole package, reached after taking every import hook off
``sys.meta_path``. ``ROUTE`` (a file written by selftests/test_forbidden.py) says which. Graded
by selftests/test_forbidden.py (not by test_attacks.py: the compiled core is copied in from the
grading environment's tiktoken)."""
import os
import sys

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ROUTE")) as f:
    ROUTE = f.read().strip()


def _core():
    if ROUTE == "renamed":
        from student.fastbpe import _tiktoken

        return _tiktoken
    # vendored: the forbidding import hook goes, then tiktoken is this submission's own copy
    sys.meta_path[:] = [f for f in sys.meta_path if "forbid" not in type(f).__name__.lower()]
    from tiktoken import _tiktoken

    return _tiktoken


class Delegated:
    def __init__(self, vocab, merges, special_tokens):
        specials = {s: next(i for i, b in vocab.items() if b == s.encode("utf-8")) for s in special_tokens or []}
        ranks = {b: i for i, b in vocab.items() if i not in specials.values()}
        self.core = _core().CoreBPE(ranks, specials, GPT2_PATTERN)
        self.specials = set(specials)

    def encode(self, text):
        return self.core.encode(text, self.specials)

    def decode(self, ids):
        return bytes(self.core.decode_bytes(ids)).decode("utf-8", "replace")

    def encode_iterable(self, iterable):
        for chunk in iterable:
            yield from self.encode(chunk)


def get_tokenizer(vocab, merges, special_tokens=None):
    return Delegated(vocab, merges, special_tokens)
