"""``python -m grader batch SUBMISSIONS_DIR``: grade a folder of submissions.

Each entry of the folder is one student: a sub-folder laid out like this repository
(``adapters.py`` + ``student/``, or a CS336-layout repository with ``tests/adapters.py``) or
a ``.zip`` of one (extracted safely: no absolute paths, ``..``, links or devices, a cap on
size and file count). Odd or colliding names get safe, distinct ones (said in the notes). Every submission is
copied into ``OUT/work/<student>`` and graded by ``python -m grader grade`` in its own
process (so with its own isolated workers and its own time budget: ``grading.yaml``
``budget``, or ``--max-time``), several at once. Whatever one submission does costs only its
own row; the summary lists who used up the budget. SIGTERM or SIGINT stops the batch: each
grading under way is stopped and writes its results from the tests it finished.

Writes ``OUT/grades.csv`` (student, total, one column per group; sorted by student),
``OUT/results/<student>.json`` (Gradescope results), ``OUT/reports/<student>.json`` (the
grade command's plain report) and ``OUT/summary.txt`` (also printed).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness import ROOT
from harness import submission as S
from harness.childenv import LEAKY, child_env
from harness.printable import terminal_text
from .attention import Attention, from_report
from .attention import table as attention_table
from .config import Config, ConfigError, load_config
from .install import CACHE_ENV
from .intake import Rejected, Submission, copy_folder, discover, safe_extract, unwrap
from .batch_pool import RUNNING, STOPPING, grade_all, kill_group, signal_group
from .policies import DEFAULT_POLICY
from .request import GradeRequest
from .report import GradeReport, ReportError, read_grade_report, write_grade_report
from .formats import failure_json, make_folder, write_json

GRACE = 60.0  # seconds beyond --max-time before the grade process itself is killed
@dataclass
class Row:
    student: str
    total: float = 0.0
    groups: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None  # why it could not be graded
    skipped: bool = False  # results reused from an earlier run
    tests: dict[str, str] = field(default_factory=dict)  # results entry worth points (its test, named) -> passed/failed
    unscored: int = 0  # results entries worth no points: the log's "tests passed" counts them, the pass rates not
    possible: float | None = None  # points of the groups graded (all of them unless --tests)
    attention: Attention = field(default_factory=Attention)  # limits hit, errors, known bugs
    budget_used_up: bool = False  # grading stopped at its time budget: tests not reached score 0


@dataclass
class BatchOptions:
    out: Path
    config: Path = DEFAULT_POLICY
    jobs: int = os.cpu_count() or 1
    force: bool = False
    max_time: float | None = None  # each grading's time budget (default: grading.yaml's `budget`)
    tests: list[str] | None = None
    quiet: bool = False
    scheduler: str | None = None  # a Dask scheduler's address: grade there (grader.cluster)
    similarity: bool = False  # only write the similarity report (grader.similarity)
    public: Path | None = None  # known public solutions for the similarity report
    pip_cache: str | None = None  # the batch's pip cache for --install-declared (run_batch makes it)


def _group_scores(results: dict) -> dict[str, float]:
    scores: dict[str, float] = {}
    for t in results.get("tests", []):
        group = (t.get("tags") or ["?"])[0]
        scores[group] = scores.get(group, 0.0) + t.get("score", 0.0)
    return {g: round(s, 4) for g, s in scores.items()}


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _read_report(path: Path) -> GradeReport | None:
    """The grade report at ``path``, or None when there is none or it cannot be read."""
    try:
        return read_grade_report(path)
    except ReportError:
        return None


def _entry_names(entries: list[dict]) -> list[str]:
    """One name per results entry: its test (``extra_data.test``), and where two entries share
    a test (its cases split between groups or visibilities) the entry's own name after it."""
    tests = [(t.get("extra_data") or {}).get("test", t["name"]) for t in entries]
    return [f"{test} [{t['name']}]" if tests.count(test) > 1 else test for test, t in zip(tests, entries)]


