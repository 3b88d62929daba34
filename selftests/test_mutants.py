"""Grading validity: every catalogued student bug (mutant) fails at least one graded test.

The catalogue runs once per module (``mutants.meta.run_catalogue``: a pytest run per mutant,
forked from a server that has imported pytest already, on its group's public tests, then its
hidden tests if it survived, two at a time, the slowest first); each mutant is one test here,
and the kill-rate table is printed to the CI log. The fork server's runs are checked against
``python -m pytest`` subprocesses, and a run past its time limit must end with all it started.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.config import load_config
from mutants.build import REFERENCE, build, mutated_sources
from mutants.catalogue import CATALOGUE, EXTRA, GROUPS, by_name
from mutants.meta import ROOT, Outcome, group_files, kill_rates, pytest_args, run_catalogue, run_env, schedule, table
from mutants.runner import ForkServer, ForkServerError, RunTimeout

from .prefetch import prefetched

PUBLIC_KILL_RATE_MIN = 0.8
# The whole catalogue runs in the first test's setup: about 1.5 min of CPU on 2 cores, far
# more on a loaded machine; the suite's default per-test limit (120 s) must not cut it.
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def policy():
    return load_config(ROOT / "grading.yaml")


HUNG_TEST = """
import os, pathlib, subprocess, time

def test_hangs():
    child = subprocess.Popen(["sleep", "600"])
    pathlib.Path(__file__).with_name("pids").write_text(f"{os.getpid()} {child.pid}")
    time.sleep(600)
