"""What ``grade`` prints after its table: the earliest part with unwritten functions (the
order of student/__init__.py's "Part N" list), then the failures that lost the most points
among the entries whose functions exist."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.config import load_config
from grader.exports import student_parts
from grader.guide import look_here, modules_of
from grader.report import Case, RunReport
from grader.scoring import score_report

ROOT = Path(__file__).resolve().parent.parent
CONFIG = load_config(ROOT / "grading.yaml")
PARTS = student_parts()
MODULES = modules_of()
FILES = {"warmup": "test_warmup", "primitives": "test_primitives", "pretokenize": "test_pretokenize",
         "train": "test_train_bpe", "tokenizer": "test_tokenizer"}


def case(module: str, name: str, outcome: str, output: str | Unwritten = "", weight: float = 1.0) -> Case:
    group = CONFIG.group_of(f"tests/public/{FILES[module]}.py::{name}", set())
    return failed_or_passed(f"tests/public/{FILES[module]}.py::{name}", group.name, outcome, output, weight)


@dataclass
class Unwritten:
    """A case failed by the NotImplementedError of ``function`` (the stubs' failure)."""

    function: str


def unwritten(function: str) -> Unwritten:
    return Unwritten(function)


def failed_or_passed(nodeid: str, group: str, outcome: str, output: str | Unwritten, weight: float = 1.0) -> Case:
    if isinstance(output, Unwritten):
        return Case(nodeid, group, weight, "visible", outcome, f"E   NotImplementedError\nnot implemented: {output.function}", 0.1,
                    not_implemented=output.function)
    return Case(nodeid, group, weight, "visible", outcome, output, 0.1)


def function_of(module: str) -> str:
    return next(name for name, m in MODULES.items() if m == module)


@pytest.mark.parametrize("done", [(), ("warmup",), ("warmup", "primitives"), ("warmup", "primitives", "pretokenize")])
def test_the_pointer_names_the_earliest_part_with_unwritten_functions(done):
    modules = [m for m in FILES if m in PARTS]
    tests = [case(m, f"test_{m}", "passed" if m in done else "failed", "" if m in done else unwritten(function_of(m)))
             for m in modules]
    text = look_here(score_report(CONFIG, RunReport(tests)))
    first = min(PARTS[m] for m in modules if m not in done)
    title = next(g.title for g in CONFIG.groups if re.match(rf"Part {first}\b", g.title))
    lead = "next to write" if done else "where to start: nothing is implemented yet; begin with"
    assert text.splitlines()[0].startswith(f"{lead} {title} (student/"), text
    assert "look at these first" not in text


def test_a_failure_that_only_prints_not_implemented_is_no_unwritten_function():
    printed = "E   AssertionError: ids differ at position 3\n----- Captured stdout -----\nnot implemented: Tokenizer.encode"
    text = look_here(score_report(CONFIG, RunReport([case("warmup", "test_a", "passed"), case("tokenizer", "test_d", "failed", printed)])))
    assert "next to write" not in text and "look at these first" in text, text


def test_failures_worth_a_look_leave_out_unwritten_functions_most_points_lost_first():
    tests = [case("warmup", "test_a", "failed", "E   AssertionError: ids differ at position 3", weight=1),
             case("warmup", "test_b", "failed", "E   AssertionError: ids differ at position 1", weight=3),
             case("warmup", "test_c", "passed"),
             case("tokenizer", "test_d", "failed", unwritten("Tokenizer.encode"), weight=50),
             case("train", "test_e", "skipped", "Skipped: not graded until a valid training works", weight=40)]
    text = look_here(score_report(CONFIG, RunReport(tests)))
    pointer, worst = text.split("\n\n")
    assert pointer.startswith("next to write ") and "Tokenizer.encode" in pointer
    lost = [float(x) for x in re.findall(r"^\d+\. .*: -([\d.]+) of [\d.]+ points", worst, re.M)]
    assert "test_d" not in worst and "test_e" not in worst and "position 1" in worst.splitlines()[3]
    assert len(lost) == 2 and lost == sorted(lost, reverse=True)



def test_a_submission_that_cannot_be_imported_is_told_so_once_file_and_line_first():
    # every entry's first failure said it, cut at "(student/toke…" in the three failures shown
    error = ("adapters.py could not be imported: ImportError in student/tokenizer.py, line 21: cannot import name "
             "'compile_specials' from 'student.pretokenize'")
    tests = [failed_or_passed(c.nodeid, c.group, "failed", f"E   {error}") for c in
             (case("warmup", "test_a", "failed"), case("primitives", "test_b", "failed"), case("tokenizer", "test_c", "failed"))]
    for t in tests:
        t.load_error = error
    text = look_here(score_report(CONFIG, RunReport([*tests, case("train", "test_d", "failed", "E   AssertionError: merge #3")])))
    pointer, worst = text.split("\n\n")
    assert pointer == f"start here: {error}; the tests that need it fail until it imports (3 entries)", pointer
    assert error not in worst and "merge #3" in worst, worst

CS336 = load_config(ROOT / "grading-cs336.yaml")


def cs336_case(nodeid: str, outcome: str, output: str | Unwritten = "") -> Case:
    return failed_or_passed(nodeid, CS336.group_of(nodeid, set()).name, outcome, output)


# a test of CS336's contract, and one of this assignment's own adapters CS336 does not have
CS336_TRAIN = "tests/public/test_train_bpe.py::test_every_merge_lies_inside_one_pretoken"
CS336_TOKENIZER = "tests/public/test_tokenizer.py::test_encode_of_empty_text_is_empty_list"
OWN_ADAPTER = "tests/public/test_warmup.py::test_character_round_trip[ascii]"


def test_a_function_only_a_no_points_group_needs_is_nothing_to_write_next():
    tests = [cs336_case(CS336_TRAIN, "passed"), cs336_case(OWN_ADAPTER, "failed", unwritten("adapters.get_character_tokenizer"))]
    report = score_report(CS336, RunReport(tests))
    assert [e.max_cents for g in report for e in g.tests if e.cases[0].nodeid == OWN_ADAPTER] == [0]
    text = look_here(report)
    assert "get_character_tokenizer" not in text and "Part" not in text, text


def test_an_unwritten_function_outside_student_is_named_without_a_part():
    tests = [cs336_case(CS336_TRAIN, "passed"), cs336_case(CS336_TOKENIZER, "failed", unwritten("adapters.get_tokenizer"))]
    pointer = look_here(score_report(CS336, RunReport(tests))).splitlines()[0]
    assert pointer == "next to write: adapters.get_tokenizer (not implemented yet)", pointer