def row_from_results(student: str, results: dict, seconds: float | None = None, report: GradeReport | None = None) -> Row:
    """A CSV row from a Gradescope results file; the group scores, and why grading failed,
    come from the grade command's report when there is one (the scores exact, not a sum of
    rounded per-test scores)."""
    groups = _group_scores(results)
    possible = None
    if report is not None and report.groups:
        groups = {g: round(v.score, 4) for g, v in report.groups.items()}
        possible = round(sum(v.points for v in report.groups.values()), 4)
    row = Row(student, total=round(float(results.get("score", 0.0)), 4), groups=groups, possible=possible)
    row.seconds = float(results.get("execution_time", 0.0)) if seconds is None else seconds
    scored = [t for t in results.get("tests", []) if t.get("max_score", 1) > 0]  # a test worth no points (the CS336
    row.tests = dict(zip(_entry_names(scored), (t["status"] for t in scored)))  # policy's "Beyond CS336") is no one's hardest
    row.unscored = len(results.get("tests", [])) - len(scored)
    if report is not None and report.error is not None and not report.harness_error:
        row.error = report.error
    row.attention = from_report(report, row.error)
    row.budget_used_up = report is not None and report.budget_used_up
    return row


def grade_one(sub: Submission, opts: BatchOptions, run=None) -> Row:
    """Grade one submission in its own ``grade`` process (or reuse results newer than it);
    ``run`` runs it elsewhere (``grader.cluster.ClusterRunner``) instead of :func:`_run_grade`."""
    results_path = opts.out / "results" / f"{sub.student}.json"
    report_path = opts.out / "reports" / f"{sub.student}.json"
    source_path = report_path.with_suffix(".source")  # the entry graded under this name: a name can pass to another
    if not opts.force and results_path.exists() and results_path.stat().st_mtime > sub.mtime() and _read(source_path) == sub.source.name:
        results, report = _read(results_path), _read_report(report_path)
        if results is not None and not (report is not None and report.stopped):  # else unreadable or stopped: grade again
            row = row_from_results(sub.student, results, report=report)
            row.skipped = True
            return row
    started = time.monotonic()
    source_path.unlink(missing_ok=True)
    log = opts.out / "logs" / f"{sub.student}.log"
    try:
        root = _stage(sub, opts.out / "work" / sub.student)
        returncode = (run or _run_grade)(root, results_path, report_path, log, opts)
        try:
            results = json.loads(results_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise Rejected(f"the grader wrote no results (exit {returncode}); see {log}") from None
    except Rejected as err:
        write_json(results_path, failure_json(str(err), time.monotonic() - started))
        write_grade_report(report_path, GradeReport(error=str(err), seconds=round(time.monotonic() - started, 3)))
        write_json(source_path, sub.source.name)
        return Row(sub.student, seconds=time.monotonic() - started, error=str(err))
    write_json(source_path, sub.source.name)
    if results_path.stat().st_mtime < sub.mtime():  # keep "results newer than submission" true
        os.utime(results_path)
    return row_from_results(sub.student, results, seconds=time.monotonic() - started, report=_read_report(report_path))


def _stage(sub: Submission, work: Path) -> Path:
    """Copy (or extract) the submission into ``work``, under the student's name (it seeds the
    per-submission cases); ``Rejected`` when it cannot be graded. An upload with everything
    inside one folder stays so: ``grade`` grades it from that folder and says so."""
    if work.exists():
        shutil.rmtree(work, ignore_errors=True)
    try:
        if sub.source.is_file():
            safe_extract(sub.source, work)
        else:
            copy_folder(sub.source, work)
    except Rejected:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if S.detect_layout(unwrap(work)) is None:
        raise Rejected("no adapters.py (nor tests/adapters.py) in the submission")
    return work


def grade_request(root: Path, results_path: Path, report_path: Path, opts: BatchOptions) -> GradeRequest:
    """The grading of one submission folder ``root`` (its results and report where given)."""
    return GradeRequest(
        submission=root, results=results_path, report=report_path, config=opts.config, max_time=opts.max_time,
        tests=tuple(opts.tests) if opts.tests else None,
        self_checked=True,  # run_batch ran it before grading anyone; the log keeps grade's output (layout, isolation, table)
    )


def _run_grade(root: Path, results_path: Path, report_path: Path, log: Path, opts: BatchOptions,
               prefix: tuple[str, ...] | list[str] = ()) -> int:
    """``python -m grader grade`` on ``root`` (after ``prefix``) in a process group of its own,
    output to ``log``; its exit status. ``Rejected`` when it outlives ``--max-time`` plus a grace."""
    cmd = [*prefix, *grade_request(root, results_path, report_path, opts).argv()]
    log.parent.mkdir(parents=True, exist_ok=True)
    env = child_env(keep=LEAKY)  # the grade command filters for its own children
    if opts.jobs > 1:  # gradings side by side: no busy-polling for replies (sandbox.channel.default_spin)
        env.setdefault("BPE_GRADER_SPIN", "0")
    if opts.pip_cache:
        env[CACHE_ENV] = opts.pip_cache
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env)
        RUNNING.add(proc.pid)
        if STOPPING.is_set():  # started as the batch was being stopped
            signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=opts.max_time + GRACE)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
            raise Rejected(f"the grader did not finish within {opts.max_time + GRACE:g} s") from None
        finally:
            RUNNING.discard(proc.pid)
            kill_group(proc.pid)  # whatever the submission left behind in this process group
    return proc.returncode


