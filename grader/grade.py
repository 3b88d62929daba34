"""``python -m grader grade``: run the graded suite on one submission and write its results.

The tests run in a pytest subprocess (student code, in turn, runs in isolated workers
started from there); this process only reads the report it leaves, scores it by
``grading.yaml`` and writes the results files. Whatever happens, a results file is written:
also when the run is stopped at ``--max-time`` or by SIGTERM or SIGINT (what ``timeout``,
Gradescope and CI runners send), from the journal of the tests finished before
(:mod:`grader.journal`), the tests not run marked with the reason.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from harness import ROOT, gpt2_cache, hash_seed, use_shared_tiktoken_cache
from harness.childenv import child_env
from harness.printable import printable, terminal_text
from sandbox import leftovers, proctree
from . import redact
from .config import DEFAULT_PATHS, Config, ConfigError, load_config, write_policy
from .guide import look_here
from .install import Installation, for_grading, installing
from .intake import CS336_EXTRA, Rejected, extracted, is_upload, submission_notes, unwrap_submission, unwrapped_note  # noqa: F401  (CS336_EXTRA re-exported)
from .policies import DEFAULT_POLICY
from .request import GradeRequest  # noqa: F401  (the request grade takes; re-exported)
from .request import stop_process
from .journal import journal_path, replay
from .report import GRADING_TIME, GradeReport, ReportError, RunReport, breaker_notes, read_run_report, share_notes, write_grade_report
from .formats import failure_json, gradescope_json, plain_report, table, write_json, write_junit
from .scoring import score_report
from .stopping import RunStopped, Stopped, StopSignals, hold_signals

EXIT_OK, EXIT_HARNESS, EXIT_CONFIG = 0, 1, 2
STOP_GRACE = 5.0  # seconds the test run gets to stop its workers when stopped (then SIGKILL)
# of the time budget: the last WRAP_UP seconds are for stopping the test run and writing the results; the test run
# itself aims to end RUN_MARGIN seconds before that (its last test cut short, the rest not reached). Both at most a
# tenth of the budget.
WRAP_UP, RUN_MARGIN = STOP_GRACE + 3.0, 10.0
PEAK_EVERY = 0.5  # seconds between readings of the test run's peak memory
# the installed pytest plugins the graded suite uses, loaded by name: the test run turns off plugin autoloading
# (PYTEST_DISABLE_PLUGIN_AUTOLOAD), so other installed plugins (anyio, pytest-benchmark, ...) cannot change how tests
# run, and pytest does not rewrite the asserts of every autoloaded distribution's modules (all of hypothesis: ~1.5 s
# of CPU per grading, redone every time, as the run writes no bytecode)
SUITE_PLUGINS = ("pytest_timeout", "_hypothesis_pytestplugin")


def _process_age() -> float:
    """Seconds since this process started: the interpreter's start-up counts against the budget too, as the
    platform's clock counts it (0 where ``/proc`` cannot tell)."""
    try:
        ticks = leftovers.start_time(os.getpid())
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK")) if ticks is not None else 0.0
    except (OSError, ValueError, IndexError):
        return 0.0


def _share(seconds: float, budget: float) -> float:
    """``seconds`` of the budget, at most a tenth of it."""
    return min(seconds, budget / 10)


def _say(req: GradeRequest, text: str) -> None:
    if not req.quiet:
        print(terminal_text(text), flush=True)  # the submission's messages: no escape sequence acts


def isolated(req: GradeRequest) -> bool:
    """Whether the submission runs in isolated workers (where the sandbox is there), not in the test run's process."""
    return importlib.util.find_spec("sandbox.isolation") is not None if req.isolate is None else req.isolate


def suite_env(seed: int) -> dict[str, str]:
    """The test run's environment. Its hash seed is the grading's ``seed``, as the isolated
    workers' is: what pytest lists from a set of strings (a dict comparison's ``Differing
    items``) and whatever the submission takes from its own sets come in one order every run,
    in-process as isolated, so the score does too. A bug that depends on that order may pass
    under one seed: the set-order test of special tokens catches the common one whatever the
    seed, and grading with other ``--seed`` values varies the order."""
    # it works in a temporary folder (_run_suite), the harness imported from the checkout (the
    # workers' own path leaves PYTHONPATH out: sandbox.pyenv) and Hypothesis's tables kept there
    # (grader/hypothesis_tables.py), as when it worked in the checkout
    env = child_env(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # see SUITE_PLUGINS
                    PYTHONHASHSEED=hash_seed(seed), PYTHONPATH=str(ROOT))
    env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(ROOT / ".hypothesis"))
    return env


