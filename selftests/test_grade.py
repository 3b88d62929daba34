"""``python -m grader grade``: scores, results files, and what a broken policy does."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

from grader.config import load_config
from grader.feedback import split_nodeid
from grader.grade import suite_env
from mutants.build import build
from mutants.catalogue import by_name

from .gradescope_schema import problems
from .prefetch import prefetched
from .support import ROOT, make_submission

# the gradings run in the background, two at a time: the first test to need one waits for it
# (a hang guard like test_venv's, not a speed bound: the suite's 120 s is per test)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_reference_gets_full_marks(graded_reference):
    assert graded_reference.code == 0, graded_reference.stderr
    total = load_config(ROOT / "grading.yaml").total
    failed = [t["name"] for t in graded_reference.tests if t["status"] != "passed"]
    assert not failed, f"the reference fails {len(failed)} graded tests, first: {failed[:3]}"
    assert graded_reference.results["score"] == pytest.approx(total)


def test_untouched_stubs_score_zero_with_every_test_not_implemented(graded_stubs):
    assert graded_stubs.code == 0, graded_stubs.stderr
    assert graded_stubs.results["score"] == 0
    assert graded_stubs.tests, "no tests were listed"
    wrong = [t["name"] for t in graded_stubs.tests if t["status"] != "failed" or "not implemented" not in t["output"]]
    assert not wrong, f"{len(wrong)} tests did not fail with 'not implemented', first: {wrong[:3]}"


def _cents(value: float) -> int:
    d = Decimal(str(value))
    assert d == d.quantize(Decimal("0.01")), f"{value!r} has more than two decimals"
    return int(d * 100)


@pytest.mark.parametrize("run", ["graded_reference", "graded_stubs"])
def test_results_json_conforms_to_the_gradescope_schema(run, request):
    data = request.getfixturevalue(run).results
    assert problems(data) == []
    assert data["tests"] and all(t["output_format"] == "md" for t in data["tests"])
    assert len({t["number"] for t in data["tests"]}) == len(data["tests"]), "test numbers must be unique"
    assert len({t["name"] for t in data["tests"]}) == len(data["tests"]), "entry names must be unique"


@pytest.mark.parametrize("run", ["graded_reference", "graded_stubs"])
def test_entry_points_have_two_decimals_and_add_up_exactly_to_the_total(run, request):
    data = request.getfixturevalue(run).results
    assert sum(_cents(t["max_score"]) for t in data["tests"]) == _cents(load_config(ROOT / "grading.yaml").total)
    assert sum(_cents(t["score"]) for t in data["tests"]) == _cents(data["score"])
    assert all(0 <= _cents(t["score"]) <= _cents(t["max_score"]) for t in data["tests"])


def test_one_results_entry_per_test_function(graded_reference):
    cases = json.loads(graded_reference.report.read_text(encoding="utf-8"))["tests"]
    functions = {"::".join(split_nodeid(c["nodeid"])[:2]) for c in cases}
    entries = [t["extra_data"]["test"] for t in graded_reference.tests]
    assert sorted(entries) == sorted(functions)
    assert len(cases) > len(entries), "the plain report keeps every parametrized case"
    assert sum(t["extra_data"]["cases"] for t in graded_reference.tests) == len(cases)


def test_on_the_stubs_grade_points_to_part_1_and_to_nothing_else(graded_stubs, graded_reference):
    out = graded_stubs.stdout
    part1 = next(g.title for g in load_config(ROOT / "grading.yaml").groups if g.title.startswith("Part 1"))
    pointer = re.search(r"^where to start: nothing is implemented yet; begin with (.*) \(student/(\w+)\.py: ", out, re.M)
    assert pointer and pointer.group(1) == part1 and pointer.group(2) == "warmup", out[-2000:]
    assert "look at these first" not in out, "an unwritten function is no failure to look at"
    assert "where to start" not in graded_reference.stdout and "look at these first" not in graded_reference.stdout


def test_progress_lines_name_and_order_the_groups_as_the_table_does(graded_stubs):
    titles = [g.title for g in load_config(ROOT / "grading.yaml").groups]
    progress = re.findall(r"^\[grade\] (.*): \d+/\d+ cases passed$", graded_stubs.stderr + graded_stubs.stdout, re.M)
    assert [p for p in progress if p != "visible tests"] == titles
    table = [ln.split("  ")[0] for ln in graded_stubs.stdout.splitlines() if ln.split("  ")[0] in titles]
    assert table == titles


# two hash seeds under which the three keys of DICT_COMPARED's comparison come out of a set in
# different orders (CPython's string hash), as the grader's environment might set them
HASH_SEEDS = ("1", "2")
DICT_COMPARED = "tests/public/test_tokenizer_rules.py"

PARTIAL_PREAMBLE = """import regex


