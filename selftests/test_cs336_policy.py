"""The CS336 grading policy (issue 28): chosen for a CS336-layout repository, selectable by
name, running its own test folder beside ours; its rule table in the README names tests that
exist and that the policy grades for points. (Grading with it: selftests/test_layouts.py.)"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from grader.config import DEFAULT_PATHS, ConfigError, load_config
from grader.policies import policy_path
from harness.impl import ROOT

from .support import build_layout

CS336 = ROOT / "grading-cs336.yaml"


@pytest.mark.parametrize("layout, policy", [("cs336", "grading-cs336.yaml"), ("stubs", "grading.yaml"), ("own", "grading.yaml")])
def test_the_policy_is_chosen_by_the_layout(tmp_path, layout, policy):
    assert policy_path(None, build_layout(layout, tmp_path / "sub")) == ROOT / policy


def test_without_a_submission_the_policy_is_grading_yaml():
    assert policy_path(None, None) == ROOT / "grading.yaml"


@pytest.mark.parametrize("name, policy", [("cs336", "grading-cs336.yaml"), ("default", "grading.yaml")])
def test_a_policy_is_selectable_by_name_whatever_the_layout(tmp_path, name, policy):
    assert policy_path(name, build_layout("stubs", tmp_path / "sub")) == ROOT / policy


def test_an_explicit_policy_file_wins(tmp_path):
    own = tmp_path / "mine.yaml"
    assert policy_path(own, build_layout("cs336", tmp_path / "sub")) == own


def test_grading_yaml_runs_public_and_hidden_and_the_cs336_policy_its_own_tests_too():
    assert load_config(ROOT / "grading.yaml").paths == DEFAULT_PATHS
    policy = load_config(CS336)
    assert policy.paths == (*DEFAULT_PATHS, "tests/cs336")
    assert [g.points for g in policy.groups if g.name == "beyond_cs336"] == [0]
    assert policy.groups[-1].select == ("*",), "beyond_cs336 must come last and take every other test"


@pytest.mark.parametrize("paths", ["[tests/nowhere]", "[/etc]", "[../tests]"])
def test_paths_outside_the_repositorys_tests_are_refused_in_one_line(tmp_path, paths):
    text = (ROOT / "grading.yaml").read_text().replace("groups:\n", f"paths: {paths}\n\ngroups:\n", 1)
    (tmp_path / "g.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"g\.yaml:\d+: paths: .* is not a test folder or file of this repository"):
        load_config(tmp_path / "g.yaml")


def cs336_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("### Grading CS336 repositories")
    return text[start:text.index("\n## ", start)]


def test_every_test_the_readme_table_names_exists_and_earns_cs336_points():
    policy = load_config(CS336)
    named = set(re.findall(r"`(test_[a-z0-9_]+)", cs336_section()))
    defined: dict[str, tuple[str, set[str]]] = {}  # test function -> (node id, markers)
    for folder in policy.paths:
        for path in (ROOT / folder).glob("test_*.py"):
            text = path.read_text(encoding="utf-8")
            for marks, name in re.findall(r"^((?:@.*\n)*)def (test_[a-z0-9_]+)", text, re.M):
                defined.setdefault(name, (f"{path.relative_to(ROOT).as_posix()}::{name}", set(re.findall(r"@pytest\.mark\.(\w+)", marks))))
    ours = {n for n in named if n in defined}
    assert len(ours) >= 30, sorted(named - ours)
    for name in ours:
        nodeid, markers = defined[name]
        group = next(g for g in policy.groups if markers & set(g.markers) or any(
            fnmatch.fnmatchcase(nodeid, p) or fnmatch.fnmatchcase(nodeid + "[x]", p) or p.startswith(nodeid + "?") for p in g.select))
        assert (group.name == "beyond_cs336") == (name in BEYOND_EXAMPLES), f"{name}: in the README's table, graded by {group.name}"


BEYOND_EXAMPLES = {"test_vocab_layout_bytes_then_merges_then_specials"}  # named in the README as beyond CS336
