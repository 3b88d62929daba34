"""A submission is graded wherever it lies relative to the grader's temporary folder (TMPDIR),
as root and as an ordinary user: inside it (CI runners and Gradescope-like platforms unpack
uploads there), or holding it (a CI job whose TMPDIR is a folder of its checkout), and with
TMPDIR in /dev/shm (the worker's own /dev/shm is an empty tmpfs: its sandbox must show there).

Grading makes its workers' sandboxes in TMPDIR. The worker must see its own copy of the
submission (writable: what it writes there never reaches the submission), and nothing else of TMPDIR: not another submission beside its own, not
the grading's own files (its policy, its report), not other workers' sandboxes. A spy
submission (the reference solution, its ``run_merge`` raising with what it can reach beyond
its own copy) must get full marks. A submission folder that *is* TMPDIR cannot be graded (it
would hold the sandboxes made to grade it): ``grade`` says so in one line, with a results file.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from sandbox.hiding import hide_paths

from . import test_attacks as A
from . import test_nonroot as N
from .support import GradeRun, build_layout, run_grade

SPY = '''

_TMPDIR, _DECOY, _FILES, _WRITTEN = {tmpdir!r}, {decoy!r}, {files!r}, {written!r}
_honest_merge = run_merge


def _seen():
    """What this worker reaches that is not its own copy of the submission: files under the
    grader's TMPDIR outside its own sandbox, the other submission, files in its copy that the
    submission does not hold (it writes one, WRITTEN, which must land in its own copy only)."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    sandbox = os.path.dirname(here)
    seen = []
    for folder, dirs, files in os.walk(_TMPDIR):
        if folder == sandbox or folder.startswith(sandbox + os.sep):
            dirs[:] = []
            continue
        seen += [os.path.join(folder, name) for name in files]
    for folder, dirs, files in os.walk(here):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = [os.path.relpath(os.path.join(folder, name), here) for name in files]
        seen += [r for r in rel if r not in _FILES]
    try:
        open(_DECOY).close()
        seen.append(_DECOY)
    except OSError:
        pass
    with open(os.path.join(here, _WRITTEN), "w") as f:  # its own copy: as where its author runs it
        f.write("written by the worker")
    return seen


def run_merge(ids, pair, new_id):
    seen = _seen()
    if seen:
        raise RuntimeError("the worker reaches " + ", ".join(sorted(seen)[:5]))
    return _honest_merge(ids, pair, new_id)
