r"""Part 4 (training): learn a byte-level BPE vocabulary and merge list from a text file.

Training starts from the 256 single bytes and repeatedly merges the most frequent pair of
adjacent tokens into a new token, inside pre-tokens only, until the vocabulary is full.
``train_bpe``'s docstring is the complete specification.

Hints for an efficient implementation (the speed tests train on corpora of many
megabytes, so the naive "re-count every pair of the whole corpus after each merge" loop
is far too slow):

* Pre-tokenize once and count the pre-tokens (a ``Counter`` of strings): real text
  repeats the same words over and over, so you work on a few thousand distinct words,
  each stored once as a list of token ids together with its count.
* Count the pairs once, weighting each pair by its word's count. After a merge only the
  words that contain the merged pair change: keep an index pair -> words containing it,
  and update the counts incrementally (subtract the changed words' old pairs, add their
  new ones) instead of recounting everything.
* Picking the best pair with ``max`` over all pair counts at every step is simple and
  correct; a priority queue with lazy deletion of stale entries is faster, but must
  break ties exactly as specified.
* For very large files, counting pre-tokens is the slow part and parallelises well
  (``multiprocessing``/``concurrent.futures``) over chunks cut at special tokens or at
  other positions no pre-token can straddle.
"""

from __future__ import annotations

import os


def train_bpe(
    input_path: str | os.PathLike, vocab_size: int, special_tokens: list[str]
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    r"""Train a byte-level BPE tokenizer on the UTF-8 text file at ``input_path``.

    Args:
        input_path: path (``str`` or ``os.PathLike``) of a UTF-8 text file; the tests give a
            ``pathlib.Path``, as CS336's do.
        vocab_size: the size of the final vocabulary, *including* the 256 single bytes
            and the special tokens.
        special_tokens: ``list[str]`` of special tokens (e.g. ``["<|endoftext|>"]``),
            possibly empty. A token listed more than once counts once (the first time).

    Returns:
        ``(vocab, merges)``, a ``tuple`` of

        * ``vocab: dict[int, bytes]``, id -> token bytes, laid out as in GPT-2:

          - ids 0..255 are the single bytes, ``vocab[b] == bytes([b])``;
          - the i-th merge (0-based) creates id ``256 + i``, whose bytes are the
            concatenation of the merged pair;
          - then the distinct special tokens, in the order given, each as its UTF-8
            bytes, with the next ids (``256 + len(merges)``, ``256 + len(merges) + 1``, ...).

          So the ids are exactly ``0 .. len(vocab) - 1`` and ``len(vocab) ==
          256 + len(merges) + number of distinct special tokens``.
        * ``merges: list[tuple[bytes, bytes]]``, the merged pairs ``(left, right)`` as
          byte strings, in the order they were created (``merges[i]`` created id 256 + i).

    Algorithm (this exact procedure; the tests compare vocab and merges exactly):

    1. Read the file's raw bytes and decode them as UTF-8. Do not translate newlines
       (``"\r\n"`` stays ``"\r\n"``; open in binary mode or with ``newline=""``).
    2. Cut the text at the special tokens (exactly as ``split_on_special_tokens`` does)
       and drop the special-token pieces: special tokens are hard boundaries and never
       take part in training, and no merge ever crosses the place where one was.
    3. Pre-tokenize each remaining piece with ``GPT2_PATTERN`` (``pretokenize``) and count
       how often each distinct pre-token occurs in the whole file.
    4. Represent each pre-token as the list of its UTF-8 bytes (the ids 0..255). The count
       of a pair ``(a, b)`` of token ids is the sum, over the distinct pre-tokens, of
       (number of adjacent positions where ``a`` is followed by ``b`` in it, overlapping
       positions counted as in ``get_pair_counts``) x (the pre-token's count). Pairs are
       never formed across two pre-tokens.
    5. Repeat ``vocab_size - 256 - (number of distinct special tokens)`` times:

       - if no pair is left (every pre-token is a single token), stop early;
       - pick the pair with the highest count; ties go to the lexicographically greatest
         pair compared as ``(bytes, bytes)``, i.e. the result of
         ``max(pairs, key=lambda p: (count[p], vocab[p[0]], vocab[p[1]]))``. Bytes compare
         byte by byte, and a prefix is smaller than any longer string starting with it
         (``b"s" > b" low"``, ``b"ab" > b"a"``);
       - give the new token the next id, append the pair's byte strings to ``merges``;
       - in every pre-token replace the pair's occurrences by the new id, left to right
         without overlaps (as ``merge`` does), and update the pair counts accordingly.

    6. Append the special tokens to ``vocab``.

    Edge cases: an empty file (or one made only of special tokens) gives no merges:
    ``vocab`` is the 256 bytes plus the special tokens and ``merges == []``. A
    ``vocab_size`` too large for the corpus just stops early, with fewer entries than
    ``vocab_size``.

    Raises:
        ValueError: each with a message naming the problem (and, for the file errors, the
            path):

            * ``vocab_size < 256 + number of distinct special tokens``; the message shows
              the ``vocab_size`` given (e.g. ``"vocab_size=200 is too small: ..."``). This
              is checked first, before the file is touched;
            * the file does not exist (``FileNotFoundError``, as ``open`` raises it, is
              accepted too: it is a subclass of ``OSError``, not of ``ValueError``);
            * the path is a directory;
            * the file is not valid UTF-8;
            * a special token is the empty string (as in ``split_on_special_tokens``).

            When several of the last four problems occur together, any one of them may be
            the one reported.

    Worked example: the file contains ``low low low lower lowest``. Its pre-tokens are
    ``"low"`` x1, ``" low"`` x2, ``" lower"`` x1, ``" lowest"`` x1, and the pair counts are
    (l,o) 5, (o,w) 5, (" ",l) 4, (w,e) 2, (e,r) 1, (e,s) 1, (s,t) 1.

    * merge 0: (l,o) and (o,w) tie at 5; ``(b"o", b"w") > (b"l", b"o")``, so
      ``(b"o", b"w")`` wins -> id 256 = ``b"ow"``. Now (l,ow) has count 5, (" ",l) 4,
      (ow,e) 2.
    * merge 1: ``(b"l", b"ow")`` (5) -> id 257 = ``b"low"``; now (" ",low) has count 4.
    * merge 2: ``(b" ", b"low")`` (4) -> id 258 = ``b" low"``.
    * merge 3: ``(b" low", b"e")`` (2) -> id 259 = ``b" lowe"``.
    * merge 4: three pairs tie at 1: (" lowe",r), (" lowe",s), (s,t); ``b"s"`` is the
      greatest first element, so ``(b"s", b"t")`` -> id 260 = ``b"st"``.

    >>> import os, tempfile
    >>> d = tempfile.TemporaryDirectory()  # removed by d.cleanup() at the end
    >>> path = os.path.join(d.name, "tiny.txt")
    >>> with open(path, "w", encoding="utf-8") as f:
    ...     _ = f.write("low low low lower lowest")
    >>> vocab, merges = train_bpe(path, 256 + 5 + 1, ["<|endoftext|>"])
    >>> merges
    [(b'o', b'w'), (b'l', b'ow'), (b' ', b'low'), (b' low', b'e'), (b's', b't')]
    >>> [vocab[i] for i in range(256, len(vocab))]
    [b'ow', b'low', b' low', b' lowe', b'st', b'<|endoftext|>']
    >>> vocab[0], vocab[32], vocab[255]
    (b'\x00', b' ', b'\xff')
    >>> d.cleanup()
    """
    raise NotImplementedError
