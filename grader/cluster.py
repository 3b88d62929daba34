"""``batch --scheduler ADDRESS``: grade each submission as a task on a Dask cluster.

Courses that outgrow one machine already run an engine on their cluster or cloud VMs; Dask
(``pip install -e .[cluster]``, imported only here) is one they run, with ``dask-jobqueue``
starting workers through Slurm or PBS. Every worker needs this project installed at the same
commit (checked: the client and each task compare a digest of the grading code).

What travels is data, never paths (no shared filesystem): the client stages a submission as
the local pool does (same rejections), packs the staged folder into a deterministic zip
(links kept only as links inside it), and submits ``grade_packed`` under the key
``bpe-grade-<student>-<sha256 of the zip>``. The worker unpacks it in its own scratch
folder and runs the very ``grade`` command the local pool runs (own process group, its own
sandboxed workers, ``--max-time`` plus a grace), under a lifeline that kills that process
group if the Dask worker dies. The results, report and log come back as bytes, and the
client writes them (atomically, only for the content hash it sent). A worker lost mid-task
makes the scheduler run the task again elsewhere (up to its ``allowed-failures``); the
results are written once, by the client, whichever attempt delivered them.
"""

from __future__ import annotations

import hashlib
import io
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from concurrent.futures import CancelledError
from functools import lru_cache
from pathlib import Path, PurePosixPath

from harness import ROOT

CONNECT_TIMEOUT = 60.0  # seconds to reach the scheduler and see a first worker
LOG_TAIL = 1_000_000  # characters of a grading's log brought back
LIFELINE_GRACE = 10.0  # seconds a grading whose worker died gets to stop and clean up (grade's STOP_GRACE is 5)
DIGESTED = ("harness", "sandbox", "grader", "mutants", "reference", "tests", "fixtures")
_EPOCH = (1980, 1, 1, 0, 0, 0)


class ClusterError(Exception):
    """The cluster cannot grade (unreachable, no workers, another harness, dask missing)."""


class Stopped(BaseException):
    """The batch was stopped and cancelled this grading: no row's error (not an Exception)."""


# ---- submissions as data ---------------------------------------------------------------


def pack(folder: Path) -> bytes:
    """``folder`` as a zip that depends on content alone (sorted, fixed dates); symbolic links
    are stored as links (their target as text), never followed."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                path = Path(dirpath, name)
                rel = path.relative_to(folder).as_posix()
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    info, data = zipfile.ZipInfo(rel, _EPOCH), os.readlink(path).encode()
                elif stat.S_ISDIR(mode):
                    info, data = zipfile.ZipInfo(rel + "/", _EPOCH), b""
                else:
                    info, data = zipfile.ZipInfo(rel, _EPOCH), path.read_bytes()
                    info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (stat.S_IFMT(mode) | (mode & 0o755)) << 16
                zf.writestr(info, data)
    return buf.getvalue()


def unpack(data: bytes, dest: Path) -> None:
    """Rebuild a :func:`pack` zip in ``dest`` (new); ``ValueError`` for an entry or link that
    would land outside it."""
    dest.mkdir(parents=True)
    top = dest.resolve()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            rel = PurePosixPath(info.filename)
            target = dest.joinpath(*rel.parts)
            if rel.is_absolute() or ".." in rel.parts or not target.parent.resolve().is_relative_to(top):
                raise ValueError(f"packed entry {info.filename!r} lands outside the submission")
            kind = stat.S_IFMT(info.external_attr >> 16)
            if kind == stat.S_IFLNK:
                link = zf.read(info).decode()
                if os.path.isabs(link) or not Path(os.path.normpath(target.parent.resolve() / link)).is_relative_to(top):
                    raise ValueError(f"packed link {info.filename!r} -> {link!r} points outside the submission")
                os.symlink(link, target)
            elif info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.write_bytes(zf.read(info))
                target.chmod((info.external_attr >> 16) & 0o755 or 0o644)


@lru_cache(maxsize=1)
def harness_digest() -> str:
    """sha256 of the code and data that decide a grade (``DIGESTED`` folders, caches aside)."""
    h = hashlib.sha256()
    for part in DIGESTED:
        for path in sorted((ROOT / part).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc"):
                h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


# ---- the worker's side -----------------------------------------------------------------


def _scratch() -> Path:
    """The Dask worker's own scratch folder (purged by Dask if the worker dies), else TMPDIR."""
    try:
        from distributed import get_worker

        base = Path(get_worker().local_directory) / "bpe-grading"
    except (ImportError, ValueError):
        base = Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    return base


