"""Reference solution of the byte-level BPE assignment (the worked solution).

For the simple version of training, read the naive trainer in ``tests/hidden/naive.py``
(``train_bpe``, ``pretoken_counts``, ``train_merges``): the rules written out directly,
recounting every pair after each merge. ``train_bpe`` here is the same algorithm made
fast, in three steps:

1. count the pre-tokens of the file: ``pretoken_counts.py`` (``count_file``; a large file
   in chunks, by worker processes);
2. turn them into words of byte ids and index the pairs: ``train.py`` (``as_words``,
   ``index_pairs``);
3. the merge loop: ``train.py`` (``merge_loop``, ``merge_word``).

The other modules, one per part of the assignment: ``warmup.py``, ``primitives.py``,
``pretokenize.py``, ``tokenizer.py`` with ``gpt2_files.py`` (``parallel.py`` lets the
tokenizer encode long texts on several cores).
"""

from .gpt2_files import bytes_to_unicode, load_tokenizer_files, save_tokenizer_files
from .pretokenize import GPT2_PATTERN, pretokenize, split_on_special_tokens
from .primitives import get_pair_counts, merge
from .tokenizer import Tokenizer
from .train import train_bpe
from .warmup import ByteTokenizer, CharacterTokenizer, WordTokenizer, compression_ratio

__all__ = [
    "GPT2_PATTERN",
    "ByteTokenizer",
    "CharacterTokenizer",
    "Tokenizer",
    "WordTokenizer",
    "bytes_to_unicode",
    "compression_ratio",
    "get_pair_counts",
    "load_tokenizer_files",
    "merge",
    "pretokenize",
    "save_tokenizer_files",
    "split_on_special_tokens",
    "train_bpe",
]
