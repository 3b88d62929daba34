"""``batch --scheduler ADDRESS``: a 2-worker Dask cluster (``LocalCluster``, worker processes)
grades a small folder of submissions into the same ``grades.csv`` as the local pool, even
when a worker is killed in the middle of a grading; the grading it ran is retried, not lost
or counted twice, and nothing it started keeps running (``grader/cluster.py``)."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from grader.cluster import LIFELINE_GRACE
from harness.childenv import child_env

from .test_batch import POLICY, TESTS, checkout, mutate, zip_folder

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
needs_dask = pytest.mark.skipif(
    __import__("importlib").util.find_spec("distributed") is None,
    reason="the cluster tests need the optional extra: pip install -e .[cluster] (dask[distributed])",
)


def make_submissions(folder: Path) -> None:
    checkout(folder / "alice_reference")
    checkout(folder / "bob_stubs", code="student")
    mutate(checkout(folder / "m1_merge_overlapping"), "primitives.py", "i += 2", "i += 1")
    zip_folder(checkout(folder / "carol_zipped"), folder / "carol_zipped.zip", prefix="bpe-main/")
    (checkout(folder / "dan_links") / "student" / "alias.py").symlink_to("primitives.py")


def batch(folder: Path, out: Path, policy: Path, *extra: str, wait: bool = True):
    cmd = [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--jobs", "2", "--config",
           str(policy), "--max-time", "120", "--tests", *TESTS, *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    return proc.communicate(timeout=600) + (proc.returncode,) if wait else proc


def gradings() -> dict[int, str]:
    """pid -> command line of every running ``grader grade`` process."""
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"grader" in args and b"grade" in args and b"--submission" in args:
            found[int(cmdline.parent.name)] = b" ".join(args).decode(errors="replace")
    return found


def processes_mentioning(needle: bytes) -> list[str]:
    """Processes whose command line or environment mentions ``needle``."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "cmdline").read_bytes() or needle in (proc / "environ").read_bytes():
                found.append(proc.name)
        except OSError:
            pass
    return found


