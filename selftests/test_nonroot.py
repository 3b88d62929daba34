"""Grading as an ordinary user (issues 13 and 18): user, mount and pid namespaces, not `weak`.

Run as root, these tests grade as an unprivileged user id (a numeric id with no account:
``setpriv --reuid``, so the machine's user list is left alone), one no other run of them on
the machine holds at the same time (so what is left running is this run's). The interpreter and the
checkout may sit below folders closed to other users (``/root`` here): the grade command runs
in a private mount namespace where each such folder is replaced by an empty one showing only
the paths the grade needs. There, the isolation line must not say ``weak``, and the attacks
that read files, forge the report or the results, or leave processes behind must gain
nothing: the worker cannot see the grader's ``/proc`` (no ``/proc/<parent>/cwd`` route to the
reference, no command line naming the report) and everything it started ends with it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandbox import uids
from sandbox.pyenv import environment_path

from . import test_attacks as A
from .support import ROOT, GradeRun, run_grade

USER_IDS = range(1_899_000_000, 1_899_001_000)  # below the workers' ids (sandbox.uids.UID_BASE)
TEST_LOCKS = uids.LOCK_DIR.parent / "test-uids"


def _own_user_id() -> tuple[int, uids.UidLease | None]:
    """A user id of USER_IDS that no other run of these tests on the machine holds while this
    one lives (leased as worker ids are, from a lock folder of the tests' own): the leftover
    check looks at its processes, so only at what this run started (a process can shed its
    environment or session, never its user id), never at another developer's run. Not root:
    the first id (the tests that use it are skipped)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return USER_IDS[0], None
    try:
        lease = uids.allocate(TEST_LOCKS, base=USER_IDS[0], count=len(USER_IDS))
    except (OSError, uids.UidsExhausted):
        return USER_IDS[0], None
    return lease.uid, lease


USER_ID, _LEASE = _own_user_id()  # held until this process ends
# forge_report also leaves a child behind (it keeps rewriting the report for two minutes)
ATTACKS = ["read_hidden", "forge_report"]
NAMESPACES = "isolation: own user, mount and pid namespaces (not root), private root directory"


def _can_run() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root to become an unprivileged user"
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            return f"needs {tool} (util-linux)"
    probe = subprocess.run(
        ["setpriv", f"--reuid={USER_ID}", f"--regid={USER_ID}", "--clear-groups", "unshare", "--user", "--mount", "--pid", "--fork", "true"],
        capture_output=True, text=True,
    )
    if probe.returncode != 0:
        return f"the kernel refuses unprivileged user namespaces here ({probe.stderr.strip()[:100]})"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_can_run() is not None, reason=str(_can_run())), pytest.mark.timeout(900)]


def _needed() -> list[Path]:
    """The outermost of the paths the grade needs (no path inside another: a mount inside a
    mount would be locked to it in the worker's namespaces)."""
    paths = [Path(sys.base_prefix), Path(sys.prefix), ROOT, *map(Path, environment_path())]
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        paths.append(Path(os.environ["TIKTOKEN_CACHE_DIR"]))
    paths = sorted({p.resolve() for p in paths if p.exists()}, key=lambda p: len(p.parts))
    outer: list[Path] = []
    for p in paths:
        if not any(o == p or o in p.parents for o in outer):
            outer.append(p)
    return outer


def _closed_ancestor(path: Path) -> Path | None:
    for folder in [*reversed(path.parents), path]:
        if folder != Path("/") and not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def as_user(args: list[str], stage: Path, **extra_env: str) -> list[str]:
    """A command running ``args`` as USER_ID, in a mount namespace where every folder closed to
    others on the way to the interpreter, the checkout or the GPT-2 cache is replaced by an
    empty one showing just those paths; ``extra_env``: variables set for it besides the basics."""
    lines = ["set -e"]
    closed: dict[Path, list[Path]] = {}
    for path in _needed():
        top = _closed_ancestor(path)
        if top is not None:
            closed.setdefault(top, []).append(path)
    for n, (top, inside) in enumerate(sorted(closed.items())):
        keep = stage / f"keep{n}"
        lines.append(f"mkdir -p '{keep}' && mount --bind '{top}' '{keep}'")
        lines.append(f"mount -t tmpfs -o mode=755,size=1m tmpfs '{top}'")
        for path in sorted(set(inside)):
            rel = path.relative_to(top)
            lines.append(f"mkdir -p '{path}' && mount --bind '{keep / rel}' '{path}'")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(stage / "home"), "USER": "bpe-nonroot", "LANG": "C.UTF-8", **extra_env}
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        env["TIKTOKEN_CACHE_DIR"] = os.environ["TIKTOKEN_CACHE_DIR"]
    inner = ["setpriv", f"--reuid={USER_ID}", f"--regid={USER_ID}", "--clear-groups", "env", "-i",
             *(f"{k}={v}" for k, v in env.items()), *args]
    lines.append("exec " + " ".join(f"'{a}'" for a in inner))
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines)]


