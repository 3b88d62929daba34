"""Grading an attack of selftests/robustness/<name>/ with ``grade``, in a folder of its own,
and checking that it leaves nothing behind (test_robustness.py's gradings)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from harness.impl import ROOT

from .support import GradeRun, run_grade

ATTACKS = Path(__file__).resolve().parent / "robustness"
PRIMITIVES = "tests/public/test_primitives.py::"
PAIRS = [PRIMITIVES + t for t in (
    "test_pair_counts_count_every_adjacent_pair",
    "test_pair_counts_keep_the_order_inside_a_pair",
    "test_pair_counts_do_not_modify_their_input",
)]
CONFIG = """\
version: 1
total: 20
timeout: 600
isolation:
  call_timeout: {call_timeout}
  memory_mb: 2048
groups:
  - name: pairs
    title: pair counts
    points: 10
    select: ["tests/public/test_primitives.py::test_pair*"]
  - name: rest
    title: the attacked part
    points: 10
    select: ["tests/*"]
    overrides:
      - select: ["*::test_merge_accepts_ids_beyond_a_byte"]
        timeout: {hang_timeout}
"""


def attack_submission(attack: Path, sub: Path) -> Path:
    """The submission at ``sub`` made from the attack folder ``attack``: reference/ as student/,
    the honest adapters beside it (student/base_adapters.py), then the attack's files ("x.attack"
    becomes "x": conftest.py and friends stay inert in this repository)."""
    shutil.copytree(ROOT / "reference", sub / "student", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "adapters.py", sub / "student" / "base_adapters.py")
    for path in attack.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = sub / str(path.relative_to(attack)).removesuffix(".attack")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return sub


def build(name: str, base: Path) -> Path:
    """The submission of robustness attack ``name``, in ``base``."""
    return attack_submission(ATTACKS / name, base / "submission")


def processes_using(folder: Path) -> list[str]:
    """Processes whose environment mentions ``folder`` (workers get TMPDIR inside it)."""
    needle = str(folder).encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in environ.read_bytes():
                found.append(environ.parent.name)
        except OSError:
            pass
    return found


def grade(name: str, base: Path, tests: list[str], *, call_timeout: float = 10, max_time: float = 120,
          expect_seconds: float = 120, hang_timeout: float = 600, expect_rc: int = 0) -> GradeRun:
    """Grade attack ``name`` on ``tests`` (``hang_timeout``: grading.yaml's timeout of the test
    HANGING) in ``base`` (TMPDIR ``base/tmp``), with ``--report``, and check that it exited
    with ``expect_rc`` (128 + N when signal N stops it) within ``expect_seconds``, leaving
    nothing in its TMPDIR nor running."""
    base.mkdir(parents=True, exist_ok=True)
    sub = build(name, base)
    config = base / "grading.yaml"
    config.write_text(CONFIG.format(call_timeout=call_timeout, hang_timeout=hang_timeout))
    # --self-checked: as batch grades each submission (test_venv checks the self-check); graded
    # side by side with the module's other gradings: no busy-polling, as batch runs them
    out = run_grade(base, submission=sub, config=config, report=True, quiet=True, max_time=max_time, self_checked=True,
                    tests=tests, private_tmp=True, side_by_side=True, timeout=max_time + 60)
    time.sleep(0.2)
    left_files = [name for name in sorted(os.listdir(out.tmp)) if not name.startswith("pytest-of-")]
    left_processes = processes_using(out.tmp)
    assert out.code == expect_rc, out.context()
    assert out.seconds < expect_seconds, out.context()
    assert left_files == [], f"left in TMPDIR: {left_files}\n{out.context()}"
    assert left_processes == [], f"processes left: {left_processes}\n{out.context()}"
    return out
