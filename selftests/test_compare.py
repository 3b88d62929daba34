"""``python -m grader compare``: one row per test with both outcomes and times, the first
divergence of each failing test, known-bug diagnoses, and a self-contained HTML page."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.childenv import child_env
from grader.compare import diagnoses, first_divergence, join, render_html, terminal

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(600)

POLICY = """\
version: 1
timeout: 30
groups:
  - name: primitives
    points: 10
    select: ["tests/*/test_primitives*.py::*"]
"""
TESTS = [
    "tests/public/test_primitives.py::test_merge_takes_overlapping_occurrences_from_the_left",
    "tests/public/test_primitives.py::test_pair_counts_count_every_adjacent_pair",
]

FAILURE = """tests/public/test_primitives.py:38: in test_merge
    assert_items_equal(impl.run_merge(ids, pair, new_id), expected, what="id")
E   AssertionError: id 1 differs (expected 2 ids, got 3)
E     expected: 5
E     got:      <9>
---------------------------------- known bug -----------------------------------
this matches a known bug: merge <advances> by one & merges twice.
"""


def report(*tests: tuple[str, str, float, str]) -> dict:
    return {"score": 1.0, "tests": [
        {"nodeid": n, "group": "g", "outcome": o, "duration": d, "score": 1.0 if o == "passed" else 0.0, "max_score": 1.0, "output": out}
        for n, o, d, out in tests
    ]}


def test_first_divergence_is_the_assertion_message_without_traceback():
    assert first_divergence(FAILURE) == "id 1 differs (expected 2 ids, got 3)\nexpected: 5\ngot:      <9>"
    assert first_divergence("not implemented: merge") == "not implemented: merge"


def test_join_gives_one_row_per_test_with_times_ratio_and_points():
    sub = report(("t::a", "passed", 0.2, ""), ("t::b", "failed", 0.5, FAILURE))
    ref = report(("t::a", "passed", 0.1, ""), ("t::b", "passed", 0.25, ""), ("t::c", "passed", 0.1, ""))
    rows = join(sub, ref)
    assert [(r.nodeid, r.submission, r.reference) for r in rows] == [
        ("t::a", "passed", "passed"), ("t::b", "failed", "passed"), ("t::c", "missing", "passed")]
    assert rows[0].ratio == pytest.approx(2.0) and rows[1].divergence.startswith("id 1 differs")
    text = terminal(sub, ref, rows, "alice")
    assert "2.0x" in text and "first divergence" in text and "id 1 differs" in text
    assert diagnoses([sub]) == ["this matches a known bug: merge <advances> by one & merges twice."]
    assert text.rstrip().endswith("merges twice.")


def test_html_is_self_contained_and_escaped():
    sub = report(("t::<script>alert(1)</script>", "failed", 0.5, FAILURE))
    ref = report(("t::<script>alert(1)</script>", "passed", 0.1, ""))
    page = render_html(sub, ref, join(sub, ref), "bob & <eve>")
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page and "&lt;script&gt;" in page and "bob &amp; &lt;eve&gt;" in page
    assert not re.search(r"""(src|href)\s*=|@import|url\(""", page), "no external assets"
    assert "got:      &lt;9&gt;" in page and "merge &lt;advances&gt; by one &amp; merges twice" in page


def test_compare_on_a_mutant_shows_divergence_and_diagnosis(tmp_path):
    sub = tmp_path / "overlap_mutant"
    sub.mkdir()
    shutil.copyfile(ROOT / "adapters.py", sub / "adapters.py")
    shutil.copytree(ROOT / "reference", sub / "student", ignore=shutil.ignore_patterns("__pycache__"))
    prim = sub / "student" / "primitives.py"
    prim.write_text(prim.read_text().replace("i += 2", "i += 1", 1))
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    env = child_env()
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "compare", "--submission", str(sub), "--html", str(tmp_path / "cmp.html"),
         "--config", str(policy), "--tests", *TESTS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=500, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    out = proc.stdout
    rows = [ln for ln in out.splitlines() if ln.startswith("public/test_primitives.py::")]
    assert len(rows) >= 6, out
    assert all(re.search(r"(passed|failed)\s+passed\s+[\d.]+\s+[\d.]+\s+[\d.]+x", ln) for ln in rows), out
    assert any(" failed " in ln for ln in rows) and any(ln.split()[2] == "passed" for ln in rows if "pair_counts" in ln)
    assert "first divergence of each failing test:" in out and "differs" in out.split("first divergence")[1]
    assert "submission layout: stubs layout (adapters.py, package student/)" in out, out[:2000]
    page = (tmp_path / "cmp.html").read_text()
    for ln in rows[:3]:
        assert ln.split()[0].split("::")[1][:30] in page
    known = [ln for ln in out.splitlines() if "matches a known bug" in ln]
    if known:  # the mutant catalogue recognises this bug: the diagnosis is shown at the end, and in the page
        assert "diagnosis:" in out and known[0].strip().split(": ", 1)[1][:40] in page
