"""Results entries: one per test function, exact points, and Markdown feedback that a
submission's text cannot break (synthetic reports: no grading run)."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.config import load_config
from grader.feedback import md_block, md_code, md_text
from grader.points import largest_remainder, proportional_cents
from grader.case_facts import skip_reason
from grader.grading_plugin import MAX_OUTPUT
from grader.report import Case, RunReport, known_bug_line
from grader.feedback import HIDDEN_NOTE, HIDDEN_NOTES
from grader.formats import gradescope_json, top_failures
from grader.points import part_numbers
from grader.scoring import score_report

from .gradescope_schema import problems
from .support import ROOT

CONFIG = """
version: 1
total: 10
visibility: visible
hidden_visibility: after_published
hidden_output: {policy}
groups:
  - name: a
    title: "Part A"
    points: 3.33
    select: ["tests/public/test_a.py::*"]
  - name: b
    title: "Part B"
    points: 6.67
    select: ["tests/*/test_b*.py::*"]
"""


def case(nodeid: str, outcome: str = "passed", group: str = "a", visibility: str = "visible", weight: float = 1.0, output: str = "",
         known_bug: str | None = None) -> Case:
    return Case(nodeid, group, weight, visibility, outcome, output, 0.01, known_bug=known_bug)


def config(tmp_path: Path, policy: str = "first_line"):
    path = tmp_path / "grading.yaml"
    path.write_text(CONFIG.format(policy=policy), encoding="utf-8")
    return load_config(path)


def cents(value: float) -> int:
    d = Decimal(str(value))
    assert d == d.quantize(Decimal("0.01")), f"{value} has more than two decimals"
    return int(d * 100)


REPORT = RunReport(tests=[
    *[case(f"tests/public/test_a.py::test_three_cases[{i}]", "failed" if i == 2 else "passed", output=f"E   AssertionError: case {i} differs") for i in range(3)],
    case("tests/public/test_a.py::test_plain"),
    case("tests/public/test_a.py::test_plain_too", "failed", output="not implemented: merge"),
    *[case(f"tests/public/test_b.py::test_rule[{i}]", group="b") for i in range(7)],
    *[case(f"tests/hidden/test_b_hidden.py::test_rule[{i}]", "failed", group="b", visibility="after_published",
           output="E   AssertionError: merge #3 differs\nE   secret detail") for i in range(2)],
])


def test_one_entry_per_test_function_and_visibility(tmp_path):
    groups = score_report(config(tmp_path), REPORT)
    keys = [(e.key, e.visibility) for g in groups for e in g.tests]
    assert keys == [
        ("tests/public/test_a.py::test_three_cases", "visible"), ("tests/public/test_a.py::test_plain", "visible"),
        ("tests/public/test_a.py::test_plain_too", "visible"), ("tests/public/test_b.py::test_rule", "visible"),
        ("tests/hidden/test_b_hidden.py::test_rule", "after_published"),
    ]
    assert [len(e.cases) for g in groups for e in g.tests] == [3, 1, 1, 7, 2]


def test_entry_points_add_up_exactly_to_group_and_total(tmp_path):
    groups = score_report(config(tmp_path), REPORT)
    data = gradescope_json(groups, 1.0, "summary")
    by_group: dict[str, int] = {}
    for t in data["tests"]:
        by_group[t["tags"][0]] = by_group.get(t["tags"][0], 0) + cents(t["max_score"])
    assert by_group == {"a": 333, "b": 667}
    assert sum(cents(t["score"]) for t in data["tests"]) == cents(data["score"])


def test_partial_credit_is_the_share_of_cases_passed_rounded_down(tmp_path):
    groups = score_report(config(tmp_path), REPORT)
    three = groups[0].tests[0]
    assert three.passed_cases == 2 and three.status == "failed"
    assert three.score_cents == three.max_cents * 2 // 3
    assert [e.score_cents for e in groups[0].tests[1:]] == [groups[0].tests[1].max_cents, 0]


def test_case_weights_set_the_points_of_each_entry(tmp_path):
    report = RunReport([case("tests/public/test_a.py::test_x", weight=3.0), case("tests/public/test_a.py::test_y")])
    groups = score_report(config(tmp_path), report)
    assert [e.max_cents for e in groups[0].tests] == [250, 83]  # 333 split 3:1, the spare cent to the larger remainder


def test_failure_feedback_names_counts_first_case_and_other_cases(tmp_path):
    groups = score_report(config(tmp_path), REPORT)
    entry = groups[0].tests[0]
    assert entry.text.splitlines()[:2] == ["2 of 3 cases passed; first failing case: [2]", "case 2 differs"]
    assert "```text\ncase 2 differs\n```" in entry.markdown
    assert entry.name == "Part A — three cases"


def test_hidden_entry_shows_only_the_first_line_of_its_first_difference(tmp_path):
    hidden = score_report(config(tmp_path), REPORT)[1].tests[1]
    assert "merge #3 differs" in hidden.text and "secret detail" not in hidden.text + hidden.markdown
    assert HIDDEN_NOTE in hidden.text
    nothing = score_report(config(tmp_path, "none"), REPORT)[1].tests[1]
    assert "merge #3" not in nothing.text + nothing.markdown and "[1]" not in nothing.text
    assert HIDDEN_NOTES["none"] in nothing.text


@pytest.mark.parametrize("policy", ["first_line", "none"])
def test_the_hidden_note_stays_true_after_the_results_are_published(tmp_path, policy):
    # students read it after publication: it must describe what is shown, not when
    note = HIDDEN_NOTES[policy]
    assert "until" not in note and "published" not in note
    shown = score_report(config(tmp_path, policy), REPORT)[1].tests[1].text
    assert note in shown and ("merge #3 differs" in shown) == (policy == "first_line")


def test_entries_are_numbered_by_the_part_in_their_groups_title():
    # Gradescope shows the numbers: Part 1's entries are 1.x whatever the group order, two
    # groups of one part continue one count, groups without a part come after the last part
    assert part_numbers(["Speed: within a multiple", "Part 1: a", "Part 2: b", "Part 5: c", "Part 5b: d"]) == [6, 1, 2, 5, 5]
    assert part_numbers(["Part A", "Part B"]) == [1, 2]


def test_a_function_split_by_visibility_names_each_part(tmp_path):
    report = RunReport([case("tests/public/test_a.py::test_x[0]"), case("tests/public/test_a.py::test_x[1]", visibility="hidden")])
    entries = score_report(config(tmp_path), report)[0].tests
    assert [e.name for e in entries] == ["Part A — x (visible cases)", "Part A — x (hidden cases)"]
    assert [e.label for e in entries] == ["x (visible cases)", "x (hidden cases)"], "the name without the group's title"


def test_two_functions_of_one_rule_name_are_told_apart_by_their_file(tmp_path):
    report = RunReport([case("tests/public/test_a.py::test_x"), case("tests/public/test_a2.py::test_x")])
    entries = score_report(config(tmp_path), report)[0].tests
    assert [e.label for e in entries] == ["x [test_a.py]", "x [test_a2.py]"]
    assert [e.name for e in entries] == ["Part A — x [test_a.py]", "Part A — x [test_a2.py]"]


def test_partial_grade_keeps_only_the_groups_it_ran_with_their_full_points(tmp_path):
    groups = score_report(config(tmp_path), RunReport(REPORT.tests[:3], partial=True))
    assert [g.name for g in groups] == ["a"] and groups[0].tests[0].max_cents == 333


def test_results_of_a_synthetic_report_conform_to_the_gradescope_schema(tmp_path):
    data = gradescope_json(score_report(config(tmp_path), REPORT), 1.0, "summary")
    assert problems(data) == []
    assert problems(dict(data, tests=[dict(data["tests"][0], status="partial", output_format="markdown")])) != []


def test_top_failures_lists_the_three_entries_that_lost_most_points(tmp_path):
    groups = score_report(config(tmp_path), REPORT)
    text = top_failures(groups)
    items = re.findall(r"^\d+\. (.*?): -([\d.]+) of", text, re.MULTILINE)
    lost = sorted(((e.lost_cents, e.name) for g in groups for e in g.tests if e.lost_cents), reverse=True)
    assert [name for name, _ in items] == [name for _, name in lost[:3]]
    assert "secret detail" in text  # the instructor's terminal gets the full first difference
    assert top_failures(score_report(config(tmp_path), RunReport([case("tests/public/test_a.py::test_ok")]))) == ""



def test_top_failures_count_the_failing_cases_in_words(tmp_path):
    # a field test read "1 of 1 case failed"
    text = top_failures(score_report(config(tmp_path), REPORT))
    for words in ("1 of 3 cases fails", "its only case fails", "both cases fail"):
        assert words in text, text


SPEED_LINE = ("too slow: stopped after 5.26 s, past its limit (its result was not awaited): GPT-2 encode of 1 MB of "
              "generated text: 5.263 s, reference 0.375 s (best of 3, timed while your code's process was paused), 14.0x; "
              "limit 10x + 1 s = 4.75 s; look for: the merge list searched per pre-token instead of a dict of pair ranks")


def test_top_failures_wrap_a_long_first_line_so_its_hint_at_the_end_shows(tmp_path):
    # a field test's speed failure was cut at the terminal's width before "look for: ..."
    report = RunReport([case("tests/public/test_a.py::test_slow", "failed", output=f"E   Failed: {SPEED_LINE}")])
    text = top_failures(score_report(config(tmp_path), report))
    assert all(len(row) <= 160 for row in text.splitlines()), text
    assert "look for: the merge list searched per pre-token instead of a dict of pair ranks" in " ".join(
        row.strip() for row in text.splitlines()), text


def test_top_failures_cut_a_line_too_long_for_a_few_rows_saying_so(tmp_path):
    report = RunReport([case("tests/public/test_a.py::test_long", "failed", output="E   AssertionError: " + "x " * 1000)])
    rows = top_failures(score_report(config(tmp_path), report)).splitlines()[3:]
    assert len(rows) == 3 and rows[-1].endswith("…"), rows


# ---- exact points ---------------------------------------------------------------------------


@settings(max_examples=40)
@given(st.integers(0, 100_000), st.lists(st.fractions(min_value=0, max_value=50, max_denominator=1000), min_size=1, max_size=30))
def test_largest_remainder_parts_add_up_and_stay_within_a_cent_of_the_exact_share(whole, weights):
    parts = largest_remainder(whole, weights)
    total = sum(weights, Fraction(0))
    assert len(parts) == len(weights)
    if total == 0:
        assert parts == [0] * len(weights)
        return
    assert sum(parts) == whole
    for part, w in zip(parts, weights):
        assert 0 <= part - Fraction(whole) * w / total < 1 or 0 <= Fraction(whole) * w / total - part < 1


def test_largest_remainder_gives_spare_cents_to_the_largest_remainders():
    assert largest_remainder(100, [Fraction(1)] * 3) == [34, 33, 33]
    assert largest_remainder(1000, [Fraction(1), Fraction(2), Fraction(4)]) == [143, 286, 571]


@given(st.integers(0, 10_000), st.integers(0, 50), st.integers(1, 50))
def test_partial_credit_never_exceeds_the_proportional_share(cents_, passed, total):
    passed = min(passed, total)
    got = proportional_cents(cents_, Fraction(passed), Fraction(total))
    assert got <= Fraction(cents_ * passed, total) < got + 1
    assert (got == cents_) == (passed == total or cents_ == 0 or Fraction(cents_ * passed, total) == cents_)


# ---- Markdown that cannot be broken out of --------------------------------------------------

HOSTILE = [
    "```\n# pwned\n<script>alert(1)</script>\n```",
    "````\n<img src=x onerror=alert(1)>\n`````",
    "[click](javascript:alert(1)) **bold** _it_ | a | b |\n- item\n1. item\n====",
    "ctrl \x1b[31m red \x07 bell",
]


@pytest.mark.parametrize("text", HOSTILE, ids=["fence", "longer_fence", "markup", "control"])
def test_a_code_block_holds_any_text_literally(text):
    block = md_block(text)
    lines = block.splitlines()
    fence = re.match(r"`+", lines[0]).group()
    assert lines[-1] == fence and len(fence) >= 3
    inside = lines[1:-1]
    assert not any(re.match(rf"\s{{0,3}}`{{{len(fence)}}}", ln) for ln in inside), "a line inside could close the block"
    assert "\x1b" not in block and "\x07" not in block


@pytest.mark.parametrize("text", HOSTILE, ids=["fence", "longer_fence", "markup", "control"])
def test_plain_markdown_text_has_no_live_markup(text):
    out = md_text(text)
    assert "<" not in out and ">" not in out
    assert not re.search(r"(?<!\\)[`*_\[\]|#]", out), out
    assert not re.search(r"^\s*(?:[-+=]|\d+[.)])", out, re.MULTILINE), out


def test_inline_code_is_longer_than_any_backtick_run_inside():
    assert md_code("a``b") == "```a``b```"
    assert md_code("`x`") == "`` `x` ``"


def test_shipped_grading_yaml_gives_two_decimal_entries(tmp_path):
    cfg = load_config(ROOT / "grading.yaml")
    report = RunReport([case(f"tests/public/test_x.py::test_{i}", group=g.name) for g in cfg.groups for i in range(7)])
    data = gradescope_json(score_report(cfg, report), 0.0, "")
    assert sum(cents(t["max_score"]) for t in data["tests"]) == cents(cfg.total)


def test_a_known_bug_is_named_also_when_its_failure_text_was_cut_before_the_line(tmp_path):
    # a tiktoken-agreement failure dumps a 256-entry vocab in its traceback: the text kept
    # (MAX_OUTPUT characters) ends before the line the plugin added after it; the case's
    # known_bug field still names the bug (before the typed report, it was read from that text)
    cut = ("E   AssertionError: ids differ at position 3\n" + "E         132: b'\\xc8',\n" * 200)[:MAX_OUTPUT]
    bug = "encode merges the leftmost pair that has a merge instead of the pair with the lowest merge rank."
    report = RunReport([case("tests/public/test_a.py::test_edge_cases", "failed", output=cut, known_bug=bug)])
    entry = score_report(config(tmp_path), report)[0].tests[0]
    assert known_bug_line(bug) not in cut and known_bug_line(bug) in entry.text.splitlines(), entry.text


def test_a_submissions_hostile_text_stays_inside_the_code_block_of_its_entry(tmp_path):
    hostile = "E   AssertionError: ```\nE   # pwned <script>alert(1)</script>\nE   ````\nE   [x](javascript:alert(1))"
    bug = "<b>x</b> *y*"  # a known bug's description is shown outside the block: escaped
    report = RunReport([case("tests/public/test_a.py::test_h[0]", "failed", output=hostile, known_bug=bug),
                        case("tests/public/test_a.py::test_h[1]", "failed", output=hostile, known_bug=bug)])
    md = score_report(config(tmp_path), report)[0].tests[0].markdown
    fence = re.search(r"^(`{3,})text$", md, re.MULTILINE).group(1)
    before, block_and_after = md.split(fence + "text\n", 1)
    block, after = block_and_after.split("\n" + fence + "\n", 1)
    assert "pwned <script>" in block  # shown literally inside the block
    outside = re.sub(r"(`+).*?\1", "", (before + after).replace("**0 of 2 cases passed**", ""))  # our own markup
    assert "<" not in outside and not re.search(r"(?<!\\)[*_\[\]`]", outside), outside


def test_a_skipped_case_is_told_by_its_reason_not_by_pytests_tuple():
    # pytest keeps a skip as (path, line, "Skipped: reason"); its text is the tuple's repr,
    # which a skipped rejection case showed as its feedback, with the test file's path
    reason = "not graded until loading valid files (from_files) works: it raised ValueError: no id for byte 0"
    path = str(ROOT / "tests" / "public" / "test_tokenizer_rules.py")
    report = pytest.TestReport("t.py::test_x[a]", ("t.py", 40, "test_x[a]"), {}, "skipped", (path, 50, f"Skipped: {reason}"), "call")
    assert report.longreprtext.startswith("(") and path in report.longreprtext
    assert skip_reason(report) == reason
    assert skip_reason(pytest.TestReport("t.py::y", ("t.py", 1, "y"), {}, "skipped", None, "setup")) == "skipped"


def test_a_failed_speed_test_states_its_timing_once(tmp_path):
    timing = "train_bpe(corpus_en.txt, 1000, [EOT]): 4.061 s, reference 0.251 s (best of 3), 16.2x; limit 10x + 1 s = 3.51 s"
    slow = case("tests/public/test_a.py::test_speed", "failed", output=f"E   Failed: too slow: stopped after 4.06 s: {timing}")
    slow.properties["speed"] = timing
    fast = case("tests/public/test_a.py::test_speed_too")
    fast.properties["speed"] = timing.replace("4.061", "2.000")
    slow_entry, fast_entry = score_report(config(tmp_path), RunReport([slow, fast]))[0].tests
    assert slow_entry.text.count("16.2x") == 1 and slow_entry.markdown.count("16.2x") == 1
    assert "2.000 s" in fast_entry.text  # a passing speed test still shows its timing


def test_a_timed_out_visible_case_keeps_where_the_submissions_code_was(tmp_path):
    # the harness's timeout text has no pytest ``E`` lines: its entry kept only the first line,
    # so Gradescope never showed the frames the report and the terminal show
    told = ("Timeout (>60.0s): the test took longer than its limit of 60.0 s while your code was running adapters.run_merge(...)"
            "\nyour code was at (innermost last):\n  adapters.py:59 in run_merge\n  student/primitives.py:11 in merge")
    report = RunReport([case("tests/public/test_a.py::test_t", "failed", output=told),
                        case("tests/hidden/test_b_hidden.py::test_t", "failed", group="b", visibility="after_published", output=told)])
    visible, hidden = (g.tests[0] for g in score_report(config(tmp_path), report))
    assert visible.text.splitlines()[-2:] == ["  adapters.py:59 in run_merge", "  student/primitives.py:11 in merge"], visible.text
    assert "student/primitives.py:11 in merge" in visible.markdown
    assert "your code was at" not in hidden.text  # a hidden test keeps its first line only
