"""Command line: ``python -m grader grade [--submission DIR] [--impl reference] ...``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import ROOT


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade the byte-level BPE assignment.")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission and write its results file")
    g.add_argument("--submission", type=Path, help="a checkout laid out like this repository (default: the in-repo student/)")
    g.add_argument("--impl", choices=["student", "reference"], default="student", help="grade student/ (default) or reference/")
    g.add_argument("--results", type=Path, default=Path("results/results.json"), help="Gradescope results.json path")
    g.add_argument("--junit", type=Path, help="also write JUnit XML here")
    g.add_argument("--config", type=Path, default=ROOT / "grading.yaml", help="grading policy (default: grading.yaml)")
    iso = g.add_mutually_exclusive_group()
    iso.add_argument("--isolate", dest="isolate", action="store_true", default=None, help="run submitted code in sandboxed workers (default)")
    iso.add_argument("--no-isolate", dest="isolate", action="store_false", help="run submitted code in the test process (debugging)")
    g.add_argument("--max-time", type=float, default=3600.0, help="stop grading after this many seconds")
    g.add_argument("--quiet", action="store_true", help="print nothing but errors")
    g.add_argument("--report", type=Path, help="also write a plain JSON report (per-test durations, full outputs) here")
    g.add_argument("--tests", nargs="+", metavar="PATH", help="test paths or node ids to run, relative to the repository (default: tests)")
    h = sub.add_parser("handout", help="export the student repository and/or the Gradescope autograder zip")
    h.add_argument("out", type=Path, nargs="?", help="folder to write the student repository to (new or empty)")
    h.add_argument("--gradescope", type=Path, metavar="ZIP", help="also (or only) write Gradescope's autograder zip here")
    h.add_argument("--config", type=Path, default=None, help="grading policy (default: grading.yaml)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "grade":
        from .grade import GradeRequest, grade

        if args.submission is not None and args.impl == "reference":
            print("grade: --submission and --impl reference exclude each other", file=sys.stderr)
            return 2
        return grade(
            GradeRequest(
                submission=args.submission, impl=args.impl, results=args.results, junit=args.junit,
                config=args.config, isolate=args.isolate, max_time=args.max_time, quiet=args.quiet,
                report=args.report, tests=args.tests,
            )
        )
    if args.command == "handout":
        from .handout import main as handout_main

        if args.out is None and args.gradescope is None:
            print("handout: give an output folder and/or --gradescope ZIP", file=sys.stderr)
            return 2
        return handout_main(args.out, args.gradescope, args.config)
    return 2


if __name__ == "__main__":
    sys.exit(main())
