"""A byte-level BPE tokenizer: encode text to ids with a trained vocabulary and merges.

Encoding a pre-token starts from its bytes and repeatedly applies the merge of lowest rank
(earliest learned) among its adjacent pairs, until no pair can be merged. Pre-tokens repeat a
lot in real text, so their ids are cached. Large inputs are cut at safe places into one part
per core, encoded at the same time by forked processes (``parallel.py``) and concatenated.
"""

from __future__ import annotations

import bisect
import gc
import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, repeat

import regex

from .gpt2_files import load_tokenizer_files, save_tokenizer_files
from .parallel import fork_map, usable_cores
from .pretokenize import pretokenize_fast, safe_cut_near, special_tokens_regex

NO_MERGE = float("inf")
CACHE_LIMIT = 200_000  # pre-tokens kept in the cache; bounds memory on endless streams
_SAFE_CUT = regex.compile(r"(?r)(?<=\S)\s")  # last place where a pre-token must end
PART_CHARS = 1_000_000  # a process per core only for inputs of at least two parts this long
STREAM_BLOCK = 16_384  # encode_iterable encodes text in blocks of about this many characters


class IdsCache(dict):
    """Pre-token -> its ids, computed by ``bpe`` the first time a pre-token is looked up.

    Emptied when it holds ``CACHE_LIMIT`` pre-tokens, which bounds memory on endless streams."""

    def __init__(self, bpe: Callable[[str], list[int]]) -> None:
        super().__init__()
        self.bpe = bpe

    def __missing__(self, word: str) -> list[int]:
        if len(self) >= CACHE_LIMIT:
            self.clear()
        ids = self[word] = self.bpe(word)
        return ids


