"""Reference solution of the byte-level BPE assignment (the worked solution)."""

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