def suite_plugin_options() -> list[str]:
    """``-p NAME`` for each of :data:`SUITE_PLUGINS` that is installed (hypothesis is a test
    dependency only)."""
    return [arg for plugin in SUITE_PLUGINS if importlib.util.find_spec(plugin) is not None for arg in ("-p", plugin)]


def pytest_command(req: GradeRequest, policy: Path, report: Path, seed: int, paths: tuple[str, ...] = DEFAULT_PATHS, packages: Path | None = None) -> list[str]:
    """The test run's command; ``policy``: the loaded grading policy, passed down
    (:func:`grader.config.write_policy`); ``paths``: the policy's test paths (``--tests`` replaces them); ``packages``: see :mod:`grader.install`. The plugins (grading, sandbox) are loaded by the
    ``addopts`` of the ``pyproject.toml`` given with ``-c``, the installed ones the suite
    uses by name (:data:`SUITE_PLUGINS`; it runs without plugin autoloading)."""
    cmd = [
        sys.executable, "-m", "pytest", *[str(ROOT / t) for t in (req.tests or paths)],
        "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT),
        "--grading-policy", str(policy), "--grading-report", str(report),
        "--impl", req.impl, "--seed", str(seed), "-q", "--no-header", "-rN", "--color=no",
    ]
    cmd += suite_plugin_options()
    if req.submission is not None:
        cmd += ["--submission", str(req.submission)]
    cmd += ["--submission-packages", str(packages)] if packages is not None else []
    if req.tests:
        cmd.append("--grading-partial")
    if isolated(req):
        cmd += ["--isolate"]
    return cmd


