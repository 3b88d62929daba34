"""An exception the submission raised says, in its feedback, where: the innermost of its frames
in the submission's own files, with the line of code and Python's markers under it, the same
graded in-process (the exception's own traceback: :mod:`harness.raised`) and isolated (the
worker's: :mod:`sandbox.student_errors`); the failure's first line stays the exception's."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.feedback import MAX_FRAME_LINES, first_divergence
from sandbox.student_errors import traceback_frames
from selftests.support import adapters_only, run_grade

ADAPTERS = """\
from countpkg.helpers import count, parse, ratio, words


def run_get_pair_counts(ids):
    return count(ids)


def run_merge(ids, pair, new_id):
    return parse(ids)


def run_compression_ratio(text, ids):
    return ratio(text, ids)


def run_pretokenize(text):
    return words(text)
"""
HELPERS = """\
import textwrap


def count(ids):
    return tally(ids)


def tally(ids):
    return inner(ids, {})


def inner(ids, counts):
    for i in range(len(ids)):
        counts[ids[i], ids[i + 1]] = counts.get((ids[i], ids[i + 1]), 0) + 1
    return counts


def parse(ids):
    return textwrap.dedent(ids)


class RatioError(ValueError):
    pass


def ratio(text, ids):
    raise RatioError(f"no ratio for {len(ids)} ids")


def words(text):
    return [bytes([0xFF]).decode("utf-8")]
"""
TESTS = {
    "count": "tests/public/test_primitives.py::test_pair_counts_count_every_adjacent_pair",
    "merge": "tests/public/test_primitives.py::test_merge_replaces_left_to_right_without_overlap",
    "ratio": "tests/public/test_warmup.py::test_compression_ratio_is_utf8_bytes_per_id",  # its own exception class
    "words": "tests/public/test_pretokenize.py::test_pretokenize_matches_gpt2_pattern",  # UnicodeDecodeError
}
# the innermost frame in the submission's files, and its line of code: read from the sources above
INNERMOST = {
    "count": ("countpkg/helpers.py", "inner", "counts[ids[i], ids[i + 1]] = "),
    "merge": ("countpkg/helpers.py", "parse", "return textwrap.dedent(ids)"),  # not the textwrap module's frame
    "ratio": ("countpkg/helpers.py", "ratio", 'raise RatioError(f"no ratio for {len(ids)} ids")'),
    "words": ("countpkg/helpers.py", "words", 'return [bytes([0xFF]).decode("utf-8")]'),
}


def line_of(piece: str) -> int:
    return next(n for n, line in enumerate(HELPERS.splitlines(), 1) if piece in line)


@pytest.fixture(scope="module")
def feedback(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Each selected test's results entry output, graded in-process and isolated."""
    root = tmp_path_factory.mktemp("where-raised")
    sub = adapters_only(root / "sub", ADAPTERS)
    (sub / "countpkg").mkdir()
    (sub / "countpkg" / "__init__.py").write_text("")
    (sub / "countpkg" / "helpers.py").write_text(HELPERS)
    outputs = {}
    for mode, isolate in (("in-process", False), ("isolated", True)):
        run = run_grade(root / mode, submission=sub, tests=list(TESTS.values()), isolate=isolate,
                        quiet=True, self_checked=True, diagnosis=False)
        assert run.code == 0, run.stderr
        by_test = {t["extra_data"]["test"]: t["output"] for t in run.tests}
        outputs[mode] = {name: by_test[test] for name, test in TESTS.items()}
    return outputs


@pytest.mark.parametrize("mode", ["in-process", "isolated"])
@pytest.mark.parametrize("name", sorted(TESTS))
def test_an_exception_names_the_innermost_line_of_the_submission_that_raised_it(feedback, mode, name):
    path, function, code = INNERMOST[name]
    lines = feedback[mode][name].splitlines()
    frame = f'  File "{path}", line {line_of(code)}, in {function}'
    assert frame in lines, f"no {frame!r} in:\n{feedback[mode][name]}"
    after = lines[lines.index(frame) + 1:]
    assert after[0].strip() == code.strip() or after[0].strip().startswith(code.strip())
    assert not any(ln.lstrip().startswith(('File "/', "...")) for ln in after), "nothing after the innermost frame"


