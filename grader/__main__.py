"""Command line: ``python -m grader grade [--submission DIR] [--impl reference] ...``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from harness import ROOT
from .request import add_arguments as add_grade_arguments, seconds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade the byte-level BPE assignment.")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission and write its results file")
    add_grade_arguments(g)  # one option per GradeRequest field, its defaults
    b = sub.add_parser("batch", help="grade every submission in a folder; grades.csv, per-student results, summary")
    b.add_argument("submissions", type=Path, help="one sub-folder (adapters.py + student/) or .zip per student")
    b.add_argument("--out", type=Path, default=Path("batch-results"), help="output folder (default: batch-results)")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once (default: CPU count)")
    b.add_argument("--force", action="store_true", help="grade again even submissions whose results are up to date")
    b.add_argument("--config", default="default", help="grading policy passed to grade: a file, `default` (grading.yaml) or `cs336` (grading-cs336.yaml)")
    b.add_argument("--max-time", type=seconds, default=None, help="each grading's time budget, seconds (default: grading.yaml's budget)")
    b.add_argument("--tests", nargs="+", metavar="PATH", help="test paths or node ids passed to grade (default: all)")
    b.add_argument("--quiet", action="store_true", help="print only the summary")
    b.add_argument("--scheduler", metavar="ADDRESS", help="grade on this Dask cluster (tcp://host:8786; pip install -e .[cluster])")
    b.add_argument("--similarity", action="store_true", help="only write a code-similarity report (pip install -e .[similarity])")
    b.add_argument("--public", type=Path, metavar="DIR", help="with --similarity: known public solutions to compare against")

    c = sub.add_parser("compare", help="a submission (or a batch's) beside the reference: summary, diagnosis, failures")
    what = c.add_mutually_exclusive_group(required=True)
    what.add_argument("--submission", type=Path, help="a submission folder, any layout grade reads, or a .zip of one")
    what.add_argument("--batch", type=Path, metavar="OUT", help="a batch output folder: one page per student and a class index")
    c.add_argument("--html", type=Path, help="also write a self-contained HTML page here (with --batch: the folder of pages, default OUT/compare)")
    c.add_argument("--all", dest="every_case", action="store_true", help="list every case, passes included, and every failure")
    c.add_argument("--config", default=None, help="grading policy: a file, `default` or `cs336` (default: chosen by the layout, as grade does)")
    c.add_argument("--tests", nargs="+", metavar="PATH", help="test paths or node ids (default: all)")
    c.add_argument("--max-time", type=seconds, default=3600.0, help="time limit of each of the two runs, seconds")

    h = sub.add_parser("handout", help="export the student repository and/or the Gradescope autograder zip")
    h.add_argument("out", type=Path, nargs="?", help="folder to write the student repository to (new or empty; --force replaces an earlier handout)")
    h.add_argument("--gradescope", type=Path, metavar="ZIP", help="also (or only) write Gradescope's autograder zip here")
    h.add_argument("--config", type=Path, default=None,
                   help="grading policy, a file or a name (default: grading.yaml): the handout's groups, and the one the "
                        "Gradescope autograder grades every upload by, whatever its layout (cs336 for a CS336 course)")
    h.add_argument("--python", default=None, metavar="X.Y",
                   help="the oldest Python the course uses: the handout's requires-python, README and Classroom workflow, and "
                        "the Gradescope autograder's (its setup.sh installs it where the image's python3 is older); "
                        "default 3.11 (CS336's 2026 starter asks for 3.12)")
    h.add_argument("--force", action="store_true", help="replace an existing handout folder (everything but its .git)")
    return parser


def _can_write(command: str, what: str, path: Path) -> bool:
    """Whether ``path``'s folder is there or can be made; if not, one line says why."""
    from .formats import make_folder

    why = make_folder(path.parent)
    if why is not None:
        print(f"{command}: cannot write {what} {path} ({why})", file=sys.stderr)
    return why is None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "grade":
        from .grade import grade
        from .request import GradeRequest

        if args.submission is not None and args.impl == "reference":
            print("grade: --submission and --impl reference exclude each other", file=sys.stderr)
            return 2
        if not _can_write("grade", "the results file", args.results):  # the one thing a grading must write
            return 2
        return grade(GradeRequest.from_args(args))
    if args.command == "batch":
        from .batch import BatchOptions, run_batch
        from .policies import policy_path

        if args.public is not None and not args.similarity:
            print("batch: --public goes with --similarity", file=sys.stderr)
            return 2
        return run_batch(
            args.submissions,
            BatchOptions(out=args.out, config=policy_path(args.config), jobs=args.jobs, force=args.force, max_time=args.max_time,
                         tests=args.tests, quiet=args.quiet, scheduler=args.scheduler, similarity=args.similarity,
                         public=args.public),
        )
    if args.command == "compare":
        from .compare import main as compare_main
        from .policies import policy_path

        config = policy_path(args.config) if args.config is not None else None  # a name becomes its file
        # stopped by SIGTERM (a CI job's timeout), it stops its gradings and removes its folders, as on Ctrl-C
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        if args.html is not None and args.submission is not None and not _can_write("compare", "the page", args.html):
            return 2  # said before the two gradings, not after
        return compare_main(args.submission, args.html, config, args.tests, args.max_time, args.every_case, args.batch)
    if args.command == "handout":
        from .formats import cannot_make
        from .handout import main as handout_main

        if args.out is None and args.gradescope is None:
            print("handout: give an output folder and/or --gradescope ZIP", file=sys.stderr)
            return 2
        why = cannot_make(args.out) if args.out is not None and not args.out.exists() else None
        if why is not None:  # said before the export's checks, which take a minute
            print(f"handout: cannot write {args.out} ({why})", file=sys.stderr)
            return 1
        return handout_main(args.out, args.gradescope, args.config, args.force, **({"python": args.python} if args.python else {}))
    return 2


if __name__ == "__main__":
    sys.exit(main())
