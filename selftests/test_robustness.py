"""Attacks on the trusted side of grading (selftests/robustness/<name>/), graded by ``grade``.

Each grading runs with its own ``TMPDIR``; afterwards that folder must hold no sandbox and
no grading folder, and no process may still have it in its environment (every worker and
everything it started is gone). Scores are checked against what the attack's honest part
earns; the grader's own peak memory comes from ``grade --report``.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from harness.impl import ROOT

from .attack_grading import PAIRS, PRIMITIVES, grade, processes_using
from .prefetch import prefetched
from .support import VENV_IN_CHECKOUT, GradeRun

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the isolation selftests need Linux"),
    pytest.mark.timeout(300),
]

PAIR_AND_MERGE = [
    *PAIRS,
    PRIMITIVES + "test_pair_counts_of_each_bpe_step_on_aaabdaaabac",
    PRIMITIVES + "test_merge_replaces_left_to_right_without_overlap",
    PRIMITIVES + "test_merge_of_each_bpe_step_on_aaabdaaabac",
]
HANGING = PRIMITIVES + "test_merge_accepts_ids_beyond_a_byte"
CASES_BEFORE_HANG = 6  # the four cases of PAIRS[0] and the other two PAIRS
STREAMS = "tests/public/test_encode_iterable.py::"
STREAM_TESTS = [STREAMS + t for t in (
    "test_encode_iterable_of_file_lines_matches_tiktoken",
    "test_encode_iterable_of_nothing_yields_nothing",  # never-ending ids
    "test_encode_iterable_is_lazy_on_an_endless_stream",  # stalls
    "test_encode_iterable_prefix_of_an_endless_stream_matches_tiktoken",
    "test_encode_iterable_is_lazy_with_special_tokens",  # non-lazy, killed
    "test_encode_iterable_is_independent_of_chunk_boundaries",
    "test_encode_iterable_of_a_file_equals_encode_of_its_text",
)]
STREAM_FAILURES = {STREAM_TESTS[1], STREAM_TESTS[2], STREAM_TESTS[4]}
HUGE_TESTS = [PAIRS[1], HANGING, "tests/public/test_pretokenize.py::test_pretokenize_matches_gpt2_pattern[emoji]"]
MAX_GRADER_MB = 1024
# one or two cases of every adapter and method (encode, decode, the stream, training, saving
# files): the huge_everywhere attack returns the largest values the caps let through from each
EVERYWHERE_TESTS = [
    PRIMITIVES + "test_merge_accepts_ids_beyond_a_byte",
    PAIRS[1],
    "tests/public/test_warmup.py::test_character_round_trip[ascii]",
    "tests/public/test_pretokenize.py::test_pretokenize_hand_worked_examples[DONT]",
    "tests/public/test_special_tokens.py::test_no_special_tokens_give_the_whole_text[plain]",
    "tests/public/test_train_bpe.py::test_pair_counts_include_overlapping_occurrences",
    "tests/public/test_tokenizer_files.py::test_saved_vocab_json_maps_gpt2_strings_to_ids",
    "tests/public/test_tokenizer.py::test_decode_of_encode_is_the_text[one_space]",
    "tests/public/test_tokenizer.py::test_decode_of_encode_is_the_text[one_newline]",
    "tests/public/test_encode_iterable.py::test_encode_iterable_of_file_lines_matches_tiktoken[stories.txt]",
]
HIDDEN_MERGES = "tests/hidden/test_primitives_hidden.py::test_merge_leaves_random_input_unmodified"
AFTER_HANG = PRIMITIVES + "test_merge_replaces_left_to_right_without_overlap"
HANG_TIMEOUT = 4  # grading.yaml's timeout of the hanging test in the "timed_out" grading
# --max-time of the grading stopped by it: a quiet machine reaches the hang in a quarter of
# that; one too loaded to get there in time grades it once more with the longer limit
STOP_AFTER, STOP_AFTER_AGAIN = 12, 60


SLOW_BUDGET = 45  # seconds: --max-time of the slow but correct grading (a loaded machine takes 20 to start it)
STOP_AT_CASES = 8  # a grading sent a signal gets it once this many cases are journaled


class Grading(NamedTuple):
    attack: str
    tests: list[str]
    call_timeout: float = 10
    max_time: float = 120
    hang_timeout: float = 600  # grading.yaml's timeout of HANGING
    stop: int | None = None  # the signal grade is sent once STOP_AT_CASES cases are finished


GRADINGS = {
    "stopped": Grading("hang_after_some_tests", [*PAIRS, HANGING], 600, STOP_AFTER),
    "crashed": Grading("hang_after_some_tests", [*PAIRS, HANGING], 600),  # its test process is killed
    "timed_out": Grading("hang_after_some_tests", [*PAIRS, HANGING, AFTER_HANG], 600, hang_timeout=HANG_TIMEOUT),
    "victim": Grading("honest", PAIR_AND_MERGE),
    "restarts": Grading("restart_every_call", PAIR_AND_MERGE),
    "streams": Grading("misbehaving_streams", STREAM_TESTS, 3),
    "huge": Grading("huge_values", HUGE_TESTS, 20),
    "everywhere": Grading("huge_everywhere", EVERYWHERE_TESTS, 30, 300),
    "leak": Grading("leak_paths", [HIDDEN_MERGES, PAIRS[1], HANGING, HUGE_TESTS[2]]),
    # a correct submission on the whole public suite, stopped from outside a few seconds in
    "sigterm": Grading("honest", ["tests/public"], stop=signal.SIGTERM),
    "sigint": Grading("honest", ["tests/public"], stop=signal.SIGINT),
    # two seconds per call: the pair and merge tests (50 cases) need twice the budget
    "slow": Grading("slow_but_correct", [PRIMITIVES.removesuffix("::")], max_time=SLOW_BUDGET),
}
SIGNALLED: dict[str, float] = {}  # grading -> when its signal was sent (monotonic clock)


@prefetched
def graded(prefetch):
    """Every grading of this module. The one stopped by --max-time starts alone (so that it
    reaches its hanging test in time even on a loaded machine); the others run at once while
    it waits for its deadline."""
    from concurrent.futures import ThreadPoolExecutor

    base = prefetch.mktemp("robustness")

    def run(key, folder=None, **changes):
        g = GRADINGS[key]._replace(**changes)
        if key == "crashed":
            threading.Thread(target=kill_test_process_when_hanging, args=(base / key,), daemon=True).start()
        if g.stop is not None:
            threading.Thread(target=signal_grade_when_started, args=(key, base / key, g.stop), daemon=True).start()
        try:
            return grade(g.attack, base / (folder or key), g.tests, call_timeout=g.call_timeout, max_time=g.max_time,
                         hang_timeout=g.hang_timeout, expect_seconds=max(120, g.max_time), expect_rc=128 + g.stop if g.stop else 0)
        except AssertionError as err:
            return err

    def run_stopped():
        out = run("stopped")
        # stopped before it got to the hang; or before any test ran (grade then exits 1, which
        # run() returns as the AssertionError of the exit status: seen under a load of 12)
        early = isinstance(out, GradeRun) and len(ran(out)) < CASES_BEFORE_HANG
        if early or (isinstance(out, AssertionError) and "before any test ran" in str(out)):
            out = run("stopped", "stopped_again", max_time=STOP_AFTER_AGAIN)
        return out

    with ThreadPoolExecutor(len(GRADINGS)) as pool:
        stopped = pool.submit(run_stopped)
        until = time.monotonic() + STOP_AFTER
        while time.monotonic() < until and not stopped.done() and journaled(base / "stopped") < CASES_BEFORE_HANG:
            time.sleep(0.2)
        others = {key: pool.submit(run, key) for key in GRADINGS if key != "stopped"}
        return {"stopped": stopped.result(), **{key: f.result() for key, f in others.items()}}


def kill_test_process_when_hanging(base: Path, limit: float = 120) -> None:
    """SIGKILL the pytest process of the grading under ``base`` once it hangs (as a crash
    would end it: no clean-up of its own)."""
    until = time.monotonic() + limit
    while time.monotonic() < until and journaled(base) < CASES_BEFORE_HANG:
        time.sleep(0.2)
    for pid in processes_using(base / "tmp"):
        try:
            if b"--grading-policy" in Path(f"/proc/{pid}/cmdline").read_bytes():  # grade's pytest run
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def signal_grade_when_started(key: str, base: Path, signum: int, limit: float = 120) -> None:
    """Send ``signum`` to the grade command under ``base`` (alone, as ``kill`` does) once its
    test run has finished STOP_AT_CASES cases."""
    until = time.monotonic() + limit
    while time.monotonic() < until and journaled(base) < STOP_AT_CASES:
        time.sleep(0.1)
    for pid in processes_using(base / "tmp"):
        try:
            if b"grader\0grade\0" in Path(f"/proc/{pid}/cmdline").read_bytes():
                SIGNALLED[key] = time.monotonic()
                os.kill(int(pid), signum)
        except OSError:
            pass


def journaled(base: Path) -> int:
    """Tests finished so far by the grading under ``base``: its report's journal's entries,
    not its notes of facts (peak memory, isolation), which are lines of it too."""
    lines = (line for p in (base / "tmp").glob("bpe-grade-*/*.journal") for line in p.read_bytes().splitlines())
    return sum(not line.startswith(b'{"facts"') for line in lines)


def cases(out: GradeRun) -> dict[str, dict]:
    """The grading's test cases by node id (from grade --report)."""
    return {t["nodeid"]: t for t in out.report_data().get("tests", [])}


