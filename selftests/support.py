"""Helpers for the harness's own tests: run ``python -m grader`` as a user would."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from grader.request import GradeRequest
from harness.childenv import child_env

ROOT = Path(__file__).resolve().parent.parent
# this environment's venv lies inside the checkout (the README's `.venv`): a worker runs its
# interpreter there, so it learns the checkout's path, and where no private root hides the
# checkout, the files directly in it stay readable to it (docs/isolation.md)
VENV_IN_CHECKOUT = ROOT in Path(sys.prefix).resolve().parents
EOT = "<|endoftext|>"


@dataclass
class GradeRun:
    """One ``python -m grader grade`` run (:func:`run_grade`): exit status, output, the results
    file read back (``{}`` when none was written) and where its other files went."""

    code: int
    stdout: str
    stderr: str
    results: dict
    seconds: float = 0.0  # the whole run, as the caller waited for it
    ended: float = 0.0  # when grade exited, on the monotonic clock
    out: Path | None = None  # the folder holding results.json (and junit.xml, report.json, tmp/)
    junit: Path | None = None  # the grade command's --junit, when asked for
    report: Path | None = None  # the grade command's --report, when asked for
    tmp: Path | None = None  # the private TMPDIR, when asked for
    left: list[str] = field(default_factory=list)  # what was left in the private TMPDIR at the end
    request: GradeRequest = field(default_factory=GradeRequest)  # what was asked (its command line: request.argv())

    @property
    def tests(self) -> list[dict]:
        return self.results.get("tests", [])

    def group_scores(self) -> dict[str, float]:
        """Points got per group."""
        return {name: got for name, (got, _) in self.group_points().items()}

    def group_points(self) -> dict[str, list[float]]:
        """``[got, most]`` per group."""
        groups: dict[str, list[float]] = {}
        for t in self.tests:
            got, most = groups.get(t["tags"][0], [0.0, 0.0])
            groups[t["tags"][0]] = [got + t["score"], most + t["max_score"]]
        return groups

    def report_data(self) -> dict:
        """The plain JSON report (``report=True``) read back; ``{}`` when none was written."""
        return json.loads(self.report.read_text(encoding="utf-8")) if self.report and self.report.is_file() else {}

    @property
    def log(self) -> str:
        """grade's log beside the results file (its whole output), ``""`` when there is none."""
        log = self.out / "grading.log" if self.out else None
        return log.read_text(errors="replace") if log and log.is_file() else ""

    def context(self, tail: int = 3000) -> str:
        """What to show when an assertion on this run fails: which run, exit status, time, the
        ends of its output and log."""
        name = self.out.name if self.out else "grade"
        return f"{name}: rc={self.code} in {self.seconds:.1f} s\n{self.stdout[-tail:]}\n{self.stderr[-tail:]}\n{self.log[-tail:]}"


