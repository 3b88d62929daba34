"""Grading an attack of selftests/robustness/<name>/ with ``grade``, in a folder of its own,
and checking that it leaves nothing behind (test_robustness.py's gradings)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness.childenv import child_env
from harness.impl import ROOT

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
          expect_seconds: float = 120, hang_timeout: float = 600, expect_rc: int = 0) -> dict:
    """Grade attack ``name`` on ``tests`` (``hang_timeout``: grading.yaml's timeout of the test
    HANGING); the results, group scores, time (``ended``: when grade exited, on the monotonic
    clock) and leftovers. ``expect_rc``: grade's exit status (128 + N when signal N stops it)."""
    base.mkdir(parents=True, exist_ok=True)
    sub = build(name, base)
    tmp = base / "tmp"
    tmp.mkdir()
    config = base / "grading.yaml"
    config.write_text(CONFIG.format(call_timeout=call_timeout, hang_timeout=hang_timeout))
    results, report = base / "out" / "results.json", base / "out" / "report.json"
    # graded side by side with the module's other gradings: no busy-polling, as batch runs them
    env = child_env(drop=("PYTEST*", "BPE_*"), keep=("PYTHONPATH",), TMPDIR=str(tmp), BPE_GRADER_SPIN="0")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "--submission", str(sub), "--results", str(results),
         "--report", str(report), "--config", str(config), "--quiet", "--max-time", str(max_time), "--self-checked",
         "--tests", *tests],  # --self-checked: as batch grades each submission (test_venv checks the self-check)
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=max_time + 60,
    )
    ended = time.monotonic()
    seconds = ended - start
    data = json.loads(results.read_text()) if results.is_file() else {}
    plain = json.loads(report.read_text()) if report.is_file() else {}
    groups: dict[str, float] = {}
    for test in data.get("tests", []):
        groups[test["tags"][0]] = groups.get(test["tags"][0], 0.0) + test["score"]
    time.sleep(0.2)
    out = {
        "base": base, "rc": proc.returncode, "seconds": seconds, "ended": ended, "max_time": max_time, "results": data, "report": plain, "groups": groups,
        "left_files": sorted(p.name for p in tmp.iterdir() if not p.name.startswith("pytest-of-")), "left_processes": processes_using(tmp),
        "log": (results.parent / "grading.log").read_text(errors="replace") if (results.parent / "grading.log").is_file() else "",
    }
    out["context"] = f"{name}: rc={proc.returncode} in {seconds:.1f} s\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}\n{out['log'][-3000:]}"
    assert proc.returncode == expect_rc, out["context"]
    assert seconds < expect_seconds, out["context"]
    assert out["left_files"] == [], f"left in TMPDIR: {out['left_files']}\n{out['context']}"
    assert out["left_processes"] == [], f"processes left: {out['left_processes']}\n{out['context']}"
    return out