def ran(out: GradeRun) -> list[str]:
    """The test cases the grading got to (an outcome other than "not run")."""
    return [nodeid for nodeid, t in cases(out).items() if t["outcome"] != "not run"]


def outcome(graded, key) -> GradeRun:
    out = graded[key]
    if isinstance(out, AssertionError):
        raise out
    return out


@pytest.mark.slow
def test_a_run_stopped_by_max_time_keeps_the_points_already_graded(graded):
    out = outcome(graded, "stopped")
    assert out.group_scores() == {"pairs": pytest.approx(10), "rest": 0}, out.context()
    assert out.results["score"] == pytest.approx(10), out.context()
    assert f"grading stopped after {out.request.max_time:g} s" in out.results["output"], out.context()
    graded_cases = cases(out)
    assert graded_cases[HANGING]["outcome"] == "not run", out.context()
    assert sum(t["outcome"] == "passed" for t in graded_cases.values()) == CASES_BEFORE_HANG
    assert_reported_as_far_as_it_went(out)


def assert_reported_as_far_as_it_went(out: GradeRun) -> None:
    """A run that ended early still says which isolation was in force and reports the grader's
    peak memory (journaled as tests finish, read from outside while it runs)."""
    assert "isolation: " in out.results["output"], out.context()
    assert out.report_data()["grader_peak_mb"] > 0, out.context()


