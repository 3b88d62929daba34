"""What the submission controls reaches the trusted side bounded and printed safely: the
calls kept for the known-bug diagnosis are bounded whatever they returned, packed ids count
against a reply's values, the grader's peak memory holds however its test run ends, file
and module names the submission chose are escaped, capped and checked, and the results
file is written whatever those names hold (synthetic inputs: no grading run)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.grade import GradeRequest, RunStopped, _say, run_tests, submission_notes
from grader.journal import Journal, journal_path, replay
from grader.formats import write_json, write_junit
from grader.report import Case, RunReport
from harness.printable import printable, terminal_text
from harness.submission import missing_packages
from harness.recording import BUDGET, MAX_ITEMS, CallLog, Large, weight
from harness.wire import dumps as wire_dumps
from sandbox.channel import Broken, TrustedEnd, reply_values

UNSAFE = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # categories that could break a line or hide text


# ---- the calls kept for the diagnosis -------------------------------------------------------

SIZES = st.sampled_from([0, 1, 10, 1000, MAX_ITEMS // 2, MAX_ITEMS + 1, 3 * MAX_ITEMS])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(SIZES, SIZES), min_size=1, max_size=40))
def test_recorded_calls_stay_within_the_budget_whatever_they_carry(sizes):
    log, records = CallLog(), []
    log.start(records)
    for arg_size, out_size in sizes:
        log(("call", "run_merge", ([7] * arg_size,)), [1] * out_size)
    kept = [weight(a) for call, out in records for a in (*call[2], out) if not isinstance(a, Large)]
    assert all(w <= MAX_ITEMS for w in kept)
    assert sum(kept) <= BUDGET + 2 * MAX_ITEMS  # the last call is always kept
    assert records[-1][1] == [1] * sizes[-1][1] or isinstance(records[-1][1], Large)


def test_a_large_outcome_is_kept_as_a_note_equal_to_nothing():
    log, records = CallLog(), []
    log.start(records)
    log(("call", "run_merge", ([1, 2], (1, 2), 3)), list(range(MAX_ITEMS + 5)))
    (call, outcome), = records
    assert isinstance(outcome, Large) and not outcome == outcome and "list" in repr(outcome)
    assert call == ("call", "run_merge", ([1, 2], (1, 2), 3))


@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=300), st.integers(0, 3))
def test_a_reply_counts_at_least_one_value_per_id_packed_or_not(ids, extra):
    line = wire_dumps(["ok", 1, ids + [5] * extra]).encode()
    assert reply_values(line) >= len(ids) + extra


def _read_reply(line: bytes, cap: int = 1000) -> list:
    """``line`` as a TrustedEnd whose replies are capped at ``cap`` values reads it."""
    r, w = os.pipe()
    writer = threading.Thread(target=os.write, args=(w, line + b"\n"), daemon=True)  # longer than a pipe holds
    writer.start()
    try:
        return TrustedEnd(-1, r, None, send_timeout=1, reply_bytes=1 << 20, reply_values=cap).recv(1, 5, "testing")
    finally:
        os.close(r)
        writer.join()
        os.close(w)


@pytest.mark.parametrize("line", [
    b'["ok",1,{"\\u0024i4":"' + b"01000000" * 5000 + b'"}]',  # the tag escaped: the same key to JSON
    b'["ok",1,{"$i8": "' + b"0100000000000000" * 5000 + b'"}]',  # a space after the colon
    b'["ok",1,{"$t":"' + "\u0100".encode() * 5000 + b'"}]',  # a string rebuilt as a tuple of its characters
    b'["ok",1,{"$t":{"$b":"' + b"AAAA" * 5000 + b'"}}]',  # bytes rebuilt as a tuple of ints
], ids=["escaped_tag", "space_after_colon", "tuple_of_a_string", "tuple_of_bytes"])
def test_a_reply_holding_more_values_than_its_cap_is_refused_however_it_is_written(line):
    """Whatever JSON the worker writes (escapes and spaces JSON allows, a tag wrapping what is no
    list), a reply of more values than the cap is refused before they are built: a 64 MB line
    of a tuple of 32 million strings took the grader's test process to 2.9 GB (2026-11-27)."""
    with pytest.raises(Broken, match="more than 1000 values|malformed"):
        _read_reply(line)


def test_a_reply_within_its_cap_is_read_whatever_its_spacing():
    line = wire_dumps(["ok", 1, list(range(300)), ("a", b"b")]).encode().replace(b":", b": ")
    assert _read_reply(line) == ["ok", 1, list(range(300)), ("a", b"b")]


# ---- the grader's peak memory ------------------------------------------------------------


def test_the_peak_memory_of_a_test_run_stopped_at_its_deadline_is_seen_from_outside(tmp_path):
    hog = "b = b'x' * (300 << 20); import time; time.sleep(60)"
    peak = [0.0]
    with open(tmp_path / "log", "w") as log:
        code = run_tests([sys.executable, "-c", hog], dict(os.environ), log, GradeRequest(max_time=8, quiet=True), time.monotonic(), peak)
    assert isinstance(code, RunStopped) and code.at_budget
    assert peak[0] >= 300, peak


def test_the_journal_keeps_the_highest_peak_and_the_isolation_of_a_run_stopped_early(tmp_path):
    report_path = tmp_path / "report.json"
    journal = Journal(report_path)
    for peak, isolation in ((120.0, None), (480.5, "own user id"), (300.0, "own user id")):
        journal.add(Case("t::a", "g", 1.0, "visible", "passed"))
        journal.note(peak_rss_mb=peak, **({"isolation": isolation} if isolation else {}))
    journal.close()
    report = RunReport([Case("t::a", "g", 1.0, "visible")], peak_rss_mb=49.0)
    replay(report, journal_path(report_path))
    assert (report.peak_rss_mb, report.isolation, report.tests[0].outcome) == (480.5, "own user id", "passed")