class Tokenizer:
    def __init__(
        self,
        vocab: dict[int, bytes],
        merges: list[tuple[bytes, bytes]],
        special_tokens: list[str] | None = None,
    ) -> None:
        """``vocab``: id -> bytes; ``merges`` in rank order; special tokens missing from
        ``vocab`` are appended to it with new ids."""
        self.vocab = dict(vocab)
        self.merges = list(merges)
        self.special_tokens = list(dict.fromkeys(special_tokens or []))
        for tok in self.special_tokens:
            if not isinstance(tok, str) or not tok:
                raise ValueError(f"Tokenizer: special tokens must be non-empty strings, got {tok!r}")
        self.token_ids = {token: i for i, token in self.vocab.items()}
        for tok in self.special_tokens:
            if tok.encode("utf-8") not in self.token_ids:
                new_id = max(self.vocab, default=-1) + 1
                self.vocab[new_id] = tok.encode("utf-8")
                self.token_ids[tok.encode("utf-8")] = new_id
        self.special_ids = {tok: self.token_ids[tok.encode("utf-8")] for tok in self.special_tokens}
        self.special_regex = special_tokens_regex(self.special_tokens)
        self.longest_special = max((len(t) for t in self.special_tokens), default=0)

        self.byte_ids = []
        for b in range(256):
            if bytes([b]) not in self.token_ids:
                raise ValueError(f"Tokenizer: the vocabulary has no id for the single byte {b}")
            self.byte_ids.append(self.token_ids[bytes([b])])
        # each merge as ids, its pair and the token it makes (comprehensions: GPT-2 has 50,000)
        id_of = self.token_ids
        try:
            pairs = [(id_of[a], id_of[b]) for a, b in self.merges]
            self.merged_of_rank: list[int] = [id_of[a + b] for a, b in self.merges]  # merge rank -> merged token's id
        except KeyError:
            rank = next(r for r, (a, b) in enumerate(self.merges) if not (a in id_of and b in id_of and a + b in id_of))
            raise ValueError(f"Tokenizer: merge #{rank} {self.merges[rank]!r} uses bytes missing from vocab") from None
        self.ranks: dict[tuple[int, int], int] = {}  # (left id, right id) -> merge rank
        for rank, pair in enumerate(pairs):
            self.ranks.setdefault(pair, rank)  # a pair merged twice keeps its first rank
        self.cache = IdsCache(self._bpe)

    @classmethod
    def from_files(
        cls, vocab_path: str | os.PathLike, merges_path: str | os.PathLike, special_tokens: list[str] | None = None
    ) -> "Tokenizer":
        """Load GPT-2-format ``vocab.json`` and ``merges.txt``."""
        vocab, merges = load_tokenizer_files(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens)

    def save(self, vocab_path: str | os.PathLike, merges_path: str | os.PathLike) -> None:
        """Write this tokenizer in the format ``from_files`` reads."""
        save_tokenizer_files(self.vocab, self.merges, vocab_path, merges_path)

    def _bpe(self, word: str) -> list[int]:
        """Ids of one pre-token: apply the lowest-ranked merge present until none applies.

        ``ranks[i]`` is the rank of the pair ``(ids[i], ids[i + 1])``. Each step merges the
        leftmost occurrence of the lowest rank (as tiktoken does: further occurrences of that
        pair follow in the next steps, before any pair the merge created, which rank later)
        and recomputes only the two ranks next to it. min/index run in C."""
        ids = [self.byte_ids[b] for b in word.encode("utf-8")]
        rank_of = self.ranks.get
        ranks = list(map(rank_of, zip(ids, ids[1:]), repeat(NO_MERGE)))
        while ranks:
            best = min(ranks)
            if best == NO_MERGE:
                break
            i = ranks.index(best)
            new_id = self.merged_of_rank[best]
            ids[i : i + 2] = [new_id]
            del ranks[i]
            if i > 0:
                ranks[i - 1] = rank_of((ids[i - 1], new_id), NO_MERGE)
            if i < len(ranks):
                ranks[i] = rank_of((new_id, ids[i + 1]), NO_MERGE)
        return ids

    def _encode_ordinary(self, text: str, out: list[int]) -> None:
        """Append the ids of special-free ``text`` to ``out``.

        The hot path of encoding, with no Python-level loop over pre-tokens: the text is
        pre-tokenized (mostly-ASCII text by the standard library's faster ``re``), then the ids
        of all pre-tokens are looked up in the cache and concatenated by ``map`` and ``chain``
        (both run in C); only a pre-token missing from the cache costs a call to ``_bpe``."""
        out += chain.from_iterable(map(self.cache.__getitem__, pretokenize_fast(text)))

    def encode(self, text: str) -> list[int]:
        """Text -> ids; special tokens are encoded whole, never split or merged."""
        # Encoding makes millions of small objects and no reference cycles: reference counting
        # frees everything, and pausing the cyclic collector saves its repeated rescans.
        collecting = gc.isenabled()
        gc.disable()
        try:
            cuts = self._parallel_cuts(text)
            if not cuts:
                return self._encode(text)
            return self._encode_parts(text, cuts)
        finally:
            if collecting:
                gc.enable()

    def _encode(self, text: str) -> list[int]:
        out: list[int] = []
        if self.special_regex is None:
            self._encode_ordinary(text, out)
            return out
        start = 0
        for m in self.special_regex.finditer(text):
            self._encode_ordinary(text[start : m.start()], out)
            out.append(self.special_ids[m.group()])
            start = m.end()
        self._encode_ordinary(text[start:], out)
        return out

    def _parallel_cuts(self, text: str) -> list[int]:
        """Where to cut ``text`` into one part per core (empty: encode it in one piece).

        Only inputs of at least two parts of ``PART_CHARS`` are cut, so small calls never pay
        for starting processes. Each cut is the last safe place before an even split (else the
        first after it): between a non-space and a space (no pre-token spans that) outside any
        special token, or at the start of a special token. The full text's special tokens are
        found first, so that a part never starts inside one."""
        parts = min(usable_cores(), len(text) // PART_CHARS)
        if parts < 2:
            return []
        specials = [m.span() for m in self.special_regex.finditer(text)] if self.special_regex else []
        starts = [start for start, _ in specials]
        cuts = [0]
        for k in range(1, parts):
            cut = safe_cut_near(text, cuts[-1], k * len(text) // parts)
            # a cut inside a special token moves to the start of that token
            j = bisect.bisect_left(starts, cut) - 1
            if j >= 0 and specials[j][1] > cut:
                cut = specials[j][0]
            if cuts[-1] < cut < len(text):
                cuts.append(cut)
        return cuts[1:]

    def _encode_parts(self, text: str, cuts: list[int]) -> list[int]:
        """Encode the parts of ``text`` between ``cuts`` at the same time, one per process, and
        concatenate their ids in order. The other processes send their ids back packed as
        64-bit integers (one ``bytes`` per part, unpacked here by C code)."""
        bounds = [0, *cuts, len(text)]
        out: list[int] = []

        def work(k: int) -> bytes:
            ids = self._encode(text[bounds[k] : bounds[k + 1]])
            if k == 0:  # this process's own part needs no packing
                out.extend(ids)
                return b""
            return array("q", ids).tobytes()

        for packed in fork_map(work, len(bounds) - 1)[1:]:
            out.extend(array("q", packed).tolist())
        return out

    def _safe_cut(self, buffer: str) -> int:
        """The last position in ``buffer`` where encoding may stop without changing any id,
        whatever text follows (0 if there is none yet).

        Two kinds of place qualify: between a non-space and a space (no GPT-2 pre-token spans
        that), and right after a special token. A special token only counts once it starts far
        enough from the end that no longer special token could start there and end in text not
        read yet; a space inside such a special token does not count.
        """
        limit = len(buffer) - max(self.longest_special - 1, 0)
        if limit <= 0:
            return 0
        m = _SAFE_CUT.search(buffer, 0, limit + 1)
        cut = m.start() if m else 0
        if self.special_regex is not None:
            for s in self.special_regex.finditer(buffer):
                if s.start() >= limit:
                    break
                cut = max(cut, s.end())
        return cut

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Lazily encode a stream of strings (e.g. a file's lines); memory stays bounded."""
        pending: list[str] = []  # chunks read and not encoded yet
        size = 0  # their total length
        wanted = STREAM_BLOCK  # try to cut once this much is pending
        for chunk in iterable:
            pending.append(chunk)
            size += len(chunk)
            if size < wanted:  # encoding a block at a time, not each short line, saves per-call costs
                continue
            buffer = "".join(pending)
            cut = self._safe_cut(buffer)
            if cut:
                yield from self.encode(buffer[:cut])
                buffer = buffer[cut:]
            pending, size = [buffer], len(buffer)
            # no safe place yet (a very long pre-token): wait until the pending text doubles,
            # so that searching it again and again stays linear in its length
            wanted = size + max(STREAM_BLOCK, size)
        yield from self.encode("".join(pending))

    def decode(self, ids: list[int]) -> str:
        """Ids -> text; byte sequences that are not valid UTF-8 become U+FFFD."""
        vocab = self.vocab
        try:
            data = b"".join([vocab[i] for i in ids])
        except (KeyError, TypeError):
            for pos, i in enumerate(ids):
                if i not in vocab:
                    raise ValueError(f"decode: unknown token id {i!r} at position {pos}") from None
            raise
        return data.decode("utf-8", errors="replace")
