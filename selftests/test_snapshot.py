"""``python -m mutants.snapshot``: a grading's snapshot keeps every result and drops only what
varies from run to run, and the comparison of two snapshots reports each difference, entry by
entry (exit status 1), or none (0). Fake snapshots: grading the whole catalogue is far too slow
for a selftest (about an hour on 2 busy cores)."""

from __future__ import annotations

import copy
import json
import textwrap

import pytest

from harness.timing import SpeedPolicy, speed_report
from mutants import snapshot as S

TABLE = """group                          points  tests passed  cases passed    time
-----------------------------------------------------------------------------
Part 1: character tokenizers  10 / 10         46/46       248/248  {t1} s
Speed: within a multiple       5 / 5           2/2           2/2   {t2} s
-----------------------------------------------------------------------------
total                        {total} / 100         48/48       250/250  {t3} s
seed 20261122; layout: stubs layout (adapters.py, package student/)"""


def results(score: float = 2.5, status: str = "passed", output: str = "ok", seconds: float = 1.0, table_time: str = "5.6") -> dict:
    """A results.json of two entries, as grade writes it."""
    speed = speed_report("encode", seconds, 0.25, SpeedPolicy(multiple=10, floor=1), stopped=1)
    return {
        "score": score + 1.0, "execution_time": seconds * 40, "output_format": "md",
        "output": "```text\n" + TABLE.format(t1=table_time, t2="12.5", t3="18.1", total=score + 1.0) + "\n```",
        "tests": [
            {"name": "Part 1: x — rule one", "number": "1.1", "score": 1.0, "max_score": 1.0, "status": "passed",
             "output": output, "visibility": "visible", "extra_data": {"test": "tests/public/test_a.py::test_one", "cases": 2}},
            {"name": "Speed: y — fast", "number": "6.1", "score": score, "max_score": 2.5, "status": status,
             "output": speed, "visibility": "after_published", "extra_data": {"test": "tests/hidden/test_s.py::test_fast"}},
        ],
    }


def snap(data: dict, name: str = "reference", files: str = "abc") -> dict:
    return {"submission": name, "exit_status": 0, "files": files, **S.snapshot_of(data, {"/work/sub": "<submission>"}, "/tmp")}


@pytest.mark.parametrize("varied", [
    {"seconds": 3.217}, {"table_time": "10.2"}, {"output": "in /tmp/bpe-grade-x8q2/student/bpe.py at 0x7f3a2b1c9d40"},
], ids=["speed_times", "table_time_and_widths", "temporary_folder_and_address"])
def test_what_varies_run_to_run_is_normalised_away(varied):
    base = {"output": "in /tmp/bpe-grade-a1b2/student/bpe.py at 0x7f00aa11bb22"} if "output" in varied else {}
    assert snap(results(**base)) == snap(results(**varied))


def test_the_time_a_speed_test_stopped_the_submission_is_normalised_away():
    def stopped(seconds: float) -> dict:
        line = speed_report("encode", seconds, 0.25, SpeedPolicy(multiple=10, floor=1), stopped=1)
        return results(output=f"too slow: stopped after {seconds:.2f} s, past its limit: {line}")

    assert snap(stopped(4.01)) == snap(stopped(3.72)) != snap(results())


@pytest.mark.parametrize("varied,field", [
    ({"score": 0.0, "status": "failed"}, "score"),
    ({"output": "Timeout (>3.0s): the test took longer than its limit of 3.0 s"}, "output"),
    ({"output": "ok in /work/other/student/bpe.py"}, "output"),
], ids=["score_and_status", "a_limit_stated_in_output", "a_path_that_is_not_the_runs_own"])
def test_a_real_difference_survives_normalisation(varied, field):
    old, new = snap(results()), snap(results(**varied))
    assert old != new
    assert any(f" {field} " in line for line in S.differences(old, new))


