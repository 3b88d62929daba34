"""The tokenizer under the name CS336 repositories often use (selftest fixture)."""

from .tokenizer import Tokenizer as BPETokenizer  # noqa: F401
