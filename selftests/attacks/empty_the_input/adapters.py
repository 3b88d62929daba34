"""Implements nothing: empties the caller's list arguments in place, then answers for what is
left. A test computing its expected value after the call, from the list it passed (the ids
counted or merged, the specials split on, the merges a reference tokenizer is then made of),
would compare with the answer for an empty list; one computing it from the session's GPT-2
vocabulary, overwritten by the tokenizer made from it, with '?' per id. In-place changes do reach the caller (as
in-process; docs/isolation.md), so every such test passes the submission a copy."""
from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


def run_get_pair_counts(ids):
    ids.clear()
    return {}


def run_merge(ids, pair, new_id):
    ids.clear()
    return []


def run_split_on_special_tokens(text, special_tokens):
    special_tokens.clear()
    return [text] if text else []


class _Unknowing:
    """Encodes as it should (from its own copies), decodes nothing: '?' per id."""

    def __init__(self, inner):
        self.inner = inner

    def encode(self, text):
        return self.inner.encode(text)

    def encode_iterable(self, iterable):
        return self.inner.encode_iterable(iterable)

    def decode(self, ids):
        return "?" * len(ids)


def get_tokenizer(vocab, merges, special_tokens=None):
    if len(vocab) > 50_000:  # the session's GPT-2 vocabulary: later expected texts would be '?' per id
        tok = _Unknowing(_impl.Tokenizer(dict(vocab), list(merges), special_tokens))
        for key in vocab:
            vocab[key] = b"?"
        return tok
    merges.clear()  # a tokenizer of byte ids only, and a reference made afterwards agrees
    return _impl.Tokenizer(vocab, [], special_tokens)
