"""adapters.py edited by a student whose code lives in its own package ``mycode`` (a selftest
fixture: ``mycode/`` is the reference solution copied in at test time)."""

from __future__ import annotations

import mycode


def get_character_tokenizer():
    return mycode.CharacterTokenizer()


def get_byte_tokenizer():
    return mycode.ByteTokenizer()


def get_word_tokenizer(training_text):
    return mycode.WordTokenizer(training_text)


def run_compression_ratio(text, ids):
    return mycode.compression_ratio(text, ids)


def run_get_pair_counts(ids):
    return mycode.get_pair_counts(ids)


def run_merge(ids, pair, new_id):
    return mycode.merge(ids, pair, new_id)


def run_pretokenize(text):
    return mycode.pretokenize(text)


def run_split_on_special_tokens(text, special_tokens):
    return mycode.split_on_special_tokens(text, special_tokens)


def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    return mycode.train_bpe(input_path, vocab_size, special_tokens)


def get_tokenizer(vocab, merges, special_tokens=None):
    return mycode.Tokenizer(vocab, merges, special_tokens)


def get_tokenizer_from_files(vocab_path, merges_path, special_tokens=None):
    return mycode.Tokenizer.from_files(vocab_path, merges_path, special_tokens)


def run_save_tokenizer(vocab, merges, vocab_path, merges_path):
    mycode.save_tokenizer_files(vocab, merges, vocab_path, merges_path)
