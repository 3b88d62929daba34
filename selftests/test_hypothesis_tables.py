"""Hypothesis's Unicode tables are computed once where gradings run (grader/hypothesis_tables.py):
``python -m grader.hypothesis_tables`` in a fresh folder writes them there, and a text drawn
there after it finds them as they were (Hypothesis writes one again, the same content) for a
fraction of the first draw's CPU; Gradescope's ``setup.sh`` runs it in the folder
``run_autograder`` grades from."""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

from grader.gradescope import gradescope_files
from harness import ROOT


def draw_in(folder: Path) -> float:
    """``python -m grader.hypothesis_tables`` (one text drawn, as a test draws it) in
    ``folder``, Hypothesis storing in ``folder/.hypothesis`` (its default): its seconds of CPU."""
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"} | {"PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "grader.hypothesis_tables"], cwd=folder, env=env, check=True, timeout=300,
                   capture_output=True, stdin=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def stored(folder: Path) -> dict[str, bytes]:
    """Each file Hypothesis keeps in ``folder``: its path -> its content (uncompressed: a gzip
    header names the temporary file it was written as)."""
    base = folder / ".hypothesis"
    return {p.relative_to(base).as_posix(): gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
            for p in base.rglob("*") if p.is_file()}


def test_the_tables_computed_in_a_folder_serve_every_later_draw_there(tmp_path):
    first = draw_in(tmp_path)  # a fresh folder: its first draw
    tables = stored(tmp_path)
    assert [name for name in tables if name != ".gitignore"], f"no tables written: {sorted(tables)}"
    later = draw_in(tmp_path)  # the same draw, once they are there
    assert stored(tmp_path) == tables
    # computing them is most of a first draw (2.5 of 2.8 s of CPU, 2026-11-27)
    assert later < first / 3, f"a draw with the tables took {later:.2f} s of CPU, the first {first:.2f} s"


def test_gradescope_setup_computes_them_in_the_folder_run_autograder_grades_from():
    files = gradescope_files()
    assert '(cd "$ROOT/source" && "$ROOT/venv/bin/python" -m grader.hypothesis_tables)' in files["setup.sh"]
    assert 'SRC="$ROOT/source"' in files["run_autograder"] and '\ncd "$SRC"\n' in files["run_autograder"]
