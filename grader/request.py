"""``python -m grader grade``'s request: one keyword-only, frozen :class:`GradeRequest`.

Its fields are the command's options, declared once: ``python -m grader grade``'s argparse
takes its options and defaults from it (:func:`add_arguments`, :meth:`GradeRequest.from_args`),
and whoever starts a grading in a subprocess (batch, compare, the mutants' collateral table,
the benchmarks, Gradescope's ``run_autograder``) builds its command line with
:meth:`GradeRequest.argv` instead of spelling the flags by hand.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

DEFAULT_RESULTS = Path("results/results.json")  # relative to the folder grade runs in


@dataclass(frozen=True, kw_only=True)
class GradeRequest:
    """One grading; each field is the option ``--field-name`` of ``python -m grader grade``."""

    submission: Path | None = None  # a submission folder; None: the in-repo student/ (or ``impl``)
    impl: str = "student"  # student/ or reference/ (without a submission)
    results: Path = DEFAULT_RESULTS  # Gradescope's results.json
    junit: Path | None = None  # also write JUnit XML here
    config: Path | str | None = None  # a path or a policy name; None: chosen by the layout (grader.policies.policy_path)
    isolate: bool | None = None  # None: isolate when the isolation backend is available
    install_declared: bool | None = None  # None: the policy's `install_declared`
    max_time: float | None = None  # the grading's time budget, seconds (None: the policy's `budget`)
    quiet: bool = False  # print nothing but errors
    report: Path | None = None  # also write a plain JSON report (durations, full outputs) here
    tests: tuple[str, ...] | None = None  # test paths / node ids relative to the repository (None: the policy's paths)
    self_checked: bool = False  # the caller (batch) ran the start-up self-check in this environment
    unwrapped: str | None = None  # the upload had everything inside this one folder (graded from there)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "GradeRequest":
        """The request of parsed ``grade`` arguments (:func:`add_arguments`)."""
        values = {f.name: getattr(args, f.name) for f in fields(cls)}
        values["tests"] = tuple(values["tests"]) if values["tests"] else None
        return cls(**values)

    def args(self) -> list[str]:
        """The ``grade`` options giving this request (those differing from the defaults;
        ``--tests`` last, as it takes every word after it)."""
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == f.default or f.name == "tests":
                continue
            flag = option(f.name)
            if type(value) is bool:
                out.append(flag if value else "--no-" + flag[2:])  # the booleans that may be None have a --no- form
            else:
                out += [flag, _text(value)]
        return out + (["--tests", *self.tests] if self.tests else [])

    def seed_name(self) -> str:
        """The name per-submission seeds mix in (``seed: policy: per_submission``): the
        submission folder's as given (before any unwrapping), else the implementation's."""
        return self.submission.name if self.submission is not None else self.impl

    def policy_file(self) -> Path:
        """The policy file this request grades by (:func:`grader.policies.policy_path`: the one
        named, else the one the submission's layout selects)."""
        from .policies import policy_path

        return policy_path(self.config, self.submission)

    def argv(self, python: str = sys.executable) -> list[str]:
        """The whole command line: ``python -m grader grade`` and :meth:`args`."""
        return [python, "-m", "grader", "grade", *self.args()]


def seconds(text: str) -> float:
    """A ``--max-time`` value: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def run_grading(argv: list[str], timeout: float, **popen: Any) -> int:
    """Run a ``grade`` command line (:meth:`GradeRequest.argv`) to its end and return its exit
    status. If the caller is stopped meanwhile (SIGTERM raised as ``SystemExit``, Ctrl-C) or the
    grading runs past ``timeout`` (``subprocess.TimeoutExpired``), the grading gets SIGTERM
    first, so that it writes its results and removes what it made, as ``grade`` does when stopped."""
    proc = subprocess.Popen(argv, **popen)
    try:
        return proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            stop_process(proc, 60.0)


def stop_process(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM to ``proc``, SIGKILL if it has not ended within ``grace`` seconds; reaped either way."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def option(name: str) -> str:
    """The command-line option of a :class:`GradeRequest` field: ``max_time`` -> ``--max-time``."""
    return "--" + name.replace("_", "-")


def _text(value: Any) -> str:
    """A value as a command-line word that parses back to it (``540`` for 540.0)."""
    if type(value) is float:
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)


HELP = {
    "submission": "a checkout laid out like this repository, or a .zip of one (default: the in-repo student/)",
    "impl": "grade student/ (default) or reference/",
    "results": f"Gradescope results.json path (default: {DEFAULT_RESULTS})",
    "junit": "also write JUnit XML here",
    "config": "grading policy: a file, or a policy name (`default`, `cs336`: grader.policies.NAMED_POLICIES); "
              "without it, the one the submission's layout selects (grading-cs336.yaml for a CS336-layout repository)",
    "install_declared": "install the packages the submission declares (its pyproject.toml, requirements.txt; at its uv.lock's "
                        "versions) that grading lacks, for this grading only (wheels only; torch and the GPU stack never): "
                        "docs/isolation.md; default: the policy's `install_declared`",
    "max_time": "the grading's time budget, seconds (default: the policy's `budget`)",
    "quiet": "print nothing but errors",
    "report": "also write a plain JSON report (per-test durations, full outputs) here",
    "tests": "test paths or node ids to run, relative to the repository (default: the policy's paths)",
    "self_checked": "skip the start-up self-check (batch runs it once for all)",
    "unwrapped": "the upload had everything inside this one folder, which the caller unwrapped (Gradescope's run_autograder): "
                 "said in the output",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``grade``'s options, one per :class:`GradeRequest` field, its default the field's."""
    d = GradeRequest()
    parser.add_argument(option("submission"), type=Path, default=d.submission, help=HELP["submission"])
    parser.add_argument(option("impl"), choices=["student", "reference"], default=d.impl, help=HELP["impl"])
    parser.add_argument(option("results"), type=Path, default=d.results, help=HELP["results"])
    parser.add_argument(option("junit"), type=Path, default=d.junit, help=HELP["junit"])
    parser.add_argument(option("config"), default=d.config, help=HELP["config"])
    iso = parser.add_mutually_exclusive_group()
    iso.add_argument(option("isolate"), dest="isolate", action="store_true", default=d.isolate,
                     help="run submitted code in sandboxed workers (default when the sandbox is available)")
    iso.add_argument("--no-isolate", dest="isolate", action="store_false", help="run submitted code in the test process (debugging)")
    install = parser.add_mutually_exclusive_group()
    install.add_argument(option("install_declared"), dest="install_declared", action="store_true", default=d.install_declared,
                         help=HELP["install_declared"])
    install.add_argument("--no-install-declared", dest="install_declared", action="store_false",
                         help="never install them, whatever the policy says (they get stand-ins)")
    parser.add_argument(option("max_time"), type=seconds, default=d.max_time, help=HELP["max_time"])
    parser.add_argument(option("quiet"), action="store_true", default=d.quiet, help=HELP["quiet"])
    parser.add_argument(option("report"), type=Path, default=d.report, help=HELP["report"])
    parser.add_argument(option("tests"), nargs="+", metavar="PATH", default=d.tests, help=HELP["tests"])
    parser.add_argument(option("self_checked"), action="store_true", default=d.self_checked, help=HELP["self_checked"])
    parser.add_argument(option("unwrapped"), metavar="FOLDER", default=d.unwrapped, help=HELP["unwrapped"])
