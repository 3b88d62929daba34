"""Where the submission's code raised an exception that failed a test in this process: its
frames, told as the isolated worker tells them (:mod:`sandbox.student_errors`), so that a
failure's feedback says where in the submission it happened either way.

Isolated, the exception comes back from the worker with its traceback's text as a note
(:data:`HEADER`, ``your code raised IndexError (innermost call last):``, then the frames). In
this process (a grading with ``--no-isolate``) the traceback is the exception's own;
:func:`submission_traceback` gives the same text from it: the frames after the harness handed
the call over (:mod:`harness.dispatch`), none of the harness's own, paths under the submission
relative to it.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from types import TracebackType

import pytest

from .timeouts import handed_over_frames, timeout_limit

from .raised_text import HEADER, HEADER_LINE, MAX_FRAMES


def submission_traceback(tb: TracebackType | None, root: Path) -> str:
    """The frames of ``tb`` in ``root``'s files among the last :data:`MAX_FRAMES` from where
    the harness handed a call to the submission, innermost last, as Python formats a
    traceback's (code lines and their markers), paths relative to ``root``; ``""`` when
    there are none (the exception came from the harness, or the call ran in a worker). The
    worker tells the other files' frames too (the standard library's as ``<python>/``);
    feedback shows the submission's own where it has them (:mod:`grader.feedback`)."""
    root_dir = str(Path(root).resolve()) + os.sep
    frames = handed_over_frames(tb)
    own = [f for f in frames[-MAX_FRAMES:] if f.filename.startswith(root_dir)]  # the worker's last frames, its own
    for frame in own:
        frame.filename = frame.filename[len(root_dir):]
    return "".join(traceback.format_list(own)).rstrip()


def note_where_raised(excinfo: pytest.ExceptionInfo, root: Path) -> None:
    """Add the submission's frames to a test's exception as a note (what pytest shows after
    its message), unless a note says where it was raised already (the worker's), none is in
    ``root``, or the failure is told in a line with frames of its own (not implemented, over
    its time limit: :mod:`harness.plugin`)."""
    if excinfo.errisinstance(NotImplementedError) or timeout_limit(excinfo) is not None:
        return
    error, tb = excinfo.value, excinfo.tb
    notes = getattr(error, "__notes__", None)
    if isinstance(notes, list) and any(isinstance(n, str) and HEADER_LINE.match(n) for n in notes):
        return
    frames = submission_traceback(tb, root)
    if frames:
        try:
            error.add_note(f"{HEADER.format(type(error).__name__)}\n{frames}")
        except Exception:  # noqa: BLE001 - a submission's exception whose __notes__ is not a list
            pass