'''

MODES = ["root", "ordinary user"]
WRITTEN = "written-by-the-worker.txt"  # the spy's file in its own copy of the submission
INSIDE, HOLDING, SHM = "submission inside TMPDIR", "TMPDIR inside the submission", "submission inside a TMPDIR in /dev/shm"
PLACES = {INSIDE: None, HOLDING: None, SHM: "/dev/shm"}  # where the stage is made (None: the default TMPDIR)


def spy_submission(base: Path, place: str) -> tuple[Path, Path]:
    """``(submission, tmpdir)`` under ``base`` placed as ``place`` says, another submission (a
    copy of the reference) beside the spy in TMPDIR."""
    if place != HOLDING:
        tmpdir = base / "tmp"
        sub = tmpdir / "spy"
    else:
        sub = base / "spy"
        tmpdir = sub / "tmp"
    build_layout("stubs", sub)
    files = sorted(str(p.relative_to(sub)) for p in sub.rglob("*") if p.is_file())  # before TMPDIR fills
    decoy = build_layout("stubs", tmpdir / "other") / "student" / "bpe.py"
    with open(sub / "adapters.py", "a") as f:
        f.write(SPY.format(tmpdir=str(tmpdir), decoy=str(decoy), files=[*files, WRITTEN], written=WRITTEN))
    return sub, tmpdir


def grade_spy(base: Path, mode: str, place: str) -> GradeRun:
    """The spy graded by ``mode`` (root, or an unprivileged user id; run as oneself when not
    root) with its TMPDIR placed as ``place`` says."""
    if mode == "root" and os.geteuid() != 0:
        pytest.skip("needs root")
    if mode == "ordinary user" and os.geteuid() == 0 and N._can_run() is not None:
        pytest.skip(str(N._can_run()))
    base.mkdir(mode=0o755)
    (base / "grading.yaml").write_text(A.CONFIG)
    sub, tmpdir = spy_submission(base, place)
    out = base / "out"
    out.mkdir()
    if mode == "ordinary user" and os.geteuid() == 0:
        (base / "home").mkdir()
        for path in [base, *base.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        for path in (base / "home", out, tmpdir):
            os.chown(path, N.USER_ID, N.USER_ID)
        return run_grade(out, submission=sub, config=base / "grading.yaml", tests=A.TESTS, quiet=True, self_checked=True,
                         timeout=A.GRADE_LIMIT + 60,
                         run_as=lambda cmd: N.as_user(cmd, base, BPE_GRADER_SPIN="0", TMPDIR=str(tmpdir)))
    return run_grade(out, submission=sub, config=base / "grading.yaml", tests=A.TESTS, quiet=True, self_checked=True,
                     timeout=A.GRADE_LIMIT + 60, env={**os.environ, "TMPDIR": str(tmpdir)})


@pytest.fixture
def stage():
    """``stage(where)``: a new folder to grade in, made in ``where`` (None: the default
    TMPDIR); all removed afterwards."""
    made: list[Path] = []

    def make(where: str | None) -> Path:
        if where is not None and not (os.path.isdir(where) and os.access(where, os.W_OK)):
            pytest.skip(f"{where} is not a folder this test can write in")
        folder = Path(tempfile.mkdtemp(prefix="bpe-in-tmpdir-", dir=where))
        os.chmod(folder, 0o755)  # the ordinary user reaches its stage
        made.append(folder)
        return folder / "stage"

    yield make
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the isolation selftests need Linux")
@pytest.mark.timeout(600)
@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("mode", MODES)
def test_the_worker_sees_its_submission_and_nothing_else_of_tmpdir(stage, mode, place):
    """Full marks: the worker imports the submission (every group scores), and its merge
    reaches nothing of TMPDIR but its own sandbox, no other submission, no grading file; what
    it writes in its own copy never reaches the submission. In /dev/shm too, where the worker
    has a /dev/shm of its own."""
    base = stage(PLACES[place])
    run = grade_spy(base, mode, place)
    assert not list(base.rglob(WRITTEN)), "the worker's writes in its own copy outlived it"
    assert run.code == 0 and run.tests, run.context()
    assert "weak" not in run.results["output"], run.results["output"][-600:]
    for group, (got, most) in run.group_points().items():
        failing = [t["output"][:400] for t in run.tests if t["tags"][0] == group and t["score"] < t["max_score"]]
        assert got == pytest.approx(most), f"{group}: {got}/{most}\n{failing[:2]}\n{run.results['output'][-600:]}"


def test_a_submission_that_is_tmpdir_is_refused_in_one_line_with_a_results_file(tmp_path):
    sub = build_layout("stubs", tmp_path / "sub")
    run = run_grade(tmp_path / "out", submission=sub, tests=A.TESTS[:1], quiet=True, self_checked=True,
                    env={**os.environ, "TMPDIR": str(sub)})
    lines = run.stderr.strip().splitlines()
    assert run.code == 1 and len(lines) == 1, run.context()
    assert str(sub) in lines[0] and "TMPDIR" in lines[0] and "set TMPDIR to another folder" in lines[0], lines
    assert "TMPDIR" in run.results["output"] and run.results["tests"] == []


def test_the_workers_own_sandbox_in_tmpdir_is_never_hidden_but_its_neighbours_are(tmp_path):
    """The hidden folders of a submission inside TMPDIR: the submission's original and
    every other folder of TMPDIR, never the worker's sandbox nor anything in it."""
    sandbox = tmp_path / "bpe-worker-x"
    for name in ("code", "harness", "work", "in", "out"):
        (sandbox / name).mkdir(parents=True)
    for name in ("sub", "other-submission", "bpe-grade-y"):
        (tmp_path / name).mkdir()
    hidden = [Path(p) for p in hide_paths(tmp_path / "sub", [], sandbox, [])]
    assert not [p for p in hidden if p == sandbox.resolve() or sandbox.resolve() in p.parents], hidden
    assert {tmp_path.resolve() / n for n in ("sub", "other-submission", "bpe-grade-y")} <= set(hidden), hidden
