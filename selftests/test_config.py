"""grading.yaml validation, without running any test."""

from __future__ import annotations

import pytest

from grader.config import ConfigError, check_selection, load_config
from sandbox.forbidden import FORBIDDEN_MODULES, TOKENIZER_LIBRARIES

BASE = """\
version: 1
total: 10
groups:
  - name: a
    points: 6
    select: ["tests/public/test_a.py::*"]
    overrides:
      - select: ["*::test_heavy"]
        weight: 3
  - name: b
    points: 4
    markers: [speed]
"""
COLLECTED = {
    "tests/public/test_a.py::test_one": set(),
    "tests/public/test_a.py::test_heavy": set(),
    "tests/hidden/test_a_hidden.py::test_fast": {"speed"},
}


def write(tmp_path, text):
    path = tmp_path / "grading.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_tests_go_to_the_first_matching_group_with_their_weights(tmp_path):
    config = load_config(write(tmp_path, BASE))
    assigned = check_selection(config, COLLECTED)
    assert {n: g.name for n, g in assigned.items()} == {
        "tests/public/test_a.py::test_one": "a",
        "tests/public/test_a.py::test_heavy": "a",
        "tests/hidden/test_a_hidden.py::test_fast": "b",
    }
    weight, visibility, _ = config.test_policy(assigned["tests/public/test_a.py::test_heavy"], "tests/public/test_a.py::test_heavy")
    assert (weight, visibility) == (3, "visible")
    _, hidden_visibility, _ = config.test_policy(assigned["tests/hidden/test_a_hidden.py::test_fast"], "tests/hidden/test_a_hidden.py::test_fast")
    assert hidden_visibility == "after_published"


@pytest.mark.parametrize(
    "edit, message",
    [
        (("points: 6", "pionts: 6"), "unknown key 'pionts'"),
        (("points: 6", "points: [6]"), "expected a single value"),
        (("total: 10", "total: 11"), "add up to 10"),
        (("name: b", "name: a"), "used twice"),
        (("weight: 3", "weight: -1"), "below 0"),
        (("version: 1", "version: 2"), "not supported"),
        (("total: 10", "total: 10\nbudget: 5"), "below 10"),
        (("total: 10", "total: 10\nbudget: ten minutes"), "expected a number"),
        (("total: 10", "total: 10\ntimeouts_in_a_row: 2.5"), "expected a whole number"),
        (("total: 10", "total: 10\ntimeouts_in_a_row: -1"), "below 0"),
    ],
    ids=["unknown_key", "wrong_type", "points_do_not_add_up", "duplicate_group", "negative_weight", "bad_version",
         "budget_too_small", "budget_not_a_number", "timeouts_in_a_row_not_whole", "timeouts_in_a_row_negative"],
)
def test_invalid_policy_is_one_line_naming_file_and_line(tmp_path, edit, message):
    path = write(tmp_path, BASE.replace(*edit))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text
    assert text.split(":")[1].isdigit(), f"no line number in {text!r}"


def test_budget_and_timeouts_in_a_row_default_to_nine_minutes_and_three(tmp_path):
    config = load_config(write(tmp_path, BASE))
    assert (config.time.budget, config.time.timeouts_in_a_row) == (540, 3)
    config = load_config(write(tmp_path, BASE.replace("total: 10", "total: 10\nbudget: 90\ntimeouts_in_a_row: 0")))
    assert (config.time.budget, config.time.timeouts_in_a_row) == (90, 0)


@pytest.mark.parametrize(
    "collected, message",
    [
        ({"tests/public/test_a.py::test_heavy": set()}, "group 'b'"),
        ({"tests/public/test_a.py::test_one": set(), "x::y": {"speed"}}, "override"),
        ({**COLLECTED, "tests/public/test_c.py::test_x": set()}, "belongs to no group"),
    ],
    ids=["group_matches_nothing", "override_matches_nothing", "test_in_no_group"],
)
def test_selections_are_checked_against_collected_tests(tmp_path, collected, message):
    config = load_config(write(tmp_path, BASE))
    with pytest.raises(ConfigError, match=message):
        check_selection(config, collected)


@pytest.mark.parametrize("text", [None, "groups: [\n"], ids=["missing", "not-yaml"])
def test_handout_with_an_unreadable_policy_says_one_line_and_writes_nothing(tmp_path, capsys, text):
    from grader.handout import main

    policy = tmp_path / "grading.yaml"
    if text is not None:
        policy.write_text(text, encoding="utf-8")
    assert main(tmp_path / "out", None, policy) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(policy) in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def _forbidding(tmp_path, names):
    return write(tmp_path, BASE + "forbidden_modules:\n" + "".join(f"  - {n}\n" for n in names))


@pytest.mark.parametrize("name", FORBIDDEN_MODULES)
def test_misspelt_forbidden_module_is_an_error_naming_the_line_and_the_module_meant(tmp_path, name):
    typo = name[:-2] + name[-1]  # one letter dropped: the ban on `name` would silently be lifted
    path = _forbidding(tmp_path, ["json", typo])
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    line = BASE.count("\n") + 3  # `forbidden_modules:`, then `- json`, then the typo
    assert text.startswith(f"{path}:{line}: forbidden_modules[1]: {typo!r}") and "\n" not in text, text
    assert text.endswith(f"did you mean {name}?"), text


@pytest.mark.parametrize("names", [TOKENIZER_LIBRARIES, ["json", "yaml", "regex"]], ids=["known_libraries", "installed_modules"])
def test_known_tokenizer_libraries_and_installed_modules_may_be_forbidden(tmp_path, names):
    assert load_config(_forbidding(tmp_path, names)).forbidden_modules == tuple(names)


@pytest.mark.parametrize("typo, meant", [("hiden_output", "hidden_output"), ("hidden_visibilty", "hidden_visibility"), ("seeds", "seed")])
def test_a_misspelt_key_names_the_closest_allowed_one(tmp_path, typo, meant):
    value = "first_line" if "output" in typo else ("visible" if "visib" in typo else "{policy: fixed}")
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, f"{BASE}{typo}: {value}\n"))
    assert str(err.value).endswith(f"unknown key {typo!r}; did you mean {meant!r}?"), err.value


@pytest.mark.parametrize("seed", ["", "seed:\n  policy: fixed\n"], ids=["no_seed_key", "seed_without_value"])
def test_a_policy_without_a_seed_value_uses_the_seed_pytest_uses(tmp_path, seed, pytestconfig):
    # one default, declared once (harness.DEFAULT_SEED): grading and a student's plain pytest
    # draw the same randomized cases unless a seed is given
    import os
    import subprocess
    import sys

    from harness import DEFAULT_SEED

    config = load_config(write(tmp_path, BASE.replace("groups:\n", seed + "groups:\n")))
    assert config.seed_for("anyone") == DEFAULT_SEED
    env = {k: v for k, v in os.environ.items() if k != "BPE_SEED"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "tests/public/test_primitives.py"],
                          cwd=pytestconfig.rootpath, env=env, capture_output=True, text=True, timeout=120)
    assert f"seed={DEFAULT_SEED}" in proc.stdout, proc.stdout[-1000:]