"""
HUNG_LIMIT = 10  # seconds: far more than a forked run takes to reach the test, even under load


def _run_hung_test(folder: Path) -> tuple[BaseException | None, float, ForkServer]:
    """(what the run raised, its seconds, its closed server) for a run that hangs."""
    (folder / "test_hung.py").write_text(textwrap.dedent(HUNG_TEST), encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    with ForkServer(folder, run_env(), folder / "server.log") as server:
        start = time.monotonic()
        try:
            server.run(["-p", "no:cacheprovider", "test_hung.py"], folder / "out.txt", HUNG_LIMIT)
        except RunTimeout as err:
            return err, time.monotonic() - start, server
        return None, time.monotonic() - start, server


def _forked_and_subprocess_runs(folder: Path, policy) -> tuple[tuple[int, str], tuple[int, str]]:
    """(exit code, output) of the same pytest run of a mutant's public tests, without ``-x``
    (every failure), forked by the fork server and as a ``python -m pytest`` subprocess."""
    mutant = by_name("word_ids_sorted")
    submission = build(mutant, folder / mutant.name)
    public, _, marker_expr = group_files(mutant.group, policy)
    args = [a for a in pytest_args(submission, public, marker_expr) if a != "-x"]
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=run_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    with ForkServer(ROOT, run_env(), folder / "server.log", folder / "pycache") as server:  # as run_catalogue
        code = server.run(args, folder / "out.txt", 300)
    output, _ = proc.communicate(timeout=300)
    return (code, (folder / "out.txt").read_text(encoding="utf-8")), (proc.returncode, output)


@prefetched
def background(prefetch):
    """The runner's own checks (a hung run, a forked run against a subprocess), started in
    threads by :func:`outcomes` before the catalogue: they overlap its long speed mutant."""
    pool = ThreadPoolExecutor(max_workers=2)
    futures = {
        "hung": pool.submit(_run_hung_test, prefetch.mktemp("hung")),
        "compare": pool.submit(_forked_and_subprocess_runs, prefetch.mktemp("compare"), load_config(ROOT / "grading.yaml")),
    }
    pool.shutdown(wait=False)  # its threads end with these two runs
    return futures


def _reference_digest() -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(REFERENCE.glob("*.py")))).hexdigest()


@dataclass
class CatalogueRun:
    by_name: dict[str, Outcome]  # in catalogue order
    report: str  # the kill-rate table
    temp_root: Path  # the folder the run made its temp folder in
    reference_digests: tuple[str, str]  # of reference/*.py, before and after the run


@prefetched
def outcomes(prefetch) -> CatalogueRun:
    prefetch.get(background.setup)
    policy = load_config(ROOT / "grading.yaml")
    temp_root = prefetch.mktemp("catalogue_temp")
    before = _reference_digest()
    results = run_catalogue(CATALOGUE, jobs=2, config=policy, temp_root=temp_root)
    return CatalogueRun({o.mutant.name: o for o in results}, table(results), temp_root, (before, _reference_digest()))


def test_catalogue_covers_every_part():
    assert len(CATALOGUE) >= 30
    missing = set(GROUPS) - {"speed"} - {m.group for m in CATALOGUE}
    assert not missing, f"no mutant for group(s) {sorted(missing)}"


@pytest.mark.parametrize("mutant", CATALOGUE + EXTRA, ids=[m.name for m in CATALOGUE + EXTRA])
def test_every_mutant_still_applies_to_the_reference(mutant):
    # Fails (loudly) when a reference refactor moved a snippet a mutant replaces.
    assert mutated_sources(mutant)


# mutants/catalogue/training.py works this example by hand: the counts (a, a) 1, (a, b) 2,
# (b, a) 2 give (b, a), then (ba, ba) wins a tie at 1, then (a, b) beats (a, a) at 1 each;
# taking the one (a, b) between the two (b, a) of "baba" away twice leaves it 0, so (a, a)
HAND_WORKED_TEXT = "aab<|endoftext|>baba"
HAND_WORKED_RIGHT = [(b"b", b"a"), (b"ba", b"ba"), (b"a", b"b")]
HAND_WORKED_DOUBLE_SUBTRACTION = [(b"b", b"a"), (b"ba", b"ba"), (b"a", b"a")]


@pytest.mark.parametrize("name, expected", [
    ("pair_between_occurrences_subtracted_twice", HAND_WORKED_DOUBLE_SUBTRACTION),
    ("control_trainer", HAND_WORKED_RIGHT),
])
def test_subtracting_the_pair_between_two_occurrences_twice_changes_the_hand_worked_merges(tmp_path, name, expected):
    package = f"hand_worked_{name}"
    build(by_name(name), tmp_path / "sub", package=package)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(HAND_WORKED_TEXT, encoding="utf-8")
    sys.path.insert(0, str(tmp_path / "sub"))
    try:
        train = importlib.import_module(f"{package}.train")
        _, merges = train.train_bpe(str(corpus), 256 + 1 + 3, ["<|endoftext|>"])
    finally:
        sys.path.remove(str(tmp_path / "sub"))
        for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[module]
    assert merges == expected


def test_the_reference_gives_the_hand_worked_merges(tmp_path):
    from reference.train import train_bpe

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(HAND_WORKED_TEXT, encoding="utf-8")
    assert train_bpe(str(corpus), 256 + 1 + 3, ["<|endoftext|>"])[1] == HAND_WORKED_RIGHT


def test_first_files_are_test_files_of_the_mutants_group(policy):
    for mutant in CATALOGUE + EXTRA:
        public, hidden, _ = group_files(mutant.group, policy)
        stray = [f for f in mutant.first if f not in public + hidden]
        assert not stray, f"mutant {mutant.name}: first={stray} are not test files of group {mutant.group}"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", CATALOGUE, ids=[m.name for m in CATALOGUE])
def test_mutant_is_killed(outcomes, mutant):
    o = outcomes.by_name[mutant.name]
    assert o.killed, (
        f"mutant {mutant.name} ({mutant.group}) survived every graded test of its group: {mutant.description}"
        + (f"\n  run problem: {o.error}" if o.error else "")
        + "\nAdd a test that catches this bug (see mutants/catalogue/)."
    )


@pytest.mark.slow
def test_public_tests_alone_kill_most_mutants(outcomes, capsys):
    report = outcomes.report
    total, public = kill_rates(list(outcomes.by_name.values()))
    with capsys.disabled():  # the table goes to the CI log, -s or not
        print("\n\nMutant kill-rate table (mutants/catalogue/):\n" + report, flush=True)
    assert public >= PUBLIC_KILL_RATE_MIN, f"public kill rate {public:.0%} < {PUBLIC_KILL_RATE_MIN:.0%}\n{report}"


@pytest.mark.slow
def test_building_and_running_every_mutant_leaves_reference_untouched(outcomes):
    # the catalogue builds every mutant (a copy of reference/ with its edits) and runs it
    before, after = outcomes.reference_digests
    assert after == before


@pytest.mark.slow
def test_slowest_mutants_start_first_and_outcomes_keep_catalogue_order(outcomes):
    order = schedule(CATALOGUE)
    speed = [i for i, m in enumerate(CATALOGUE) if m.group == "speed"]
    assert speed and order[: len(speed)] == speed and sorted(order) == list(range(len(CATALOGUE)))
    assert list(outcomes.by_name) == [m.name for m in CATALOGUE]


_FAILURE = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)
_COUNTS = re.compile(r"^=*\s*(\d+ (?:failed|passed|error).*?) in [\d.]+s", re.M)


def _command_lines_naming(text: str) -> list[str]:
    """The command lines of this machine's processes that contain ``text``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        if text in line:
            found.append(line)
    return found


