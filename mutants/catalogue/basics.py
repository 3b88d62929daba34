"""Mutants of parts 1 to 3: the warm-up, the primitives, pre-tokenization and special tokens."""

from __future__ import annotations

from .model import WARMUP, Append, Mutant, P, Replace

BASICS: tuple[Mutant, ...] = (
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
)