@pytest.mark.parametrize("mode", ["in-process", "isolated"])
def test_the_markers_stay_under_the_code_they_mark(feedback, mode):
    lines = feedback[mode]["count"].splitlines()
    code = next(i for i, ln in enumerate(lines) if "counts[ids[i], ids[i + 1]]" in ln)
    markers = lines[code + 1]
    assert set(markers.strip()) <= {"~", "^"}
    marked = lines[code][markers.index(markers.strip()[0]): len(markers.rstrip())]
    assert marked == "ids[i + 1]"


@pytest.mark.parametrize("name", sorted(TESTS))
def test_the_feedback_is_the_same_in_process_and_isolated(feedback, name):
    assert feedback["in-process"][name] == feedback["isolated"][name]


@pytest.mark.parametrize("mode", ["in-process", "isolated"])
def test_an_exception_of_the_submissions_own_class_is_told_by_that_class(feedback, mode):
    # isolated, the first line named the nearest built-in class: "ValueError: no ratio for 2 ids"
    first = feedback[mode]["ratio"].split("```text\n", 1)[-1].splitlines()[0]
    assert first == "countpkg.helpers.RatioError: no ratio for 2 ids", feedback[mode]["ratio"]


@pytest.mark.parametrize("mode", ["in-process", "isolated"])
def test_a_built_in_exception_made_of_more_than_a_message_keeps_its_name(feedback, mode):
    # isolated, a UnicodeDecodeError (five arguments, rebuilt from its base) read "UnicodeError: ..."
    first = feedback[mode]["words"].split("```text\n", 1)[-1].splitlines()[0]
    assert first.startswith("UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"), feedback[mode]["words"]


WORKER_TRACEBACK = """\
E   IndexError: list index out of range
E   your code raised IndexError (innermost call last):
E     File "adapters.py", line 5, in run_get_pair_counts
E       return count(ids)
E              ^^^^^^^^^^
E     File "countpkg/helpers.py", line 5, in count
E       return tally(ids)
E              ^^^^^^^^^^
E     File "countpkg/helpers.py", line 9, in tally
E       return inner(ids, {})
E              ^^^^^^^^^^^^^^
E     File "countpkg/helpers.py", line 14, in inner
E       counts[ids[i], ids[i + 1]] = counts.get((ids[i], ids[i + 1]), 0) + 1
E                      ~~~^^^^^^^
E   your code printed:
E   hello
"""


CALLED = WORKER_TRACEBACK.replace("E   your code raised", "E   the call: adapters.run_get_pair_counts([7, 8])\nE   your code raised")


def test_the_call_comes_after_the_exception_and_leaves_the_frames_as_they_were():
    shown = first_divergence(CALLED).splitlines()
    assert shown[1] == "the call: adapters.run_get_pair_counts([7, 8])"
    assert shown[:1] + shown[2:] == first_divergence(WORKER_TRACEBACK).splitlines()


def test_outer_frames_that_do_not_fit_are_left_out_saying_so():
    shown = first_divergence(WORKER_TRACEBACK).splitlines()
    assert shown[:3] == ["IndexError: list index out of range", "your code raised IndexError (innermost call last):", "  ..."]
    assert shown[3:3 + MAX_FRAME_LINES] == [ln[4:] for ln in WORKER_TRACEBACK.splitlines()[-8:-2]]
    assert shown[-2:] == ["your code printed:", "hello"]


@pytest.mark.parametrize("max_lines", [3, 4])
def test_in_a_few_lines_the_innermost_frame_comes_first(max_lines):
    shown = first_divergence(WORKER_TRACEBACK, max_lines=max_lines).splitlines()
    assert shown[2] == '  File "countpkg/helpers.py", line 14, in inner'


def test_the_exception_line_the_worker_adds_after_the_frames_is_not_repeated():
    text = 'e", line 1, in f\n  File "a.py", line 1, in f\n    g()\n  File "b.py", line 2, in g\n    x[1]\nIndexError: list\n  index out of range'
    assert traceback_frames(text) == '  File "a.py", line 1, in f\n    g()\n  File "b.py", line 2, in g\n    x[1]'
    assert traceback_frames("IndexError: list index out of range") == ""


def test_in_three_lines_the_call_and_the_innermost_frame_come_after_the_exception():
    assert first_divergence(CALLED, max_lines=3).splitlines()[:3] == [  # what grade's "look at these first" shows
        "IndexError: list index out of range", "the call: adapters.run_get_pair_counts([7, 8])",
        '  File "countpkg/helpers.py", line 14, in inner']