@pytest.mark.slow
def test_the_catalogue_leaves_no_temp_folder_nor_process_behind(outcomes):
    # the fork server's command line names its bytecode folder inside the temp folder, and
    # each run forked from it keeps that command line
    temp_root = outcomes.temp_root
    assert list(temp_root.iterdir()) == []
    assert _command_lines_naming(str(temp_root)) == []


def _failures_and_counts(output: str) -> tuple[list[str], list[str]]:
    return sorted(_FAILURE.findall(output)), _COUNTS.findall(output)


@pytest.mark.slow
def test_a_forked_run_reports_what_a_pytest_subprocess_reports(background):
    # every failure of a whole test file, the counts line and the exit code
    (code, forked), (expected_code, output) = background["compare"].result(timeout=600)
    expected = _failures_and_counts(output)
    assert expected[0] and expected[1], f"the subprocess run found no failure:\n{output[-2000:]}"
    assert (code, _failures_and_counts(forked)) == (expected_code, expected), forked[-3000:]
    assert "PytestAssertRewriteWarning" not in forked, forked[-3000:]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")  # a zombie left to init to reap is no running process


@pytest.mark.slow
def test_a_run_past_its_time_limit_is_killed_with_everything_it_started(background):
    error, seconds, server = background["hung"].result(timeout=600)
    assert isinstance(error, RunTimeout), f"expected RunTimeout, got {error!r}"
    assert HUNG_LIMIT <= seconds < HUNG_LIMIT + 30
    pids = [int(p) for p in (server.log.parent / "pids").read_text().split()]
    deadline = time.monotonic() + 10
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_gone(p) for p in pids), f"left running: {[p for p in pids if not _gone(p)]}"
    assert server.proc.returncode == 0  # the server itself ended when closed


def test_a_fork_server_that_cannot_start_is_one_line_naming_it_and_its_error(tmp_path):
    (tmp_path / "mutants").mkdir()
    (tmp_path / "mutants" / "__init__.py").write_text("raise ImportError('planted: no mutants here')\n")
    env = run_env() | {"PYTHONPATH": str(tmp_path)}
    with ForkServer(tmp_path, env, tmp_path / "server.log") as server:
        with pytest.raises(ForkServerError) as err:
            server.run(["--version"], tmp_path / "out.txt", 60)
    message = str(err.value)
    assert "\n" not in message and "mutants.forkserver" in message and "planted: no mutants here" in message, message
