"""Text the submission controls (file names, module names, messages), made safe to print on
one line and to write as UTF-8: every control, format or line-separator character and
every lone surrogate is shown as an escape (``\\n``, ``\\x1b``, ``\\u202e``; a byte of a
name that is not UTF-8, which Python keeps as a lone surrogate, as ``\\xNN``), and the
text is cut to a length, saying so."""

from __future__ import annotations

import re
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def escape_char(ch: str) -> str:
    """One character as an escape: ``\\n``, ``\\xNN`` (a lone surrogate standing for a byte: that byte), ``\\uXXXX``."""
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, kept by os.fsdecode as a lone surrogate
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with every control, format and line-separator character and every lone
    surrogate escaped, then cut to ``limit`` characters (ending in ``…``) if given."""
    text = str(text)
    if limit is not None and len(text) > 4 * limit:
        text = text[: 4 * limit]  # escapes at most quadruple what is kept: never escape more
    if not text.isprintable():  # quick: nothing to escape in most texts
        text = _escaped(text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


def terminal_text(text: str) -> str:
    """``text`` as a terminal or a text file shows it literally: its lines and tabs kept,
    every other control, format or line-separator character and every lone surrogate shown
    as an escape, as in :func:`printable` (a submission's exception message holding
    ``\\x1b]0;...`` or ``\\x1b[2J`` can neither retitle nor clear the instructor's terminal)."""
    text = str(text)
    if text.replace("\n", "").replace("\t", "").isprintable():  # quick: nothing to escape in most texts
        return text
    return _escaped(text, keep="\n\t")


def _escaped(text: str, keep: str = "") -> str:
    """``text`` with every character of :data:`_ESCAPED_CATEGORIES` but those in ``keep`` escaped."""
    return "".join(escape_char(ch) if ch not in keep and unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch
                   for ch in text)


def utf8_safe(text: str) -> str:
    """``text`` with only its lone surrogates escaped (``\\xNN`` / ``\\udXXX``), so that it
    can be written as UTF-8 whatever it holds; everything else stays as it is."""
    if not re.search(r"[\ud800-\udfff]", text):
        return text
    return re.sub(r"[\ud800-\udfff]", lambda m: escape_char(m.group()), text)
