"""Malicious submissions (selftests/attacks/<name>/) graded with ``python -m grader grade``.

Each attack starts from the reference solution (copied into the attack's ``student/``) and
overrides one or two adapters. For every attack: grading finishes in bounded time, exits 0
and writes a genuine results file, no group scores more than the honest code behind it would,
and the groups the attack does not touch keep full marks. All attacks are graded at once (a
few in parallel) on a small selection of tests, so the whole suite stays fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.impl import ROOT

from .attack_grading import attack_submission
from .prefetch import prefetched
from .support import GradeRun, run_grade

ATTACKS = Path(__file__).resolve().parent / "attacks"
TESTS = [
    "tests/public/test_primitives.py::test_pair_counts_count_every_adjacent_pair",
    "tests/public/test_primitives.py::test_pair_counts_keep_the_order_inside_a_pair",
    "tests/public/test_primitives.py::test_pair_counts_do_not_modify_their_input",
    "tests/public/test_primitives.py::test_merge_replaces_left_to_right_without_overlap",
    "tests/public/test_primitives.py::test_merge_takes_overlapping_occurrences_from_the_left",
    "tests/public/test_primitives.py::test_merge_accepts_ids_beyond_a_byte",
    "tests/public/test_primitives.py::test_primitives_compose_into_bpe_on_aaabdaaabac",
    "tests/public/test_warmup.py::test_byte_ids_are_utf8_bytes",
    "tests/public/test_warmup.py::test_byte_round_trip",
    "tests/public/test_warmup.py::test_byte_round_trip_on_fixture_files",
]
CONFIG = """\
version: 1
total: 40
timeout: 60
isolation:
  call_timeout: 3
  memory_mb: 1024
  cpu_seconds: 120
  max_processes: 32
  output_bytes: 100000
groups:
  - name: byte
    title: byte tokenizer
    points: 10
    select: ["tests/public/test_warmup.py::test_byte*"]
  - name: merge
    title: merge
    points: 10
    select: ["tests/public/test_primitives.py::test_merge*", "tests/public/test_primitives.py::test_primitives*"]
  - name: pairs
    title: pair counts
    points: 10
    select: ["tests/public/test_primitives.py::test_pair*"]
  - name: stream
    title: streaming memory (graded only for the attacks whose SELECTION has it)
    points: 10
    select: ["tests/public/test_encode_iterable.py::*"]
