r"""Part 1 (warm-up): three simple tokenizers, and why each of them fails.

A tokenizer turns text into a list of integer ids and back. Before BPE, build the three
obvious schemes and see what goes wrong with each:

* ``CharacterTokenizer``: one id per Unicode code point.
* ``ByteTokenizer``: one id per UTF-8 byte.
* ``WordTokenizer``: one id per "word" (GPT-2 pre-token) seen in a training text.

and ``compression_ratio``, the measure used to compare them (UTF-8 bytes per token).

Hints: the first two are one-liners around ``ord``/``chr`` and ``str.encode``/
``bytes.decode``. For ``WordTokenizer`` keep two dicts (id -> word and word -> id) so that
both directions are O(1) per token; reuse ``pretokenize`` from Part 3
(``student/pretokenize.py``) to cut text into words.
"""

from __future__ import annotations

from .pretokenize import pretokenize  # noqa: F401  (WordTokenizer needs it)

UNK = "<unk>"  # the word that id 0 of a WordTokenizer stands for


class CharacterTokenizer:
    r"""Unicode code points as ids: the id of a character is ``ord(character)``.

    Lossless (every string round-trips), but a poor tokenizer for a language model: the
    vocabulary must cover every possible code point (0x110000 = 1,114,112 ids), so it is
    huge and almost entirely unused (an embedding table with a row for each id would be
    mostly rows the model never trains), rare characters get ids the model has hardly
    seen, and sequences are still one token per character.

    The constructor takes no arguments.

    >>> tok = CharacterTokenizer()
    >>> tok.encode("hé€")
    [104, 233, 8364]
    >>> tok.decode([104, 233, 8364])
    'hé€'
    """

    def encode(self, text: str) -> list[int]:
        r"""Encode ``text`` as the list of its characters' code points.

        Args:
            text: any ``str`` (may be empty).

        Returns:
            A plain ``list`` of ``int``, one id per character of ``text``, in order:
            ``ord(ch)`` for each character ``ch``. ``""`` gives ``[]``. Never raises for a
            ``str``.

        >>> CharacterTokenizer().encode("Hi!")
        [72, 105, 33]
        """
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        r"""Decode a list of code points back to text.

        Args:
            ids: a list of ``int``.

        Returns:
            ``str`` whose i-th character is ``chr(ids[i])``; ``[]`` gives ``""``. Every id in
            0..0x10FFFF is accepted, including surrogates 0xD800-0xDFFF (they give lone
            surrogate characters, exactly as ``chr`` does). ``decode(encode(s)) == s``.

        Raises:
            ValueError: if some id is outside 0..0x10FFFF (e.g. -1 or 0x110000); the
                message names the first such id and its position in ``ids``.

        >>> CharacterTokenizer().decode([72, 105, 33])
        'Hi!'
        >>> CharacterTokenizer().decode([72, 0x110000])
        Traceback (most recent call last):
            ...
        ValueError: id 1114112 at position 1 is not a Unicode code point
        """
        raise NotImplementedError


class ByteTokenizer:
    r"""UTF-8 bytes as ids: each id is one byte value 0..255 of the text's UTF-8 encoding.

    Lossless with a tiny, fully used vocabulary (256 ids), but it compresses nothing: a
    sequence is exactly as long as the text's UTF-8 byte string (``compression_ratio`` is
    always 1.0), and non-ASCII characters cost 2-4 tokens each. Transformers pay for every
    position (attention is quadratic in the sequence length), so this is too expensive.

    The constructor takes no arguments.

    >>> tok = ByteTokenizer()
    >>> tok.encode("hé")
    [104, 195, 169]
    >>> tok.decode([104, 195, 169])
    'hé'
    """

    def encode(self, text: str) -> list[int]:
        r"""Encode ``text`` as the list of its UTF-8 bytes.

        Args:
            text: any ``str`` (may be empty).

        Returns:
            A plain ``list`` of ``int``: the byte values of ``text.encode("utf-8")``, in order, each
            0..255; ``""`` gives ``[]``.

        >>> ByteTokenizer().encode("€!")
        [226, 130, 172, 33]
        """
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        r"""Decode a list of byte values back to text.

        The ids are turned into a byte string which is decoded as UTF-8 with
        ``errors="replace"``: each invalid or truncated UTF-8 sequence becomes the
        replacement character U+FFFD (Python's own rule for how many bytes one U+FFFD
        replaces). ``decode(encode(s)) == s`` for every ``s``.

        Args:
            ids: a list of ``int``.

        Returns:
            ``str``; ``[]`` gives ``""``.

        Raises:
            ValueError: if some id is outside 0..255; the message names the first such id
                and its position in ``ids``.

        >>> ByteTokenizer().decode([104, 195]) == "h\ufffd"  # 195 starts a 2-byte sequence
        True
        >>> ByteTokenizer().decode([104, 256])
        Traceback (most recent call last):
            ...
        ValueError: id 256 at position 1 is not a byte value
        """
        raise NotImplementedError