def test_a_journal_line_that_is_not_a_case_is_not_replayed(tmp_path):
    report_path = tmp_path / "report.json"
    journal_path(report_path).write_text('{"nodeid": "t::a", "outcome": "passed"}\n{"nodeid": "t::a", "outcome": "passed", "group": "g", '
                                         '"weight": "all", "visibility": "visible"}\n', encoding="utf-8")
    report = RunReport([Case("t::a", "g", 1.0, "visible")])
    assert replay(report, journal_path(report_path)) == 0 and report.tests[0].outcome == "not run"


# ---- names the submission chose ----------------------------------------------------------


@given(st.text(max_size=400), st.integers(1, 200))
def test_printable_text_is_one_line_of_safe_characters_within_its_limit(text, limit):
    shown = printable(text, limit)
    assert len(shown) <= limit
    assert not any(unicodedata.category(ch) in UNSAFE for ch in shown)
    shown.encode("utf-8")  # no lone surrogate left


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), max_size=50))
def test_printable_leaves_ordinary_text_as_it_is(text):
    assert printable(text) == text


def _submission(root: Path, imports: str) -> Path:
    (root / "student").mkdir(parents=True)
    (root / "adapters.py").write_text(imports + "\nfrom student import *\n")
    (root / "student" / "__init__.py").write_text("import numpy as np\n")
    return root


@given(st.lists(st.text(max_size=120), max_size=8))
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_missing_modules_are_named_only_if_the_submission_imports_them(tmp_path, claimed):
    sub = tmp_path / "sub"
    if not sub.exists():
        _submission(sub, "import torch, jaxtyping.typing\nfrom einops import rearrange")
    shown = missing_packages([*claimed, "torch", "numpy", "einops", "jaxtyping", "os"], sub)
    assert shown[:4] == [n for n in dict.fromkeys([*claimed, "torch", "numpy", "einops", "jaxtyping"])
                         if n in {"torch", "numpy", "einops", "jaxtyping"}][:4]
    assert set(shown) <= {"torch", "numpy", "einops", "jaxtyping"}


NAME_BYTES = st.binary(min_size=1, max_size=120).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))


@given(st.lists(NAME_BYTES, min_size=1, max_size=3, unique=True))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_file_names_give_one_line_notes_and_valid_results_files(tmp_path, names):
    import shutil

    case = tmp_path / "case"
    shutil.rmtree(case, ignore_errors=True)
    sub = _submission(case / "sub", "")
    for name in names:  # links to outside are left out and named on the notes line
        os.symlink("/etc/hostname", os.path.join(os.fsencode(sub), name))
    from harness.submission import copy_submission

    found = copy_submission(sub, case / "copy")
    notes = submission_notes(GradeRequest(submission=sub), {"left_out": found.notes, "stand_ins": ["torch\nisolation: forged"]})
    # layout and left out; numpy (imported unguarded by the fake student/__init__.py) gets a
    # stand-in where it is missing, named on the worker's stand-ins line, never on the line of
    # packages imported only under an ImportError guard
    assert len(notes) == 2 and all("\n" not in n and "\r" not in n for n in notes), notes
    assert not any(unicodedata.category(ch) in UNSAFE for n in notes for ch in n)
    write_json(case / "results.json", {"output": "\n".join(notes), "tests": [{"name": n} for n in notes]})
    assert json.loads((case / "results.json").read_text(encoding="utf-8"))["output"] == "\n".join(notes)


@given(st.text(max_size=60))
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_results_and_junit_files_are_written_whatever_the_text_holds(tmp_path, text):
    from grader.report import Case
    from grader.scoring import Entry, GroupResult

    write_json(tmp_path / "r.json", {"output": text, text: [text]})
    json.loads((tmp_path / "r.json").read_bytes().decode("utf-8"))
    entry = Entry("t::f", text, "g", "visible", [Case("t::f", "g", 1.0, "visible", "failed")], name=text, text=text or "x")
    write_junit(tmp_path / "j.xml", [GroupResult("g", "g", 1.0, 100, [entry])])
    import xml.etree.ElementTree as ET

    ET.parse(tmp_path / "j.xml")


# ---- what the instructor's terminal shows ------------------------------------------------

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x1b[32mALL TESTS PASSED\x1b[0m\r\x9b2J\u202eexe.txt\u2028\udcff"


@given(st.text(max_size=400))
def test_terminal_text_keeps_lines_and_tabs_and_escapes_every_other_unsafe_character(text):
    shown = terminal_text(text)
    assert not any(unicodedata.category(ch) in UNSAFE for ch in shown if ch not in "\n\t")
    assert shown.count("\n") == text.count("\n") and shown.count("\t") == text.count("\t")
    shown.encode("utf-8")  # no lone surrogate left


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")) | st.sampled_from("\n\t"), max_size=50))
def test_terminal_text_leaves_ordinary_text_as_it_is(text):
    assert terminal_text(text) == text


def test_grade_prints_a_submissions_escape_sequences_literally(capsys):
    """An exception message the submission raised (ESC ] 0 retitles the terminal, ESC [ 2 J
    clears it) reaches grade's "look at these first" lines and batch's logs: shown, not run."""
    _say(SimpleNamespace(quiet=False), f"1. merge: -1 of 1 points\n   ValueError: {HOSTILE}")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\r" not in out and "\u202e" not in out
    assert "ValueError: \\x1b]0;PWNED\\x07\\x1b[2J\\x1b[32mALL TESTS PASSED" in out and out.count("\n") == 2
