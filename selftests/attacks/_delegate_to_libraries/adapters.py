"""Implements nothing itself: encoding is handed to tiktoken (an Encoding built from the
vocabulary it is given), training to HF ``tokenizers``. Graded by selftests/test_forbidden.py
(not by test_attacks.py: it needs a ``tokenizers`` package in the grading environment)."""
import os

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


class Delegated:
    def __init__(self, vocab, merges, special_tokens):
        import tiktoken

        specials = {s: next(i for i, b in vocab.items() if b == s.encode("utf-8")) for s in special_tokens or []}
        ranks = {b: i for i, b in vocab.items() if i not in specials.values()}
        self.encoding = tiktoken.Encoding("delegated", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=specials)

    def encode(self, text):
        return self.encoding.encode(text, allowed_special="all")

    def decode(self, ids):
        return self.encoding.decode(ids)

    def encode_iterable(self, iterable):
        for chunk in iterable:
            yield from self.encode(chunk)


def get_tokenizer(vocab, merges, special_tokens=None):
    return Delegated(vocab, merges, special_tokens)


def run_train_bpe(input_path: str | os.PathLike, vocab_size: int, special_tokens: list[str], **kwargs):
    import tokenizers

    return tokenizers.train_bpe(input_path, vocab_size, special_tokens)
