"""What Gradescope's ``run_autograder`` grades of an upload: its copy of the submission, read
with a stand-in for Python that lists the folder it is asked to grade (no grading runs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from grader.gradescope import gradescope_files

from .support import ROOT

# stands for "$PY -m grader grade --submission WORK ...": keeps the copy it was given
LISTER = '#!/bin/sh\ncp -r "$5" "$AUTOGRADER_ROOT/graded"\necho \'{"score": 0}\' > "$AUTOGRADER_ROOT/results/results.json"\n'


def graded_copy(tmp_path: Path, upload: dict[str, str]) -> Path:
    """The folder run_autograder hands to ``grade`` for an upload of these files."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    shutil.copytree(ROOT / "student", root / "source" / "student", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "adapters.py", root / "source" / "adapters.py")
    for rel, text in upload.items():
        (root / "submission" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / rel).write_text(text)
    lister = tmp_path / "python"
    lister.write_text(LISTER)
    lister.chmod(0o755)
    script = tmp_path / "run_autograder"
    script.write_text(gradescope_files()["run_autograder"])
    env = {"PATH": "/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "PYTHON": str(lister)}
    subprocess.run(["bash", str(script)], env=env, check=True, capture_output=True, timeout=60)
    return root / "graded"


def test_a_student_folder_of_some_modules_gets_the_stubs_for_the_others(tmp_path):
    # an upload of student/ holding only the parts written (no __init__.py): graded 0/100 with
    # "module 'student' has no attribute 'pretokenize'" on every test, where the same files
    # uploaded bare scored 35/100
    mine = {f"student/{m}.py": f"# mine: {m}\n" for m in ("warmup", "primitives", "pretokenize")}
    graded = graded_copy(tmp_path, mine)
    for stub in (ROOT / "student").glob("*.py"):
        kept = (graded / "student" / stub.name).read_text()
        assert kept == (f"# mine: {stub.stem}\n" if f"student/{stub.name}" in mine else stub.read_text()), stub.name


def test_a_student_folder_with_its_own_adapters_is_graded_as_uploaded(tmp_path):
    # its adapters.py may call modules of its own: nothing is added to its student/
    graded = graded_copy(tmp_path, {"adapters.py": "from student.mine import *\n", "student/mine.py": "x = 1\n"})
    assert sorted(p.name for p in (graded / "student").iterdir()) == ["mine.py"]
