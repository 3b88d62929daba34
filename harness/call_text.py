"""A call into the submission as a student reads it in a failure: ``adapters.run_merge([],
(1, 2), 4)``, each argument's repr kept short (long texts, lists and dicts cut, saying so) and
a file's absolute path told by its name (``<file corpus.txt>``): the grading machine's paths
are nobody's business and say nothing the name does not."""

from __future__ import annotations

import os
import reprlib
from typing import Any

MAX_CHARS = 300  # of the whole call's text


class _Short(reprlib.Repr):
    def __init__(self) -> None:
        super().__init__()
        self.maxstring, self.maxother, self.maxlist, self.maxtuple = 60, 60, 8, 8
        self.maxdict, self.maxset, self.maxlevel = 4, 6, 3

    def repr_str(self, value: str, level: int) -> str:
        if value.startswith(os.sep) and "\n" not in value and len(value) < 4096 and os.path.exists(value):
            return f"<file {os.path.basename(value)}>"
        return super().repr_str(value, level)


_SHORT = _Short()


def call_text(function: str, args: tuple) -> str:
    """``function(arg, ...)`` with short reprs of ``args`` (never an exception: an argument
    whose repr fails is shown by its type), at most :data:`MAX_CHARS` characters."""
    shown = []
    for arg in args:
        try:
            shown.append(_SHORT.repr(arg))
        except Exception:  # noqa: BLE001 - a repr that raises
            shown.append(f"<{type(arg).__name__}>")
    text = f"{function}({', '.join(shown)})"
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 2] + "…)"


CALL_NOTE = "the call: "  # how the note a failing call adds to its exception starts


def note_call(error: BaseException, function: str, args: tuple, on: str = "") -> None:
    """Give an exception the submission raised in a call (an ``Exception``, not the harness's
    own limits, nor a ``NotImplementedError``) a note naming that call, first among its notes (what pytest shows right after
    its message): ``the call: adapters.run_merge([], (1, 2), 4)``, ``on`` after it. Once: the
    same exception object raised again keeps the first call's."""
    if not isinstance(error, Exception) or isinstance(error, NotImplementedError):  # that one is told in a line
        return
    try:
        notes = getattr(error, "__notes__", None)
        if notes is None:
            notes = error.__notes__ = []
        if isinstance(notes, list) and not any(isinstance(n, str) and n.startswith(CALL_NOTE) for n in notes):
            notes.insert(0, f"{CALL_NOTE}{call_text(function, args)}{on}")
    except Exception:  # noqa: BLE001 - an exception object that takes no notes
        pass
