"""Implements nothing, but builds every tokenizer: the constructors return an object whose
every method raises ValueError (naming its arguments), and every other adapter raises it.
A test of a rejection (decode of an unknown id, a malformed file) that never checks a valid
call first passes on it: code that rejects everything, as a decode checking its ids against
the wrong table does."""


def _refuse(name, args, kwargs=None):
    raise ValueError(f"{name} refuses {args!r} {kwargs or {}!r}")


class _BuiltButRefuses:
    def __init__(self, *args, **kwargs):
        self.args = args

    def encode(self, *args, **kwargs):
        _refuse("encode", args, kwargs)

    def decode(self, *args, **kwargs):
        _refuse("decode", args, kwargs)

    def encode_iterable(self, *args, **kwargs):
        _refuse("encode_iterable", args, kwargs)


def get_character_tokenizer(*args, **kwargs):
    return _BuiltButRefuses(*args, **kwargs)


def get_byte_tokenizer(*args, **kwargs):
    return _BuiltButRefuses(*args, **kwargs)


def get_word_tokenizer(*args, **kwargs):
    return _BuiltButRefuses(*args, **kwargs)


def get_tokenizer(*args, **kwargs):
    return _BuiltButRefuses(*args, **kwargs)


def get_tokenizer_from_files(*args, **kwargs):
    return _BuiltButRefuses(*args, **kwargs)


def run_compression_ratio(*args, **kwargs):
    _refuse("run_compression_ratio", args, kwargs)


def run_get_pair_counts(*args, **kwargs):
    _refuse("run_get_pair_counts", args, kwargs)


def run_merge(*args, **kwargs):
    _refuse("run_merge", args, kwargs)


def run_pretokenize(*args, **kwargs):
    _refuse("run_pretokenize", args, kwargs)


def run_split_on_special_tokens(*args, **kwargs):
    _refuse("run_split_on_special_tokens", args, kwargs)


def run_train_bpe(*args, **kwargs):
    _refuse("run_train_bpe", args, kwargs)


def run_save_tokenizer(*args, **kwargs):
    _refuse("run_save_tokenizer", args, kwargs)