def test_a_changed_speed_limit_is_a_difference():
    old = snap(results())
    new = copy.deepcopy(old)
    new["entries"]["tests/hidden/test_s.py::test_fast"]["output"] = S.normalise(
        speed_report("encode", 1.0, 0.25, SpeedPolicy(multiple=5, floor=1), stopped=1), {})
    [line] = S.differences(old, new)
    assert line.startswith("reference: tests/hidden/test_s.py::test_fast: output ")
    assert "limit 10x + 1 s = <t> s" in line and "limit 5x + 1 s = <t> s" in line


def write(folder, snaps: dict) -> None:
    folder.mkdir()
    for name, s in snaps.items():
        (folder / f"{name}.json").write_text(json.dumps(s), encoding="utf-8")
    (folder / S.META).write_text("{}", encoding="utf-8")


def test_comparison_names_each_differing_entry_and_exits_1(tmp_path, capsys):
    write(tmp_path / "old", {"reference": snap(results()), "stubs": snap(results(), "stubs")})
    write(tmp_path / "new", {"reference": snap(results(score=0.0, status="failed")), "stubs": snap(results(seconds=9.0), "stubs")})
    assert S.main(["--compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "reference: tests/hidden/test_s.py::test_fast: score 2.5 -> 0.0" in out
    assert "reference: tests/hidden/test_s.py::test_fast: status \"passed\" -> \"failed\"" in out
    assert "reference (top): score 3.5 -> 1.0" in out
    assert not any(line.startswith("stubs") for line in out)
    assert out[-1].endswith("1 same, 1 differ")


def test_identical_snapshots_compare_equal_with_exit_0(tmp_path, capsys):
    write(tmp_path / "old", {"reference": snap(results())})
    write(tmp_path / "new", {"reference": snap(results(seconds=4.0, table_time="0.4"))})
    assert S.main(["--compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(": 1 same")


@pytest.mark.parametrize("change,expected", [
    (lambda s: s["entries"].pop("tests/public/test_a.py::test_one"), "reference: entry tests/public/test_a.py::test_one only before"),
    (lambda s: s.update(files="def"), "reference: its files differ between the two checkouts (differences below may come from that)"),
    (lambda s: s.update(exit_status=1), "reference: exit_status 0 -> 1"),
], ids=["entry_gone", "submission_changed", "exit_status"])
def test_each_kind_of_difference_is_reported(change, expected):
    old = snap(results())
    new = copy.deepcopy(old)
    change(new)
    assert expected in S.differences(old, new)


@pytest.mark.parametrize("common", [False, True])
def test_a_submission_graded_on_one_side_only_is_listed_and_counts_unless_common(tmp_path, capsys, common):
    write(tmp_path / "old", {"reference": snap(results()), "mutant-x": snap(results(), "mutant-x")})
    write(tmp_path / "new", {"reference": snap(results())})
    lines, kinds = S.compare(tmp_path / "old", tmp_path / "new")
    assert lines == [] and kinds["only before"] == ["mutant-x"] and kinds["same"] == ["reference"]
    code = S.main(["--compare", str(tmp_path / "old"), str(tmp_path / "new")] + (["--common"] if common else []))
    assert code == (0 if common else 1)
    assert "graded only before: mutant-x" in capsys.readouterr().out.splitlines()


def test_entries_of_one_test_with_two_visibilities_get_distinct_keys():
    data = results()
    data["tests"].append(dict(data["tests"][0], visibility="hidden", score=0.0))
    entries = snap(data)["entries"]
    assert set(entries) == {"tests/public/test_a.py::test_one", "tests/public/test_a.py::test_one (hidden)",
                            "tests/hidden/test_s.py::test_fast"}


FAKE_CHECKOUT = {
    "adapters.py": "from student import A\n",
    "reference/__init__.py": "A = 1\n",
    "student/__init__.py": "A = None\n",
    "mutants/__init__.py": "",
    "mutants/catalogue.py": "class M:\n    def __init__(self, name):\n        self.name = name\n\nCATALOGUE = [M('two'), M('three')]\nEXTRA = [M('four')]\n",
    "mutants/build.py": """
        import shutil
        from pathlib import Path
        def build(mutant, dest):
            shutil.copytree('reference', Path(dest) / 'student')
            shutil.copyfile('adapters.py', Path(dest) / 'adapters.py')
            (Path(dest) / 'student' / '__init__.py').write_text('A = ' + str(len(mutant.name)) + '\\n')
        """,
    "grader/__init__.py": "",
    "grader/__main__.py": """
        import json, sys
        from pathlib import Path
        args = sys.argv[1:]
        sub, results = Path(args[args.index('--submission') + 1]), Path(args[args.index('--results') + 1])
        a = (sub / 'student' / '__init__.py').read_text().split('= ')[1].strip()
        score = {{'1': 1.0, '3': 0.5}}.get(a, 0.0)
        results.write_text(json.dumps({{'score': score, 'execution_time': 1.5, 'tests': [{{
            'name': 'Part 1 — a is one', 'score': score, 'max_score': 1.0, 'status': 'passed' if score == 1 else 'failed',
            'output': 'a = ' + a + ' in ' + str(sub) + '; {speed}', 'extra_data': {{'test': 'tests/test_a.py::test_a'}}}}]}}))
        """,
}


@pytest.fixture
def fake_checkout(tmp_path):
    """A checkout whose grader scores student.A: the tool must grade with the checkout's code."""
    speed = speed_report("encode", 0.123, 0.1, SpeedPolicy(multiple=10, floor=1))
    root = tmp_path / "checkout"
    for name, text in FAKE_CHECKOUT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).replace("{speed}", speed).replace("{{", "{").replace("}}", "}"), encoding="utf-8")
    return root


def test_snapshot_grades_reference_stubs_and_catalogue_with_the_checkouts_own_grader(fake_checkout, tmp_path, capsys):
    out = tmp_path / "snap"
    assert S.main([str(fake_checkout), "--out", str(out), "--jobs", "2"]) == 0
    snaps = S.load(out)
    assert {n: s["top"]["score"] for n, s in snaps.items()} == {
        "reference": 1.0, "stubs": 0.0, "mutant-two": 0.5, "mutant-three": 0.0}
    entry = snaps["mutant-two"]["entries"]["tests/test_a.py::test_a"]
    assert entry["output"] == "a = 3 in <submission>; encode: <t> s, reference <t> s, <r>x; limit 10x + 1 s = <t> s"
    assert "execution_time" not in snaps["reference"]["top"]
    # the same checkout graded again: the same snapshot; a grader that scores otherwise: reported
    assert S.main([str(fake_checkout), "--out", str(tmp_path / "again"), "--against", str(out)]) == 0
    grader = fake_checkout / "grader" / "__main__.py"
    grader.write_text(grader.read_text().replace("'3': 0.5", "'3': 0.25"))
    capsys.readouterr()
    assert S.main([str(fake_checkout), "--out", str(tmp_path / "after"), "--only", "mutant-two", "--against", str(out)]) == 1
    out_lines = capsys.readouterr().out.splitlines()
    assert "mutant-two: tests/test_a.py::test_a: score 0.5 -> 0.25" in out_lines
    assert "graded only before: mutant-three reference stubs" in out_lines


def test_a_stopped_snapshot_resumes_where_it_stopped(fake_checkout, tmp_path):
    out = tmp_path / "snap"
    assert S.main([str(fake_checkout), "--out", str(out), "--only", "stubs", "reference", "--jobs", "1", "--stop-after", "0"]) == 0
    meta = json.loads((out / S.META).read_text())
    assert S.load(out) == {} and meta["not graded (time)"] == ["stubs", "reference"]
    assert S.main([str(fake_checkout), "--out", str(out), "--only", "stubs", "--jobs", "1"]) == 0
    assert S.main([str(fake_checkout), "--out", str(out), "--resume", "--jobs", "1"]) == 0
    meta = json.loads((out / S.META).read_text())
    assert set(S.load(out)) == set(meta["submissions"]) == {"reference", "stubs", "mutant-two", "mutant-three"}


def test_an_extra_mutant_is_graded_only_when_named(fake_checkout, tmp_path):
    assert S.main([str(fake_checkout), "--out", str(tmp_path / "snap"), "--only", "mutant-four", "stubs"]) == 0
    assert S.load(tmp_path / "snap")["mutant-four"]["top"]["score"] == 0.0  # A = 4