@pytest.fixture(scope="module")
def stage():
    base = Path(tempfile.mkdtemp(prefix="bpe-nonroot-"))
    os.chmod(base, 0o755)
    (base / "home").mkdir()
    os.chown(base / "home", USER_ID, USER_ID)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def grade_as_user(stage: Path, name: str, **request) -> GradeRun:
    """:func:`run_grade` of ``request`` as USER_ID, writing to ``stage/out/NAME``."""
    out = stage / "out" / name
    out.mkdir(parents=True)
    os.chown(out, USER_ID, USER_ID)
    # graded two at a time: no busy-polling for replies, as batch runs them
    return run_grade(out, quiet=True, run_as=lambda command: as_user(command, stage, BPE_GRADER_SPIN="0"),
                     timeout=A.GRADE_LIMIT + 60, **request)


@pytest.fixture(scope="module")
def graded(stage):
    """The reference and the attacks, graded as the unprivileged user (two at a time)."""
    (stage / "grading.yaml").write_text(A.CONFIG)
    for name in ATTACKS:
        A.build(name, stage / "attacks")
    for path in [stage / "attacks", *(stage / "attacks").rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)

    def one(name: str):
        sub = stage / "attacks" / name / "submission"
        return grade_as_user(stage, name, submission=sub, config=stage / "grading.yaml", tests=A.TESTS)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(ATTACKS, pool.map(one, ATTACKS)))


def scores(data: dict) -> dict[str, tuple[float, float]]:
    groups: dict[str, tuple[float, float]] = {}
    for t in data["tests"]:
        got, most = groups.get(t["tags"][0], (0.0, 0.0))
        groups[t["tags"][0]] = (got + t["score"], most + t["max_score"])
    return groups


@pytest.mark.parametrize("name", ATTACKS)
def test_attacks_gain_nothing_as_an_ordinary_user(graded, name):
    """Graded as an ordinary user, confined by namespaces (not weak): the attacked group
    scores only what the fallback both attacks share (returning no merges) earns, below full
    marks (a successful attack answers correctly: full marks); the untouched groups, run by
    the reference solution under it, keep full marks."""
    run = graded[name]
    data = run.results
    context = f"{name}: rc={run.code}\n{run.stderr[-2000:]}"
    assert run.code == 0 and run.tests, context
    assert NAMESPACES in data["output"] and "weak" not in data["output"], data["output"][-500:]
    assert "forged" not in json.dumps(data)[:100000]
    fallback = {n: scores(graded[n].results)["merge"][0] for n in ATTACKS if graded[n].tests}
    for group, (got, most) in scores(data).items():
        assert most > 0, context
        if A.EXPECT[name].get(group) == A.FULL:
            assert got == pytest.approx(most), f"{group}: {got}/{most}, expected full marks\n{context}"
        else:
            assert got < most and len(set(fallback.values())) == 1, f"{group}: {got}/{most}; fallbacks {fallback}\n{context}"


def test_nothing_the_workers_started_outlives_grading(graded):
    """No process of this run's user id is left (the id is this run's own: see _own_user_id)."""
    leftovers = []
    for cmdline in Path("/proc").glob("*/cmdline"):
        try:
            state = (cmdline.parent / "stat").read_text().rpartition(")")[2].split()[0]
            if state not in ("Z", "X") and os.stat(cmdline.parent).st_uid == USER_ID:  # zombies run nothing
                leftovers.append(f"{cmdline.parent.name} {state} {cmdline.read_bytes()[:100]!r}")
        except OSError:
            pass
    assert not leftovers, f"processes left running: {leftovers}"


def test_each_run_grades_as_a_user_id_of_its_own():
    """Another run of these tests beside this one (another developer's, on a shared machine)
    gets another user id, so neither's leftover check sees the other's processes."""
    assert _LEASE is not None and USER_ID in USER_IDS
    other = subprocess.run([sys.executable, "-c", "from selftests.test_nonroot import USER_ID; print(USER_ID)"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert other.returncode == 0, other.stderr[-2000:]
    assert int(other.stdout.split()[-1]) in USER_IDS and int(other.stdout.split()[-1]) != USER_ID


CONTROL_SCRIPT = """
import json, sys
from sandbox.backend import WorkerBackend
out = {}
for namespaces in (True, False):
    b = WorkerBackend("student", sys.argv[1], namespaces=namespaces)
    out[str(namespaces)] = [b.call("run_merge", ([1, 2, 1, 2], [1, 2], 3), False), b.sandbox_info.get("notes")]
    b.close()
print(json.dumps(out))
"""


def test_without_namespaces_a_reference_beside_the_sandbox_is_readable(graded, stage):
    """The control: the same user, with namespaces turned off (as where the kernel refuses
    them), reads a copy of the reference in a folder holding its sandbox; with them it cannot.
    (Its /proc route to the grader's working directory is closed either way: Landlock, which
    the worker is under, keeps it from the /proc links of processes outside its domain.)"""
    sub = stage / "attacks" / "read_hidden" / "submission"
    decoy = stage / "decoy"
    (decoy / "reference").mkdir(parents=True, exist_ok=True)
    (decoy / "reference" / "bpe.py").write_text("SECRET = 1\n")
    (decoy / "tmp").mkdir(exist_ok=True)
    os.chown(decoy / "tmp", USER_ID, USER_ID)
    for path in (decoy, decoy / "reference"):
        os.chmod(path, 0o755)
    os.chmod(decoy / "reference" / "bpe.py", 0o644)
    command = as_user([sys.executable, "-c", CONTROL_SCRIPT, str(sub)], stage, TMPDIR=str(decoy / "tmp"))
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["True"][0] == [] and seen["False"][0] == [3, 3], seen
