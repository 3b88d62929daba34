"""``python -m grader compare``: what matters first (summary by group, known-bug diagnoses),
then only the failing tests with their first difference, under 80 lines in the terminal; the
same order in a self-contained HTML page; a class index for a batch output folder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.childenv import child_env
from grader import compare as C
from grader import compare_class as CC
from grader.compare_html import class_page, page
from grader.config import load_config
from grader.feedback import first_divergence
from grader.report import grade_report_from_data
from mutants import by_name
from mutants.build import build as build_mutant

from .prefetch import prefetched

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(600)

TRACEBACK = """tests/public/test_tokenizer.py:20: in test_encode
    ids = tok.encode(text)
E   KeyError: "'<'"
E   your code raised KeyError (innermost call last):
E     File "student/tokenizer.py", line 158, in _encode
E       out.append(self.special_ids[m.group()])
E                  ~~~~~~~~~~~~~~~~^^^^^^^^^^^
E   KeyError: '<'
---------------------------------- known bug -----------------------------------
this matches a known bug: specials <joined> & not escaped.
"""
BUG = "specials <joined> & not escaped."  # the known bug of TRACEBACK's case, a field of its report
GROUPED = """+ Exception Group Traceback (most recent call last):
  | ExceptionGroup: Hypothesis found 2 distinct failures. (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "<harness>/tests/hidden/test_x.py", line 55, in test_x
    | AssertionError: merge #0 differs (the first 0 merges agree)
    |   expected: (b'a', b'b')
    |   got:      (b'o', b't')
    | Failing test case: test_x(
"""


def report(groups: dict[str, list[tuple[str, str, str]]], titles: bool = True) -> dict:
    """A grade report: group -> [(node id, outcome, output)], each case worth 1 point."""
    tests, entries, summary = [], [], {}
    for gi, (group, cases) in enumerate(groups.items(), 1):
        functions = list(dict.fromkeys(n.split("[")[0] for n, _, _ in cases))
        for n, outcome, output in cases:
            number = f"{gi}.{functions.index(n.split('[')[0]) + 1}"
            tests.append({"nodeid": n, "group": group, "entry": number, "outcome": outcome, "duration": 0.2,
                          "score": 1.0 if outcome == "passed" else 0.0, "max_score": 1.0, "output": output,
                          "known_bug": BUG if output == TRACEBACK else None})
        for k, f in enumerate(functions, 1):
            rule = f"rule of {f.split('::')[-1]}"
            entries.append({"number": f"{gi}.{k}", "name": f"Title {group} — {rule}", "rule": rule, "group": group})
        score = sum(o == "passed" for _, o, _ in cases)
        summary[group] = {"score": float(score), "points": float(len(cases)), **({"title": f"Title {group}"} if titles else {})}
    return {"score": sum(g["score"] for g in summary.values()), "groups": summary, "entries": entries, "tests": tests,
            "layout": ["layout: stubs layout (adapters.py, package student/)"]}


def passing(r: dict) -> dict:
    """The same report with every case passed (the reference)."""
    out = json.loads(json.dumps(r))
    for t in out["tests"]:
        t.update(outcome="passed", score=t["max_score"], output="", duration=0.1, known_bug=None, not_implemented=None)
    for g in out["groups"].values():
        g["score"] = g["points"]
    out["score"] = sum(g["points"] for g in out["groups"].values())
    return out


def one_bug() -> dict:
    return report({
        "first": [(f"tests/public/test_a.py::test_ok[{i}]", "passed", "") for i in range(40)],
        "second": [("tests/public/test_b.py::test_encode[x]", "failed", TRACEBACK),
                   ("tests/public/test_b.py::test_encode[y]", "passed", ""),
                   ("tests/hidden/test_b.py::test_train", "failed", GROUPED)],
    })


def many_failures(functions: int, per_group: int = 4) -> dict:
    groups: dict[str, list] = {}
    for f in range(functions):
        groups.setdefault(f"g{f % per_group}", []).append((f"tests/public/test_{f}.py::test_f{f}[0]", "failed", TRACEBACK))
    return report(groups)


def build(sub: dict, ref: dict, name: str, titles: dict[str, str] | None = None) -> C.Comparison:
    """:func:`grader.compare.build` of two reports given as their JSON data."""
    return C.build(grade_report_from_data(sub), grade_report_from_data(ref), name, titles)


def test_first_difference_keeps_the_indentation_of_a_quoted_traceback():
    kept = first_divergence(TRACEBACK, keep_indent=True).splitlines()
    e_lines = [ln[1:] for ln in TRACEBACK.splitlines() if ln.startswith("E ")]
    indent = min(len(ln) - len(ln.lstrip()) for ln in e_lines)
    assert kept == [ln[indent:] for ln in e_lines][: len(kept)]
    caret = next(ln for ln in kept if "^" in ln)
    code = kept[kept.index(caret) - 1]
    marked = code[caret.index("~"): caret.rindex("^") + 1]
    assert marked == "self.special_ids[m.group()]", "the markers still point at the subscript"


def test_first_difference_of_an_exception_group_is_its_first_assertion_message():
    assert first_divergence(GROUPED) == "merge #0 differs (the first 0 merges agree)\nexpected: (b'a', b'b')\ngot:      (b'o', b't')"


def test_terminal_leads_with_summary_and_diagnosis_then_only_the_failing_tests():
    c = build(one_bug(), passing(one_bug()), "bob")
    lines = C.terminal(c).splitlines()
    assert lines[0].startswith("bob: 41 / 43 points (reference 43); fails 2 of 43 cases, in 2 of 3 tests")
    summary = lines.index(next(ln for ln in lines if ln.startswith("group ")))
    diagnosis, failing = lines.index("diagnosis:"), next(i for i, ln in enumerate(lines) if ln.startswith("failing tests"))
    assert summary < diagnosis < failing
    assert [ln.split("  ")[0] for ln in lines[summary + 2: summary + 4]] == ["Title first", "Title second"]
    assert lines[diagnosis + 1].strip() == "this matches a known bug: specials <joined> & not escaped. (1 failing case)"
    text = "\n".join(lines[failing:])
    assert "test_ok" not in text and "rule of test_ok" not in text, "passing tests are not listed"
    assert "rule of test_encode: 1 of 2 cases fails" in text and "[x] KeyError" in text
    assert 'File "student/tokenizer.py", line 158, in _encode' in text, "an exception shows where in the submission"
    assert "merge #0 differs" in text


@pytest.mark.parametrize("message, shown", [
    ("E   AssertionError: merge #2 differs (the first 2 merges agree)\nE     expected: (b'u', b'v')\nE     got:      (b'a', b'v')\nE     the counts tie",
     ["merge #2 differs (the first 2 merges agree)", "expected: (b'u', b'v')", "got:      (b'a', b'v')"]),
    ("E   AssertionError: token 12 differs\nE     text: 'x'\nE     expected[10:13] = [1, 2, 3]\nE     got[10:13]      = [1, 2, 4]",
     ["token 12 differs", "text: 'x'", "expected[10:13] = [1, 2, 3]", "got[10:13]      = [1, 2, 4]"]),
    ("E   AssertionError: no got here\nE     second line\nE     third line", ["no got here", "second line"]),
])
def test_terminal_shows_a_failures_got_line_beside_the_expected_one(message, shown):
    sub = report({"g": [("tests/public/test_a.py::test_a[0]", "failed", message)]})
    lines = C.terminal(build(sub, passing(sub), "bob")).splitlines()
    case = next(i for i, ln in enumerate(lines) if ln.strip().startswith("[0] "))
    assert [ln.strip() for ln in lines[case: case + len(shown)]] == ["[0] " + shown[0], *shown[1:]]
    assert case + len(shown) == len(lines) or not lines[case + len(shown)].startswith("      "), lines[case:]


@pytest.mark.parametrize("functions", [0, 1, 7, 40, 400])
def test_terminal_output_stays_under_80_lines_and_counts_what_it_leaves_out(functions):
    sub = many_failures(functions)
    c = build(sub, passing(sub), "many")
    lines = C.terminal(c).splitlines()
    assert len(lines) < C.TERMINAL_LIMIT - 1  # the html: line may follow
    shown = sum(ln.startswith("  ✗ ") for ln in lines)
    more = re.search(r"\.\.\. (\d+) more failing tests? not shown", lines[-1])
    assert shown + (int(more.group(1)) if more else 0) == functions
    groups_failing = {t.group for t in c.failing_tests}
    assert sum(bool(re.search(r"tests? (fails?|pass(es)?)$", ln)) for ln in lines) == len(groups_failing), "every failing group shows its worst test"


# (cases failing, cases) of one test in one group -> how the headline, the test's line, its
# group's line and the page's group heading count them
COUNTS = {
    (1, 1): ("fails its only case, in its only test", "its only case fails, -1 point", "its only test fails", "its only case fails"),
    (2, 2): ("fails both cases, in its only test", "both cases fail, -2 points", "its only test fails", "both cases fail"),
    (3, 3): ("fails all 3 cases, in its only test", "all 3 cases fail, -3 points", "its only test fails", "all 3 cases fail"),
    (1, 3): ("fails 1 of 3 cases, in its only test", "1 of 3 cases fails, -1 point", "its only test fails", "1 of 3 cases fails"),
    (2, 3): ("fails 2 of 3 cases, in its only test", "2 of 3 cases fail, -2 points", "its only test fails", "2 of 3 cases fail"),
}


@pytest.mark.parametrize("failing, total", COUNTS, ids=[f"{k}_of_{n}" for k, n in COUNTS])
def test_counts_read_naturally_in_the_terminal_and_the_page(failing, total):
    """A field test's one-case compare read "fails 1 of 1 cases, in 1 of 1 tests" and "1 of 1
    tests fails"; the page's group heading "1 of 1 cases fail"."""
    sub = report({"g": [(f"tests/public/test_a.py::test_a[{i}]", "failed" if i < failing else "passed", "E   AssertionError: x")
                        for i in range(total)]})
    c = build(sub, passing(sub), "bob")
    lines, html_text = C.terminal(c).splitlines(), page(c)
    headline, test_line, group_line, heading = COUNTS[failing, total]
    assert lines[0].endswith(headline), lines[0]
    assert "Title g: " + group_line in lines, lines
    assert any(ln.startswith("  ✗ rule of test_a: " + test_line) for ln in lines), lines
    assert f"Title g: {heading}, " in html_text
    for text in (C.terminal(c), C.terminal(c, every_case=True), html_text):
        assert not re.search(r"(?<!/ )\b1 (cases|tests|points|failing cases)\b|\b([2-9]|\d\d+) (case|test) fail", text), text


def test_a_passing_submission_and_a_class_of_one_are_counted_in_words():
    sub = report({"g": [("tests/public/test_a.py::test_a", "passed", "")]})
    c = build(sub, passing(sub), "bob")
    assert C.terminal(c).splitlines()[0].endswith("; passes its only case (1 test)")
    assert "Title g: its only case passes, 1 / 1 points" in page(c)
    assert "<h1>1 submission beside the reference</h1>" in class_page([c], {"bob": "students/bob.html"})
    assert CC.class_terminal([c]).splitlines()[-1] == "  g: Title g (1 point)"


def test_a_submission_that_could_not_be_graded_shows_why_and_no_case():
    c = build({"error": "the zip holds more than 50 MB", "tests": []}, passing(one_bug()), "x9")
    text = C.terminal(c)
    assert "submission: grading failed: the zip holds more than 50 MB" in text.splitlines()[1]
    assert "failing tests" not in text and "test_ok" not in text


def test_all_lists_every_case_passes_included():
    c = build(one_bug(), passing(one_bug()), "bob")
    text = C.terminal(c, every_case=True)
    assert all(t["nodeid"].removeprefix("tests/") in text for t in one_bug()["tests"])
    assert text.index("diagnosis:") < text.index("public/test_a.py::test_ok[0]")


def test_group_titles_come_from_the_policy_when_the_report_lacks_them():
    sub = report({"warmup": [("tests/public/test_warmup.py::test_x", "failed", TRACEBACK)]}, titles=False)
    titles = {g.name: g.title for g in load_config(ROOT / "grading.yaml").groups}
    c = build(sub, passing(sub), "bob", titles)
    assert c.groups[0].title == titles["warmup"]


class Elements(HTMLParser):
    """Start tags with their attributes and position, and the text, of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict, int]] = []
        self.text: list[tuple[str, int]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs), len(self.tags)))

    def handle_data(self, data):
        self.text.append((data, len(self.tags)))


def parsed(html_text: str) -> Elements:
    p = Elements()
    p.feed(html_text)
    return p


def test_html_has_the_terminals_order_and_links_each_failing_row_to_its_difference():
    c = build(one_bug(), passing(one_bug()), "bob")
    p = parsed(page(c))
    ids = {a.get("id"): i for _, a, i in p.tags if a.get("id")}
    assert ids["summary"] < ids["diagnosis"] < ids["cases"]
    kinds: dict[str, str] = {}
    for t, a, _ in p.tags:
        classes = a.get("class", "").split()
        if t == "tr" and ({"bad", "ok"} & set(classes)):
            group = next(k for k in classes if k.startswith("g-"))
            kinds[group] = kinds.get(group, "") + ("F" if "bad" in classes else ".")
    assert all(re.fullmatch(r"F*\.*", k) for k in kinds.values()), f"failures first within each group: {kinds}"
    links = [a["href"] for _, a, _ in p.tags if a.get("href", "").startswith("#d-")]
    assert len(links) == 2 and all(h[1:] in ids for h in links)
    backs = [a["href"] for _, a, _ in p.tags if a.get("href", "").startswith("#r-")]
    assert sorted(backs) == sorted(f"#r-{h[3:]}" for h in links) and all(h[1:] in ids for h in backs)
    summary_links = [a["href"] for _, a, _ in p.tags if a.get("href", "").startswith("#g-")]
    assert len(summary_links) == 2 and all(h[1:] in ids for h in summary_links)


def test_html_tracebacks_are_preformatted_with_their_indentation():
    c = build(one_bug(), passing(one_bug()), "bob")
    text = page(c)
    assert "                 ~~~~~~~~~~~~~~~~^^^^^^^^^^^" in text
    assert re.search(r"pre\{[^}]*white-space:pre[;}]", text), "no wrapping inside a traceback"


def test_html_filters_need_no_script_one_per_group():
    c = build(one_bug(), passing(one_bug()), "bob")
    p = parsed(page(c))
    radios = [a["id"] for t, a, _ in p.tags if t == "input" and a.get("type") == "radio"]
    assert radios == ["show-failed", "show-all", "grp-all", "grp-0", "grp-1"]
    labels = {a["for"] for t, a, _ in p.tags if t == "label"}
    assert labels == set(radios)
    assert not any(t == "script" for t, _, _ in p.tags)


def test_html_is_self_contained_and_escaped():
    sub = report({"g": [("t::<script>alert(1)</script>", "failed", TRACEBACK)]})
    text = page(build(sub, passing(sub), "bob & <eve>"))
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    assert "<script" not in text and "&lt;script&gt;" in text and "bob &amp; &lt;eve&gt;" in text
    assert not re.search(r"""src\s*=|@import|url\(|href="(?!#)""", text), "no external assets"
    assert "specials &lt;joined&gt; &amp; not escaped" in text


def test_class_page_has_a_row_per_student_a_column_per_group_and_links_to_their_pages(tmp_path, monkeypatch, capsys):
    batch = tmp_path / "graded"
    (batch / "reports").mkdir(parents=True)
    students = {"alice": passing(one_bug()), "bob": one_bug(), "José_Ruiz": one_bug()}
    for name, r in students.items():
        (batch / "reports" / f"{name}.json").write_text(json.dumps(r), encoding="utf-8")
    monkeypatch.setattr(C, "reference_report", lambda *a: grade_report_from_data(passing(one_bug())))
    assert C.main(None, None, None, None, 60.0, batch=batch) == 0
    index = batch / "compare" / "index.html"
    p = parsed(index.read_text(encoding="utf-8"))
    rows = [i for t, _, i in p.tags if t == "tr"][1:]
    assert len(rows) == len(students)
    header = [d.strip() for d, i in p.text if i <= rows[0] and d.strip()]
    assert "Title first" in header and "Title second" in header
    links = [a["href"] for t, a, _ in p.tags if t == "a"]
    assert len(links) == len(students)
    for link in links:
        from urllib.parse import unquote

        assert (index.parent / unquote(link)).is_file()
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["student", "total", "first", "second"]
    assert [ln.split()[0] for ln in out[2:5]] == sorted(students)


# ---- a real one-bug submission: a mutant of the catalogue ---------------------------------


@prefetched
def compared(prefetch):
    """``compare`` of the catalogue's specials_not_escaped (bob, in the issue), on the files
    that exercise it, with an HTML page."""
    tmp = prefetch.mktemp("compare")
    sub = build_mutant(by_name("specials_not_escaped"), tmp / "bob")
    page_path = tmp / "bob.html"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "compare", "--submission", str(sub), "--html", str(page_path),
         "--tests", "tests/public/test_special_tokens.py", "tests/public/test_primitives.py"],
        cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=500, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    return proc.stdout, page_path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_one_bug_submission_terminal_starts_with_summary_and_diagnosis_under_80_lines(compared):
    out, _ = compared
    lines = out.splitlines()
    assert len(lines) < C.TERMINAL_LIMIT == 80, out
    assert lines[0].startswith("bob: ") and "layout: stubs" in lines[1]
    titles = {g.name: g.title for g in load_config(ROOT / "grading.yaml").groups}
    header = next(i for i, ln in enumerate(lines) if ln.startswith("group "))
    assert [ln.split("  ")[0] for ln in lines[header + 2: header + 4]] == [titles["primitives"], titles["pretokenize"]]
    diagnosis = lines.index("diagnosis:")
    assert "special tokens are joined into the split pattern without regex.escape" in lines[diagnosis + 1]
    failing = next(i for i, ln in enumerate(lines) if ln.startswith("failing tests"))
    assert header < diagnosis < failing and "differs" in "\n".join(lines[failing:])
    assert "pair_counts" not in out and "pair counts" not in out.split("failing tests")[1], "passing tests are not listed"


@pytest.mark.slow
def test_one_bug_submission_html_opens_on_summary_diagnosis_and_the_first_failure(compared):
    _, text = compared
    p = parsed(text)
    ids = {a.get("id"): i for _, a, i in p.tags if a.get("id")}
    first_failure = next(i for t, a, i in p.tags if t == "tr" and "bad" in a.get("class", "").split())
    assert ids["summary"] < ids["diagnosis"] < first_failure
    # passing rows are hidden until "all cases" is picked: what shows above the first failure
    assert "#show-failed:checked~table tr.ok{display:none}" in text
    assert any(t == "input" and a.get("id") == "show-failed" and "checked" in a for t, a, _ in p.tags)
    visible = [a.get("class", "") for t, a, i in p.tags
               if t == "tr" and ids["cases"] < i < first_failure and "ok" not in a.get("class", "").split()]
    assert all(k == "top" or k.startswith("grouphead") for k in visible), visible  # the header, groups passed whole
    row_end = next(i for t, _, i in p.tags if t == "tr" and i > first_failure)
    before = " ".join(d for d, i in p.text if i <= row_end)  # text recorded with the count of tags before it
    assert "regex.escape" in before and "differs" in before, "the first failure's difference is in its row"


def test_failures_of_written_code_come_before_functions_not_implemented_losing_as_much():
    """A CS336 repository at full marks fails dozens of 0-point tests of adapters CS336 does
    not have (``not implemented: ...``); its real differences in that group (a CRLF file
    read in text mode, say) come first, not after 80 lines of them."""
    missing = "E   not implemented: adapters.get_character_tokenizer is missing from adapters.py"
    cases = [(f"tests/public/test_w{i}.py::test_warmup_{i}[0]", "failed", missing) for i in range(40)]
    cases.append(("tests/public/test_files.py::test_from_files", "error", "[setup] not implemented: adapters.run_save_tokenizer"))
    cases.append(("tests/public/test_train.py::test_crlf_line_endings_are_kept",
                  "failed", "E   AssertionError: expected 3 merges, got 1; the first 1 agree"))
    sub = report({"beyond": cases})
    for t in sub["tests"]:  # as the report says of a case failed by a NotImplementedError
        t["not_implemented"] = t["output"].split("not implemented: ")[1].split()[0] if "not implemented: " in t["output"] else None
    c = build(sub, passing(sub), "cs336")
    assert c.failing_tests[0].rule == "rule of test_crlf_line_endings_are_kept"
    lines = C.terminal(c).splitlines()
    failing = next(i for i, ln in enumerate(lines) if ln.startswith("failing tests"))
    assert lines[failing + 2].startswith("  ✗ rule of test_crlf_line_endings_are_kept"), lines[failing:failing + 4]


def test_the_report_names_the_function_a_case_found_not_written(tmp_path):
    """``grade --report`` carries each case's ``not_implemented`` (what ``compare`` orders by)."""
    from .support import run_grade

    test = "tests/public/test_primitives.py::test_merge_does_not_modify_its_input"
    run = run_grade(tmp_path, tests=[test], report=True, quiet=True, self_checked=True)
    cases = [t for t in run.report_data()["tests"] if t["nodeid"].startswith(test + "[")]
    assert cases and all(t["not_implemented"] == "merge" for t in cases), run.context()


def test_terminal_shows_a_submissions_escape_sequences_literally():
    """A submission's exception message in the first difference retitles or clears nothing."""
    hostile = "E   ValueError: \x1b]0;PWNED\x07\x1b[2J\x1b[32mALL TESTS PASSED\x1b[0m\r\x9b2J"
    sub = report({"first": [("tests/public/test_a.py::test_merge[0]", "failed", hostile)]})
    for every_case in (False, True):
        text = C.terminal(build(sub, passing(sub), "eve"), every_case)
        assert "\x1b" not in text and "\x9b" not in text and "\r" not in text
        assert "ValueError: \\x1b]0;PWNED\\x07\\x1b[2J" in text


# a test timeout's output as harness.timeouts writes it (no pytest ``E`` lines): the call, then
# where the submission's code was
TIMEOUT_OUTPUT = (
    "Timeout (>60.0s): the test took longer than its limit of 60.0 s while your code was running adapters.run_train_bpe(...)\n"
    "your code was at (innermost last):\n  adapters.py:82 in run_train_bpe\n  student/train.py:56 in train_bpe"
)


def test_first_difference_of_a_timeout_keeps_where_the_code_was():
    assert first_divergence(TIMEOUT_OUTPUT) == TIMEOUT_OUTPUT


# ``assert any(...), message`` failing: pytest adds its explanation of the False, which names a
# generator object by its address (another each run) and says nothing the message does not
ASSERT_ANY = """tests/public/test_train_bpe.py:258: in test_every_merge_lies_inside_one_pretoken
    assert any(a + b in p for p in pretokens), (
E   AssertionError: merge #0 (b'e', b' ') makes b'e ', which occurs inside no GPT-2 pre-token
E   assert False
E    +  where False = any(<generator object test_every_merge_lies_inside_one_pretoken.<locals>.<genexpr> at 0x7f79135d3920>)
"""


def test_first_difference_of_a_messaged_assert_false_is_the_message_alone():
    assert first_divergence(ASSERT_ANY) == "merge #0 (b'e', b' ') makes b'e ', which occurs inside no GPT-2 pre-token"


def test_first_difference_after_a_message_drops_pytests_restatement_but_keeps_a_diff():
    restated = "E   AssertionError: encode('x') should be one id, got [1, 2]\nE   assert 2 == 1\nE    +  where 2 = len([1, 2])\n"
    assert first_divergence(restated) == "encode('x') should be one id, got [1, 2]"
    diffed = "E   AssertionError: decode differs\nE   assert 'abc' == 'abd'\nE     \nE     - abd\nE     + abc\n"
    assert first_divergence(diffed) == "decode differs\n- abd\n+ abc"
    plain = "E   assert [1, 2] == [1]\nE     Left contains one more item: 2\n"
    assert first_divergence(plain) == "assert [1, 2] == [1]\nLeft contains one more item: 2"


def test_class_table_counts_one_failing_case_in_the_singular():
    one = report({"first": [("tests/public/test_a.py::test_ok[0]", "failed", TRACEBACK), ("tests/public/test_a.py::test_ok[1]", "passed", "")]})
    rows = CC.class_terminal([build(one, passing(one), "alice"), build(one_bug(), passing(one_bug()), "bob")]).splitlines()
    assert " 1 case " in rows[2] and " 1 cases " not in rows[2], rows[2]
    assert " 2 cases " in rows[3]


def test_compare_stopped_by_sigterm_stops_its_grading_and_leaves_nothing(tmp_path):
    """A CI job's timeout sends SIGTERM: compare died at once, its ``bpe-compare-`` folder
    stayed, and the grading it had started ran on without it."""
    import signal
    import time

    from .support import ROOT, make_submission

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    sub = make_submission(tmp_path / "sub")
    proc = subprocess.Popen([sys.executable, "-m", "grader", "compare", "--submission", str(sub), "--tests", "tests/public/test_primitives.py"],
                            cwd=ROOT, env=child_env(TMPDIR=str(tmp)), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not any(p.name.startswith("bpe-grade-") for p in tmp.iterdir()):  # the grading's test run has started
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0][-2000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, out[-2000:]
    time.sleep(1)  # a grading left running would still be making files here
    assert sorted(p.name for p in tmp.iterdir()) == [], out[-2000:]


# ---- what compare reads: a folder, a folder inside one folder, a .zip --------------------


def _cs336_repository(dest: Path) -> Path:
    (dest / "tests").mkdir(parents=True)
    (dest / "cs336_basics").mkdir()
    (dest / "cs336_basics" / "__init__.py").write_text("")
    (dest / "tests" / "adapters.py").write_text("def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):\n    raise NotImplementedError\n")
    return dest


@pytest.mark.parametrize("shape", ["folder", "inside one folder", "zip of a folder inside one folder"])
def test_compare_grades_a_zip_or_a_wrapped_folder_as_grade_would_with_its_layouts_policy(tmp_path, monkeypatch, capsys, shape):
    import shutil

    from grader.policies import policy_path

    repo = _cs336_repository(tmp_path / "upload" / "assignment1-basics" if shape != "folder" else tmp_path / "upload")
    given = tmp_path / "upload"
    if shape.startswith("zip"):
        given = Path(shutil.make_archive(str(tmp_path / "alice"), "zip", tmp_path / "upload"))
    seen = {}

    def fake_compare(submission, config, tests, max_time):
        seen.update(folder=Path(submission), cs336=(Path(submission) / "tests" / "adapters.py").is_file(),
                    policy=policy_path(config, Path(submission)).name)
        return grade_report_from_data(passing(one_bug())), grade_report_from_data(passing(one_bug()))

    monkeypatch.setattr(C, "compare", fake_compare)
    assert C.main(given, None, None, None, 60.0) == 0
    assert seen["cs336"] and seen["policy"] == "grading-cs336.yaml", seen
    assert not shape.startswith("zip") or not seen["folder"].exists()  # the extraction is gone
    assert given.stem in capsys.readouterr().out


def test_compare_of_a_zip_that_cannot_be_read_says_why_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bob.zip"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    assert C.main(bad, None, None, None, 60.0) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("compare: bob.zip: "), err


def test_first_difference_drops_pytests_advice_on_verbosity():
    output = ("E   AssertionError: decode of the new ids should give the new special tokens\n"
              "E   assert ['', ''] == ['(x|y)', '<pad>']\nE     \nE     At index 0 diff: '' != '(x|y)'\n"
              "E     Use -v to get more diff\n")
    assert first_divergence(output) == "decode of the new ids should give the new special tokens\nAt index 0 diff: '' != '(x|y)'"


def test_first_difference_leaves_the_harness_fixtures_out_of_a_failing_example():
    output = ("E   AssertionError: get_pair_counts([0]) differs\nE   Failing test case: test_pair_counts(\n"
              "E       impl=impl,\nE       ids=[0],\nE   )\n")
    assert first_divergence(output, keep_indent=True) == "get_pair_counts([0]) differs\nFailing test case: test_pair_counts(\n    ids=[0],\n)"


def test_a_training_examples_corpus_is_shown_not_where_it_is_written(tmp_path):
    # a failing training example showed pytest's tmp_path_factory (TempPathFactory(_given_basetemp=...,
    # _trace=<pluggy...>, ...)) in the lines its text and special tokens should have had
    import subprocess
    import sys

    from harness.childenv import child_env
    from mutants.build import build
    from mutants.catalogue import by_name

    from .support import ROOT

    build(by_name("specials_deleted_not_boundaries"), tmp_path / "sub")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--submission", str(tmp_path / "sub"),
         "tests/hidden/test_train_bpe_differential_hidden.py::test_training_matches_reference_with_random_special_tokens"],
        cwd=ROOT, env=child_env(drop=("BPE_SEED",), BPE_DIAGNOSIS="0"), capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL,
    )
    example = proc.stdout[proc.stdout.index("Failing test case:"):]
    assert "TempPathFactory" not in proc.stdout and "corpus_files=<corpus files>," in example, example
    assert "text=" in example and "specials=" in example, example
    output = ("E   AssertionError: extra merge #0\nE   Failing test case: test_training(\nE       impl=impl,\n"
              "E       corpus_files=<corpus files>,\nE       text='ab',\nE   )\n")
    assert first_divergence(output, keep_indent=True) == "extra merge #0\nFailing test case: test_training(\n    text='ab',\n)"
