"""Mutants of part 5: encode, decode, the tokenizer files and encode_iterable (written against
the tokenizer template)."""

from __future__ import annotations

from .model import RULES, Append, Mutant, Replace
from .templates import method, tokenizer

TOKENIZING: tuple[Mutant, ...] = (
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
        "encode_whole_pretoken_from_vocab",
        "encode takes a pre-token found whole in the vocabulary as its one id without applying "
        "the merges (tiktoken's shortcut: right only where the merges build every token of the "
        "vocabulary before any longer one, as GPT-2's do).",
        ('        parts = [bytes([b]) for b in word.encode("utf-8")]\n',
         '        if word.encode("utf-8") in self._m_ids:\n'
         '            return [self._m_ids[word.encode("utf-8")]]\n'
         '        parts = [bytes([b]) for b in word.encode("utf-8")]\n'),
    ),
    tokenizer(
        "encode_cache_shared_by_tokenizers",
        "encode caches each pre-token's ids in one dict shared by every tokenizer (a class attribute), "
        "so a tokenizer with other merges or another vocabulary gets the ids another tokenizer cached "
        "for the same pre-token.",
        ("        self._m_cache = {}\n",
         "        self._m_cache = type(self).__dict__.get('_m_shared_cache')\n"
         "        if self._m_cache is None:\n"
         "            self._m_cache = type(self)._m_shared_cache = {}\n"),
        first=("tests/public/test_tokenizer.py",),
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
        "load_skips_hash_lines", "tokenizer",
        "load_tokenizer_files skips every merges.txt line starting with '#' as a comment, not only the "
        "#version header, which drops GPT-2's merges '# #', '## ##' and the others starting with '#'.",
        (Replace("gpt2_files.py", '(lineno == 1 and line.startswith("#version"))', 'line.startswith("#")'),),
        first=("tests/public/test_tokenizer_files.py",),
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