# ---- outputs ---------------------------------------------------------------------------


def write_csv(path: Path, rows: list[Row], config: Config) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    groups = _graded_groups(rows, config)[0]  # with --tests, the groups graded only
    writer.writerow(["student", "total", *[g.name for g in groups]])
    for r in rows:
        writer.writerow([r.student, f"{r.total:g}", *[f"{r.groups.get(g.name, 0.0):g}" for g in groups]])
    path.write_text(buf.getvalue(), encoding="utf-8")


def histogram(values: list[float], top: float, bins: int = 10, width: int = 40) -> list[str]:
    top = top or max(values, default=0.0) or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int(v / top * bins), bins - 1) if v > 0 else 0] += 1
    most = max(counts) or 1
    lines = []
    for i, c in enumerate(counts):
        lo, hi = top * i / bins, top * (i + 1) / bins
        lines.append(f"  {lo:6.1f} - {hi:6.1f} {'] ' if i == bins - 1 else ') '}{'#' * round(c / most * width):<{width}} {c}")
    return lines


def _graded_groups(rows: list[Row], config: Config) -> tuple[list, float]:
    """The policy's groups the graded submissions were scored on, and their points: all of
    them, or with ``--tests`` only the groups it touches (a partial grade)."""
    seen = {g for r in rows if r.error is None for g in r.groups}
    groups = [g for g in config.groups if g.name in seen] or list(config.groups)
    if len(groups) == len(config.groups):
        return groups, config.total if config.total is not None else sum(g.points for g in config.groups)
    return groups, sum(g.points for g in groups)


def summary(rows: list[Row], config: Config, notes: list[str], max_pass_lines: int | None = None) -> str:
    groups, possible = _graded_groups(rows, config)
    partial = len(groups) < len(config.groups)
    graded = [r for r in rows if r.error is None]
    lines = [f"{len(rows)} submission{'' if len(rows) == 1 else 's'}: {len(graded)} graded, {len(rows) - len(graded)} could not be graded, "
             f"{sum(r.skipped for r in rows)} reused from an earlier run"]
    if partial:
        lines.append(f"partial grade (--tests): only {', '.join(g.name for g in groups)} graded, {possible:g} of "
                     f"{config.total if config.total is not None else sum(g.points for g in config.groups):g} points")
    totals = [r.total for r in graded]
    if totals:
        lines += [
            "",
            f"scores (out of {possible:g}{' graded' if partial else ''}): min {min(totals):g}, median {statistics.median(totals):g}, "
            f"mean {statistics.fmean(totals):.2f}, max {max(totals):g}",
            *histogram(totals, possible),
        ]
    lines += ["", "by group (mean of graded submissions):"]
    for g in groups:
        mean = statistics.fmean([r.groups.get(g.name, 0.0) for r in graded]) if graded else 0.0
        lines.append(f"  {g.name:<20} {mean:7.2f} / {g.points:g}")
    names = sorted({n for r in graded for n in r.tests})
    if names:
        rates = sorted(((sum(r.tests.get(n) == "passed" for r in graded) / len(graded), n) for n in names))
        shown = rates if max_pass_lines is None else rates[:max_pass_lines]
        unscored = max(r.unscored for r in graded)
        also = f"; each log's 'tests passed' also counts the {unscored} worth none" if unscored else ", as each log counts them"
        lines += ["", f"pass rate per test, hardest first ({len(names)} tests that carry points{also}):"]
        lines += [f"  {rate:6.1%}  {name}" for rate, name in shown]
        if len(shown) < len(rates):
            lines.append(f"  ... {len(rates) - len(shown)} more in summary.txt")
    timed = sorted((r for r in rows if not r.skipped), key=lambda r: -r.seconds)[:5]
    if timed:
        lines += ["", "slowest submissions:"] + [f"  {r.seconds:7.1f} s  {r.student}" for r in timed]
    used_up = [r for r in rows if r.budget_used_up]
    if used_up:
        lines += ["", f"used up their time budget (tests not reached score 0; grading.yaml `budget`): {len(used_up)}"]
        lines += [f"  {r.student}: {r.total:g} in {r.seconds:.0f} s" for r in used_up]
    failed = [r for r in rows if r.error is not None]
    if failed:
        lines += ["", "could not be graded:"] + [f"  {r.student}: {r.error}" for r in failed]
    if notes:
        lines += ["", "notes:"] + [f"  {n}" for n in notes]
    marked = attention_table([(r.student, r.attention if r.attention or not r.error else Attention(errors=[r.error])) for r in rows])
    if marked:
        lines += ["", *marked]
    return terminal_text("\n".join(lines))  # errors quote the submission's messages: no escape sequence acts