def grade_packed(student: str, packed: bytes, content: str, expect: str, config_text: str,
                 tests: list[str] | None, max_time: float) -> dict:
    """Run on a worker: grade one packed submission as ``batch`` grades it locally; its
    results, report and log as data (``rejected``: why it could not be graded)."""
    from .batch import BatchOptions, _run_grade
    from .intake import Rejected

    if harness_digest() != expect:
        raise ClusterError(f"this worker's grading code (digest {harness_digest()[:12]}) differs from the "
                           f"client's ({expect[:12]}): install the same commit of the harness on every worker")
    work = Path(tempfile.mkdtemp(prefix=f"{student}-", dir=_scratch()))
    try:
        root = work / student  # the folder's name seeds the per-submission cases, as in the local pool
        unpack(packed, root)
        (work / "grading.yaml").write_text(config_text, encoding="utf-8")
        # jobs=2: a cluster machine runs gradings side by side (its workers' threads, or several
        # workers), so no busy-polling for replies, as the local pool with --jobs 2 or more
        opts = BatchOptions(out=work, config=work / "grading.yaml", jobs=2, max_time=max_time, tests=tests, quiet=True)
        reply = {"content": content, "rejected": None, "returncode": None}
        try:
            reply["returncode"] = _run_grade(root, work / "results.json", work / "report.json", work / "grade.log",
                                             opts, prefix=lifeline_prefix())
        except Rejected as err:
            reply["rejected"] = str(err)
        for name in ("results.json", "report.json"):
            reply[name] = (work / name).read_bytes() if (work / name).is_file() else None
        log = work / "grade.log"
        reply["log"] = log.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL:] if log.is_file() else ""
        return reply
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


def worker_ready(expect: str, config_text: str) -> str | None:
    """Run on each worker before grading: None, or why this worker cannot grade."""
    if harness_digest() != expect:
        return f"its grading code differs from the client's (digest {harness_digest()[:12]}, client {expect[:12]})"
    from .config import ConfigError, load_config
    from .selfcheck import check_reference

    with tempfile.TemporaryDirectory(dir=_scratch()) as work:
        (Path(work) / "grading.yaml").write_text(config_text, encoding="utf-8")
        try:
            config = load_config(Path(work) / "grading.yaml")
        except ConfigError as err:
            return str(err)
    cause = check_reference(config.isolation, config.forbidden_modules)
    return None if cause is None else f"the self-check failed: {cause}"


def lifeline_prefix() -> list[str]:
    return [sys.executable, "-m", "grader.cluster", "lifeline", str(os.getpid())]


def lifeline(parent: int, cmd: list[str]) -> int:
    """Run ``cmd`` (a ``grade``) and, when the process ``parent`` dies, stop it as a signal to
    ``grade`` would (SIGTERM: it stops its tests and removes its temporary folders), then kill
    this whole process group (the grading and everything it started) after ``LIFELINE_GRACE``
    seconds at most: a Dask worker killed mid-grading leaves nothing running and nothing in TMPDIR."""
    import ctypes

    child: subprocess.Popen | None = None

    def die(*_):
        if child is not None:
            child.terminate()
            _reap(child.pid, LIFELINE_GRACE)
        os.killpg(os.getpgid(0), signal.SIGKILL)

    signal.signal(signal.SIGTERM, die)
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the line above
        die()
    child = subprocess.Popen(cmd)
    return child.wait()


