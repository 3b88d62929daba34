"""Implements nothing: every adapter returns an empty value of the right type ([], {}, "",
0.0, None, ({}, [])) and every tokenizer's methods return empty values (encode_iterable
yields nothing), so no test can pass on type checks alone."""


class _Empty:
    def __init__(self, *args, **kwargs):
        pass

    def encode(self, text):
        return []

    def decode(self, ids):
        return ""

    def encode_iterable(self, iterable):
        return iter(())


def get_character_tokenizer():
    return _Empty()


def get_byte_tokenizer():
    return _Empty()


def get_word_tokenizer(training_text):
    return _Empty()


def run_compression_ratio(text, ids):
    return 0.0


def run_get_pair_counts(ids):
    return {}


def run_merge(ids, pair, new_id):
    return []


def run_pretokenize(text):
    return []


def run_split_on_special_tokens(text, special_tokens):
    return []


def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    return {}, []


def get_tokenizer(vocab, merges, special_tokens=None):
    return _Empty()


def get_tokenizer_from_files(vocab_path, merges_path, special_tokens=None):
    return _Empty()


def run_save_tokenizer(vocab, merges, vocab_path, merges_path):
    return None
