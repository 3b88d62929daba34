r"""Part 5 (the tokenizer, file format): GPT-2's ``vocab.json`` and ``merges.txt``.

GPT-2 stores its byte strings as printable Unicode strings: each byte is mapped to one
character (``bytes_to_unicode``), so that spaces, newlines and control bytes survive in a
JSON file and in a space-separated text file. A token's string is the concatenation of its
bytes' characters: ``b" the"`` is stored as ``"Ġthe"``, ``b"\n\n"`` as ``"ĊĊ"``.

* ``vocab.json``: one JSON object, token string -> id.
* ``merges.txt``: a ``#version: 0.2`` header line, then one merge per line, the left and
  right token strings separated by one space (no token string contains a space, since
  the space byte is mapped to ``"Ġ"``).

Hint: build the byte -> character table once (and its inverse for loading) and reuse it;
``json`` does the rest.
"""

from __future__ import annotations

import os


def bytes_to_unicode() -> dict[int, str]:
    r"""GPT-2's byte -> printable character table.

    Returns:
        ``dict[int, str]`` with exactly the 256 keys 0..255, each mapped to a
        one-character string; the 256 characters are all different. The table is:

        * the 188 "printable" bytes map to the character with the same code point:
          ``ord("!")``..``ord("~")`` (33..126), ``ord("¡")``..``ord("¬")`` (161..172) and
          ``ord("®")``..``ord("ÿ")`` (174..255), bounds included;
        * the other 68 bytes (0..32, 127..160 and 173), taken in increasing order, map to
          ``chr(256)``, ``chr(257)``, ... ``chr(323)``: byte 0 -> ``"Ā"`` (U+0100),
          byte 10 (newline) -> ``"Ċ"``, byte 32 (space) -> ``"Ġ"`` (U+0120), byte 127 ->
          ``"ġ"`` (U+0121), byte 173 -> ``"Ń"`` (U+0143).

        Callers may keep or cache the result; they do not modify it.

    >>> b2u = bytes_to_unicode()
    >>> len(b2u), b2u[ord(" ")], b2u[ord("\n")], b2u[ord("a")], b2u[0], b2u[173]
    (256, 'Ġ', 'Ċ', 'a', 'Ā', 'Ń')
    >>> "".join(b2u[byte] for byte in " hello\n".encode("utf-8"))
    'ĠhelloĊ'
    """
    raise NotImplementedError


def save_tokenizer_files(
    vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], vocab_path: str | os.PathLike, merges_path: str | os.PathLike
) -> None:
    r"""Write ``vocab`` as a GPT-2 ``vocab.json`` and ``merges`` as a GPT-2 ``merges.txt``.

    Each byte string is written as its token string: the characters
    ``bytes_to_unicode()`` gives for its bytes, one per byte, concatenated in order. Both files are written in UTF-8, replacing any
    existing file.

    * ``vocab_path`` gets one JSON object ``{token string: id}`` with one entry per id of
      ``vocab``, in increasing id order, non-ASCII characters written as themselves
      (``json.dump(..., ensure_ascii=False)``).
    * ``merges_path`` gets the line ``#version: 0.2``, then one line per merge, in order:
      the left token string, one space, the right token string. Every line, the last one
      included, ends with ``"\n"``.

    Args:
        vocab: ``dict[int, bytes]``, id -> token bytes (e.g. from ``train_bpe``).
        merges: ``list[tuple[bytes, bytes]]`` in rank order.
        vocab_path, merges_path: where to write (``str`` or ``os.PathLike``).

    Returns:
        ``None``.

    Raises:
        ValueError: if two ids of ``vocab`` have the same bytes (a JSON object cannot
            hold the same key twice); nothing is written in that case.

    Example: ``vocab == {0: b"\x00", ..., 255: b"\xff", 256: b" t"}`` and
    ``merges == [(b" ", b"t")]`` give a ``vocab.json`` ending in ``"ÿ": 255, "Ġt": 256}``
    and a ``merges.txt`` of the two lines ``#version: 0.2`` and ``Ġ t``.

    >>> import os, tempfile
    >>> d = tempfile.TemporaryDirectory()  # removed by d.cleanup() at the end
    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab[256] = b" t"
    >>> save_tokenizer_files(vocab, [(b" ", b"t")], os.path.join(d.name, "v.json"), os.path.join(d.name, "m.txt"))
    >>> open(os.path.join(d.name, "m.txt"), encoding="utf-8").read()
    '#version: 0.2\nĠ t\n'
    >>> load_tokenizer_files(os.path.join(d.name, "v.json"), os.path.join(d.name, "m.txt")) == (vocab, [(b" ", b"t")])
    True
    >>> d.cleanup()
    """
    raise NotImplementedError


def load_tokenizer_files(
    vocab_path: str | os.PathLike, merges_path: str | os.PathLike
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    r"""Read a GPT-2 ``vocab.json`` and ``merges.txt`` back into ``(vocab, merges)``.

    The inverse of ``save_tokenizer_files``, and it reads GPT-2's own files as well.

    * ``vocab_path``: read as UTF-8 JSON; an object ``{token string: id}``. Each entry
      gives ``vocab[int(id)]`` = the bytes whose characters (through the inverse of
      ``bytes_to_unicode()``) spell the token string, one byte per character.
    * ``merges_path``: read as UTF-8, line by line, numbering lines from 1. Remove the
      line's trailing ``"\n"`` (or ``"\r\n"``: files with Windows line endings load the
      same; no token string contains ``"\r"``, byte 13 is written ``"č"``); the last line
      may lack it. Skip line 1 if it starts with ``#version``, and skip empty lines
      anywhere. Every other line must split on ``" "`` into exactly two non-empty parts
      ``left right`` (so ``"a "`` and ``" b"`` are malformed too); it gives the merge
      ``(bytes of left, bytes of right)``. Merges keep the file's order.

    Args:
        vocab_path, merges_path: the two files (``str`` or ``os.PathLike``).

    Returns:
        ``(vocab, merges)``: a ``tuple`` of ``dict[int, bytes]`` and
        ``list[tuple[bytes, bytes]]`` (a ``list`` of 2-tuples), as ``train_bpe``
        returns them.

    Raises:
        ValueError: with the file and the 1-based line number (``"merges.txt:3: ..."``) for
            a ``merges.txt`` line that does not split into exactly two tokens separated by
            one space (e.g. ``"ab"``, ``"a b c"`` or ``"a "``); with the file name (and line for
            ``merges.txt``) for a token string containing a character that is not in
            ``bytes_to_unicode()``'s table; invalid JSON raises ``json.JSONDecodeError``
            (a subclass of ``ValueError``).
        FileNotFoundError: if a file does not exist (as ``open`` raises it).

    Example: a ``merges.txt`` made of the lines ``#version: 0.2``, ``Ġ t``, ``h e`` gives
    ``merges == [(b" ", b"t"), (b"h", b"e")]``; with ``ab`` in place of ``h e`` it would raise
    ``ValueError("<merges_path>:3: expected two tokens separated by one space, got 'ab'")``.
    (See ``save_tokenizer_files`` for a round trip you can run.)
    """
    raise NotImplementedError