"""
MEMORY_TEST = "tests/public/test_encode_iterable.py::test_encode_iterable_memory_does_not_grow_with_input"
# attacks graded on another selection than TESTS
SELECTION = {
    "fork_for_memory": [*TESTS, MEMORY_TEST],  # the streaming memory test it attacks, on top
    "reset_peak_rss": [*TESTS, MEMORY_TEST],
    # each byte case ends the worker (a fresh one per case, ~0.3 s each): the 3 fixture-file
    # cases show every case of the group failing and the groups after it unharmed as the 33 did
    "os_exit_in_encode": [t for t in TESTS if not t.endswith(("::test_byte_ids_are_utf8_bytes", "::test_byte_round_trip"))],
}
# the attacks on the memory test: graded with a call limit the reference's stream fits in (under
# CONFIG's 3 s, every stream of the test's 1 MB ran past its time, so any encoder failed it: the
# attacks' zero showed nothing), and their failure must be the resident memory's
MEMORY_ATTACKS = ("fork_for_memory", "reset_peak_rss")
MEMORY_CONFIG = CONFIG.replace("call_timeout: 3\n", "call_timeout: 60\n")
assert MEMORY_CONFIG != CONFIG
MEMORY_FAILURE = "resident memory grows with the input"
GRADE_LIMIT = 150.0  # seconds per attack, under load

FULL, ZERO, BELOW, CONTROL, ANY = "full", "zero", "below full", "at most the control", "at most full"
_untouched = {"byte": FULL, "pairs": FULL}
EXPECT: dict[str, dict[str, str]] = {
    "control_wrong_merge": {"merge": BELOW, **_untouched},
    "exit_at_import": {"merge": ZERO, "pairs": ZERO, "byte": ZERO},
    "os_exit_at_import": {"merge": ZERO, "pairs": ZERO, "byte": ZERO},
    "exit_in_encode": {"byte": ZERO, "merge": FULL, "pairs": FULL},
    "os_exit_in_encode": {"byte": ZERO, "merge": FULL, "pairs": FULL},
    "raise_exit_and_interrupt": {"merge": ZERO, **_untouched},
    "infinite_loop": {"merge": BELOW, **_untouched},
    "ignore_sigterm": {"merge": BELOW, **_untouched},
    "catch_base_exception": {"merge": BELOW, **_untouched},
    # the patches also break the worker's own copy of the harness (its to_plain returns None),
    # so what runs after them in that worker fails too: the submission only hurts itself
    "patch_harness": {"merge": CONTROL, "pairs": ANY, "byte": ANY},
    "forge_results": {"merge": CONTROL, **_untouched},
    "forge_report": {"merge": CONTROL, **_untouched},
    "read_hidden": {"merge": CONTROL, **_untouched},
    "lying_values": {"merge": ZERO, "pairs": ZERO, "byte": FULL},
    "print_100mb": {"merge": FULL, **_untouched},
    "memory_hog": {"merge": BELOW, **_untouched},
    "fork_bomb": {"merge": FULL, **_untouched},
    "segfault": {"merge": BELOW, **_untouched},
    "tamper_fixtures": {"merge": FULL, **_untouched},
    "leave_child": {"merge": FULL, **_untouched},
    # a forked child does encode_iterable's work: the worker's own memory stays flat
    "fork_for_memory": {"stream": ZERO, "merge": FULL, **_untouched},
    # joins its input, fakes tracemalloc and resets the kernel's peak resident memory from inside
    "reset_peak_rss": {"stream": ZERO, "merge": FULL, **_untouched},
    # bool for int; int/str/bytes/tuple subclasses that equal anything
    "sneaky_values": {"merge": ZERO, "pairs": ZERO, "byte": ZERO},
    # sitecustomize/usercustomize/.pth/json.py/random.py/pytest.py/conftest.py in the submission:
    # they may break the worker they run in (only the submission is hurt), never the grader
    "startup_hooks": {"merge": CONTROL, "pairs": ANY, "byte": ANY},
    # newlines, non-UTF-8 bytes, 255-byte names... around honest code: graded as usual
    "odd_file_names": {"merge": FULL, **_untouched},
    # empties the caller's lists in place and answers for empty ones: no test's expected value
    # may come from a list the submission was given (the whole suite: test_expected_values_kept)
    "empty_the_input": {"merge": ZERO, "pairs": ZERO, "byte": FULL},
}

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the isolation selftests need Linux"),
    pytest.mark.timeout(900),  # the first test waits for every attack to be graded
]


def fixtures_digest() -> str:
    h = hashlib.sha256()
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.is_file():
            h.update(str(path).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


# the markers in the command lines of the processes attacks leave running (leave_child's detached
# `sleep 299.4242`, cpu_burner's burners), made this run's own by build(): a leftover check
# finds only this run's, never those of another developer's run beside it on a shared machine
RUN = f"{secrets.randbelow(10**8):08d}"
MARKERS = {"leave_child": ("299.4242", f"299.{RUN}"), "cpu_burner": ("bpe-attack-cpu-burner", f"bpe-attack-cpu-burner-{RUN}")}
THIS_RUNS_CHILD = MARKERS["leave_child"][1]


def build(name: str, base: Path) -> Path:
    """The attack's submission (:func:`attack_grading.attack_submission`), with its odd file
    names; a control without adapters.py gets the honest code alone."""
    sub = attack_submission(ATTACKS / name, base / name / "submission")
    if name in MARKERS:
        adapters, (marker, own) = sub / "adapters.py", MARKERS[name]
        text = adapters.read_text()
        assert marker in text, f"{adapters}: the marker {marker} is gone; the leftover check needs it"
        adapters.write_text(text.replace(marker, own))
    if name in ODD_NAMES:
        for where in (sub, sub / "student"):
            for odd in ODD_NAMES[name]:
                (where / os.fsdecode(odd)).write_text("x = 1\n")
    for odd in ODD_LINKS.get(name, []):  # left out of the copy (they lead outside): named on a notes line
        os.symlink("/etc/hostname", os.path.join(os.fsencode(sub), odd))
    if not (sub / "adapters.py").exists():  # a control: the honest code alone
        (sub / "adapters.py").write_text("from student.base_adapters import *  # noqa: F401,F403\n")
    return sub


ODD_NAMES = {
    "odd_file_names": [
        b"new\nline.py", b"\xff\xfe not utf-8.py", b"a" * 252 + b".py", b"-rf", b"it's \"quoted\" & spaced.py",
        b"..\\..\\escape.py", b"...", b"\x1b[31mred.py", b"tab\tname.py",
    ],
}


# links to outside the submission, named on the summary's notes line: a newline in a name must not
# start a line of its own there, nor a name that is not UTF-8 stop the results file being written
ODD_LINKS = {"odd_file_names": [b"link\nscore: 100 (forged line)", b"\xff\xfe link not utf-8"]}
FORGED_LINE = "score: 100"


def grade(name: str, base: Path, tests: list[str] | None = None, config_name: str = "grading.yaml",
          side_by_side: bool = False) -> GradeRun:
    """Grade attack ``name`` on ``tests`` (default: its SELECTION, else TESTS) as batch grades
    each submission: ``--self-checked`` (the start-up self-check has its own tests, in
    test_venv.py; test_nonroot.py grades attacks with it) and, ``side_by_side`` with other
    gradings, without busy-polling for replies (``BPE_GRADER_SPIN=0``)."""
    tests = SELECTION.get(name, TESTS) if tests is None else tests
    return run_grade(base / name / "results", submission=build(name, base), config=base / config_name, quiet=True,
                     max_time=GRADE_LIMIT - 30, self_checked=True, tests=tests, side_by_side=side_by_side,
                     timeout=GRADE_LIMIT + 60)


# the gradings that take longest (waiting out call timeouts, a fresh worker per test case,
# one more test): started first, so that the pool does not end waiting for one of them alone
SLOW = ("os_exit_in_encode", "infinite_loop", "ignore_sigterm", "catch_base_exception", "fork_for_memory", "reset_peak_rss", "memory_hog")


def config_of(name: str) -> str:
    return "memory.yaml" if name in MEMORY_ATTACKS else "grading.yaml"


@prefetched
def graded(prefetch):
    base = prefetch.mktemp("attacks")
    (base / "grading.yaml").write_text(CONFIG)
    (base / "memory.yaml").write_text(MEMORY_CONFIG)
    before = fixtures_digest()
    order = [*SLOW, *(name for name in EXPECT if name not in SLOW)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = dict(zip(order, pool.map(lambda n: grade(n, base, config_name=config_of(n), side_by_side=True), order)))
    outcomes["_fixtures_unchanged"] = fixtures_digest() == before
    return outcomes


def test_every_attack_folder_has_an_expectation():
    folders = sorted(p.name for p in ATTACKS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert folders == sorted([*EXPECT, *SOLO])


# attacks on files: only a grader running as root can hide them (a private root directory)
# and protect them (another user id) from the worker
NEED_ROOT = {"read_hidden", "forge_results", "forge_report", "tamper_fixtures"}
CONFINED = "isolation: own user id, private root directory"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPECT))
def test_attack_is_contained(graded, name):
    out = graded[name]
    context = f"{name}: {out.context()}"
    assert out.code == 0, context
    assert out.seconds < GRADE_LIMIT, context
    data = out.results
    assert out.tests, context  # a genuine results file, not a forged one
    if os.geteuid() == 0:
        assert CONFINED in data["output"], f"run as root, the worker must be confined\n{context}"
    elif name in NEED_ROOT:
        pytest.skip(f"{name}: not root, so the worker cannot be confined here ({data['output'].splitlines()[-1]})")
    assert "forged" not in json.dumps(data)[:100000] or name in ODD_LINKS
    assert not any(line.startswith(FORGED_LINE) for line in data["output"].splitlines()), data["output"]
    control = graded["control_wrong_merge"].group_scores()["merge"]
    for group, expectation in EXPECT[name].items():
        got, most = out.group_points().get(group, [0.0, 0.0])
        assert most > 0, f"{group}: no tests graded\n{context}"
        if expectation == FULL:
            assert got == pytest.approx(most), f"{group}: {got}/{most}, expected full marks\n{context}"
        elif expectation == ZERO:
            assert got == 0, f"{group}: {got}/{most}, expected 0\n{context}"
        elif expectation == BELOW:
            assert got < most, f"{group}: {got}/{most}, expected some failures\n{context}"
        elif expectation == ANY:
            assert got <= most + 1e-9
        else:
            assert got <= control + 1e-9, f"{group}: {got}/{most}, more than the honest wrong code's {control}"
    assert sum(out.group_scores().values()) == pytest.approx(data["score"], abs=0.01)
    if name in MEMORY_ATTACKS:  # the memory test failed for what it attacks, not for running past its time
        memory = [t["output"] for t in out.tests if t["tags"][0] == "stream"]
        assert memory and all(MEMORY_FAILURE in text for text in memory), f"not failed on its memory: {memory}\n{context}"


@pytest.mark.slow
def test_fixture_files_survive_the_attacks(graded):
    assert graded["_fixtures_unchanged"]


@pytest.mark.slow
def test_no_attack_leaves_a_process_behind(graded):
    leftovers = []
    for cmdline in Path("/proc").glob("*/cmdline"):
        try:
            if cmdline.read_bytes() == f"sleep\0{THIS_RUNS_CHILD}\0".encode():
                leftovers.append(cmdline.parent.name)
        except OSError:
            pass
    assert not leftovers, f"processes left running: {leftovers}"


# ---- attacks graded alone, because they disturb whatever runs beside them --------------------

SOLO = {"cpu_burner", "spin_everywhere", "spin_ignoring_alarm", "train_cache"}
# every adapter spins on a core and swallows every exception (the second also ignores and
# blocks every signal): graded side by side, away from the other attacks they would slow down
SPINNING = ("spin_everywhere", "spin_ignoring_alarm")
SPUN = ("run_get_pair_counts", "run_merge", "get_byte_tokenizer")  # the functions TESTS call
# CONFIG with a call limit of 0.5 s: the breaker's rule does not depend on the limit, and each
# of the 9 calls that wait one out spins on a core for all of it (3 s each: 54 s of CPU for the
# two; 1 s: 22.7 s of CPU for the test)
SPIN_CONFIG = CONFIG.replace("call_timeout: 3\n", "call_timeout: 0.5\n")
assert SPIN_CONFIG != CONFIG


@pytest.mark.slow
def test_a_function_that_times_out_on_three_tests_in_a_row_is_no_longer_called(tmp_path):
    """Each function times out on 3 tests, then its other tests fail at once, and the results
    say so in one line each: score 0, results written, the budget (--max-time) never reached.
    Graded with a 0.5 s call limit (SPIN_CONFIG): every second these gradings wait out, the
    spinning code burns a core."""
    (tmp_path / "spin.yaml").write_text(SPIN_CONFIG)
    with ThreadPoolExecutor(max_workers=2) as pool:
        outs = dict(zip(SPINNING, pool.map(lambda n: grade(n, tmp_path, config_name="spin.yaml", side_by_side=True), SPINNING)))
    for name, out in outs.items():
        context = f"{name}: {out.context()}"
        assert out.code == 0 and out.tests, context
        assert out.results["score"] == 0, context
        output = out.results["output"]
        for function in SPUN:
            assert re.search(rf"{function} timed out on 3 tests in a row; the \d+ other tests? that calls? it w", output), context
        assert "time budget" not in output, context
        not_called = [t for t in out.tests if "not run: " in t["output"] and "tests in a row" in t["output"]]
        assert not_called, context


SPEED_TEST = "tests/hidden/test_speed_hidden.py::test_training_on_corpus_en_correct_and_within_the_speed_limit"
WARM_UP = "tests/public/test_primitives.py::test_merge_accepts_ids_beyond_a_byte"  # starts the worker first
# a policy of two groups of 10 points with room for a speed test (the groups follow it)
SPEED_POLICY = """\
version: 1
total: 20
timeout: 120
hidden_output: full
isolation:
  call_timeout: 30
  memory_mb: 2048
  cpu_seconds: 120
  max_processes: 32
  output_bytes: 100000
