"""A submission's exception, as the worker described it, rebuilt on the trusted side.

Only built-in exception classes are made here (looked up by name along the reported MRO), or
a subclass of one adding nothing but the submission's class name (checked: dotted identifiers),
so that its first line reads as in-process; the message and traceback are cut here too: the
worker's own caps cannot be trusted.
"""

from __future__ import annotations

import builtins
import re
from typing import TYPE_CHECKING, Any

from harness import values as V
from harness.impl import BrokenImplementation
from harness.raised_text import FRAME_LINE, HEADER

from .failures import StudentExit

if TYPE_CHECKING:  # pragma: no cover
    from .process import WorkerProcess

MESSAGE_CHARS = 4000  # characters of a submission's exception message (and traceback) kept


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"



# what the dynamic loader says when the kernel refuses to map a library executable (every
# place holding the submission's files is mounted noexec): its own compiled code
_COMPILED = re.compile(r"([^\s:'\"]+\.so(?:\.[\w.]+)?): failed to map segment from shared object")
COMPILED_MESSAGE = "your code loads compiled code ({}); grading allows only Python source"


def compiled_code(message: str) -> str:
    """``message`` with a refused load of the submission's own compiled library said plainly."""
    found = _COMPILED.search(message)
    return message if found is None else message.replace(found.group(0), COMPILED_MESSAGE.format(found.group(1)))


# what Python says when the kernel refuses a new process (fork: EAGAIN) or thread
_NO_PROCESS = re.compile(r"^\[Errno 11\] Resource temporarily unavailable|^can't start new thread")
PROCESS_LIMIT_NOTE = ("grading runs your code with at most {} processes and threads besides one per core of the machine "
                      "(grading.yaml isolation.max_processes): a pool of os.cpu_count() processes fits, a larger one may not")


def process_limit_note(message: str, max_processes: int) -> str | None:
    """The note for a submission's failure to start a process or thread at the process limit."""
    return PROCESS_LIMIT_NOTE.format(max_processes) if max_processes and _NO_PROCESS.search(message) else None


def traceback_frames(tb: str) -> str:
    """The frames of a traceback's text as the worker sends it (``traceback.format_list``'s
    lines, then the exception's own, which the failure shows already; cut at the front when
    long): from the first whole frame to the innermost frame's last line, ``""`` without one."""
    lines = tb.rstrip().splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("  ") and FRAME_LINE.fullmatch(ln[2:])]
    if not starts:
        return ""
    end = starts[-1] + 1
    while end < len(lines) and lines[end].startswith("    "):  # the innermost frame's code and markers
        end += 1
    return "\n".join(lines[starts[0]:end])


class _KeyError(KeyError):
    """A submission's ``KeyError``, rebuilt from its message: ``str(KeyError(50257))`` is
    ``50257`` already, and ``KeyError("50257")`` would show it quoted again, ``KeyError:
    '50257'``, as if the submission had looked up the string."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_KeyError.__name__ = _KeyError.__qualname__ = "KeyError"
_KeyError.__module__ = "builtins"

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_NAMED: dict[tuple[type, str, str], type] = {}  # the classes made by _named_like, at most MAX_NAMED
MAX_NAMED = 256


def _named_like(base: type, module: Any, qualname: Any) -> type:
    """``base`` under the submission's own class name, so that the exception's first line is
    the one an in-process run shows (``student.bpe.MergeError: ...``, not ``Exception: ...``):
    a subclass adding nothing but ``__module__`` and ``__qualname__``, made once per name (also
    for a built-in class that cannot be made from a message alone: ``UnicodeDecodeError``, rebuilt
    as its base ``UnicodeError``). ``base`` itself for names that are not dotted identifiers."""
    if type(module) is not str or type(qualname) is not str \
            or not (_DOTTED.match(module) and _DOTTED.match(qualname)) or len(module) + len(qualname) > 200:
        return base
    key = (base, module, qualname)
    if key not in _NAMED and len(_NAMED) < MAX_NAMED:
        _NAMED[key] = type(qualname.rpartition(".")[2], (base,), {"__module__": module, "__qualname__": qualname})
    return _NAMED.get(key, base)


def student_error(info: dict, proc: "WorkerProcess", mark: int) -> BaseException:
    """The exception a submission raised in the worker (``info`` as the worker described it),
    rebuilt here as a built-in exception class of the same name or its nearest built-in base,
    with its traceback and what it printed since ``mark`` as notes; a non-``Exception``
    (``SystemExit`` ...) becomes :class:`StudentExit`."""
    kind = info.get("kind")
    message = compiled_code(_cut(str(info.get("message", "")), MESSAGE_CHARS))  # the worker's own cap cannot be trusted
    if kind == "broken":
        return BrokenImplementation(message)
    if kind == "wrong":
        return V.WrongResult(message)
    mro = [str(n)[:100] for n in info.get("mro", [])[:50]] if type(info.get("mro")) is list else []
    cls = None
    for name in mro:
        candidate = getattr(builtins, name, None)
        if isinstance(candidate, type) and issubclass(candidate, BaseException):
            cls = candidate
            break
    shown = mro[0] if mro else "an exception"
    tb = str(info.get("traceback", ""))[-MESSAGE_CHARS:]
    if cls is None or not issubclass(cls, Exception):
        err: BaseException = StudentExit(f"your code raised {shown}({message!r}), which the tests treat as a failure")
    else:
        err = None
        for candidate in [cls, *cls.__mro__[1:]]:
            try:
                err = _KeyError(message) if candidate is KeyError else candidate(message)
                break
            except Exception:
                continue
        if mro and mro[0] != type(err).__name__:  # the submission's own class (or a library's)
            err = _named_like(type(err), info.get("module"), info.get("qualname"))(message)
    limit = process_limit_note(message, proc.limits.max_processes)
    if limit is not None:
        err.add_note(limit)
    frames = traceback_frames(tb)
    if frames:
        err.add_note(f"{HEADER.format(shown)}\n{frames}")
    out = proc.output_since(mark)
    if out.strip():
        err.add_note(f"your code printed:\n{out}")
    return err
