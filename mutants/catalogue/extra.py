"""Mutants whose rule a test written before them already kills (checked once with
``python -m mutants NAME``): not run by the CI meta-test, to keep it short; ``--extra``
runs them, and the selftests check that they still apply to the reference."""

from __future__ import annotations

from .model import RULES, WARMUP, Mutant, P, Replace
from .templates import tokenizer, trainer

EXTRA: tuple[Mutant, ...] = (
    Mutant(
        "merge_modifies_input", "primitives",
        "merge writes its result into the caller's list (ids[:] = out) instead of returning a new list.",
        (Replace("primitives.py", "            i += 1\n    return out\n", "            i += 1\n    ids[:] = out\n    return ids\n"),),
    ),
    Mutant(
        "split_empty_text_shortcut", "pretokenize",
        "split_on_special_tokens returns [] for an empty text before checking the special tokens, "
        "so an empty special token is accepted there.",
        (Replace(P, "    for tok in special_tokens:\n", "    if not text:\n        return []\n    for tok in special_tokens:\n"),),
    ),
    tokenizer(
        "specials_always_new_ids",
        "every special token gets a new id, even one whose bytes are already in the vocabulary "
        "(GPT-2's <|endoftext|> must keep 50256).",
        ('            if tok.encode("utf-8") not in self._m_ids:\n', "            if True:\n"),
    ),
    Mutant(
        "character_decode_builtin_error", "warmup",
        "CharacterTokenizer.decode lets chr() reject an id outside Unicode, so the error names "
        "neither the id nor its position.",
        (Replace("warmup.py", "            if not 0 <= i < 0x110000:\n", "            if False:\n"),),
        first=(WARMUP,),
    ),
    tokenizer(
        "decode_unknown_id_key_error",
        "decode looks ids up without a check, so an unknown id raises KeyError instead of a "
        "ValueError naming the id and its position.",
        ("            if i not in self._m_vocab:\n", "            if False:\n"),
        first=(RULES,),
    ),
    tokenizer(
        "tokenizer_modifies_callers_vocab",
        "Tokenizer adds the special tokens to the caller's vocab dict itself instead of to a copy.",
        ("self._m_vocab = dict(vocab)", "self._m_vocab = vocab"),
        first=(RULES,),
    ),
    Mutant(
        "character_decode_rejects_surrogates", "warmup",
        "CharacterTokenizer.decode rejects the surrogate code points 0xD800-0xDFFF, which chr() "
        "accepts (they give lone surrogate characters).",
        (Replace("warmup.py", "            if not 0 <= i < 0x110000:\n",
                 "            if not 0 <= i < 0x110000 or 0xD800 <= i < 0xE000:\n"),),
        first=(WARMUP,),
    ),
    Mutant(
        "word_decode_key_error", "warmup",
        "WordTokenizer.decode looks unknown ids up without a check, so it raises KeyError "
        "instead of a ValueError naming the id and its position.",
        (Replace("warmup.py", "            if i not in self.vocab:\n", "            if False:\n"),),
        first=(WARMUP,),
    ),
    Mutant(
        "word_vocab_shared", "warmup",
        "WordTokenizer keeps its vocabulary in dicts shared by every instance (a class attribute "
        "or a mutable default), so a second tokenizer sees the first one's words.",
        (Replace("warmup.py", "        self.vocab: dict[int, str] = {0: UNK}\n        self._ids: dict[str, int] = {}\n",
                 "        self.vocab, self._ids = _SHARED\n"),
         Replace("warmup.py", 'UNK = "<unk>"\n', 'UNK = "<unk>"\n_SHARED = ({0: UNK}, {})\n')),
        first=(WARMUP,),
    ),
    Mutant(
        "compression_ratio_zero_division", "warmup",
        "compression_ratio divides by len(ids) without a check, so empty ids raise "
        "ZeroDivisionError instead of ValueError.",
        (Replace("warmup.py", "    if not ids:\n        raise ValueError", "    if False:\n        raise ValueError"),),
        first=(WARMUP,),
    ),
    trainer(
        "vocab_size_checked_after_reading",
        "train_bpe reads the file before checking vocab_size, so a too small vocab_size with a "
        "bad path reports the file instead of the vocab_size.",
        ("    if n_merges < 0:\n        raise", "    if n_merges < 0 and False:\n        raise"),
        ("    _split(\"\", special_tokens)  # invalid", "    if n_merges < 0:\n        raise ValueError(f\"train_bpe: vocab_size={vocab_size} is too small\")\n    _split(\"\", special_tokens)  # invalid"),
    ),
    trainer(
        "directory_not_a_value_error",
        "train_bpe turns only FileNotFoundError into ValueError, so a directory path raises "
        "IsADirectoryError instead of a ValueError naming it.",
        ("    except OSError as err:\n", "    except FileNotFoundError as err:\n"),
    ),
    trainer(
        "non_utf8_error_without_path",
        "train_bpe decodes the file without catching UnicodeDecodeError, so the error does not "
        "name the file.",
        ('    try:\n        text = data.decode("utf-8")\n    except UnicodeDecodeError:\n',
         '    text = data.decode("utf-8")\n    if False:\n'),
    ),
)
