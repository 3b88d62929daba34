"""Mutants of part 4: training (written against the training template)."""

from __future__ import annotations

from .model import Mutant
from .templates import trainer

TRAINING: tuple[Mutant, ...] = (
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
    # A real CS336 trainer's bug (docs/cs336.md: weiddeng). Its incremental update, merging
    # the pair at each occurrence, takes away the occurrence's left and right neighbour pairs;
    # where two occurrences are adjacent ('baba' merging (b, a)) the one pair between them,
    # (a, b), is the right neighbour of the first and the left neighbour of the second, and is
    # taken away twice. Hand-worked, "aab<|endoftext|>baba" with <|endoftext|> and vocab_size
    # 260 (three merges): the counts are (a, a) 1, (a, b) 2 ("aab", "baba"), (b, a) 2, so
    # (b, a) wins the tie at 2 (b > a), making "baba" [ba, ba]; the text then holds (a, a) 1,
    # (a, b) 1 (in "aab") and (ba, ba) 1, and of that tie (ba, ba) is the greatest; then
    # (a, a) 1 and (a, b) 1 tie and (a, b) wins. Merges [(b, a), (ba, ba), (a, b)]. With (a, b)
    # taken away twice it counts 0 after the first merge, and the third merge is (a, a).
    trainer(
        "pair_between_occurrences_subtracted_twice",
        "after merging a pair that occurs twice in a row in a pre-token (merging (b, a) in "
        "'baba'), the count of the one pair between the two occurrences ((a, b)) is decreased "
        "twice instead of once, so later merges see too low a count for it.",
        ("                counts[pair] += f\n                where[pair].add(w)\n",
         "                counts[pair] += f\n                where[pair].add(w)\n"
         "            for pair in zip(ids, ids[1:]):\n"
         "                if pair == (new_id, new_id):\n"
         "                    counts[(best[1], best[0])] -= f\n"),
    ),
    trainer(
        "one_merge_too_many",
        "the merge loop runs once too often (<= instead of <), so the vocabulary has one token too many.",
        ("while len(merges) < n_merges:", "while len(merges) <= n_merges:"),
    ),
    trainer(
        "training_merges_first_occurrence_only",
        "merging a pair inside a pre-token replaces only its first occurrence (a loop that stops "
        "at the first match), so a pre-token holding the pair twice keeps the second one unmerged.",
        ("        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:\n            out.append(new_id)\n",
         "        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1] and new_id not in out:\n"
         "            out.append(new_id)\n"),
    ),
    trainer(
        "zero_count_pairs_merged",
        "pair counts that fall to zero stay among the candidates (counts updated after each merge, "
        "zero entries never removed), so once no pair is left training goes on merging pairs that "
        "no longer occur instead of stopping early.",
        ("live = [p for p, n in counts.items() if n > 0]", "live = list(counts)"),
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
)
