"""The grading-time overhead of isolation: ``grade --impl reference`` in-process against the
same command with the sandboxed worker, run alternately on this machine.

``python -m bench.isolation [--rounds N] [--tests PATH ...]`` prints a Markdown table of the
wall-clock times of each mode (median and best of N) and the overhead, median to median and
best to best. Runs alternate so that a change in the machine's load hits both modes alike;
the best of N is the least disturbed by other work on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.request import GradeRequest

ROOT = Path(__file__).resolve().parent.parent
MODES = {"in-process": False, "isolated": True}  # mode -> GradeRequest.isolate


def grade_seconds(isolate: bool, tests: list[str], results: Path) -> float:
    """Wall-clock seconds of one ``python -m grader grade --impl reference`` run."""
    cmd = GradeRequest(impl="reference", quiet=True, results=results, isolate=isolate, tests=tuple(tests) or None).argv()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench.isolation: grading failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds


def measure(rounds: int, tests: list[str], log=lambda message: None) -> dict[str, list[float]]:
    """``rounds`` alternating runs of each mode; mode -> list of seconds."""
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bpe-bench-isolation-") as tmp:
        for r in range(rounds):
            for mode, isolate in MODES.items():
                times[mode].append(grade_seconds(isolate, tests, Path(tmp) / "results.json"))
                log(f"round {r + 1}/{rounds}: {mode} {times[mode][-1]:.2f} s")
    return times


def table(times: dict[str, list[float]]) -> str:
    base, iso = times["in-process"], times["isolated"]
    rows = [
        "| mode | median (s) | best (s) | runs |",
        "|---|---:|---:|---:|",
        *(f"| {mode} | {statistics.median(t):.2f} | {min(t):.2f} | {len(t)} |" for mode, t in times.items()),
    ]
    median = statistics.median(iso) / statistics.median(base) - 1
    best = min(iso) / min(base) - 1
    rows += ["", f"isolation overhead: {median:+.0%} median to median, {best:+.0%} best to best (target: under +15%)"]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.isolation", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each mode (default 5)")
    parser.add_argument("--tests", nargs="*", default=[], help="test paths to grade (default: the whole suite)")
    args = parser.parse_args(argv)
    times = measure(args.rounds, args.tests, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(f"Machine: {os.cpu_count()} cores; `grade --impl reference`, {args.rounds} alternating rounds\n")
    print(table(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
