"""The grading report's journal: every finished test appended as one JSON line.

The pytest side writes the whole report only at collection time and at the end; between
the two, each test's entry is appended here as soon as its teardown is done (one short
write, flushed). ``grade`` replays the journal over the report it finds, so a run stopped
at the time budget, by SIGTERM or SIGINT, a crash or a kill keeps the points of every test
graded before it.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import IO

from .report import Case, ReportError, RunReport, case_from_data


def journal_path(report: Path) -> Path:
    """Where the journal of the report at ``report`` lives (beside it)."""
    return report.with_name(report.name + ".journal")


class Journal:
    """Append-only writer of finished test entries."""

    def __init__(self, report: Path) -> None:
        self.path = journal_path(report)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")

    def add(self, case: Case) -> None:
        """Append ``case`` (a finished test) and flush it to the file."""
        if self._file is None:
            return
        self._file.write(json.dumps(asdict(case), ensure_ascii=True) + "\n")
        self._file.flush()

    def note(self, **facts) -> None:
        """Append facts about the run so far (``peak_rss_mb``, ``isolation``): one line
        ``{"facts": {...}}``, replayed over the report's own."""
        if self._file is None:
            return
        self._file.write(json.dumps({"facts": facts}, ensure_ascii=True) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def replay(report: RunReport, path: Path) -> int:
    """Update ``report.tests`` in place with the journal at ``path`` (cases matched by node
    id; a torn last line, or one that is not a case, is ignored) and its facts (the highest
    ``peak_rss_mb``, the last ``isolation``); returns how many cases were applied."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    index = {t.nodeid: i for i, t in enumerate(report.tests)}
    applied = 0
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the run was killed in the middle of this write
        if type(entry) is dict and type(entry.get("facts")) is dict:
            _replay_facts(report, entry["facts"])
            continue
        try:
            case = case_from_data(path, entry)
        except ReportError:
            continue
        i = index.get(case.nodeid)
        if i is not None:
            report.tests[i] = case
            applied += 1
    return applied


def _replay_facts(report: RunReport, facts: dict) -> None:
    peak = facts.get("peak_rss_mb")
    if type(peak) in (int, float) and peak > (report.peak_rss_mb or 0):
        report.peak_rss_mb = peak
    if type(facts.get("isolation")) is str:
        report.isolation = facts["isolation"]
