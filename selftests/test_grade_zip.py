"""``grade --submission upload.zip``: a zip of a submission, as batch takes them and as platforms
store uploads, is graded from its safe extraction (the intake's checks, a wrapping folder
unwrapped and said), under the name batch gives it (the same per-submission cases), and
nothing of it is left behind; a zip that cannot be graded is one line naming it."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from harness.impl import ROOT

from .support import build_layout, run_grade

TEST = "tests/public/test_primitives.py::test_merge_replaces_every_pair_left_to_right"
PER_SUBMISSION = "\nseed:\n  policy: per_submission\n  value: 7\n"  # added to the project's policy


def zipped(folder: Path, archive: Path, inside: str = "") -> Path:
    """``folder``'s files in ``archive``, each under ``inside`` (a wrapping folder) when given."""
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, f"{inside}{path.relative_to(folder)}")
    return archive


def seed_of(output: str) -> str:
    found = re.search(r"\bseed (\d+)", output)
    assert found, output[-800:]
    return found.group(1)


def test_a_zip_of_a_wrapped_folder_is_graded_from_it_and_leaves_nothing(tmp_path):
    sub = build_layout("stubs", tmp_path / "made")
    archive = zipped(sub, tmp_path / "Ada Lovelace.zip", inside="bpe-assignment/")
    run = run_grade(tmp_path / "out", submission=archive, tests=[TEST], self_checked=True, private_tmp=True)
    assert run.code == 0 and run.tests and all(t["score"] == t["max_score"] for t in run.tests), run.context()
    assert "Ada Lovelace.zip: extracted into a temporary folder" in run.stdout, run.stdout[-1500:]
    assert "bpe-assignment/, graded from there" in run.results["output"], run.results["output"][-800:]
    assert run.left == [], run.left


def test_a_zip_gets_the_cases_batch_gives_its_student(tmp_path):
    """Per-submission seeds mix in the name: the zip's, as batch names its student."""
    (tmp_path / "policy.yaml").write_text((ROOT / "grading.yaml").read_text() + PER_SUBMISSION)
    sub = build_layout("stubs", tmp_path / "Ada_Lovelace")
    archive = zipped(sub, tmp_path / "Ada Lovelace.zip")
    runs = [run_grade(tmp_path / name, submission=path, config=tmp_path / "policy.yaml", tests=[TEST], self_checked=True)
            for name, path in (("zip", archive), ("folder", sub))]
    other = run_grade(tmp_path / "other", submission=zipped(sub, tmp_path / "Grace.zip"), config=tmp_path / "policy.yaml",
                      tests=[TEST], self_checked=True)
    assert seed_of(runs[0].results["output"]) == seed_of(runs[1].results["output"]), [r.context() for r in runs]
    assert seed_of(other.results["output"]) != seed_of(runs[0].results["output"]), other.context()


def test_a_zip_that_cannot_be_graded_is_one_line_naming_it_with_a_results_file(tmp_path):
    archive = tmp_path / "climbing.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../adapters.py", "x = 1\n")
    run = run_grade(tmp_path / "out", submission=archive, tests=[TEST], self_checked=True, private_tmp=True)
    lines = run.stderr.strip().splitlines()
    assert run.code == 1 and len(lines) == 1 and "climbing.zip: " in lines[0], run.context()
    assert "climbing.zip" in run.results["output"] and run.results["tests"] == [], run.results
    assert str(tmp_path) not in run.stderr and run.left == [], (run.stderr, run.left)
