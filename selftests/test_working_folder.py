"""The test run works in a temporary folder of the grading's (removed with it), never in the
grader's checkout: a submission graded in-process (``--no-isolate``, and where the sandbox is
unavailable) that writes a file by a relative name leaves nothing behind, as an isolated one
(in its worker's own folder) does. Hypothesis keeps its tables in the checkout's
``.hypothesis`` all the same (``grader/hypothesis_tables.py``)."""

from __future__ import annotations

import pytest

from .support import ROOT, build_layout, run_grade

WRITTEN = "written-by-the-submission.txt"
WRITES_RELATIVELY = f'''

def run_merge(ids, pair, new_id):
    with open({WRITTEN!r}, "a", encoding="utf-8") as f:  # a cache by a relative name, as students write them
        f.write("x")
    return _impl.merge(ids, pair, new_id)
'''
TEST = "tests/public/test_primitives.py::test_merge_replaces_every_pair_left_to_right"


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_a_file_written_by_a_relative_name_is_gone_with_the_grading(tmp_path, isolate):
    sub = build_layout("stubs", tmp_path / "sub")
    with open(sub / "adapters.py", "a", encoding="utf-8") as f:
        f.write(WRITES_RELATIVELY)
    run = run_grade(tmp_path / "out", submission=sub, tests=[TEST], isolate=isolate, private_tmp=True, quiet=True)
    assert run.code == 0 and run.tests and all(t["score"] == t["max_score"] for t in run.tests), run.context()
    assert not (ROOT / WRITTEN).exists(), "the submission's file landed in the grader's checkout"
    assert not (sub / WRITTEN).exists() and not (tmp_path / WRITTEN).exists()
    assert run.left == [], run.left
