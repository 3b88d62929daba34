"""Every default of the grading policy is declared once, beside its key's description, and
every entry point gets it from there: the table of keys in docs/policy.md is generated from
the declarations, no other source file (``.py``, ``.yaml``) writes a default's value for its
key, the shipped policies set no key to its default, and the seed every entry point grades
with, given no seed, is ``harness.DEFAULT_SEED``."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader import compare as C
from grader.__main__ import build_parser
from grader.batch import BatchOptions, grade_request
from grader.config import load_config
from grader.gradescope import AUTOGRADER_REQUEST
from grader.policies import DEFAULT_POLICY, NAMED_POLICIES, policy_path
from grader.policy_keys import DOC, declared, with_table
from grader.request import GradeRequest
from harness import DEFAULT_SEED

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {".git", "selftests", "build", "dist", "node_modules"}  # the selftests state expected values on purpose
NUMBER = r"(\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?)"
# the defaults scanned for: the limits, the speed, the time keys and the seed (`timeout` and the
# words of visibility are too common (`timeout=60` of a subprocess) to tell by a line's text)
SCANNED = [(k, v) for k, v, _ in declared() if type(v) in (int, float) and k != "timeout"]


def source_files(root: Path) -> list[Path]:
    """The project's ``.py`` and ``.yaml`` files (not the selftests', not virtual environments).
    The folders left out are never entered: a process running beside this test (CI's slow
    tier) makes and removes folders of its own there (Hypothesis's ``.hypothesis/tmp``)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith(".") and not d.endswith(".egg-info") and "venv" not in d)
        found += [Path(folder, name) for name in files if Path(name).suffix in (".py", ".yaml", ".yml")]
    return sorted(found)


def places(root: Path, key: str, value: float) -> list[str]:
    """``file:line`` of each line of ``root``'s sources that gives the policy key ``key``
    (``isolation.memory_mb``: its last word) the value ``value``: ``memory_mb: 4096`` (YAML),
    ``memory_mb: int = 4096``, ``memory_mb=4096``, ``"memory_mb": 4096``, ``DEFAULT_MEMORY_MB = 4096``,
    ``field(default=4096`` / ``key(4096`` after the name; ``seed.value``: the number anywhere."""
    leaf = key.rpartition(".")[2]
    if key == "seed.value":
        pattern = re.compile(rf"(?<![\w.]){NUMBER}")
    else:
        pattern = re.compile(rf"""["']?\b\w*{leaf}\b["']?\s*(?::[^=\n#]*=|[:=])\s*(?:field\(default=|key\()?\s*{NUMBER}""", re.I)
    found = []
    for path in source_files(root):
        for number, line in ((m.group(1), n) for n, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                             for m in pattern.finditer(text)):
            try:
                same = float(number.replace("_", "")) == value
            except ValueError:
                continue
            if same:
                found.append(f"{path.relative_to(root)}:{line}")
    return found


@pytest.mark.parametrize("key, value", SCANNED, ids=[k for k, _ in SCANNED])
def test_a_default_value_is_written_in_one_place(key, value):
    found = places(ROOT, key, value)
    assert len(found) == 1, f"{key} = {value:g} is written at {found}: declare it once, import it elsewhere"


def test_the_scan_finds_a_default_restated_anywhere(tmp_path):
    (tmp_path / "limits.py").write_text("    memory_mb: int = field(default=4096, metadata={})\n")
    (tmp_path / "policy.yaml").write_text("isolation:\n  memory_mb: 4096\n  cpu_seconds: 4096\n")
    (tmp_path / "call.py").write_text("run(memory_mb=4_096)\nother(memory_mb=4097)\nd = {'memory_mb': 4096.0}\n")
    (tmp_path / "consts.py").write_text("DEFAULT_MEMORY_MB = 4096\n")
    (tmp_path / "seed.py").write_text("SEED = 20261122  # the seed\nx = 120261122\n")
    assert places(tmp_path, "isolation.memory_mb", 4096) == ["call.py:1", "call.py:3", "consts.py:1", "limits.py:1", "policy.yaml:2"]
    assert places(tmp_path, "seed.value", 20261122) == ["seed.py:1"]


def test_the_table_of_keys_in_the_docs_is_generated_from_the_declarations():
    text = DOC.read_text(encoding="utf-8")
    assert with_table(text) == text, f"{DOC} is out of date: python -m grader.policy_keys --write"


def test_every_declared_key_is_documented_and_accepted_by_the_loader(tmp_path):
    # each key of the table, set to its default in a policy file, loads and reads back as the default
    for name, default, _ in declared():
        if default is None:
            continue
        head, _, leaf = name.rpartition(".")
        value = list(default) if isinstance(default, tuple) else default
        entry = {head: {leaf: value}} if head else {leaf: value}
        path = tmp_path / "policy.yaml"
        path.write_text(yaml.safe_dump({**entry, "groups": [{"name": "a", "points": 1, "markers": ["x"]}]}), encoding="utf-8")
        assert _keys(load_config(path)) == _keys(load_config(_without_keys(tmp_path))), name


def _without_keys(tmp_path: Path) -> Path:
    path = tmp_path / "bare.yaml"
    path.write_text("groups: [{name: a, points: 1, markers: [x]}]\n", encoding="utf-8")
    return path


def _keys(config):
    """A loaded policy but its file and groups."""
    return dataclasses.replace(config, path=Path(), groups=())


def _flat(mapping: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for k, v in mapping.items():
        if isinstance(v, dict):
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = tuple(v) if isinstance(v, list) else v
    return out


@pytest.mark.parametrize("policy", sorted(NAMED_POLICIES.values()))
def test_a_shipped_policy_sets_no_key_to_its_default(policy):
    keys = _flat(yaml.safe_load((ROOT / policy).read_text(encoding="utf-8")))
    restated = [k for k, default, _ in declared() if k in keys and keys[k] == default]
    assert not restated, f"{policy} restates the defaults of {restated}: leave them out (docs/policy.md lists them)"


def _cli(*args: str) -> GradeRequest:
    return GradeRequest.from_args(build_parser().parse_args(["grade", *args]))


# entry point -> the request it grades with (when nobody names a policy or a seed)
ENTRY_POINTS = {
    "grade": lambda tmp: _cli(),
    "grade --impl reference": lambda tmp: _cli("--impl", "reference"),
    "grade --submission DIR": lambda tmp: _cli("--submission", str(tmp)),
    "grade --config default": lambda tmp: _cli("--config", "default"),
    "batch": lambda tmp: grade_request(tmp / "alice", tmp / "r.json", tmp / "p.json", BatchOptions(out=tmp)),
    "compare (the reference's run)": lambda tmp: GradeRequest(impl="reference", **C._common(policy_path(None, tmp), None)),
    "gradescope run_autograder": lambda tmp: dataclasses.replace(AUTOGRADER_REQUEST, submission=tmp, config="default"),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_entry_point_grades_with_the_default_seed(entry, tmp_path):
    request = ENTRY_POINTS[entry](tmp_path)
    assert request.policy_file().resolve() == DEFAULT_POLICY.resolve()
    assert load_config(request.policy_file()).seed_for(request.seed_name()) == DEFAULT_SEED


def test_a_plain_pytest_run_uses_the_default_seed():
    env = {k: v for k, v in os.environ.items() if k != "BPE_SEED"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "tests/public/test_warmup.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    seeds = re.findall(r"\bseed=(\d+)", proc.stdout)
    assert seeds == [str(DEFAULT_SEED)], proc.stdout[-1000:]