class WordTokenizer:
    r"""Words as ids, with a vocabulary learned from a training text.

    The "words" are GPT-2 pre-tokens: the pieces ``pretokenize`` (Part 3) cuts text into,
    so a word usually carries its leading space (``" cat"``) and punctuation and runs of
    whitespace are words of their own.

    Attribute:
        vocab (``dict[int, str]``): id -> word. Id 0 is ``UNK`` (the string ``"<unk>"``);
            ids 1, 2, ... are the distinct pre-tokens of the training text in order of first
            appearance. ``len(vocab)`` is 1 + the number of distinct pre-tokens.

    Short sequences (about one token per word), but it fails as a real tokenizer: every
    word not seen in training is encoded as id 0 and decodes to the literal ``"<unk>"``,
    so the round trip loses every unseen word (new names, typos, numbers, other
    languages...), and covering them needs an unbounded vocabulary.

    >>> tok = WordTokenizer("the cat sat on the mat")
    >>> tok.vocab
    {0: '<unk>', 1: 'the', 2: ' cat', 3: ' sat', 4: ' on', 5: ' the', 6: ' mat'}
    >>> tok.encode("the dog sat")
    [1, 0, 3]
    >>> tok.decode([1, 0, 3])
    'the<unk> sat'
    """

    def __init__(self, training_text: str) -> None:
        r"""Build ``self.vocab`` from the pre-tokens of ``training_text``.

        Args:
            training_text: any ``str``. An empty text gives ``vocab == {0: "<unk>"}``.

        Sets ``self.vocab: dict[int, str]`` as described in the class docstring (a new,
        independent dict for each instance).

        >>> WordTokenizer("a b a").vocab
        {0: '<unk>', 1: 'a', 2: ' b', 3: ' a'}
        """
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        r"""Encode ``text`` as one id per pre-token.

        Args:
            text: any ``str``.

        Returns:
            A plain ``list`` of ``int``: for each pre-token of ``pretokenize(text)`` in
            order, its id in ``self.vocab``, or 0 if the pre-token was not in the training
            text. ``""`` gives ``[]``.

        >>> WordTokenizer("hello world").encode("hello there world")
        [1, 0, 2]
        """
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        r"""Decode ids back to text by concatenating their words (no separator added).

        Id 0 decodes to the literal string ``"<unk>"``.

        Args:
            ids: a list of ``int``.

        Returns:
            ``str``: the words ``self.vocab[i]`` of the ids, concatenated in order;
            ``[]`` gives ``""``.

        Raises:
            ValueError: if some id is not a key of ``self.vocab``; the message names the
                first such id and its position in ``ids``.

        >>> WordTokenizer("hello world").decode([1, 0, 2])
        'hello<unk> world'
        >>> WordTokenizer("hello world").decode([1, 7])
        Traceback (most recent call last):
            ...
        ValueError: unknown token id 7 at position 1
        """
        raise NotImplementedError


def compression_ratio(text: str, ids: list[int]) -> float:
    r"""How many UTF-8 bytes of ``text`` each token covers on average.

    Args:
        text: the text that was encoded.
        ids: the ids it was encoded to (only their number matters).

    Returns:
        ``float``: the number of bytes of ``text.encode("utf-8")`` divided by the number of
        ids (a Python ``float`` even when the division is exact; 0.0 for an empty text
        with non-empty ids). Higher means
        better compression; a ``ByteTokenizer`` always gives 1.0.

    Raises:
        ValueError: if ``ids`` is empty (the ratio is undefined).

    >>> compression_ratio("hello world", [1, 2])
    5.5
    >>> compression_ratio("héllo", [1, 2, 3])  # "é" is 2 bytes: 6 bytes / 3 tokens
    2.0
    """
    raise NotImplementedError
