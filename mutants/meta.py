"""The meta-test: every catalogued mutant must fail at least one graded test.

For each mutant, ``python -m pytest`` runs (in a fresh process forked from a server that has
imported pytest and its plugins already: :mod:`mutants.runner`) on its group's PUBLIC tests with ``-x`` and
``--submission <mutant dir>``; only if the mutant survives them, on the group's HIDDEN
tests. A mutant's ``first`` files (tests written for its rule) run before both, so that
most kills cost one small file. The group's test files come from the grading policy's selections
(``--config``, default this repository's grading.yaml, loaded once by :func:`main`). Mutants run two at a
time, the speed group's first. ``python -m mutants [NAME ...] [--jobs N] [--controls] [--config FILE]`` prints the kill-rate table.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader.config import Config, ConfigError, load_config
from grader.policies import DEFAULT_POLICY
from harness.childenv import child_env

from .build import build
from .catalogue import CATALOGUE, CONTROLS, EXTRA, Mutant, by_name
from .runner import ForkServer, ForkServerError, RunTimeout

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT = 300  # seconds per pytest run (a hung mutant is a bug in the catalogue)
TEST_TIMEOUT = 60  # per test: pytest-timeout's limit inside each run
SPEED_TEST_TIMEOUT = 45  # speed mutants are killed by the time limit or, if slower still, by this


@dataclass
class Outcome:
    mutant: Mutant
    killed_by: str | None = None  # node id of the first failing test
    stage: str | None = None  # "public" or "hidden"
    message: str = ""  # first line of the failure
    seconds: float = 0.0
    error: str | None = None  # the run itself went wrong (collection error, timeout)

    @property
    def killed(self) -> bool:
        return self.killed_by is not None


def group_files(group_name: str, config: Config) -> tuple[list[str], list[str], str]:
    """(public files, hidden files, marker expression) of one group of the grading policy."""
    groups = {g.name: g for g in config.groups}
    group = groups[group_name]
    files: set[str] = set()
    if group.select:
        for pattern in group.select:
            file_glob = pattern.split("::", 1)[0]
            files.update(str(p.relative_to(ROOT)) for p in ROOT.glob(file_glob) if p.is_file())
    else:  # a marker-only group (speed): every test file, filtered by marker
        files.update(str(p.relative_to(ROOT)) for p in ROOT.glob("tests/*/test_*.py"))
    # Tests carrying a marker of an EARLIER group (speed) belong to that group, not this one.
    earlier = [m for g in config.groups[: config.groups.index(group)] for m in g.markers]
    if group.markers:
        marker_expr = " or ".join(group.markers)
    else:
        marker_expr = " and ".join(f"not {m}" for m in earlier)
    public = sorted(f for f in files if "/public/" in f)
    hidden = sorted(f for f in files if "/hidden/" in f)
    return public, hidden, marker_expr


_FAILED = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$", re.M)


def run_env() -> dict[str, str]:
    """The environment of every pytest run (the fork server's, which its runs inherit)."""
    env = child_env(keep=("PYTHONPATH",), BPE_DIAGNOSIS="0")  # the replay of known bugs is for feedback, not needed here
    env.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken_cache"))
    return env


def pytest_args(submission: Path, files: list[str], marker_expr: str, extra: tuple[str, ...] = ()) -> list[str]:
    """The arguments of ``python -m pytest`` for one stage of one mutant."""
    args = [
        "-x", "-q", "-rfE", "-p", "no:randomly", "--no-header",
        "--submission", str(submission), "--timeout", str(SPEED_TEST_TIMEOUT if marker_expr == "speed" else TEST_TIMEOUT),
        *extra,
    ]
    if marker_expr:
        args += ["-m", marker_expr]
    return args + files


def run_pytest(server: ForkServer, out: Path, submission: Path, files: list[str], marker_expr: str,
               extra: tuple[str, ...] = ()) -> tuple[int, str]:
    """(exit code, output) of one run in a fresh process forked by ``server``, output kept in
    ``out``; :class:`RunTimeout` past :data:`RUN_TIMEOUT`."""
    code = server.run(pytest_args(submission, files, marker_expr, extra), out, RUN_TIMEOUT)
    return code, out.read_text(encoding="utf-8", errors="replace")


def run_mutant(mutant: Mutant, workdir: Path, config: Config, server: ForkServer) -> Outcome:
    start = time.monotonic()
    outcome = Outcome(mutant)
    submission = build(mutant, workdir / mutant.name)
    public, hidden, marker_expr = group_files(mutant.group, config)
    stray = [f for f in mutant.first if f not in public and f not in hidden]
    if stray:
        raise ValueError(f"mutant {mutant.name}: first={stray} are not test files of group {mutant.group}")
    first = [("public" if f in public else "hidden", [f]) for f in mutant.first]
    for n, (stage, files) in enumerate((*first, ("public", public), ("hidden", hidden))):
        if not files:
            continue
        try:
            code, output = run_pytest(server, workdir / f"{mutant.name}.{n}.out", submission, files, marker_expr)
        except RunTimeout:
            outcome.error = f"{stage} run exceeded {RUN_TIMEOUT}s"
            break
        if code == 1:
            m = _FAILED.search(output)
            outcome.killed_by = m.group(2) if m else "(unparsed failure)"
            outcome.message = (m.group(3) or "").strip() if m else output[-300:]
            outcome.stage = stage
            break
        if code not in (0, 5):  # 5: no test selected in this stage
            outcome.error = f"{stage} run: pytest exit code {code}: {output[-500:]}"
            break
    outcome.seconds = time.monotonic() - start
    return outcome


def schedule(mutants) -> list[int]:
    """Indices of ``mutants`` in the order to start them: the speed group's first (killed only
    by a time limit, they take the longest: started last, one would run on alone at the end)."""
    return sorted(range(len(mutants)), key=lambda i: mutants[i].group != "speed")


def run_catalogue(mutants=CATALOGUE, jobs: int = 2, workdir: Path | None = None, *, config: Config,
                  temp_root: Path | None = None) -> list[Outcome]:
    """Run the meta-test over ``mutants``, ``jobs`` at a time (slowest first, :func:`schedule`),
    with the groups of the grading policy ``config``; outcomes in catalogue order. Its temp
    folder (mutants, outputs, the fork server's log and bytecode) is made in ``temp_root``
    (default: the system's) and removed at the end."""
    mutants = list(mutants)
    with tempfile.TemporaryDirectory(prefix="bpe-mutants-", dir=temp_root) as tmp, \
            ForkServer(ROOT, run_env(), Path(tmp) / "forkserver.log", Path(tmp) / "pycache") as server:
        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            futures = {i: pool.submit(run_mutant, mutants[i], Path(workdir or tmp), config, server)
                       for i in schedule(mutants)}
            return [futures[i].result() for i in range(len(mutants))]
        finally:  # on an error (or ^C): no mutant starts any more, the running ones are killed
            pool.shutdown(wait=False, cancel_futures=True)
            server.close()
            pool.shutdown(wait=True)


def table(outcomes: list[Outcome]) -> str:
    """The kill-rate table, with survivors flagged and the two kill rates."""
    rows = [("mutant", "group", "killed by", "stage", "s")]
    for o in outcomes:
        if o.killed:
            rows.append((o.mutant.name, o.mutant.group, o.killed_by, o.stage, f"{o.seconds:.1f}"))
        else:
            rows.append((o.mutant.name, o.mutant.group, "** SURVIVED ** " + (o.error or ""), "-", f"{o.seconds:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + f"  {r[4]:>5}" for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    n = len(outcomes)
    killed = sum(o.killed for o in outcomes)
    public = sum(o.stage == "public" for o in outcomes)
    lines.append("")
    lines.append(f"kill rate: {killed}/{n} = {killed / n:.0%} (all graded tests)")
    lines.append(f"public-only kill rate: {public}/{n} = {public / n:.0%}")
    return "\n".join(lines)


def kill_rates(outcomes: list[Outcome]) -> tuple[float, float]:
    n = len(outcomes) or 1
    return sum(o.killed for o in outcomes) / n, sum(o.stage == "public" for o in outcomes) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutants", description=__doc__)
    parser.add_argument("names", nargs="*", help="mutants to run (default: the whole catalogue)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--controls", action="store_true", help="run the bug-free templates instead: they must SURVIVE")
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    parser.add_argument("--extra", action="store_true", help="run the EXTRA mutants (not run in CI) instead")
    parser.add_argument("--config", type=Path, default=DEFAULT_POLICY, help="grading policy whose groups to use (default: grading.yaml)")
    args = parser.parse_args(argv)
    if args.list:
        for m in (*CATALOGUE, *EXTRA):
            print(f"{m.name:40} {m.group:16} {m.description}")
        return 0
    default = CONTROLS if args.controls else EXTRA if args.extra else CATALOGUE
    mutants = [by_name(n) for n in args.names] if args.names else list(default)
    try:
        config = load_config(args.config)
    except ConfigError as err:
        print(f"mutants: {err}", file=sys.stderr)
        return 2
    try:
        outcomes = run_catalogue(mutants, jobs=args.jobs, config=config)
    except ForkServerError as err:
        print(f"mutants: {err}", file=sys.stderr)
        return 1
    print(table(outcomes))
    if args.controls:
        return 0 if not any(o.killed or o.error for o in outcomes) else 1
    return 0 if all(o.killed for o in outcomes) else 1
