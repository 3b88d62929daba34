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


def test_an_example_using_a_name_its_module_never_imports_fails(tmp_path):
    # the bug this suite exists for: an example calls a function its module does not import
    parsed = doctest.DocTestParser().get_doctest('>>> pretokenize("a")\n', {}, "probe", None, 0)
    failed, report = run_example(parsed)
    assert failed == 1 and "NameError" in report