def pretokenize(text):
    return regex.findall(r\"\"\"'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+\"\"\", text)"""


@prefetched
def module_gradings(prefetch):
    """Every other grading this module checks, queued behind the whole-suite ones so that
    two always run at a time."""
    gradings = prefetch.gradings
    gradings.start_whole_suite()
    submission = make_submission(prefetch.mktemp("partial") / "partial", ("primitives.py", "warmup.py"))
    warmup = submission / "student" / "warmup.py"
    # the warm-up's word tokenizer needs pre-tokenization, which this submission lacks: inline it
    warmup.write_text(warmup.read_text().replace("from .pretokenize import pretokenize", PARTIAL_PREAMBLE))
    gradings.start("partial", submission=submission)
    gradings.start("subset", impl="reference", tests=["tests/public/test_primitives.py"])
    wrapped = make_submission(prefetch.mktemp("wrapped") / "alice" / "my_bpe_repo", ("primitives.py",))
    gradings.start("wrapped", submission=wrapped.parent, tests=["tests/public/test_primitives.py"])
    gradings.start("stubs-again")
    # a catalogued bug failing a dict comparison over three string keys (encode gives the
    # specials' text ids): pytest lists the differing items in the order of a set of the keys
    spread = build(by_name("encode_ignores_special_tokens"), prefetch.mktemp("hash-seed") / "sub")
    for hash_seed in HASH_SEEDS:
        gradings.start(f"hash-seed-{hash_seed}", submission=spread, tests=[DICT_COMPARED],
                       env=os.environ | {"PYTHONHASHSEED": hash_seed})
    for name, config in prefetch.get(broken_configs.setup).items():
        gradings.start(f"policy-{name}", config=config, timeout=300)
    gradings.wait()
    return gradings


def test_partial_submission_gets_exactly_its_groups_points(module_gradings):
    run = module_gradings.get("partial")
    assert run.code == 0, run.stderr
    points = {g.name: g.points for g in load_config(ROOT / "grading.yaml").groups}
    scores = run.group_scores()
    for group in points:
        expected = points[group] if group in ("warmup", "primitives") else 0.0
        assert scores.get(group, 0.0) == pytest.approx(expected, abs=0.02), f"group {group}: {scores.get(group)} != {expected}"


def test_grading_a_chosen_subset_scores_only_the_groups_it_touches(module_gradings):
    run = module_gradings.get("subset")
    assert run.code == 0, run.stderr
    primitives = next(g.points for g in load_config(ROOT / "grading.yaml").groups if g.name == "primitives")
    assert set(run.group_scores()) == {"primitives"}
    assert run.results["score"] == pytest.approx(primitives)
    assert "partial grade: only tests/public/test_primitives.py" in run.results["output"]
    assert "isolation: " in run.results["output"]


def test_a_submission_inside_one_folder_is_graded_from_it_and_the_output_says_so(module_gradings):
    # as batch and Gradescope's run_autograder do: alice/my_bpe_repo/{adapters.py,student/}
    run = module_gradings.get("wrapped")
    assert run.code == 0, run.stderr
    primitives = next(g.points for g in load_config(ROOT / "grading.yaml").groups if g.name == "primitives")
    assert run.results["score"] == pytest.approx(primitives), run.results["output"]
    assert "unwrapped: everything in the submission is inside one folder, my_bpe_repo/" in run.results["output"]


def _without_timings(data: dict) -> dict:
    data = dict(data, execution_time=None, output=None)
    data["tests"] = [dict(t, output=None) if "reference" in t["output"] and " s" in t["output"] else t for t in data["tests"]]
    return data


def test_grading_twice_gives_identical_results_apart_from_timings(graded_stubs, module_gradings):
    again = module_gradings.get("stubs-again")
    assert again.code == 0, again.stderr
    assert _without_timings(again.results) == _without_timings(graded_stubs.results)


def test_feedback_is_the_same_whatever_hash_seed_the_graders_environment_sets(module_gradings):
    runs = [module_gradings.get(f"hash-seed-{hash_seed}") for hash_seed in HASH_SEEDS]
    assert all(run.code == 0 for run in runs), [run.stderr[-2000:] for run in runs]
    listed = [t["name"] for t in runs[0].tests if "Differing items:" in t["output"]]
    assert listed, "no feedback lists a dict comparison's differing items: the check would be vacuous"
    feedback = [{t["name"]: t["output"] for t in run.tests} for run in runs]
    changed = [name for name in feedback[0] if feedback[0][name] != feedback[1].get(name)]
    assert not changed, f"PYTHONHASHSEED {' and '.join(HASH_SEEDS)} give different feedback on {changed}"


@pytest.mark.parametrize("seed, hash_seed", [(20261122, "20261122"), (2**32 + 5, "5")])
def test_the_test_runs_hash_seed_is_the_gradings_seed_whatever_the_graders_environment_says(seed, hash_seed, monkeypatch):
    # in-process the submission runs in the test run, isolated its workers get the same seed
    # (sandbox/launch.py): the order of its sets, and so its score, is the same every run
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert suite_env(seed)["PYTHONHASHSEED"] == hash_seed


def test_junit_xml_lists_every_test(graded_stubs):
    import xml.etree.ElementTree as ET

    cases = ET.parse(graded_stubs.junit).getroot().findall(".//testcase")
    assert len(cases) == len(graded_stubs.tests)
    assert all(case.find("failure") is not None for case in cases)


GOOD = (ROOT / "grading.yaml").read_text(encoding="utf-8")


def _with(key: str) -> str:
    """The shipped policy with one more top-level ``key`` line (it sets only total and groups)."""
    assert "\ntotal: 100\n" in GOOD
    return GOOD.replace("\ntotal: 100\n", f"\ntotal: 100\n{key}\n", 1)


BROKEN = {  # id: (grading.yaml text, what the one line must say)
    "bad_key": (_with("hiden_output: full"), "unknown key 'hiden_output'"),
    "bad_type": (GOOD.replace("points: 10", "points: ten", 1), "expected a number"),
    "empty_selection": (GOOD.replace("tests/*/test_warmup*.py::*", "tests/*/test_warmpu*.py::*"), "matches no test"),
    "points_do_not_add_up": (GOOD.replace("total: 100", "total: 90"), "add up to 100"),
    "bad_yaml": (GOOD.replace("groups:", "groups: ["), "not valid YAML"),
    "bad_visibility": (_with("visibility: public"), "'public' is not allowed"),
    "forbidden_typo": (_with("forbidden_modules: [tiktokn, tokenizers]"), "did you mean tiktoken?"),
}
assert all(text != GOOD for text, _ in BROKEN.values())  # each edit found its place


@prefetched
def broken_configs(prefetch) -> dict[str, Path]:
    """Each of ``BROKEN`` written to a grading.yaml of its own."""
    configs = {}
    for name, (text, _) in BROKEN.items():
        configs[name] = prefetch.mktemp(name) / "grading.yaml"
        configs[name].write_text(text, encoding="utf-8")
    return configs


@pytest.mark.parametrize("name", BROKEN)
def test_broken_grading_yaml_gives_one_line_and_exit_status_2(module_gradings, broken_configs, name):
    config, expected = broken_configs[name], BROKEN[name][1]
    run = module_gradings.get(f"policy-{name}")
    assert run.code == 2
    message = run.stderr.strip()
    assert len(message.splitlines()) == 1, f"expected one line, got:\n{message}"
    assert str(config) in message and expected in message, message
    assert run.results.get("score") == 0, run.results
    assert expected in run.results["output"]


@pytest.mark.parametrize("text", [GOOD], ids=["shipped"])
def test_shipped_grading_yaml_is_valid(tmp_path, text):
    path = tmp_path / "grading.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_config(path).groups
