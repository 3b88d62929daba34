"""Every worked example in the ``student/`` docstrings holds for the reference solution, and so
does every example in the reference's own docstrings."""

from __future__ import annotations

import doctest
import tempfile

import pytest

import reference
import student

from .docexamples import docstring_examples, run_example

EXAMPLES = docstring_examples(student)
REFERENCE_EXAMPLES = [t for t in docstring_examples(reference) if t.examples]
MODULES_WITH_EXAMPLES = {"gpt2_files", "pretokenize", "primitives", "tokenizer", "train"}


def test_every_student_module_with_functions_has_examples():
    found = {t.name.split(".")[1] for t in EXAMPLES if t.name.count(".") >= 1}
    assert MODULES_WITH_EXAMPLES <= found, f"no docstring examples found in {sorted(MODULES_WITH_EXAMPLES - found)}"


@pytest.mark.parametrize("test", EXAMPLES + REFERENCE_EXAMPLES, ids=[t.name for t in EXAMPLES + REFERENCE_EXAMPLES])
def test_docstring_example_holds_for_the_reference(test: doctest.DocTest, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # examples' mkdtemp() stays in tmp_path
    failed, report = run_example(test)
    assert failed == 0, f"{test.name} ({test.filename}:{test.lineno}) fails with the reference:\n{report}"


# examples that make files: students run them (`pytest --doctest-modules student/`, the
# handout's README), so each must remove what it made, not leave a folder in /tmp per run
# (found afresh: running an example clears its globals)
MAKING_FILES = [t for t in docstring_examples(student) + docstring_examples(reference)
                if any("tempfile" in e.source for e in t.examples)]


def test_the_examples_that_make_files_are_found():
    assert len(MAKING_FILES) >= 4, [t.name for t in MAKING_FILES]


@pytest.mark.parametrize("test", MAKING_FILES, ids=[t.name for t in MAKING_FILES])
def test_docstring_example_removes_the_files_it_makes(test: doctest.DocTest, tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    failed, report = run_example(test)
    assert failed == 0, report
    left = sorted(p.name for p in temp.iterdir())
    assert not left, f"{test.name} ({test.filename}:{test.lineno}) leaves {left} in the temporary folder"


def test_an_example_using_a_name_its_module_never_imports_fails(tmp_path):
    # the bug this suite exists for: an example calls a function its module does not import
    parsed = doctest.DocTestParser().get_doctest('>>> pretokenize("a")\n', {}, "probe", None, 0)
    failed, report = run_example(parsed)
    assert failed == 1 and "NameError" in report