def run_grade(out: Path, *, submission: Path | None = None, impl: str | None = None, config: Path | str | None = None,
          tests: list[str] | tuple[str, ...] | None = None, isolate: bool | None = None, max_time: float | None = None,
          quiet: bool = False, self_checked: bool = False, junit: bool = False, report: bool = False,
          private_tmp: bool = False, side_by_side: bool = False, timeout: float = 900, python: str | Path | None = None,
          cwd: Path = ROOT, env: Mapping[str, str] | None = None, run_as: Callable[[list[str]], list[str]] | None = None,
          install_declared: bool | None = False, diagnosis: bool = True) -> GradeRun:
    """The selftests' one way to grade: ``python -m grader grade`` in a subprocess (its command
    line built by :class:`grader.request.GradeRequest`, as batch and compare build theirs),
    writing ``out/results.json`` (``junit``: also ``out/junit.xml``, ``report``: ``out/report.json``).

    The request: ``submission`` (default the in-repo student/, or ``impl``), ``config`` (a file
    or a policy name), ``tests``, ``isolate`` (False: ``--no-isolate``), ``max_time``,
    ``quiet``, ``self_checked`` (as batch grades: the start-up self-check is tested on its own).
    How it runs: ``python`` (default this interpreter; another one, a venv's, runs its own
    installation: this process's PYTHONPATH does not pass), ``cwd``, ``env`` (the environment to
    start from, PYTHONPATH included; default this process's; pytest's and the harness's own
    ``PYTEST*``/``BPE_*`` variables never pass),
    ``private_tmp`` (TMPDIR ``out/tmp``; what is left there is ``run.left``), ``side_by_side``
    (graded beside other gradings: no busy-polling for replies, as batch runs them),
    ``run_as`` (turns the command into one run as another user), ``timeout`` (seconds),
    ``install_declared`` (``--install-declared``; False by default, so no selftest reaches a
    package index unless it says so; None: the policy's), ``diagnosis`` (False: the test run
    without the known-bug replay, ``BPE_DIAGNOSIS=0``, as the mutant catalogue's runs: it adds a
    line to a failure's feedback and never changes an outcome)."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    request = GradeRequest(submission=submission, impl=impl or "student", results=results,
                           junit=out / "junit.xml" if junit else None, config=config, isolate=isolate, max_time=max_time,
                           quiet=quiet, report=out / "report.json" if report else None,
                           tests=tuple(tests) if tests else None, self_checked=self_checked, install_declared=install_declared)
    cmd = request.argv(str(python or sys.executable))
    values = {}
    if private_tmp:
        (out / "tmp").mkdir(exist_ok=True)
        values["TMPDIR"] = str(out / "tmp")
    if side_by_side:
        values["BPE_GRADER_SPIN"] = "0"
    if not diagnosis:
        values["BPE_DIAGNOSIS"] = "0"
    keep = ("PYTHONPATH",) if python is None or env is not None else ()
    child = child_env(base=env, drop=("PYTEST*", "BPE_*"), keep=keep, **values)
    started = time.monotonic()
    proc = subprocess.run(run_as(cmd) if run_as else cmd, cwd=cwd, env=child, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    ended = time.monotonic()
    data = json.loads(results.read_text(encoding="utf-8")) if results.is_file() else {}
    return GradeRun(proc.returncode, proc.stdout, proc.stderr, data, seconds=ended - started, ended=ended, out=out,
                    junit=request.junit, report=request.report, tmp=out / "tmp" if private_tmp else None,
                    left=sorted(os.listdir(out / "tmp")) if private_tmp else [], request=request)


def pytest_outcomes(submission: Path, isolate: bool, reverse: bool, junit: Path, files: list[str],
                    timeout: float = 900) -> dict[str, str]:
    """Each test's outcome (node id -> passed | failed | skipped) of ``python -m pytest FILES``
    on ``submission`` (``isolate``: ``--isolate``; ``reverse``: in reverse order), read from its
    JUnit XML at ``junit``.

    ``BPE_DIAGNOSIS=0``, as the mutant catalogue's runs: the known-bug replay adds a line to a
    failure's text, never changes an outcome, and was two thirds of test_same_outcome's CPU (the
    held-out bug, which no catalogued bug fits, 13.4 of 17 s in-process); it has its own tests
    (test_diagnosis.py). No ``BPE_SEED``: the runs use the default seed."""
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--submission", str(submission),
            f"--junitxml={junit}", *files]
    args += ["--isolate"] if isolate else []
    args += ["-p", "selftests.reverse_order"] if reverse else []
    env = child_env(drop=("BPE_SEED",), BPE_DIAGNOSIS="0")
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert junit.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") is not None or case.find("error") is not None
        out[name] = "failed" if bad else "skipped" if case.find("skipped") is not None else "passed"
    return out


def folder_on_checkouts_file_system(prefix: str) -> Path:
    """A new folder on this checkout's file system, for hard links to its files: in the
    temporary folder when it is there, else in ``/var/tmp`` (a tmpfs ``/tmp``, as CI's);
    the caller removes it. ``OSError`` when neither is."""
    device = ROOT.stat().st_dev
    for base in (Path(tempfile.gettempdir()), Path("/var/tmp")):
        if base.is_dir() and base.stat().st_dev == device:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    raise OSError(f"no temporary folder on the file system of {ROOT}")


def make_submission(dest: Path, from_reference: tuple[str, ...] = ()) -> Path:
    """A checkout laid out like this repo: the stubs, with the named modules taken from
    the reference solution."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    shutil.copytree(ROOT / "student", dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    for module in from_reference:
        shutil.copyfile(ROOT / "reference" / module, dest / "student" / module)
    return dest


def adapters_only(dest: Path, adapters: str) -> Path:
    """A submission of one ``adapters.py`` (its code all there) beside an empty ``student/``."""
    (dest / "student").mkdir(parents=True)
    (dest / "adapters.py").write_text(adapters)
    return dest


def mixed_text(rng: random.Random, n_chars: int) -> str:
    """Lines of ASCII code and prose, non-ASCII words, runs of spaces and special tokens."""
    fixtures = [(ROOT / "fixtures" / name).read_text(encoding="utf-8") for name in ("multilingual.txt", "stories.txt")]
    pieces = ["    def f(x):\n        return x  # é\n", "\n\n\t  ", "  \r\n", "don't  stop", "1234 567", EOT, "<|endo"]
    out, size = [], 0
    while size < n_chars:
        piece = rng.choice(pieces) if rng.random() < 0.7 else rng.choice(fixtures)[rng.randrange(5000) :][: rng.randrange(1, 400)]
        out.append(piece)
        size += len(piece)
    return "".join(out)


LAYOUT_FIXTURES = ROOT / "selftests" / "layouts"
TRAINING_BUG = '''

_correct_train_bpe = train_bpe


def train_bpe(input_path, vocab_size, special_tokens):
    """Wrong on purpose (a selftest fixture): stops one merge early."""
    return _correct_train_bpe(input_path, vocab_size - 1, special_tokens)
'''


def reference_as(dest: Path) -> None:
    """The reference solution's modules copied into the package folder ``dest``, keeping
    the files ``dest`` already has."""
    dest.mkdir(parents=True, exist_ok=True)
    for module in (ROOT / "reference").glob("*.py"):
        if not (dest / module.name).exists():
            shutil.copyfile(module, dest / module.name)


def build_layout(layout: str, dest: Path) -> Path:
    """The reference solution submitted in ``layout``: ``stubs`` (adapters.py + student/),
    ``own`` (adapters.py edited to call mycode/), ``cs336`` (tests/adapters.py over
    cs336_basics/, importing torch; its package reads its own version from its metadata at
    import, its training logs memory with psutil when installed), ``cs336_buggy`` (the same
    with a bug in training), ``cs336:MUTANT`` (the same with a catalogued bug of
    ``mutants/catalogue``, by name)."""
    if layout.startswith("cs336:"):
        from mutants.build import mutated_sources
        from mutants.catalogue import by_name

        build_layout("cs336", dest)
        for name, text in mutated_sources(by_name(layout.partition(":")[2])).items():
            (dest / "cs336_basics" / name).write_text(text, encoding="utf-8")
        return dest
    if layout == "stubs":
        dest.mkdir(parents=True)
        shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
        shutil.copytree(ROOT / "reference", dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    elif layout == "own":
        shutil.copytree(LAYOUT_FIXTURES / "own", dest)
        reference_as(dest / "mycode")
    elif layout in ("cs336", "cs336_buggy"):
        shutil.copytree(LAYOUT_FIXTURES / "cs336", dest)
        reference_as(dest / "cs336_basics")
        with open(dest / "cs336_basics" / "__init__.py", "a") as f:
            f.write("\nfrom . import nn_utils  # another part of the course, imported at import time\n")
        if layout == "cs336_buggy":
            with open(dest / "cs336_basics" / "train.py", "a") as f:
                f.write(TRAINING_BUG)
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return dest


_RECORDER = """

import functools


def _recorded(name, function, log={log!r}):
    @functools.wraps(function)
    def call(*args, **kwargs):
        with open(log, "a") as f:
            f.write(name + "\\n")
        return function(*args, **kwargs)

    return call


for _name, _function in list(globals().items()):
    if getattr(_function, "__module__", None) == __name__ and callable(_function) and not _name.startswith("_"):
        globals()[_name] = _recorded(_name, _function)
"""


def record_adapter_calls(adapters: Path, log: Path) -> None:
    """Make the adapters file ``adapters`` append the name of each of its functions to
    ``log`` when called (in-process runs only: a sandboxed worker cannot reach ``log``)."""
    with open(adapters, "a", encoding="utf-8") as f:
        f.write(_RECORDER.format(log=str(log)))


@contextmanager
def implementation_of(sub: Path, isolate: bool, **options) -> Iterator:
    """The :class:`harness.impl.Implementation` of the submission ``sub``: in-process, or in an
    isolated worker (``options``: the WorkerBackend's; skipped where there is none), closed at
    the end."""
    import pytest

    from harness.impl import Implementation, LocalBackend

    if not isolate:
        yield Implementation(LocalBackend("student", sub))
        return
    if sys.platform != "linux":
        pytest.skip("isolated workers need Linux")
    if options.get("private_root") is False and os.geteuid() != 0:
        pytest.skip("without a private root the worker gets its own user id only under root")
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", sub, **options)
    try:
        yield Implementation(backend)
    finally:
        backend.close()
