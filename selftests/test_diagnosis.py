"""Feedback that names the bug: a submission that behaves like a catalogued mutant gets
"this matches a known bug: <description>" in its failure output.

Each chosen mutant is built as a submission and pytest runs (in a subprocess, as a student
would) on the public test file of its part, stopping at the first failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.childenv import child_env
from mutants.build import build
from mutants.catalogue import by_name
from grader.report import KNOWN_BUG_PREFIX as PREFIX

from .prefetch import prefetched

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the subprocess runs happen in a fixture

DIAGNOSED = {
    "merge_overlapping": "tests/public/test_primitives.py",
    "word_ids_sorted": "tests/public/test_warmup.py",
    "specials_shortest_first": "tests/public/test_special_tokens.py",
    "ties_smallest_pair": "tests/public/test_train_bpe.py",
    "decode_token_by_token": "tests/public/test_tokenizer.py",
    "byte_encode_code_points": "tests/public/test_warmup.py",
}


def run_public_tests(submission: Path, test_file: str, pycache: Path, diagnosis: bool = True) -> str:
    """``pytest -x`` on ``test_file`` for ``submission`` (``BPE_DIAGNOSIS=0`` unless
    ``diagnosis``): its output. The runs share the bytecode cache ``pycache`` (outside the
    checkout), as a student's runs share theirs, even where PYTHONDONTWRITEBYTECODE is set."""
    env = child_env(drop=("BPE_DIAGNOSIS", "PYTHONDONTWRITEBYTECODE"), keep=("PYTHONPATH",), PYTHONPYCACHEPREFIX=str(pycache),
                    **({} if diagnosis else {"BPE_DIAGNOSIS": "0"}))
    env.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken_cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "--submission", str(submission), test_file],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    return proc.stdout + proc.stderr


OFF = "merge_overlapping"  # also run with the feature off


@prefetched
def outputs(prefetch) -> dict[str, str]:
    """Each diagnosed mutant's output, and ``OFF``'s with the feature off (key ``"off"``):
    two runs at a time."""
    where = prefetch.mktemp("diagnosed")
    runs = [(name, name, True) for name in DIAGNOSED] + [("off", OFF, False)]

    def run(job: tuple[str, str, bool]) -> str:
        key, name, diagnosis = job
        return run_public_tests(build(by_name(name), where / key), DIAGNOSED[name], where / "pycache", diagnosis)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip([key for key, _, _ in runs], pool.map(run, runs)))


@pytest.mark.parametrize("name", DIAGNOSED)
def test_failure_output_names_the_known_bug(outputs, name):
    output = outputs[name]
    assert " failed" in output, f"mutant {name} was expected to fail {DIAGNOSED[name]}:\n{output[-2000:]}"
    expected = PREFIX + by_name(name).description
    assert expected in output, f"no diagnosis {expected!r} in the output of {name}:\n{output[-3000:]}"


def test_no_diagnosis_when_the_feature_is_off(outputs):
    output = outputs["off"]
    assert " failed" in output and PREFIX not in output, output[-2000:]


@pytest.mark.parametrize("timeout", ["TestTimeout", "FixtureTimeout"])
def test_a_time_limit_striking_during_the_replay_ends_the_diagnosis_not_the_test_run(monkeypatch, timeout):
    """The replay runs while the failed test's timer may still strike: its timeout (not an
    ``Exception``) must end the diagnosis quietly, never escape into pytest's report hooks
    (an INTERNALERROR there stops the run, and every later test scores 0 as not run)."""
    from harness import timeouts
    from mutants import diagnose as D

    def strike(self, group, records):
        raise getattr(timeouts, timeout)("Timeout (>60.0s) from pytest-timeout.")

    monkeypatch.setattr(D, "_replayer", None)
    monkeypatch.setattr(D.Replayer, "__init__", lambda self: None)
    monkeypatch.setattr(D.Replayer, "diagnose", strike)
    monkeypatch.setattr(D, "enabled", lambda: True)
    assert D.diagnose("train_bpe", [(("call", "run_merge", ([1], (1, 2), 3)), [3])]) is None


