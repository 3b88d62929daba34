"""Values that pass naive type checks (isinstance, ==) but are not what they claim: bool for
int, int/str/bytes/tuple subclasses whose __eq__ says yes to anything and whose __hash__
collides, all wrong underneath."""
from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import get_byte_tokenizer as _honest_byte_tokenizer


class Int(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = lambda self: 0  # noqa: E731


class Str(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = lambda self: 0  # noqa: E731


class Bytes(bytes):
    def __eq__(self, other):
        return True

    __hash__ = lambda self: 0  # noqa: E731


class Pair(tuple):
    def __eq__(self, other):
        return True

    __hash__ = lambda self: 0  # noqa: E731


def run_merge(ids, pair, new_id):
    return [True] * len(ids)  # bools are ints to isinstance


def run_get_pair_counts(ids):
    return {Pair((Int(0), Int(0))): Int(0)}


class _Sneaky:
    def encode(self, text):
        return [Int(0) for _ in text]

    def decode(self, ids):
        return Str("")


def get_byte_tokenizer():
    return _Sneaky()


def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    return {Int(0): Bytes(b"")}, [(Bytes(b""), Bytes(b""))]