@pytest.mark.slow
def test_a_crashed_test_run_keeps_the_points_already_graded_and_leaves_nothing(graded):
    out = outcome(graded, "crashed")  # nothing left in TMPDIR nor running: checked by grade()
    assert out.group_scores() == {"pairs": pytest.approx(10), "rest": 0}, out.context()
    assert "the test run stopped early" in out.results["output"], out.context()
    assert cases(out)[HANGING]["outcome"] == "not run", out.context()
    assert_reported_as_far_as_it_went(out)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["sigterm", "sigint"])
def test_a_grading_stopped_by_a_signal_ends_at_once_keeping_the_points_of_the_tests_finished(graded, key):
    """SIGTERM (timeout, Gradescope, CI runners) or SIGINT (Ctrl-C) to grade: its test run and
    every worker end within seconds (nothing left: checked by grade()), and the results file
    holds the points of every test finished; the others are not run, saying why."""
    out = outcome(graded, key)
    assert out.ended - SIGNALLED[key] < 10, out.context()
    graded_cases = cases(out)
    finished = [t for t in graded_cases.values() if t["outcome"] != "not run"]
    not_run = [t for t in graded_cases.values() if t["outcome"] == "not run"]
    assert len(finished) >= STOP_AT_CASES and not_run, out.context()
    assert all(t["outcome"] == "passed" for t in finished), out.context()
    name = signal.Signals(GRADINGS[key].stop).name
    assert all(f"grading stopped by {name} after" in t["output"] for t in not_run), out.context()
    assert f"grading stopped by {name} after" in out.results["output"], out.context()
    earned = sum(t["score"] for t in finished)
    assert 0 < out.results["score"] == pytest.approx(earned, abs=0.011 * len(out.results["tests"])), out.context()
    assert out.results["score"] < 20, out.context()


