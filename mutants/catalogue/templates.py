"""The self-contained templates the training and tokenizer bugs are written against
(each behaves exactly like the reference), the constructors that apply one bug to them,
and ``CONTROLS``: the untouched templates, which must pass every test of their part."""

from __future__ import annotations

from .model import Append, Mutant, once

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
        code = once(code, old, new, f"mutant {name}")
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
        code = once(code, old, new, f"mutant {name}")
    return Mutant(name, group, description, (Append("tokenizer.py", code, ("Tokenizer",)),), first)


def method(source: str) -> tuple[str, str]:
    """A change adding a method to the tokenizer template (e.g. a buggy encode_iterable)."""
    return ("    # (more methods)", source.rstrip())


CONTROLS = (
    trainer("control_trainer", "the training template without a bug (must pass every train_bpe test)"),
    tokenizer("control_tokenizer", "the tokenizer template without a bug (must pass every tokenizer test)"),
)
