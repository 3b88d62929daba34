"""The grading report's journal: every finished test appended as one JSON line.

The pytest side writes the whole report only at collection time and at the end; between
the two, each test's entry is appended here as soon as its teardown is done (one short
write, flushed). ``grade`` replays the journal over the report it finds, so a run stopped
at the time budget, by SIGTERM or SIGINT, a crash or a kill keeps the points of every test
graded before it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO


def journal_path(report: Path) -> Path:
    """Where the journal of the report at ``report`` lives (beside it)."""
    return report.with_name(report.name + ".journal")


class Journal:
    """Append-only writer of finished test entries."""

    def __init__(self, report: Path) -> None:
        self.path = journal_path(report)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")

    def add(self, entry: dict) -> None:
        """Append ``entry`` (a test's report dict) and flush it to the file."""
        if self._file is None:
            return
        self._file.write(json.dumps(entry, ensure_ascii=True) + "\n")
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


def replay(report: dict, path: Path) -> int:
    """Update ``report["tests"]`` in place with the journal at ``path`` (entries matched by
    node id; a torn last line is ignored) and its facts (the highest ``peak_rss_mb``, the
    last ``isolation``); returns how many test entries were applied."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    index = {t.get("nodeid"): i for i, t in enumerate(report.get("tests", []))}
    applied = 0
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the run was killed in the middle of this write
        if type(entry) is dict and type(entry.get("facts")) is dict:
            _replay_facts(report, entry["facts"])
            continue
        i = index.get(entry.get("nodeid")) if type(entry) is dict else None
        if i is not None:
            report["tests"][i] = entry
            applied += 1
    return applied


def _replay_facts(report: dict, facts: dict) -> None:
    peak = facts.get("peak_rss_mb")
    if type(peak) in (int, float) and peak > (report.get("peak_rss_mb") or 0):
        report["peak_rss_mb"] = peak
    if type(facts.get("isolation")) is str:
        report["isolation"] = facts["isolation"]