@pytest.mark.slow
def test_slow_correct_code_keeps_the_points_of_the_tests_finished_within_the_budget(graded):
    """The grading ends within its time budget (grade --max-time; grading.yaml's `budget`)
    with a results file: the tests finished keep their points, the others are not reached."""
    out = outcome(graded, "slow")
    assert out.results["execution_time"] <= SLOW_BUDGET, out.context()  # from grade's start, as a platform counts
    assert out.seconds <= SLOW_BUDGET + 5, out.context()  # and its exit, however loaded the machine
    graded_cases = cases(out)
    finished = [t for t in graded_cases.values() if t["outcome"] != "not run"]
    not_reached = [t for t in graded_cases.values() if t["outcome"] == "not run"]
    assert finished and not_reached, out.context()
    assert all(t["outcome"] == "passed" for t in finished), out.context()
    budget = f"the grading's time budget of {SLOW_BUDGET} s"
    assert all(t["output"] in (f"not reached: {budget} was used up before this test",
                               f"not finished: {budget} ran out while this test was running") for t in not_reached), out.context()
    assert f"grading stopped after {SLOW_BUDGET} s, its time budget" in out.results["output"], out.context()
    assert out.report_data()["budget_used_up"] is True, out.context()
    assert 0 < out.results["score"] == pytest.approx(sum(t["score"] for t in finished), abs=0.05), out.context()


@pytest.mark.slow
def test_a_test_over_its_timeout_fails_alone_and_the_next_test_gets_a_working_worker(graded):
    """grading.yaml's per-test timeout is enforced in the grading's test run (pytest-timeout,
    loaded by name: grade turns off plugin autoloading): the hanging test fails saying so, the
    worker it hung is replaced, and the tests around it keep their points."""
    out = outcome(graded, "timed_out")
    graded_cases = cases(out)
    assert graded_cases[HANGING]["outcome"] == "failed", out.context()
    told = graded_cases[HANGING]["output"]
    assert f"Timeout (>{HANG_TIMEOUT:.1f}s)" in told, out.context()
    assert "while your code was running adapters.run_merge(...)" in told, out.context()
    assert not re.search(r"(sandbox|harness|grader)/\w+\.py", told), out.context()  # no harness frame
    others = [t for nodeid, t in graded_cases.items() if nodeid != HANGING]
    assert any(t["nodeid"].startswith(AFTER_HANG) for t in others), out.context()
    assert all(t["outcome"] == "passed" for t in others), out.context()
    assert out.group_scores()["pairs"] == pytest.approx(10), out.context()


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="dedicated worker user ids need a root grader")
def test_a_grading_forcing_worker_restarts_leaves_a_concurrent_grading_untouched(graded):
    victim, attacker = outcome(graded, "victim"), outcome(graded, "restarts")
    assert victim.group_scores() == {"pairs": pytest.approx(10), "rest": pytest.approx(10)}, victim.context()
    assert attacker.group_scores() == {"pairs": 0, "rest": pytest.approx(10)}, attacker.context()
    restarts = sum("exited with status 3" in t["output"] for t in cases(attacker).values())
    assert restarts >= 8, attacker.context()