class LoadedClock:
    """The ``time`` module as a machine under heavy load shows it to a process: 30 s of wall
    time pass between any two readings of the clock, whatever little work was done."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 30.0
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


def test_a_loaded_machine_gets_the_same_diagnosis(monkeypatch):
    """The replay's budgets count the work done (CPU time), not the wall time a loaded machine
    stretches it to: graded under a load of 25, the first failure of a part lost its known-bug
    line (building the part's mutants took 0.9 s of CPU, 17 s of wall time, past the 20 s)."""
    from mutants import diagnose as D

    text = "café déjà vu, naïve façade"
    records = [(("call", "run_compression_ratio", (text, list(text.encode()))), len(text) / len(text.encode()))]
    monkeypatch.setattr(D, "time", LoadedClock())
    found = D.Replayer().diagnose("warmup", records)
    assert [m.name for m in found][:1] == ["compression_ratio_characters"], found


@pytest.mark.timeout(300)  # the limit is CPU time: under a load of 16 this test took over 60 s of wall time
def test_a_mutant_whose_replay_runs_long_is_stopped_and_the_next_one_still_tried():
    """One catalogued bug's replay may cost a hundred times the reference's (merges_cross_pretokens
    trains a 500-merge case on whole lines for 13 s of CPU): it is stopped at its own limit, so
    the bug that fits, tried after it, is still named within the failure's budget. Without the
    limit this replay would never end."""
    from mutants import diagnose as D

    text = "café déjà vu, naïve façade"
    records = [(("call", "run_compression_ratio", (text, list(text.encode()))), len(text) / len(text.encode()))]
    replayer = D.Replayer()
    run = replayer.run

    def endless_first(mutant, call):
        while mutant is not None and mutant.name == "compression_ratio_inverted":  # tried first: its name fits the call
            pass
        return run(mutant, call)

    replayer.run = endless_first
    start = time.process_time()
    found = replayer.diagnose("warmup", records)
    assert [m.name for m in found][:1] == ["compression_ratio_characters"], found
    assert time.process_time() - start < D.TEST_BUDGET


@pytest.mark.timeout(300)  # CPU time again: the wall time of 4 s of spinning under load
def test_a_bug_an_earlier_failure_matched_may_replay_as_slowly_as_the_submission_runs():
    """The replay limit (5x the reference's CPU + 1 s) is for bugs tried on the off chance: a
    bug an earlier failure matched is tried first and is likely the submission's own, whose code
    is that slow (merges_cross_pretokens graded lost its own known-bug line on the 500-merge case,
    its replay stopped at the limit). Its replay may use what is left of the failure's budget."""
    from mutants import diagnose as D

    def records(text):
        return [(("call", "run_compression_ratio", (text, list(text.encode()))), len(text) / len(text.encode()))]

    replayer = D.Replayer()
    assert [m.name for m in replayer.diagnose("warmup", records("café déjà vu"))][:1] == ["compression_ratio_characters"]
    run = replayer.run

    def slow_when_matched_before(mutant, call):
        if mutant is not None and mutant.name == "compression_ratio_characters":
            spun = time.thread_time()
            while time.thread_time() - spun < 2.0 + D.REPLAY_FLOOR:  # past the limit, well within the budget
                pass
        return run(mutant, call)

    replayer.run = slow_when_matched_before
    found = replayer.diagnose("warmup", records("naïve façade, crème brûlée"))
    assert [m.name for m in found][:1] == ["compression_ratio_characters"], found


def small_vocab_records(merges: list[tuple[bytes, bytes]], text: str, got: list[int]) -> list:
    """The records of one ``encode(text)`` on a tokenizer of the 256 bytes (id = byte) and
    ``merges`` (ids from 256 up) that gave ``got``."""
    vocab = {b: bytes([b]) for b in range(256)} | {256 + k: a + b for k, (a, b) in enumerate(merges)}
    return [(("method", ("get_tokenizer", (vocab, merges, None)), "encode", (text,)), got)]


# merges b c, a b, ab c: "abc" is [a, bc] by rank; merges taken in sorted order ([a b, ab c,
# b c]) and a shortcut for a pre-token whole in the vocabulary both give [abc] (id 258)
SORTED_OR_SHORTCUT = ([(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], "abc", [258])
# merges c c (0), c b (1), b a (2): "cbac" is [cb, a, c] by rank; in sorted order (b a first)
# [c, ba, c], which no other catalogued bug gives
SORTED_ONLY = ([(b"c", b"c"), (b"c", b"b"), (b"b", b"a")], "cbac", [ord("c"), 258, ord("c")])


def test_a_small_case_that_fits_several_known_bugs_names_each():
    """vimeto's tokenizer (a pre-token whole in the vocabulary taken as one id) was told it
    ranks the merges in sorted order: on the hand-worked case both give the same ids, and the
    first catalogued one alone was named. Every bug that fits the case is named."""
    from mutants import diagnose as D

    found = {m.name for m in D.Replayer().diagnose("tokenizer", small_vocab_records(*SORTED_OR_SHORTCUT))}
    assert {"encode_merges_in_sorted_order", "encode_whole_pretoken_from_vocab"} <= found, found
    text = D.describe([by_name("encode_merges_in_sorted_order"), by_name("encode_whole_pretoken_from_vocab")])
    assert by_name("encode_whole_pretoken_from_vocab").description in text and text.startswith(by_name("encode_merges_in_sorted_order").description)


def test_a_case_that_fits_one_known_bug_names_that_one_only():
    from mutants import diagnose as D

    found = [m.name for m in D.Replayer().diagnose("tokenizer", small_vocab_records(*SORTED_ONLY))]
    assert found == ["encode_merges_in_sorted_order"], found


def test_a_bug_that_also_breaks_a_call_the_submission_got_right_is_not_named():
    """A known bug is named when it behaves as the submission does on every call replayed, not
    only on the wrong ones: a field test's ASCII-only pre-tokenizer was told "WordTokenizer
    splits with str.split()", a bug that fits its wrong ids but breaks calls it got right. Here
    the submission takes a pre-token whole from the vocabulary (wrong on "abc") and ranks the
    merges right ("cbac"): merges taken in sorted order fit the first call alone."""
    from mutants import diagnose as D

    replayer = D.Replayer()
    shortcut = small_vocab_records(*SORTED_OR_SHORTCUT)
    [(ranked, _)] = small_vocab_records(*SORTED_ONLY)
    found = [m.name for m in replayer.diagnose("tokenizer", shortcut + [(ranked, replayer.run(None, ranked))])]
    assert "encode_whole_pretoken_from_vocab" in found and "encode_merges_in_sorted_order" not in found, found


def test_a_bug_found_in_an_earlier_part_is_named_first_when_it_explains_a_later_failure():
    """A submission whose GPT-2 pattern lacks the ``\\s+(?!\\S)`` branch fails Part 3, and its
    encode fails in Part 5 on the same double spaces: there it was told "encode splits the text
    on whitespace only", a bug of encode that fits the case alike. The pattern bug, found in
    Part 3 and giving every wrong outcome here too, is named first."""
    from mutants import diagnose as D

    pattern_bug = by_name("pattern_missing_trailing_space_branch")
    replayer = D.Replayer()
    split = ("call", "run_pretokenize", ("a  b",))
    assert [m.name for m in replayer.diagnose("pretokenize", [(split, replayer.run(pattern_bug, split))])][:1] == [pattern_bug.name]
    # merge " " + "b": the GPT-2 pattern gives "a", " ", " b" -> [a, space, " b"]; without the
    # branch "a", "  ", "b" -> four single bytes
    [(call, _)] = small_vocab_records([(b" ", b"b")], "a  b", [])
    got = replayer.run(pattern_bug, call)
    assert got == [97, 32, 32, 98] and replayer.run(None, call) == [97, 32, 256]
    found = [m.name for m in replayer.diagnose("tokenizer", [(call, got)])]
    assert found[:1] == [pattern_bug.name], found
    assert [m.name for m in D.Replayer().diagnose("tokenizer", [(call, got)])][:1] != [pattern_bug.name]  # not without Part 3's


def test_a_training_on_a_large_file_stops_at_the_first_known_bug_that_fits(tmp_path, monkeypatch):
    """A training call's arguments are a path, a few characters: the file it names counts too.
    Taken as a small case, every other mutant of the part was tried on the hidden tests'
    200,000-character corpus after the first match, up to the 20 s of replay per failure (a
    grading 2-3 times slower, and the known-bug line lost when the test's time limit struck
    meanwhile: issue 26's same-results check, ties_first_seen)."""
    from mutants import diagnose as D

    corpus = tmp_path / "corpus.txt"
    corpus.write_text((ROOT / "fixtures" / "stories.txt").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    assert corpus.stat().st_size > D.SMALL_CALL
    call = ("call", "run_train_bpe", (str(corpus), 300, ["<|endoftext|>"]))
    replayer = D.Replayer()
    got = replayer.run(by_name("ties_first_seen"), call)
    tried: list[str] = []
    run = replayer.run
    monkeypatch.setattr(replayer, "run", lambda mutant, c: (tried.append(mutant.name if mutant else "reference"), run(mutant, c))[1])
    found = [m.name for m in replayer.diagnose("train_bpe", [(call, got)])]
    assert len(found) == 1 and tried[-1] == found[0], (found, tried)  # none tried after the match


OVERLAPPING = "tests/public/test_primitives.py::test_merge_takes_overlapping_occurrences_from_the_left"
# the catalogue's group for the merge tests
MERGE_CONFIG = """\
version: 1
total: 10
groups:
  - name: primitives
    title: merge
    points: 10
    select: ["tests/public/test_primitives.py::*"]
"""


def test_the_diagnosis_leaves_nothing_behind_when_the_test_process_is_killed(tmp_path):
    """The mutants a diagnosis builds live in the grading's own temporary folder: a test
    process killed while diagnosing (as a crash ends it: no atexit; in a grading the diagnoses
    come after the tests) leaves nothing in TMPDIR."""
    from mutants.diagnose import PREFIX as FOLDER

    from .support import run_grade

    sub = build(by_name(OFF), tmp_path / "sub")
    out = tmp_path / "out"
    (tmp_path / "grading.yaml").write_text(MERGE_CONFIG)
    seen: list[Path] = []

    def kill_when_diagnosing(limit: float = 240) -> None:
        until = time.monotonic() + limit
        while time.monotonic() < until and not seen:
            seen.extend((out / "tmp").glob(f"**/{FOLDER}*"))
            time.sleep(0.02)
        for environ in Path("/proc").glob("[0-9]*/environ"):
            try:
                if str(out / "tmp").encode() in environ.read_bytes() and b"--grading-policy" in (environ.parent / "cmdline").read_bytes():
                    os.kill(int(environ.parent.name), signal.SIGKILL)  # grade's test run
            except (OSError, ValueError):
                pass

    killer = threading.Thread(target=kill_when_diagnosing, daemon=True)
    killer.start()
    run = run_grade(out, submission=sub, config=tmp_path / "grading.yaml", tests=[OVERLAPPING], private_tmp=True,
                    quiet=True, self_checked=True, timeout=300, diagnosis=True)
    killer.join()
    assert seen, run.context()  # the diagnosis had made its folder
    assert "the test run stopped early" in run.results["output"], run.context()  # then the run was killed
    assert [n for n in run.left if not n.startswith("pytest-of-")] == [], run.context()


def test_a_plain_run_removes_the_diagnosis_folders_of_killed_runs_only(tmp_path, monkeypatch):
    """A plain pytest run killed after a diagnosis leaves its mutants folder (no atexit): the
    next diagnosis in that TMPDIR removes the folders of processes that are gone, never those
    of a process still running or another user's."""
    from mutants import diagnose as D
    from sandbox import leftovers

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"{D.PREFIX}{gone.pid}-1-abc"
    alive = tmp_path / f"{D.PREFIX}{os.getppid()}-{leftovers.start_time(os.getppid())}-def"
    other = tmp_path / "bpe-diagnosis-unrelated"
    for folder in (dead, alive, other):
        (folder / "m").mkdir(parents=True)
    monkeypatch.delenv(leftovers.STATE_ENV, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = D.make_folder()
    try:
        assert not dead.exists() and alive.exists() and other.exists()
        assert made.parent == tmp_path and made.name.startswith(f"{D.PREFIX}{os.getpid()}-")
    finally:
        shutil.rmtree(made)
