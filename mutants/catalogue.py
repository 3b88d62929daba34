"""The catalogue of known student bugs: each mutant is the reference with ONE realistic bug.

A mutant is a list of edits on files of ``reference/``:

* :class:`Replace` swaps an exact snippet of a reference file for another one. The snippet
  must occur exactly once (``mutants.build`` fails loudly otherwise), so a refactor of the
  reference can never silently turn a mutant back into the reference. Used on the files
  that are stable (warm-up, primitives, pre-tokenization).
* :class:`Append` adds code at the end of a module that redefines one of its top-level
  names (``train_bpe``, ``Tokenizer``). It survives any refactor of the module's insides:
  the training and tokenizer bugs are written against small self-contained templates
  (``TRAINER``, ``TOKENIZER``) that behave exactly like the reference, each mutant
  changing one snippet of its template (again exactly once, checked at import time).
  ``CONTROLS`` are the untouched templates: the meta-test can check that they pass, so a
  mutant is killed by its bug, not by its template.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GROUPS = ("warmup", "primitives", "pretokenize", "train_bpe", "tokenizer", "encode_iterable", "speed")


@dataclass(frozen=True)
class Replace:
    file: str  # a file of reference/, e.g. "warmup.py"
    old: str
    new: str


@dataclass(frozen=True)
class Append:
    file: str
    code: str
    overrides: tuple[str, ...]  # top-level names the original module must define


@dataclass(frozen=True)
class Mutant:
    name: str
    group: str  # grading.yaml group whose tests must catch it
    description: str  # one sentence, written for a student
    edits: tuple[Replace | Append, ...] = field(default_factory=tuple)
    # Test files of the group that should kill it, run first so the kill is cheap (the
    # meta-test then runs the whole group only if the mutant survives them).
    first: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"mutant {self.name}: unknown group {self.group!r}")


def _once(template: str, old: str, new: str, what: str) -> str:
    n = template.count(old)
    if n != 1:
        raise ValueError(f"{what}: snippet {old!r} occurs {n} times in the template, expected exactly once")
    return template.replace(old, new)


# ---- the training template (appended to train.py; redefines train_bpe) ------------------

TRAINER = '''

# ==== mutant template: a self-contained trainer that replaces train_bpe ====
def train_bpe(input_path, vocab_size, special_tokens):
    import collections as _c
    from pathlib import Path as _P

    from .pretokenize import GPT2_REGEX as _RX, split_on_special_tokens as _split

    special_tokens = list(dict.fromkeys(special_tokens))
    n_merges = vocab_size - 256 - len(special_tokens)
    if n_merges < 0:
        raise ValueError(f"train_bpe: vocab_size={vocab_size} is too small for 256 bytes + {len(special_tokens)} special tokens")
    path = _P(input_path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"train_bpe: cannot read the training file {path}: {err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"train_bpe: {path} is not valid UTF-8") from None
    _split("", special_tokens)  # invalid special tokens: ValueError
    specials = set(special_tokens)
    word_counts = _c.Counter()
    for piece in _split(text, special_tokens):
        if piece not in specials:
            word_counts.update(_RX.findall(piece))
    vocab = {i: bytes([i]) for i in range(256)}
    words = [list(w.encode("utf-8")) for w in word_counts]
    freqs = list(word_counts.values())
    counts = _c.defaultdict(int)
    where = _c.defaultdict(set)
    for w, ids in enumerate(words):
        for pair in zip(ids, ids[1:]):
            counts[pair] += freqs[w]
            where[pair].add(w)
    merges = []
    while len(merges) < n_merges:
        live = [p for p, n in counts.items() if n > 0]
        if not live:
            break
        best = max(live, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))
        new_id = 256 + len(merges)
        vocab[new_id] = vocab[best[0]] + vocab[best[1]]
        merges.append((vocab[best[0]], vocab[best[1]]))
        for w in list(where[best]):
            ids, f = words[w], freqs[w]
            for pair in zip(ids, ids[1:]):
                counts[pair] -= f
            ids = words[w] = _mutant_merge_ids(ids, best, new_id)
            for pair in zip(ids, ids[1:]):
                counts[pair] += f
                where[pair].add(w)
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab, merges


def _mutant_merge_ids(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
'''


def trainer(name: str, description: str, *changes: tuple[str, str], group: str = "train_bpe") -> Mutant:
    code = TRAINER
    for old, new in changes:
        code = _once(code, old, new, f"mutant {name}")
    return Mutant(name, group, description, (Append("train.py", code, ("train_bpe",)),))


# ---- the tokenizer template (appended to tokenizer.py; subclasses Tokenizer) -------------

TOKENIZER = '''

# ==== mutant template: a Tokenizer whose encode/decode are self-contained ====
_MutantBaseTokenizer = Tokenizer


def _mutant_lenient(vocab, merges, special_tokens):
    """What the reference's __init__ accepts: the template does the checks itself (so a
    mutant can drop one); on valid input this returns its arguments unchanged."""
    vocab = dict(vocab)
    values = set(vocab.values())
    top = max(vocab, default=-1)
    for b in range(256):
        if bytes([b]) not in values:
            top += 1
            vocab[top] = bytes([b])
            values.add(bytes([b]))
    merges = [(a, b) for a, b in merges if a in values and b in values and a + b in values]
    specials = [t for t in special_tokens or [] if isinstance(t, str) and t]
    return vocab, merges, specials


class Tokenizer(_MutantBaseTokenizer):
    def __init__(self, vocab, merges, special_tokens=None):
        for tok in special_tokens or []:
            if not isinstance(tok, str) or not tok:
                raise ValueError(f"Tokenizer: special tokens must be non-empty strings, got {tok!r}")
        values = set(vocab.values())
        for b in range(256):
            if bytes([b]) not in values:
                raise ValueError(f"Tokenizer: the vocabulary has no id for the single byte {b}")
        for k, (a, b) in enumerate(merges):
            if a not in values or b not in values or a + b not in values:
                raise ValueError(f"Tokenizer: merge #{k} {(a, b)!r} uses bytes missing from vocab")
        super().__init__(*_mutant_lenient(vocab, merges, special_tokens))
        import regex as _re

        self._m_vocab = dict(vocab)
        self._m_ids = {b: i for i, b in self._m_vocab.items()}
        self._m_specials = list(dict.fromkeys(special_tokens or []))
        for tok in self._m_specials:
            if tok.encode("utf-8") not in self._m_ids:
                new_id = max(self._m_vocab, default=-1) + 1
                self._m_vocab[new_id] = tok.encode("utf-8")
                self._m_ids[tok.encode("utf-8")] = new_id
        self._m_ranks = {}
        for rank, pair in enumerate(merges):
            self._m_ranks.setdefault(tuple(pair), rank)
        ordered = sorted(self._m_specials, key=len, reverse=True)
        self._m_special_re = _re.compile("|".join(_re.escape(t) for t in ordered)) if ordered else None
        self._m_cache = {}

    def _m_word(self, word):
        parts = [bytes([b]) for b in word.encode("utf-8")]
        ranks = self._m_ranks
        while len(parts) > 1:
            pairs = list(zip(parts, parts[1:]))
            best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
            if best not in ranks:
                break
            out, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                    out.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        return [self._m_ids[p] for p in parts]

    def _m_ordinary(self, text, out):
        from .pretokenize import GPT2_REGEX as _RX

        for word in _RX.findall(text):
            ids = self._m_cache.get(word)
            if ids is None:
                ids = self._m_cache[word] = self._m_word(word)
            out.extend(ids)

    def encode(self, text):
        out = []
        if self._m_special_re is None:
            self._m_ordinary(text, out)
            return out
        start = 0
        for m in self._m_special_re.finditer(text):
            self._m_ordinary(text[start : m.start()], out)
            out.append(self._m_ids[m.group().encode("utf-8")])
            start = m.end()
        self._m_ordinary(text[start:], out)
        return out

    def decode(self, ids):
        for pos, i in enumerate(ids):
            if i not in self._m_vocab:
                raise ValueError(f"decode: unknown token id {i!r} at position {pos}")
        return b"".join(self._m_vocab[i] for i in ids).decode("utf-8", errors="replace")

    # (more methods)
'''


def tokenizer(
    name: str, description: str, *changes: tuple[str, str], group: str = "tokenizer", first: tuple[str, ...] = ()
) -> Mutant:
    code = TOKENIZER
    for old, new in changes:
        code = _once(code, old, new, f"mutant {name}")
    return Mutant(name, group, description, (Append("tokenizer.py", code, ("Tokenizer",)),), first)


def method(source: str) -> tuple[str, str]:
    """A change adding a method to the tokenizer template (e.g. a buggy encode_iterable)."""
    return ("    # (more methods)", source.rstrip())


CONTROLS = (
    trainer("control_trainer", "the training template without a bug (must pass every train_bpe test)"),
    tokenizer("control_tokenizer", "the tokenizer template without a bug (must pass every tokenizer test)"),
)

P = "pretokenize.py"
WARMUP = "tests/public/test_warmup.py"
RULES = "tests/public/test_tokenizer_rules.py"  # one test per docstring rule of part 5

CATALOGUE: tuple[Mutant, ...] = (
    # ---- part 1: warm-up ----------------------------------------------------------------
    Mutant(
        "byte_decode_strict", "warmup",
        "ByteTokenizer.decode uses bytes.decode('utf-8') with the default errors='strict', so "
        "ids that are not valid UTF-8 raise instead of becoming U+FFFD.",
        (Replace("warmup.py", 'bytes(ids).decode("utf-8", errors="replace")', 'bytes(ids).decode("utf-8")'),),
    ),
    Mutant(
        "byte_encode_code_points", "warmup",
        "ByteTokenizer.encode returns code points (ord of each character) instead of the "
        "UTF-8 bytes of the text.",
        (Replace("warmup.py", 'return list(text.encode("utf-8"))', "return [ord(ch) for ch in text]"),),
    ),
    Mutant(
        "word_ids_sorted", "warmup",
        "WordTokenizer numbers its words in sorted order instead of in order of first appearance.",
        (Replace("warmup.py", "for word in pretokenize(training_text):",
                 "for word in sorted(set(pretokenize(training_text))):"),),
    ),
    Mutant(
        "word_split_on_whitespace", "warmup",
        "WordTokenizer splits the text with str.split() instead of GPT-2 pre-tokenization, so "
        "spaces are lost and punctuation sticks to words.",
        (Replace("warmup.py", "from .pretokenize import pretokenize",
                 "def pretokenize(text):\n    return text.split()"),),
    ),
    Mutant(
        "compression_ratio_inverted", "warmup",
        "compression_ratio returns tokens per byte (len(ids) / bytes) instead of bytes per token.",
        (Replace("warmup.py", 'return len(text.encode("utf-8")) / len(ids)',
                 'return len(ids) / len(text.encode("utf-8"))'),),
    ),
    Mutant(
        "compression_ratio_characters", "warmup",
        "compression_ratio counts characters (len(text)) instead of UTF-8 bytes.",
        (Replace("warmup.py", 'return len(text.encode("utf-8")) / len(ids)', "return len(text) / len(ids)"),),
    ),
    Mutant(
        "byte_decode_builtin_error", "warmup",
        "ByteTokenizer.decode lets bytes() reject an id above 255, so the error names neither "
        "the id nor its position.",
        (Replace("warmup.py", "            if not 0 <= i < 256:\n", "            if False:\n"),),
        first=(WARMUP,),
    ),
    # ---- part 2: primitives ----------------------------------------------------------------
    Mutant(
        "pair_counts_non_overlapping", "primitives",
        "get_pair_counts only counts the pairs starting at even positions, so overlapping "
        "occurrences like (1, 1) in [1, 1, 1] are undercounted.",
        (Replace("primitives.py", "Counter(zip(ids, ids[1:]))", "Counter(zip(ids[::2], ids[1::2]))"),),
    ),
    Mutant(
        "pair_counts_presence_only", "primitives",
        "get_pair_counts records each pair once (count 1) instead of counting its occurrences.",
        (Replace("primitives.py", "return dict(Counter(zip(ids, ids[1:])))",
                 "return {pair: 1 for pair in zip(ids, ids[1:])}"),),
    ),
    Mutant(
        "merge_overlapping", "primitives",
        "merge advances by one position after a match, so overlapping occurrences are merged "
        "twice ([5, 5, 5] with (5, 5) gives two new tokens instead of [new, 5]).",
        (Replace("primitives.py", "            out.append(new_id)\n            i += 2",
                 "            out.append(new_id)\n            i += 1"),),
    ),
    Mutant(
        "merge_right_to_left", "primitives",
        "merge scans from the right, so [5, 5, 5] with (5, 5) gives [5, new] instead of [new, 5].",
        (Append("primitives.py", '''

def merge(ids, pair, new_id):
    out = []
    i = len(ids) - 1
    while i >= 0:
        if i >= 1 and ids[i - 1] == pair[0] and ids[i] == pair[1]:
            out.append(new_id)
            i -= 2
        else:
            out.append(ids[i])
            i -= 1
    return out[::-1]
''', ("merge",)),),
    ),
    Mutant(
        "merge_drops_last", "primitives",
        "merge's loop stops one position early, so the last id is dropped when it is not part of a match.",
        (Replace("primitives.py", "    while i < n:\n", "    while i < n - 1:\n"),),
    ),
    # ---- part 3: pre-tokenization and special tokens ---------------------------------------
    Mutant(
        "pattern_re_word_class", "pretokenize",
        "the pattern uses the `re` module with \\w (letters, digits and underscore) instead of "
        "`regex` with \\p{L} and \\p{N}, so letters and digits end up in one pre-token.",
        (Replace(P, "GPT2_REGEX = regex.compile(GPT2_PATTERN)",
                 "import re\nGPT2_REGEX = re.compile(r\"\"\"'(?:[sdmt]|ll|ve|re)| ?\\w+| ?\\d+| ?[^\\s\\w]+|\\s+(?!\\S)|\\s+\"\"\")"),),
    ),
    Mutant(
        "pattern_missing_trailing_space_branch", "pretokenize",
        "the GPT-2 pattern lacks the \\s+(?!\\S) branch, so a run of spaces before a word keeps "
        "all its spaces instead of leaving the last one to the word.",
        (Replace(P, "|\\s+(?!\\S)|\\s+\"\"\"", "|\\s+\"\"\""),),
    ),
    Mutant(
        "pattern_contractions_ignore_case", "pretokenize",
        "the pattern is compiled with IGNORECASE, so upper-case contractions like 'S or 'LL are "
        "split off although GPT-2 only splits lower-case ones.",
        (Replace(P, "GPT2_REGEX = regex.compile(GPT2_PATTERN)", "GPT2_REGEX = regex.compile(GPT2_PATTERN, regex.IGNORECASE)"),),
    ),
    Mutant(
        "pattern_digits_without_space", "pretokenize",
        "the digits branch lacks the optional leading space (\\p{N}+ instead of ' ?\\p{N}+'), so "
        "the space before a number becomes its own pre-token.",
        (Replace(P, "| ?\\p{N}+|", "|\\p{N}+|"),),
    ),
    Mutant(
        "specials_not_escaped", "pretokenize",
        "special tokens are joined into the split pattern without regex.escape, so characters "
        "like | . * in them act as regex operators.",
        (Replace(P, '"|".join(regex.escape(tok) for tok in ordered)', '"|".join(tok for tok in ordered)'),),
    ),
    Mutant(
        "specials_shortest_first", "pretokenize",
        "overlapping special tokens are tried shortest first, so '<|eot|><|eot|>' as a special "
        "token is cut into two '<|eot|>' matches.",
        (Replace(P, "sorted(set(special_tokens), key=len, reverse=True)", "sorted(set(special_tokens), key=len)"),),
    ),
    Mutant(
        "split_drops_special_tokens", "pretokenize",
        "split_on_special_tokens drops the special tokens themselves (like re.split without a "
        "capturing group) instead of keeping each as a piece.",
        (Replace(P, "        pieces.append(m.group())\n", ""),),
    ),
    Mutant(
        "split_keeps_empty_pieces", "pretokenize",
        "split_on_special_tokens keeps the empty strings that regex.split produces around "
        "adjacent special tokens and at the ends of the text.",
        (Append(P, '''

def split_on_special_tokens(text, special_tokens):
    for tok in special_tokens:
        if not isinstance(tok, str) or not tok:
            raise ValueError(f"special tokens must be non-empty strings, got {tok!r}")
    pattern = special_tokens_regex(special_tokens)
    if pattern is None:
        return [text]
    return regex.split("(" + pattern.pattern + ")", text)
''', ("split_on_special_tokens",)),),
    ),
    # ---- part 4: training --------------------------------------------------------------------
    trainer(
        "ties_smallest_pair",
        "ties between equally frequent pairs go to the lexicographically smallest pair instead of the greatest.",
        ("best = max(live, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))",
         "best = min(live, key=lambda p: (-counts[p], vocab[p[0]], vocab[p[1]]))"),
    ),
    trainer(
        "ties_first_seen",
        "ties between equally frequent pairs go to the pair seen first in the text (max over a "
        "dict by count only) instead of the lexicographically greatest pair.",
        ("key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]])", "key=lambda p: counts[p]"),
    ),
    trainer(
        "ties_by_token_ids",
        "ties are broken by comparing token ids instead of the tokens' bytes, which disagree as "
        "soon as merged tokens are involved.",
        ("key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]])", "key=lambda p: (counts[p], p)"),
    ),
    trainer(
        "ties_by_concatenation",
        "ties are broken by comparing the concatenated bytes a+b instead of the pair (a, b).",
        ("key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]])", "key=lambda p: (counts[p], vocab[p[0]] + vocab[p[1]])"),
    ),
    trainer(
        "merges_cross_pretokens",
        "training counts pairs over whole text segments instead of within GPT-2 pre-tokens, so "
        "merges cross pre-token boundaries (e.g. a word and the space or punctuation after it).",
        ("word_counts.update(_RX.findall(piece))", "word_counts[piece] += 1"),
    ),
    trainer(
        "specials_left_in_training_text",
        "special tokens are left in the training text, so their pieces (like '<|' and "
        "'endoftext') are counted and merged.",
        ("    for piece in _split(text, special_tokens):\n", "    for piece in [text]:\n"),
    ),
    trainer(
        "specials_deleted_not_boundaries",
        "special tokens are deleted from the training text (text.replace(tok, '')), which glues "
        "the text on both sides together instead of treating them as boundaries.",
        ("    for piece in _split(text, special_tokens):\n",
         "    for tok in special_tokens:\n        text = text.replace(tok, '')\n    for piece in [text]:\n"),
    ),
    trainer(
        "pairs_not_weighted_by_frequency",
        "pair counts count each distinct pre-token once, ignoring how often it occurs in the corpus.",
        ("freqs = list(word_counts.values())", "freqs = [1] * len(word_counts)"),
    ),
    trainer(
        "counts_not_updated_after_merge",
        "pair counts are computed once and not updated after a merge, so later merges use stale "
        "counts and never build on merged tokens.",
        ("        for w in list(where[best]):\n", "        counts[best] = 0\n        for w in []:\n"),
    ),
    trainer(
        "one_merge_too_many",
        "the merge loop runs once too often (<= instead of <), so the vocabulary has one token too many.",
        ("while len(merges) < n_merges:", "while len(merges) <= n_merges:"),
    ),
    trainer(
        "vocab_size_ignores_specials",
        "the number of merges is vocab_size - 256, forgetting that the special tokens also take "
        "vocabulary slots.",
        ("n_merges = vocab_size - 256 - len(special_tokens)\n", "n_merges = vocab_size - 256\n"),
    ),
    trainer(
        "repeated_specials_not_deduplicated",
        "a special token listed twice is counted twice: it takes two vocabulary slots (one merge "
        "too few) and appears twice in the vocabulary; a repeated special token counts once.",
        ("    special_tokens = list(dict.fromkeys(special_tokens))\n", ""),
    ),
    trainer(
        "specials_numbered_first",
        "special tokens get the first ids (0, 1, ...) and the bytes come after them, instead of "
        "bytes 0-255, merges, then special tokens.",
        ("    for tok in special_tokens:\n        vocab[len(vocab)] = tok.encode(\"utf-8\")\n    return vocab, merges\n",
         "    specials_first = {i: t.encode('utf-8') for i, t in enumerate(special_tokens)}\n"
         "    return {**specials_first, **{i + len(specials_first): b for i, b in vocab.items()}}, merges\n"),
    ),
    trainer(
        "vocab_only_seen_bytes",
        "the initial vocabulary holds only the bytes that occur in the corpus instead of all 256 byte values.",
        ("    for tok in special_tokens:\n        vocab[len(vocab)] = tok.encode(\"utf-8\")\n",
         "    seen = set(text.encode('utf-8'))\n"
         "    vocab = dict(enumerate(b for i, b in sorted(vocab.items()) if i >= 256 or i in seen))\n"
         "    for tok in special_tokens:\n        vocab[len(vocab)] = tok.encode(\"utf-8\")\n"),
    ),
    trainer(
        "crlf_translated",
        "the training file is opened in text mode, which turns Windows line endings \\r\\n into "
        "\\n before training.",
        ("        data = path.read_bytes()\n", "        data = open(path, encoding='latin-1').read().encode('latin-1')\n"),
    ),
    trainer(
        "pretokens_as_code_points",
        "pre-tokens are split into Unicode code points instead of UTF-8 bytes, which breaks on "
        "any non-ASCII character.",
        ('words = [list(w.encode("utf-8")) for w in word_counts]', "words = [[ord(c) for c in w] for w in word_counts]"),
    ),
    trainer(
        "training_merge_overlapping",
        "merging a pair inside a pre-token also merges overlapping occurrences, so 'aaa' becomes "
        "two merged tokens during training.",
        ("            out.append(new_id)\n            i += 2", "            out.append(new_id)\n            i += 1"),
    ),
    # ---- part 5: encode / decode / files -----------------------------------------------------
    tokenizer(
        "encode_merges_in_sorted_order",
        "encode ranks the merges in sorted (dictionary) order of their bytes instead of the "
        "order in which they were learned.",
        ("for rank, pair in enumerate(merges):", "for rank, pair in enumerate(sorted(merges)):"),
    ),
    tokenizer(
        "encode_first_mergeable_pair",
        "encode merges the leftmost pair that has a merge instead of the pair with the lowest merge rank.",
        ('best = min(pairs, key=lambda p: ranks.get(p, float("inf")))', "best = next((p for p in pairs if p in ranks), None)"),
    ),
    tokenizer(
        "encode_greedy_longest_match",
        "encode takes the longest vocabulary token matching at each position (greedy) instead "
        "of applying the merges in rank order.",
        ('        parts = [bytes([b]) for b in word.encode("utf-8")]\n',
         '        data, out, i = word.encode("utf-8"), [], 0\n'
         "        while i < len(data):\n"
         "            j = len(data)\n"
         "            while j > i + 1 and data[i:j] not in self._m_ids:\n"
         "                j -= 1\n"
         "            out.append(self._m_ids[data[i:j]])\n"
         "            i = j\n"
         "        return out\n"
         '        parts = [bytes([b]) for b in word.encode("utf-8")]\n'),
    ),
    tokenizer(
        "encode_across_pretokens",
        "encode splits the text on whitespace only instead of with the GPT-2 pattern, so merges "
        "cross pre-token boundaries (e.g. a word and the punctuation after it).",
        ("for word in _RX.findall(text):", "for word in __import__('regex').findall(r' ?\\S+|\\s+', text):"),
    ),
    tokenizer(
        "encode_ignores_special_tokens",
        "encode treats special tokens as ordinary text instead of giving each its single id.",
        ("        self._m_special_re = _re.compile", "        self._m_special_re = None and _re.compile"),
    ),
    tokenizer(
        "encode_specials_shortest_first",
        "encode matches overlapping special tokens shortest first instead of longest first.",
        ("ordered = sorted(self._m_specials, key=len, reverse=True)", "ordered = sorted(self._m_specials, key=len)"),
    ),
    tokenizer(
        "encode_specials_not_escaped",
        "encode builds its special-token pattern without regex.escape, so | and other "
        "metacharacters in special tokens act as regex operators.",
        ('"|".join(_re.escape(t) for t in ordered)', '"|".join(t for t in ordered)'),
    ),
    tokenizer(
        "specials_not_added_to_vocab",
        "special tokens missing from the vocabulary are not given new ids, so encoding them fails.",
        ('            if tok.encode("utf-8") not in self._m_ids:\n', "            if False:\n"),
    ),
    tokenizer(
        "decode_strict_utf8",
        "decode uses bytes.decode('utf-8') with errors='strict', so ids whose bytes are not "
        "valid UTF-8 raise instead of becoming U+FFFD.",
        ('.decode("utf-8", errors="replace")\n\n    # (more', '.decode("utf-8")\n\n    # (more'),
    ),
    tokenizer(
        "decode_token_by_token",
        "decode decodes each token's bytes separately, so a character whose UTF-8 bytes are "
        "spread over several tokens becomes U+FFFD characters.",
        ('return b"".join(self._m_vocab[i] for i in ids).decode("utf-8", errors="replace")',
         'return "".join(self._m_vocab[i].decode("utf-8", errors="replace") for i in ids)'),
    ),
    tokenizer(
        "decode_ignores_invalid_bytes",
        "decode uses errors='ignore', dropping invalid UTF-8 bytes instead of replacing them with U+FFFD.",
        ('.decode("utf-8", errors="replace")\n\n    # (more', '.decode("utf-8", errors="ignore")\n\n    # (more'),
    ),
    tokenizer(
        "tokenizer_accepts_missing_bytes",
        "Tokenizer does not check that the vocabulary holds all 256 single bytes, so a vocabulary "
        "missing one is accepted (and encoding that byte fails later) instead of a ValueError naming it.",
        ("                raise ValueError(f\"Tokenizer: the vocabulary has no id for the single byte {b}\")\n",
         "                pass\n"),
        first=(RULES,),
    ),
    tokenizer(
        "tokenizer_accepts_unknown_merges",
        "Tokenizer does not check that each merge's left part, right part and their concatenation "
        "are in the vocabulary, instead of raising a ValueError naming the merge.",
        ("                raise ValueError(f\"Tokenizer: merge #{k} {(a, b)!r} uses bytes missing from vocab\")\n",
         "                pass\n"),
        first=(RULES,),
    ),
    tokenizer(
        "tokenizer_accepts_empty_special",
        "Tokenizer accepts the empty string as a special token instead of raising a ValueError.",
        ("            if not isinstance(tok, str) or not tok:\n                raise ValueError(f\"Tokenizer: special",
         "            if not isinstance(tok, str):\n                raise ValueError(f\"Tokenizer: special"),
        first=(RULES,),
    ),
    tokenizer(
        "duplicate_bytes_first_id",
        "when two ids have the same bytes, encode uses the one that comes first in the vocabulary "
        "instead of the one that comes last.",
        ("self._m_ids = {b: i for i, b in self._m_vocab.items()}",
         "self._m_ids = {b: i for i, b in reversed(list(self._m_vocab.items()))}"),
        first=(RULES,),
    ),
    tokenizer(
        "repeated_merge_last_rank",
        "a merge listed twice gets the rank of its last occurrence instead of its first (lowest) rank.",
        ("self._m_ranks.setdefault(tuple(pair), rank)", "self._m_ranks[tuple(pair)] = rank"),
        first=(RULES,),
    ),
    tokenizer(
        "special_ids_from_vocab_length",
        "a new special token gets id len(vocab) instead of max(current ids) + 1, which collides "
        "with an existing id when the ids are not contiguous.",
        ("new_id = max(self._m_vocab, default=-1) + 1", "new_id = len(self._m_vocab)"),
        first=(RULES,),
    ),
    Mutant(
        "save_ascii_escaped", "tokenizer",
        "save_tokenizer_files writes vocab.json with json.dump's default ensure_ascii=True, so "
        "GPT-2's characters become \\u escapes instead of being written as themselves.",
        (Replace("gpt2_files.py", "json.dumps(encoder, ensure_ascii=False)", "json.dumps(encoder)"),),
        first=(RULES,),
    ),
    Mutant(
        "save_vocab_in_given_order", "tokenizer",
        "save_tokenizer_files writes vocab.json in the vocab dict's own order instead of by increasing id.",
        (Replace("gpt2_files.py", "for i, token in sorted(vocab.items())}", "for i, token in vocab.items()}"),),
        first=(RULES,),
    ),
    Mutant(
        "save_merges_without_final_newline", "tokenizer",
        "save_tokenizer_files joins the merges.txt lines with '\\n' but does not end the last one with it.",
        (Replace("gpt2_files.py", 'f.write("\\n".join(lines) + "\\n")', 'f.write("\\n".join(lines))'),),
        first=(RULES,),
    ),
    Mutant(
        "save_accepts_duplicate_bytes", "tokenizer",
        "save_tokenizer_files writes a vocabulary in which two ids have the same bytes (vocab.json "
        "silently keeps one of them) instead of raising a ValueError and writing nothing.",
        (Append("gpt2_files.py", '''

def save_tokenizer_files(vocab, merges, vocab_path, merges_path):
    encoder = {_to_text(token): i for i, token in sorted(vocab.items())}
    with open(vocab_path, "w", encoding="utf-8") as f:
        json.dump(encoder, f, ensure_ascii=False)
    with open(merges_path, "w", encoding="utf-8") as f:
        f.write("#version: 0.2\\n" + "".join(f"{_to_text(a)} {_to_text(b)}\\n" for a, b in merges))
''', ("save_tokenizer_files",)),),
        first=(RULES,),
    ),
    Mutant(
        "load_skips_malformed_lines", "tokenizer",
        "load_tokenizer_files skips merges.txt lines that do not split into two tokens instead of "
        "raising a ValueError naming the file and line.",
        (Replace("gpt2_files.py",
                 "            if len(parts) != 2 or not all(parts):\n                raise ValueError(",
                 "            if len(parts) != 2 or not all(parts):\n                continue\n                raise ValueError("),),
        first=(RULES,),
    ),
    Mutant(
        "load_keeps_carriage_returns", "tokenizer",
        "load_tokenizer_files opens merges.txt with newline='' and strips only '\\n', so with Windows "
        "line endings every right token ends in '\\r' (not in GPT-2's byte table).",
        (Replace("gpt2_files.py", '    with open(merges_path, encoding="utf-8") as f:\n',
                 '    with open(merges_path, encoding="utf-8", newline="") as f:\n'),
         Replace("gpt2_files.py", 'line = line.rstrip("\\r\\n")', 'line = line.rstrip("\\n")')),
        first=(RULES,),
    ),
    Mutant(
        "load_always_skips_first_line", "tokenizer",
        "load_tokenizer_files skips merges.txt's first line even when it is a merge (no #version header).",
        (Replace("gpt2_files.py", '(lineno == 1 and line.startswith("#version"))', "lineno == 1"),),
        first=(RULES,),
    ),
    Mutant(
        "load_drops_unknown_characters", "tokenizer",
        "load_tokenizer_files silently drops characters that are not in GPT-2's byte table instead "
        "of raising a ValueError naming the file.",
        (Replace("gpt2_files.py", "return bytes([inverse[ch] for ch in text])",
                 "return bytes([inverse[ch] for ch in text if ch in inverse])"),),
        first=(RULES,),
    ),
    Mutant(
        "files_without_byte_decoder", "tokenizer",
        "from_files reads vocab.json and merges.txt without GPT-2's printable-character -> byte "
        "table, using each token string's UTF-8 bytes instead.",
        (Append("gpt2_files.py", '''

def _to_bytes(text, where):
    return text.encode("utf-8")
''', ("_to_bytes",)),),
    ),
    Mutant(
        "save_without_byte_encoder", "tokenizer",
        "save writes each token as its bytes decoded as UTF-8 instead of through GPT-2's "
        "byte -> printable-character table.",
        (Append("gpt2_files.py", '''

def _to_text(token):
    return token.decode("utf-8", errors="replace")
''', ("_to_text",)),),
    ),
    tokenizer(
        "encode_quadratic_list_concat",
        "encode builds its list of ids with out = out + ids, which copies the whole list for "
        "every pre-token: quadratic, far too slow on long texts.",
        ("            out.extend(ids)\n", "            out[:] = out + ids\n"),
        group="speed",
    ),
    # ---- part 5: encode_iterable ---------------------------------------------------------------
    tokenizer(
        "encode_iterable_joins_everything",
        "encode_iterable joins its whole input into one string before encoding, so memory grows "
        "with the input and nothing is produced until the input ends.",
        method('''
    def encode_iterable(self, iterable):
        yield from self.encode("".join(iterable))
'''),
        group="encode_iterable",
    ),
    tokenizer(
        "encode_iterable_chunks_independently",
        "encode_iterable encodes each chunk on its own, so a pre-token (or special token) cut "
        "between two chunks is encoded differently from encode on the whole text.",
        method('''
    def encode_iterable(self, iterable):
        for chunk in iterable:
            yield from self.encode(chunk)
'''),
        group="encode_iterable",
    ),
    tokenizer(
        "encode_iterable_strips_newlines",
        "encode_iterable strips the newline at the end of each line before encoding it.",
        method('''
    def encode_iterable(self, iterable):
        for line in iterable:
            yield from self.encode(line.rstrip("\\n"))
'''),
        group="encode_iterable",
    ),
)


# Mutants whose rule a test written before them already kills (checked once with
# ``python -m mutants NAME``): not run by the CI meta-test, to keep it short; ``--extra``
# runs them, and the selftests check that they still apply to the reference.
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

def by_name(name: str) -> Mutant:
    for m in (*CATALOGUE, *EXTRA, *CONTROLS):
        if m.name == name:
            return m
    raise KeyError(f"no mutant named {name!r}")


_names = [m.name for m in (*CATALOGUE, *EXTRA, *CONTROLS)]
if len(set(_names)) != len(_names):  # pragma: no cover - a catalogue typo
    raise ValueError("mutant names must be unique")