@pytest.mark.slow
def test_never_ending_stalled_and_non_lazy_streams_fail_only_their_own_tests(graded):
    out = outcome(graded, "streams")
    tests = cases(out).values()
    failed = {t["nodeid"].split("[")[0] for t in tests if t["outcome"] != "passed"}
    assert failed == STREAM_FAILURES, out.context()
    # the tests after a killed worker got the shared tokenizer made again, in a fresh worker
    assert sum(t["outcome"] == "passed" for t in tests) >= 10, out.context()
    by_name = {t["nodeid"]: t["output"] for t in tests}
    assert "timed out after 3 s" in by_name[STREAM_TESTS[2]], out.context()
    assert "ids" in by_name[STREAM_TESTS[1]] and "bytes of input" in by_name[STREAM_TESTS[1]], out.context()


@pytest.mark.slow
def test_huge_returned_values_cost_the_grader_little(graded):
    out = outcome(graded, "huge")
    assert out.results["score"] == 0, out.context()
    peak = out.report_data()["grader_peak_mb"]
    assert 0 < peak < MAX_GRADER_MB, f"the grader's test process peaked at {peak} MB\n{out.context()}"
    for test in out.results["tests"]:
        assert len(test["output"]) < 5000, test["output"][:300]
    assert len(out.log) < 200_000


@pytest.mark.slow
def test_the_grader_stays_within_its_memory_budget_whatever_every_call_returns(graded):
    out = outcome(graded, "everywhere")
    assert out.results["score"] == 0, out.context()
    peak = out.report_data()["grader_peak_mb"]
    assert 0 < peak < MAX_GRADER_MB, f"the grader's test process peaked at {peak} MB\n{out.context()}"
    for test in out.results["tests"]:
        assert len(test["output"]) < 5000, test["output"][:300]


@pytest.mark.skipif(os.geteuid() != 0, reason="dedicated worker user ids need a root grader")
def test_worker_uids_are_allocated_and_never_shared(tmp_path):
    from sandbox import uids

    base, count, folder = 1_950_000_000, 8, tmp_path / "uids"
    held = [uids.allocate(folder, base, count) for _ in range(3)]
    assert [lease.uid for lease in held] == [base, base + 1, base + 2]
    # another process (another grading) gets the ids no one holds, whatever its pid
    code = f"from sandbox import uids; from pathlib import Path; print(uids.allocate(Path({str(folder)!r}), {base}, {count}).uid)"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert int(other.stdout) == base + 3  # free again once that process ended
    held[1].release()
    # a process left running under a released id is swept before the id is handed out again
    stray = subprocess.Popen(["sleep", "30"], user=base + 1, group=base + 1)
    try:
        again = uids.allocate(folder, base, count)
        assert again.uid == base + 1
        assert stray.wait(timeout=5) == -9
    finally:
        stray.kill()
    held.append(again)
    with pytest.raises(uids.UidsExhausted):
        for _ in range(count):
            held.append(uids.allocate(folder, base, count))


@pytest.mark.skipif(os.geteuid() != 0, reason="dedicated worker user ids need a root grader")
def test_a_released_worker_uid_leaves_no_lock_file(tmp_path):
    from sandbox import uids

    folder = tmp_path / "uids"
    leases = [uids.allocate(folder, 1_950_000_000, 4) for _ in range(2)]
    assert sorted(p.name for p in folder.iterdir()) == [str(lease.uid) for lease in leases]
    for lease in leases:
        lease.release()
    assert list(folder.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="dedicated worker user ids need a root grader")
def test_a_uid_whose_lock_file_is_removed_while_being_locked_is_locked_afresh(tmp_path, monkeypatch):
    """The holder releases (removing the file) between another allocation's open and its
    lock: that allocation must lock the file now there, not the removed one, or a third
    allocation could hold the same id beside it."""
    import fcntl

    from sandbox import uids

    folder, base = tmp_path / "uids", 1_950_000_000
    first = uids.allocate(folder, base, 1)
    real_flock = fcntl.flock

    def flock_after_the_holder_lets_go(fd, operation):
        first.release()
        return real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock_after_the_holder_lets_go)
    second = uids.allocate(folder, base, 1)
    monkeypatch.undo()
    assert second.uid == base
    assert os.stat(folder / str(base)).st_ino == os.fstat(second._fd).st_ino
    with pytest.raises(uids.UidsExhausted):
        uids.allocate(folder, base, 1)