def run_tests(cmd: list[str], env: dict, log, req: GradeRequest, started: float, peak: list[float],
              cwd: Path = ROOT) -> int | RunStopped:
    """Run the pytest command in ``cwd``; its exit status, or why it was stopped (at the end of the time
    budget ``req.max_time`` less its wrap-up, or by a signal to ``grade``): SIGTERM first (the grading plugin then stops its workers
    and removes their sandboxes), SIGKILL after ``STOP_GRACE`` seconds. ``peak[0]`` gets its peak
    memory (MB) read from outside, true even if it is killed before reporting its own."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=log, stderr=None if not req.quiet else subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )
    try:
        while True:
            peak[0] = max(peak[0], (proctree.status_kb(proc.pid, "VmHWM") or 0) / 1024)
            left = started + req.max_time - _share(WRAP_UP, req.max_time) - time.monotonic()
            try:
                return proc.wait(timeout=max(0.0, min(PEAK_EVERY, left)))
            except subprocess.TimeoutExpired:
                if left <= PEAK_EVERY:
                    raise
    except subprocess.TimeoutExpired:
        stop_process(proc, min(STOP_GRACE, _share(WRAP_UP, req.max_time) / 2))
        return run_stopped_at_budget(req)
    except Stopped as stop:
        stop_process(proc, STOP_GRACE)
        return RunStopped(f"grading stopped by {stop.name} after {time.monotonic() - started:.0f} s", stop.signum)
    except BaseException:
        stop_process(proc, STOP_GRACE)
        raise


def run_stopped_at_budget(req: GradeRequest) -> RunStopped:
    """Why a test run stopped by ``grade`` at the end of the time budget was stopped."""
    return RunStopped(f"grading stopped after {req.max_time:g} s, its time budget")


def fail(req: GradeRequest, reason: str, code: int, started: float, stopped: str | None = None) -> int:
    print(f"grade: {terminal_text(reason)}", file=sys.stderr, flush=True)
    write_json(req.results, failure_json(reason, time.monotonic() - started))
    if req.report:
        write_grade_report(req.report, GradeReport(error=reason, seconds=round(time.monotonic() - started, 3), stopped=stopped))
    return code


def harness_failed(req: GradeRequest, reason: str, started: float) -> int:
    """Grading could not run for a reason that is the harness's, not the submission's: exit 1,
    and a results file that says so, with no score (Gradescope shows the output, not a 0)."""
    print(f"grade: {terminal_text(reason)}", file=sys.stderr, flush=True)
    seconds = round(time.monotonic() - started, 1)
    write_json(req.results, {
        "execution_time": seconds,
        "output": f"Grading could not run: {reason}. This is not a score: the course staff must fix the grader.",
        "visibility": "visible", "tests": [], "extra_data": {"harness_error": reason},
    })
    if req.report:
        write_grade_report(req.report, GradeReport(error=reason, harness_error=True, seconds=seconds))
    return EXIT_HARNESS


def grade(req: GradeRequest) -> int:
    """Grade one submission; returns the exit status (0 whenever grading completed; 128 + the
    signal's number when SIGTERM or SIGINT stopped it, results written all the same)."""
    started = time.monotonic() - _process_age()
    with StopSignals():
        try:
            return _grade(req, started)
        except Stopped as stop:  # before or after the test run: nothing graded, or nothing lost
            reason = f"grading was stopped by {stop.name} after {time.monotonic() - started:.0f} s, before any test ran"
            fail(req, reason, EXIT_HARNESS, started, stopped=reason)
            return 128 + stop.signum


def _grade(req: GradeRequest, started: float) -> int:
    if req.submission is not None and is_upload(req.submission):
        return _grade_upload(req, started)
    name = req.seed_name()  # seeds per-submission cases
    if req.submission is not None and not req.unwrapped:  # everything inside one folder: graded from it, as batch does, and said
        submission, unwrapped = unwrap_submission(req.submission)
        req = replace(req, submission=submission, unwrapped=unwrapped)
    req = replace(req, config=req.policy_file())
    try:
        config = load_config(req.config)
    except ConfigError as err:
        return fail(req, str(err), EXIT_CONFIG, started)
    if req.max_time is None:
        req = replace(req, max_time=config.time.budget)
    if req.submission is not None:
        req = replace(req, submission=req.submission.resolve())
    refused = _refuse(req, config, started)
    if refused is not None:
        return refused
    seed = config.seed_for(name)
    with for_grading(req, config, lambda text: _say(req, text)) as packages:  # removed when the test run has ended
        ran = _run_suite(req, config, seed, started, packages.path)
    if isinstance(ran, int):
        return ran
    code, report, tmp = ran
    scrub = redact.for_grading(ROOT, req.submission, req.results, tmp, packages.path)
    for test in report.tests:
        test.output = scrub(test.output)
        test.properties = {k: scrub(v) if type(v) is str else v for k, v in test.properties.items()}
        test.known_bug = scrub(test.known_bug) if test.known_bug is not None else None
        test.load_error = scrub(test.load_error) if test.load_error is not None else None
    if report.error is not None:
        return fail(req, report.error, EXIT_CONFIG, started)
    written = _write_results(req, config, report, code, seed, scrub, started, packages)
    stopped_by = code.signal if isinstance(code, RunStopped) else None
    return 128 + stopped_by if stopped_by is not None else written


def _grade_upload(req: GradeRequest, started: float) -> int:
    """A .zip of a submission, as batch takes them: graded from its safe extraction (removed afterwards)."""
    with contextlib.ExitStack() as stack:
        try:
            folder = stack.enter_context(extracted(req.submission))
        except Rejected as err:
            return fail(req, f"{req.submission.name}: {err}", EXIT_HARNESS, started)
        _say(req, f"{req.submission.name}: extracted into a temporary folder (removed afterwards), graded as {folder.name}/")
        return _grade(replace(req, submission=folder), started)


def _refuse(req: GradeRequest, config: Config, started: float) -> int | None:
    """What stops grading before any test runs (a missing submission folder, GPT-2's files
    missing, a worker that cannot run the reference): its exit status, results written."""
    if req.submission is not None:
        if not req.submission.is_dir():
            return fail(req, f"submission folder {req.submission} {'is not a folder' if req.submission.exists() else 'does not exist'}", EXIT_HARNESS, started)
        if req.submission == Path(tempfile.gettempdir()).resolve():  # it would hold the sandboxes made to grade it
            return harness_failed(req, f"submission folder {req.submission} is the temporary folder (TMPDIR) grading makes its "
                                  "sandboxes in; put the submission in a folder of its own, or set TMPDIR to another folder", started)
    use_shared_tiktoken_cache()
    missing = gpt2_cache.check()  # the suite's oracles need GPT-2's files: say so in one line
    if missing:
        return fail(req, missing, EXIT_HARNESS, started)
    if not req.self_checked and isolated(req):
        from .selfcheck import check_reference, harness_error

        cause = check_reference(config.isolation, config.forbidden_modules)
        if cause is not None:
            return harness_failed(req, harness_error(cause), started)
    return None


def grading_log(results: Path) -> Path:
    """Where the test run's output goes, beside the results file: ``grading.log`` beside a
    ``results.json`` (Gradescope's name), ``NAME.grading.log`` beside any other ``NAME.json``,
    so that gradings sharing a folder (``batch``'s ``results/alice.json``, ``results/bob.json``,
    two at a time) never write one log."""
    return results.parent / ("grading.log" if results.stem == "results" else f"{results.stem}.grading.log")


def _run_suite(req: GradeRequest, config: Config, seed: int, started: float, packages: Path | None) -> tuple[int | RunStopped, RunReport, Path] | int:
    """Run the suite in a pytest subprocess (``packages``: installed for the submission): its exit status (or why it was stopped, see
    :func:`run_tests`), its report and the temporary folder it ran in (gone by now); or the
    exit status of a failure, results written."""
    env = suite_env(seed)
    log_path = grading_log(req.results)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    _say(req, f"grading {req.submission or req.impl} (seed {seed}) ...")
    with tempfile.TemporaryDirectory(prefix="bpe-grade-") as tmp:
        report_path = Path(tmp) / "report.json"
        cmd = pytest_command(req, write_policy(config, Path(tmp) / "policy.pickle"), report_path, seed, config.paths, packages)
        cmd += ["--basetemp", str(Path(tmp) / "pytest")]  # the tests' files go with the rest
        run_ends = started + req.max_time - _share(WRAP_UP, req.max_time) - _share(RUN_MARGIN, req.max_time)
        cmd += ["--grading-deadline", f"{time.time() + run_ends - time.monotonic():.3f}", "--grading-budget", f"{req.max_time:g}"]
        env[leftovers.STATE_ENV] = tmp
        work = Path(tmp) / "work"  # the run's working folder: what the submission writes by a relative name in-process goes with it
        work.mkdir()
        peak = [0.0]
        with open(log_path, "w", encoding="utf-8") as log:
            try:
                code = run_tests(cmd, env, log, req, started, peak, cwd=work)
                hold_signals()
            finally:  # whatever the test run left running or on disk, if it died without cleaning up
                leftovers.sweep(Path(tmp))
        try:
            report = read_run_report(report_path)
        except ReportError as err:
            reason = "the test run ended before reporting anything" if not isinstance(code, RunStopped) else f"{code.reason}, before any test ran"
            reason = reason if not report_path.exists() else str(err)  # names the file and the field
            return fail(req, f"{reason}; see {log_path}", EXIT_HARNESS, started)
        if report.incomplete:  # stopped or crashed: keep every test finished before
            replay(report, journal_path(report_path))
        if isinstance(code, RunStopped):
            for test in report.tests:
                if test.outcome == "not run" and not test.output:
                    test.output = f"not run: {code.reason}, before this test finished"
                    test.limits = [GRADING_TIME] if code.at_budget else []
        report.peak_rss_mb = max(report.peak_rss_mb or 0.0, peak[0])
    return code, report, Path(tmp)


def _write_results(req: GradeRequest, config: Config, report: RunReport, code: int | RunStopped, seed: int, scrub, started: float, installed: Installation = Installation()) -> int:
    """Score the report, write the results files and print the summary (``installed``: what :mod:`grader.install` did)."""
    groups = score_report(config, report)
    summary = table(groups)
    notes = [f"seed {seed}"]
    if Path(req.config).resolve() != DEFAULT_POLICY.resolve():
        notes.append(f"policy: {Path(req.config).name}")
    if req.tests:
        notes.append(f"partial grade: only {' '.join(req.tests)}")
    layout = submission_notes(req, report.submission, installing(req, config), installed.modules) + list(installed.notes)
    notes += unwrapped_note(req) + layout
    if report.isolation:
        notes.append(f"isolation: {report.isolation}")
    notes += breaker_notes(report) + share_notes(report, {g.name: g.title for g in config.groups})
    not_reached = any(t.properties.get("not_reached") for t in report.tests)
    if isinstance(code, RunStopped):
        notes.append(f"{code.reason}; tests not run score 0")
    elif report.incomplete:
        notes.append("the test run stopped early; tests not run score 0")
    elif not_reached:
        notes.append(f"grading stopped after {req.max_time:g} s, its time budget; tests not reached score 0")
    output = scrub(summary + "\n" + "; ".join(notes))
    elapsed = time.monotonic() - started
    write_json(req.results, gradescope_json(groups, elapsed, output))
    if req.junit:
        write_junit(req.junit, groups)
    if req.report:
        used_up = (isinstance(code, RunStopped) and code.at_budget) or not_reached
        stopped = code.reason if isinstance(code, RunStopped) and not used_up else None
        write_grade_report(req.report, plain_report(groups, seed=seed, seconds=elapsed, notes=notes, grader_peak_mb=report.peak_rss_mb,
                                                    budget=req.max_time, budget_used_up=used_up, stopped=stopped, layout=layout))
    _say(req, output)
    worst = look_here(groups)
    if worst:
        _say(req, "\n" + worst + "\n")
    _say(req, f"results: {req.results}" + (f", junit: {req.junit}" if req.junit else ""))
    return EXIT_OK
