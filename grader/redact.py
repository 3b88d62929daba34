"""Paths of the grading machine taken out of the feedback a student sees.

Whatever a failure message quotes (an exception text, printed output, a path a test passed),
the results must not reveal where the harness lives, where the report and results are
written, or the folder holding other students' submissions. Paths inside the submission
become relative to it; the others become a placeholder such as ``<harness>``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# folders too general to stand for anything private (other paths under them stay as they are)
_GENERAL = {Path(p) for p in ("/", "/usr", "/etc", "/var", "/tmp", "/opt", "/home", "/root", "/srv", "/mnt", "/media", "/run", "/work")}


class Redactor:
    """Replaces each given folder (and anything under it) in a text; the longest first."""

    def __init__(self, folders: Iterable[tuple[Path | str | None, str]]) -> None:
        pairs: dict[str, str] = {}
        for folder, placeholder in folders:
            if folder is None:
                continue
            for form in {os.path.abspath(folder), os.path.realpath(folder)}:
                if Path(form) not in _GENERAL and form not in pairs:
                    pairs[form] = placeholder
        self.pairs = sorted(pairs.items(), key=lambda p: -len(p[0]))

    def __call__(self, text: str) -> str:
        """``text`` with every listed folder replaced by its placeholder ("" makes paths
        under it relative)."""
        if not text:
            return text
        for folder, placeholder in self.pairs:
            if folder not in text:
                continue
            text = text.replace(folder + os.sep, placeholder + os.sep if placeholder else "")
            text = text.replace(folder, placeholder or ".")
        return text


def for_grading(harness: Path, submission: Path | None, results: Path, report_dir: Path | None,
                packages: Path | None = None) -> Redactor:
    """The redactor of one grading: the submission's own paths made relative; the folder
    holding it (other students' submissions in a batch), the harness checkout and the
    folder holding it, the results and the report folders and the packages installed for
    the grading (``grade --install-declared``) hidden."""
    folders: list[tuple[Path | None, str]] = [
        (packages, "<packages>"),
        (report_dir, "<grading>"),
        (results.parent.resolve(), "<results>"),
    ]
    if submission is not None:
        folders += [(submission, ""), (submission.parent, "<submissions>")]
    folders += [(harness, "<harness>"), (harness.parent, "<harness-folder>")]
    return Redactor(folders)