@pytest.mark.slow
def test_feedback_never_shows_the_harness_report_or_other_submissions_paths(graded):
    out = outcome(graded, "leak")
    assert out.results["score"] == 0, out.context()
    graded_cases = cases(out)
    assert all("ValueError" in t["output"] for t in graded_cases.values()), out.context()  # the attack did run
    # listed first, the hidden test ran last, in a worker of its own: the visible merge test's
    # worker never saw a hidden input
    assert "mounts/parent" in graded_cases[HANGING]["output"], out.context()
    shown = json.dumps(out.results)
    base = out.out
    if "own pid namespace" not in shown:  # with one, the grader's command lines are out of its sight
        assert "<harness>" in shown and "<grading>" in shown, out.context()  # found, and hidden
    assert "bpe-grade-" not in shown, f"bpe-grade- appears in the feedback\n{out.context()}"
    for secret in (str(ROOT), str(ROOT.parent), str(base), str(base.parent)):  # base: the results folder too
        if len(Path(secret).parts) <= 2:  # a top-level folder such as /tmp (a clone at /tmp/x) tells nothing
            continue
        # a whole path, not a tail of another one: with the checkout at /work/x, the secret
        # "/work" is also the tail of the sandbox's own ".../bpe-worker-abc/work"
        as_path = re.compile(r"(?<![\w.-])" + re.escape(secret) + r"(?![\w.-])")
        assert not as_path.search(shown), f"{secret} appears in the feedback\n{out.context()}"


SNOOP = '''
import gc


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\\\\0", b" ").decode("utf-8", "replace")
    except OSError as err:
        return str(err)


def run_pretokenize(text):
    strings = set()
    for obj in gc.get_objects():
        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
        strings.update(item for item in items if isinstance(item, str) and len(item) < 1000)
    return [_read("/proc/self/cmdline"), _read("/proc/self/environ"), " ".join(sorted(strings))]
'''


def test_a_worker_finds_no_harness_or_submission_path_in_its_argv_environment_or_memory(tmp_path):
    from harness.impl import Implementation
    from sandbox.backend import WorkerBackend
    from sandbox.limits import IsolationLimits

    sub = tmp_path / "submissions" / "alice"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(SNOOP)
    backend = WorkerBackend("student", sub, IsolationLimits(call_timeout=30))
    try:
        cmdline, environ, memory = Implementation(backend).run_pretokenize("x")
    finally:
        backend.close()
    assert "bpe-worker-" in memory  # it did look: its own sandbox is named in its memory
    if VENV_IN_CHECKOUT:  # the paths of its own interpreter name the checkout; nothing else may
        cmdline, environ, memory = (text.replace(str(Path(sys.prefix).resolve()), "<venv>").replace(sys.prefix, "<venv>")
                                    for text in (cmdline, environ, memory))
    for secret in (str(ROOT), str(sub.parent)):
        assert secret not in cmdline and secret not in environ, (cmdline, environ)
        assert secret not in memory, memory[max(memory.find(secret) - 300, 0):][:600]


LARGE_CASES = {  # built inside the test: the values would live for the whole session otherwise
    "str": (lambda: ("line of text\n" * 2_000_000, "line of text\nother\n"), "first difference at index 13"),
    "list": (lambda: (["x" * 100] * 1_000_000, ["x" * 100, "y"]), "first difference at index 1"),
    "one_item": (lambda: (list(range(500_000)), [*range(77_777), -1, *range(77_778, 500_000)]), "first difference at index 77777"),
    "dict": (lambda: ({i: i for i in range(5000)}, {i: i + (i == 4000) for i in range(5000)}), "first differing key 4000"),
}


@pytest.mark.parametrize("case", list(LARGE_CASES))
def test_a_failed_comparison_of_large_values_is_explained_quickly_and_briefly(case):
    build, where = LARGE_CASES[case]
    got, expected = build()
    start = time.monotonic()
    with pytest.raises(AssertionError) as info:
        assert got == expected
    assert time.monotonic() - start < 5  # pytest's own diff of the str case takes minutes
    message = str(info.value)
    assert where in message and len(message) < 2000, message[:3000]