groups:
"""
SPEED_CONFIG = SPEED_POLICY + """\
  - name: speed
    title: speed
    points: 10
    markers: [speed]
  - name: warm_up
    title: a call before the speed test
    points: 10
    select: ["tests/public/*"]
"""
REFERENCE_TIME = re.compile(r"reference ([0-9.]+) s \(best of 3, timed while your code's (?:(\d+) processes were|process was) paused\)")


def _speed_line(out: GradeRun) -> tuple[float, int, str]:
    test = next(t for t in out.tests if "speed" in t["name"])
    found = REFERENCE_TIME.search(test["output"])
    assert found, f"no reference time in the speed test's output:\n{test['output']}\n{out.stderr[-3000:]}"
    return float(found.group(1)), int(found.group(2) or 1), test["output"].splitlines()[0]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="without root, processes that left the worker's group cannot be found")
def test_cpu_burner_cannot_slow_the_reference_timing(tmp_path):
    """Background processes that left the worker's process group burn every core while the
    speed test runs: in the real grading, all six of them, and the worker, are found and
    stopped while the reference is timed, and the honest code under them still passes. That a
    stopped process uses no CPU meanwhile, whatever it forked or however it left its group, is
    test_shares_nothing's pause test (state ``T``, no clock tick used). Not compared: the
    reference's wall time against a quiet grading's, which other load moves by more than any
    margin (CI's slow tier, beside the suite, once measured 0.237 s quiet and 0.374 s with
    every burner stopped)."""
    (tmp_path / "speed.yaml").write_text(SPEED_CONFIG)
    burned = grade("cpu_burner", tmp_path, [WARM_UP, SPEED_TEST], "speed.yaml")
    _, stopped, burned_line = _speed_line(burned)
    context = f"burner: {burned_line}\n{burned.context()}"
    assert burned.code == 0 and burned.seconds < GRADE_LIMIT, context
    assert stopped >= 1 + 6, f"the burners were not all stopped\n{context}"
    assert burned.results["score"] == pytest.approx(20), f"the honest code under the burner must pass\n{context}"
    leftovers = [p.parent.name for p in Path("/proc").glob("[0-9]*/cmdline") if _burner(p)]
    assert not leftovers, f"burners still running after grading: {leftovers}"


def _burner(cmdline: Path) -> bool:
    try:
        return MARKERS["cpu_burner"][1].encode() in cmdline.read_bytes()
    except OSError:
        return False


CACHED_TRAINING = "tests/hidden/test_train_bpe_hidden.py::test_merges_match_reference_on_fixture[corpus_en_500]"
# the training test first, as grading.yaml's parts come before its speed group
CACHE_CONFIG = SPEED_POLICY + """\
  - name: training
    title: a hidden test training on corpus_en.txt
    points: 10
    select: ["tests/hidden/test_train_bpe_hidden.py::*"]
  - name: speed
    title: speed
    points: 10
    markers: [speed]
"""


@pytest.mark.slow
def test_a_trainer_remembering_a_file_it_trained_on_is_timed_as_slow_as_it_is(tmp_path):
    """train_cache sleeps the first time it sees a file's content: a hidden test trains on
    corpus_en.txt before the speed test does, so in the same worker its timed run was quick
    (5 of 5 points, 2026-11-27). The speed test's run is in a fresh worker: it is too slow.
    Its own training test keeps its points (it is correct, only slow)."""
    (tmp_path / "cache.yaml").write_text(CACHE_CONFIG)
    out = grade("train_cache", tmp_path, [CACHED_TRAINING, SPEED_TEST], "cache.yaml")
    _, _, line = _speed_line(out)
    context = f"{line}\n{out.context()}"
    assert out.code == 0 and out.seconds < GRADE_LIMIT, context
    assert out.group_points()["training"] == [10.0, 10.0], context
    assert out.group_points()["speed"][0] == 0, context