def _reap(pid: int, seconds: float) -> None:
    """Wait up to ``seconds`` for the child ``pid`` to end (from a signal handler: no Popen lock)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        time.sleep(0.05)


# ---- the client's side -----------------------------------------------------------------


def connect(address: str, config: Path) -> ClusterRunner | None:
    """A runner on the cluster at ``address`` whose workers all can grade, or None (the
    reason printed as one line)."""
    runner = None
    try:
        runner = ClusterRunner(address, config)
        runner.check_workers()
        return runner
    except ClusterError as err:
        print(f"batch: {err}", file=sys.stderr)
        if runner is not None:
            runner.close()
        return None


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError("--scheduler needs Dask: pip install -e .[cluster] (dask[distributed])") from None
    return distributed


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class ClusterRunner:
    """Grades on the cluster at ``address``; called as ``batch`` calls its local runner."""

    def __init__(self, address: str, config: Path):
        distributed = _distributed()
        self.killed_worker = distributed.KilledWorker
        try:
            self.client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as err:  # ValueError: not an address
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {err}") from None
        self.address = address
        self.config_text = Path(config).read_text(encoding="utf-8")
        self.digest = harness_digest()
        self.futures: set = set()

    def check_workers(self) -> None:
        """Every worker runs the same grading code and passes the self-check, else ``ClusterError``."""
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except TimeoutError:
            raise ClusterError(f"the Dask scheduler at {self.address} has no worker") from None
        causes = self.client.run(worker_ready, self.digest, self.config_text)
        bad = {w: c for w, c in causes.items() if c is not None}
        if bad:
            worker, cause = sorted(bad.items())[0]
            raise ClusterError(f"Dask worker {worker} cannot grade: {cause}"
                               + (f" ({len(bad) - 1} more workers too)" if len(bad) > 1 else ""))

    def in_flight(self, jobs: int) -> int:
        """Submissions handed to the cluster at once: ``jobs``, at least twice its threads."""
        try:
            info = self.client.scheduler_info(n_workers=-1)  # every worker, whatever the default
        except TypeError:  # older versions: no such option, every worker shown
            info = self.client.scheduler_info()
        threads = sum(w.get("nthreads", 1) for w in info["workers"].values())
        return max(jobs, 2 * threads)

    def __call__(self, root: Path, results_path: Path, report_path: Path, log: Path, opts) -> int:
        from .intake import Rejected

        packed = pack(root)
        content = hashlib.sha256(packed).hexdigest()
        with warnings.catch_warnings():  # "large object in task graph": it is the submission, on purpose
            warnings.simplefilter("ignore")
            future = self.client.submit(grade_packed, root.name, packed, content, self.digest, self.config_text,
                                        opts.tests, opts.max_time, key=f"bpe-grade-{root.name}-{content[:16]}")
        self.futures.add(future)
        try:
            reply = future.result()
        except CancelledError:
            raise Stopped from None
        except self.killed_worker as err:
            raise ClusterError(f"no Dask worker lived to finish it ({str(err).splitlines()[0][:300]})") from None
        finally:
            self.futures.discard(future)
            future.release()
        if reply["content"] != content:
            raise ClusterError(f"the cluster answered for other content ({reply['content'][:12]}, sent {content[:12]})")
        _write(log, reply["log"].encode("utf-8"))
        if reply["report.json"] is not None:
            _write(report_path, reply["report.json"])
        if reply["results.json"] is not None:
            _write(results_path, reply["results.json"])
        if reply["rejected"] is not None:
            raise Rejected(reply["rejected"])
        return reply["returncode"]

    def close(self) -> None:
        """Cancel what is still queued or running and disconnect."""
        if self.futures:
            self.client.cancel(list(self.futures), force=True)
        self.client.close()


if __name__ == "__main__" and sys.argv[1:2] == ["lifeline"]:
    sys.exit(lifeline(int(sys.argv[2]), sys.argv[3:]))
