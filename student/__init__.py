"""Your implementation of the byte-level BPE assignment.

The tests never import this package directly: they go through ``adapters.py`` (which
imports the package named by the ``BPE_IMPL`` environment variable, ``student`` by
default) and use exactly the names listed in ``__all__`` below. Keep these names and
their signatures; add any helpers you like.

Return plain built-in values, exactly the types each docstring names: a plain ``list`` of
``int`` from ``encode``, not a subclass of ``list``, a ``tuple``, a generator or a numpy
array (``list(ids)`` of a subclass or a tuple, ``ids.tolist()`` of a numpy array; numpy's
own integers in a list, as ``list(ids)`` of an array holds, count as the ints they hold,
since ``numpy.int64(5) == 5``). Grading runs your code in a separate process and only
plain data crosses back from it; a value of another class is rejected with a message naming
its type (``encode(...) should return a plain list of ints, got a mypkg.Ids of length 3 (a
subclass of list)``).

* Part 1, warm-up tokenizers:  ``warmup.py``
* Part 2, BPE primitives:      ``primitives.py``
* Part 3, pre-tokenization:    ``pretokenize.py``
* Part 4, training:            ``train.py``
* Part 5, the tokenizer:       ``tokenizer.py`` and ``gpt2_files.py``
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