def _start(opts: BatchOptions, config: Config):
    """Where the gradings run: ``(None, 0)`` for the local pool, once the self-check passed;
    ``(runner, 0)`` with ``--scheduler`` (``grader.cluster``: its workers run the self-check);
    ``(None, status)`` when grading cannot start (said in one line)."""
    if opts.scheduler:
        from .cluster import connect

        runner = connect(opts.scheduler, opts.config)
        return runner, 0 if runner is not None else 1
    from .selfcheck import check_reference, harness_error

    cause = check_reference(config.isolation, config.forbidden_modules)  # a broken set-up would score everyone 0
    if cause is not None:
        print(f"batch: {harness_error(cause)}", file=sys.stderr)
        return None, 1
    return None, 0


def _refused(folder: Path, submissions: list[Submission], opts: BatchOptions) -> str | None:
    """Why the batch cannot start (bad input: exit status 2), or None; the output folder is made."""
    missing = [t for t in opts.tests or () if not (ROOT / t.partition("::")[0]).exists()]
    if missing:  # every grading would fail alike
        return f"--tests {' '.join(missing)}: not in the repository (paths are relative to it, as tests/public)"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not submissions:
        return f"no submissions in {folder}"
    why = make_folder(opts.out)
    return f"cannot write the output folder {opts.out} ({why})" if why is not None else None


def run_batch(folder: Path, opts: BatchOptions) -> int:
    try:
        config = load_config(opts.config)
    except ConfigError as err:
        print(f"batch: {err}", file=sys.stderr)
        return 2
    opts.config = Path(opts.config).resolve()
    if opts.max_time is None:
        opts.max_time = config.time.budget
    opts.out = Path(opts.out).resolve()
    submissions, notes = discover(folder, opts.out) if folder.is_dir() else ([], [])
    refused = _refused(folder, submissions, opts)
    if refused:
        print(f"batch: {refused}", file=sys.stderr)
        return 2
    if opts.similarity:
        from .similarity import main as similarity_report

        return similarity_report(submissions, opts.out, opts.public)
    runner, status = _start(opts, config)
    if status:
        return status
    for sub in ("results", "reports", "work", "logs"):
        (opts.out / sub).mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(runner.in_flight(opts.jobs) if runner else opts.jobs, len(submissions)))
    STOPPING.clear()
    if not opts.quiet:
        where = f" on the Dask cluster at {opts.scheduler}" if runner else ""
        print(f"batch: grading {len(submissions)} submission{'s' if len(submissions) != 1 else ''}, {jobs} at a time{where}", flush=True)

    def one(sub: Submission) -> Row:
        try:
            row = grade_one(sub, opts, runner)
        except Exception as err:  # a harness error costs this row only
            row = Row(sub.student, error=f"batch error: {type(err).__name__}: {err}")
        if not opts.quiet:
            state = "reused" if row.skipped else (f"not graded: {row.error}" if row.error else f"{row.seconds:.1f} s")
            print(terminal_text(f"  {row.student}: {row.total:g} ({state})"), flush=True)
        return row

    # one pip cache for the whole batch (grade --install-declared: a class declaring the same
    # packages downloads each once), in TMPDIR, hidden from the workers, removed at the end
    opts.pip_cache = None if runner else tempfile.mkdtemp(prefix="bpe-batch-pip-")
    try:
        rows = grade_all(submissions, one, jobs, runner)
    finally:
        if opts.pip_cache:
            shutil.rmtree(opts.pip_cache, ignore_errors=True)
    if isinstance(rows, int):
        return rows
    write_csv(opts.out / "grades.csv", rows, config)
    (opts.out / "summary.txt").write_text(summary(rows, config, notes) + "\n", encoding="utf-8")
    print(summary(rows, config, notes, max_pass_lines=15))
    print(f"\ngrades: {opts.out / 'grades.csv'}; summary: {opts.out / 'summary.txt'}")
    return 0