DIES_ON_REQUEST = '''
import os


class T:
    def encode(self, text):
        if text == "die":
            os._exit(7)
        return [len(text)]

    def decode(self, ids):
        return ""


def get_byte_tokenizer():
    return T()
'''


def test_a_shared_tokenizer_outlives_every_worker_death_of_other_calls(tmp_path):
    from harness.impl import Implementation
    from sandbox.backend import WorkerBackend
    from sandbox.failures import WorkerDied
    from sandbox.limits import IsolationLimits

    sub = tmp_path / "sub"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(DIES_ON_REQUEST)
    backend = WorkerBackend("student", sub, IsolationLimits(call_timeout=30))
    try:
        tok = Implementation(backend).get_byte_tokenizer()
        for _ in range(4):  # more deaths than the 3 remakes allowed before
            with pytest.raises(WorkerDied, match="exited with status 7"):
                tok.encode("die")
            assert tok.encode("ok") == [2]  # made again in the fresh worker
    finally:
        backend.close()


SLOW_OR_FAST = '''
import time


def run_pretokenize(text):
    if text.startswith("sleep "):
        time.sleep(float(text.split()[1]))
    return [text]


class T:
    def encode(self, text):
        return [len(text)]

    def decode(self, ids):
        return ""


def get_byte_tokenizer():
    return T()
'''
PER_TEST_LIMIT, SLEEP = 0.4, 0.8  # the interrupted call sleeps past the per-test limit, then answers
REPLY_READ = {"alarm while waiting": None, "reply unread": 0, "reply half read": 5}


@pytest.mark.parametrize("interrupted", list(REPLY_READ))
def test_a_call_interrupted_by_a_test_timeout_costs_no_later_call_on_the_worker_anything(tmp_path, monkeypatch, interrupted):
    """A test's time limit (harness.timeouts' signal timer) can end the trusted side's wait
    for a reply at any point: while it waits, or once the reply (or part of it) is in the pipe
    or already read; the reply the worker still sends must not be taken for a later call's.
    The last two points come at random under load; here the timeout is raised at them."""
    from types import SimpleNamespace

    from harness import timeouts
    from harness.impl import Implementation
    from sandbox.backend import WorkerBackend
    from sandbox.limits import IsolationLimits
    from sandbox.process import WorkerProcess

    read = REPLY_READ[interrupted]
    if read is not None:
        recv = WorkerProcess.recv

        def recv_interrupted_once(proc, rid, timeout, doing):
            monkeypatch.setattr(WorkerProcess, "recv", recv)
            select.select([proc.end.resp_r], [], [], 30)  # the worker's reply has come
            if read:
                proc.end.buffer += os.read(proc.end.resp_r, read)  # the timeout comes mid-message
            raise timeouts.TestTimeout(f"Timeout (>{PER_TEST_LIMIT}s) from pytest-timeout.")

    sub = tmp_path / "sub"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(SLOW_OR_FAST)
    backend = WorkerBackend("student", sub, IsolationLimits(call_timeout=30))
    impl = Implementation(backend)
    try:
        tok = impl.get_byte_tokenizer()
        assert impl.run_pretokenize("x") == ["x"]  # the worker is up
        item = SimpleNamespace()
        if read is None:
            settings = SimpleNamespace(method="signal", timeout=PER_TEST_LIMIT, disable_debugger_detection=True)
            timer = timeouts.SignalTimer()
            timer.in_call = True
            assert timer.pytest_timeout_set_timer(item, settings) is True
        else:
            monkeypatch.setattr(WorkerProcess, "recv", recv_interrupted_once)
            item.cancel_timeout = lambda: None
        try:
            with pytest.raises(timeouts.TestTimeout):
                impl.run_pretokenize(f"sleep {SLEEP}")
        finally:
            item.cancel_timeout()
        time.sleep(SLEEP)  # whatever the interrupted call still sends has been sent
        assert impl.run_pretokenize("next") == ["next"]
        assert tok.encode("abc") == [3]
    finally:
        backend.close()