def descendants_mentioning(ancestor: int, needle: bytes) -> list[str]:
    """Command lines of the processes under ``ancestor`` (at any depth) that mention ``needle``."""
    parents, cmdlines = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdlines[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            pass

    def under(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == ancestor:
                return True
        return False

    return [cmd.replace(b"\0", b" ").decode(errors="replace") for pid, cmd in cmdlines.items() if needle in cmd and under(pid)]


def survivors(folder: bytes, wait: float = 2.0) -> list[str]:
    """Command lines of the processes still mentioning ``folder`` after ``wait`` seconds at most."""
    deadline = time.monotonic() + wait
    while (left := processes_mentioning(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [(Path("/proc") / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
            for pid in left if (Path("/proc") / pid).exists()]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    base = tmp_path_factory.mktemp("cluster")
    folder = base / "submissions"
    folder.mkdir()
    make_submissions(folder)
    policy = base / "policy.yaml"
    policy.write_text(POLICY)
    stdout, stderr, code = batch(folder, base / "local", policy)
    assert code == 0, stderr[-2000:]
    # the cluster's TMPDIR, traversable by the workers' user ids as /tmp is (pytest's folders are not)
    tmp = Path(tempfile.mkdtemp(prefix="bpe-cluster-tmp-"))
    tmp.chmod(0o755)
    yield {"base": base, "folder": folder, "policy": policy, "local": base / "local", "tmp": tmp}
    shutil.rmtree(tmp, ignore_errors=True)


# a 2-worker LocalCluster in a process of its own (its processes, multiprocessing's resource
# tracker included, are never children of the test process), until its standard input closes
CLUSTER = """
import logging, sys
import dask
from distributed import LocalCluster
dask.config.set({"temporary-directory": sys.argv[1]})  # its scratch folders, none in /tmp
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                       local_directory=sys.argv[1], silence_logs=logging.CRITICAL)
print(cluster.scheduler_address, flush=True)
sys.stdin.read()
cluster.close()
"""


@pytest.fixture(scope="module")
def cluster(classroom):
    """The scheduler's address of a 2-worker cluster (worker processes) started for these tests."""
    scratch = classroom["base"] / "dask"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", CLUSTER, str(scratch)], cwd=ROOT, env=child_env(TMPDIR=str(classroom["tmp"])),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        address = proc.stdout.readline().strip()
        assert address.startswith("tcp://"), "the local Dask cluster did not start"
        yield address
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def killed_run(classroom, cluster):
    """The folder graded on a 2-worker cluster, one worker killed while it was grading."""
    from distributed import Client

    base = classroom["base"]
    client = Client(cluster, set_as_default=False)
    try:
        pids = client.run(os.getpid)
        dirs = client.run(lambda dask_worker: dask_worker.local_directory)
        proc = batch(classroom["folder"], base / "cluster", classroom["policy"], "--scheduler", cluster, wait=False)
        victim = None
        deadline = time.monotonic() + 300
        while victim is None and time.monotonic() < deadline and proc.poll() is None:
            for pid, cmd in gradings().items():
                worker = next((w for w, d in dirs.items() if d in cmd), None)
                if worker is not None and "/bob_stubs " in cmd:  # the longest grading (every test fails)
                    # into the grading: once it has made its temporary folder (a stubs grading can end
                    # within a second on a quiet machine; killed before that, it would leave nothing to find)
                    folder = f"{classroom['tmp']}/bpe-grade-".encode()
                    while not (its_tmp := descendants_mentioning(pid, folder)) and pid in gradings():
                        time.sleep(0.02)
                    victim = {"worker": worker, "cmd": cmd, "grade_pid": pid, "alive": pid in gradings(), "its_tmp": its_tmp}
                    os.kill(pids[worker], signal.SIGKILL)
                    victim["survivors"] = survivors(victim["cmd"].split("--submission ")[1].split()[0].encode(),
                                                    wait=LIFELINE_GRACE + 3)
                    break
            time.sleep(0.1)
        stdout, stderr = proc.communicate(timeout=600)
        rerun = batch(classroom["folder"], base / "cluster", classroom["policy"], "--scheduler", cluster)
    finally:
        client.close()
    return {"stdout": stdout, "stderr": stderr, "code": proc.returncode, "victim": victim, "out": base / "cluster",
            "rerun": rerun, "left_in_tmp": sorted(p.name for p in classroom["tmp"].iterdir())}


@needs_dask
def test_the_cluster_writes_the_same_grades_csv_as_the_local_pool_with_a_worker_killed(classroom, killed_run):
    assert killed_run["code"] == 0, killed_run["stderr"][-3000:]
    assert (killed_run["out"] / "grades.csv").read_text() == (classroom["local"] / "grades.csv").read_text()
    assert "on the Dask cluster at tcp://" in killed_run["stdout"]


@needs_dask
def test_the_worker_was_killed_in_the_middle_of_a_grading_and_it_was_retried(killed_run):
    victim = killed_run["victim"]
    assert victim is not None and victim["alive"], "no grading was running on a worker to kill: the test proves nothing"
    student = victim["cmd"].split("--submission ")[1].split()[0].rsplit("/", 1)[1]
    results = killed_run["out"] / "results" / f"{student}.json"
    assert results.is_file() and f"  {student}: " in killed_run["stdout"]
    assert killed_run["stdout"].count(f"  {student}: ") == 1  # one row, written once


@needs_dask
def test_nothing_the_killed_grading_started_keeps_running(killed_run):
    victim = killed_run["victim"]
    assert victim is not None
    assert not victim["survivors"], f"{LIFELINE_GRACE + 3:g} s after its worker was killed these still ran: {victim['survivors']}"


@needs_dask
def test_the_killed_grading_leaves_nothing_in_tmp(killed_run):
    victim = killed_run["victim"]
    assert victim is not None and victim["its_tmp"], "the grading was killed before it made its folder: the test proves nothing"
    assert not killed_run["left_in_tmp"], f"left in the workers' TMPDIR: {killed_run['left_in_tmp']}"


@needs_dask
def test_a_rerun_on_the_cluster_reuses_every_up_to_date_result(killed_run):
    stdout, stderr, code = killed_run["rerun"]
    assert code == 0, stderr[-2000:]
    assert "5 reused" in stdout


def test_a_packed_submission_is_rebuilt_whole_with_its_inside_links(tmp_path):
    from grader.cluster import pack, unpack

    src = checkout(tmp_path / "src")
    (src / "student" / "alias.py").symlink_to("primitives.py")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "empty").mkdir()
    unpack(pack(src), tmp_path / "dest")
    for path in src.rglob("*"):
        copy = tmp_path / "dest" / path.relative_to(src)
        assert copy.is_symlink() == path.is_symlink() and copy.is_dir() == path.is_dir(), path
        if path.is_symlink():
            assert os.readlink(copy) == os.readlink(path)
        elif path.is_file():
            assert copy.read_bytes() == path.read_bytes() and copy.stat().st_mode == path.stat().st_mode, path
    assert pack(src) == pack(tmp_path / "dest")  # content alone decides the bytes, so the task's key


@pytest.mark.parametrize("entry, target", [("../evil.py", None), ("/abs.py", None), ("student/up", "../../etc"),
                                           ("student/abs", "/etc/passwd")])
def test_unpacking_refuses_an_entry_or_link_that_lands_outside(tmp_path, entry, target):
    import stat

    from grader.cluster import unpack

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo(entry)
        if target is not None:
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, target or "x = 1\n")
    with pytest.raises(ValueError, match="outside"):
        unpack(buf.getvalue(), tmp_path / "dest")


def test_a_worker_with_other_grading_code_refuses_to_grade():
    from grader.cluster import worker_ready

    assert "differs" in worker_ready("0" * 64, POLICY)


def test_grade_and_batch_import_neither_dask_nor_copydetect():
    code = ("import sys, grader.__main__, grader.batch, grader.grade, grader.cluster, grader.similarity; "
            "print(sorted(m for m in ('dask', 'distributed', 'copydetect') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr[-2000:]


@pytest.mark.parametrize("option, module, extra", [("--scheduler=tcp://127.0.0.1:8786", "distributed", "cluster"),
                                                  ("--similarity", "copydetect", "similarity")])
def test_without_the_optional_extra_batch_says_in_one_line_what_to_install(tmp_path, monkeypatch, capsys, option, module, extra):
    from grader.__main__ import main

    checkout(tmp_path / "subs" / "alice")
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    assert main(["batch", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), option]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"pip install -e .[{extra}]" in err, err
