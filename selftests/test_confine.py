"""The worker's own /proc and /dev/shm, and the size cap on its work folder (issues 13, 18).

A small submission writes where the tests tell it (through ``run_pretokenize``'s text): a
file in ``/dev/shm`` must never appear in the machine's ``/dev/shm`` and is gone with the
worker; writing past ``work_mb`` in its work folder fails with "No space left on device".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from sandbox.backend import WorkerBackend
from sandbox.limits import IsolationLimits

pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="the private root directory needs root")

WRITER = '''
import os

def run_pretokenize(text):
    """proc: the process ids it sees; shm:NAME writes /dev/shm/NAME; fill:MB writes MB
    megabytes into the work folder."""
    what, _, arg = text.partition(":")
    try:
        if what == "proc":
            return sorted((n for n in os.listdir("/proc") if n.isdigit()), key=int)
        if what == "shm":
            with open("/dev/shm/" + arg, "w") as f:
                f.write("left behind?")
            return sorted(os.listdir("/dev/shm"))
        with open("fill", "wb") as f:
            for _ in range(int(arg)):
                f.write(b"x" * (1 << 20))
        return ["written"]
    except OSError as err:
        return ["failed", err.strerror]
'''


@pytest.fixture
def writer(tmp_path) -> Path:
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "__init__.py").write_text("")
    (tmp_path / "adapters.py").write_text(WRITER)
    return tmp_path


def test_dev_shm_is_the_workers_own_and_gone_with_it(writer):
    name = f"bpe-shm-test-{os.getpid()}"
    backend = WorkerBackend("student", writer, IsolationLimits(call_timeout=30))
    try:
        assert backend.call("run_pretokenize", (f"shm:{name}",), False) == [name]  # its /dev/shm starts empty
        assert not Path("/dev/shm", name).exists()
    finally:
        backend.close()
    assert not Path("/dev/shm", name).exists()


def test_the_work_folder_has_a_size_cap(writer):
    backend = WorkerBackend("student", writer, IsolationLimits(call_timeout=30, work_mb=4))
    try:
        assert backend.call("run_pretokenize", ("fill:2",), False) == ["written"]
        assert backend.call("run_pretokenize", ("fill:8",), False) == ["failed", "No space left on device"]
    finally:
        backend.close()


def test_the_worker_sees_only_its_own_processes(writer):
    """A pid namespace of its own: its /proc lists its namespace's process 1 and itself, never
    the grader (whose command line names the report, the results and the submissions)."""
    backend = WorkerBackend("student", writer, IsolationLimits(call_timeout=30))
    try:
        assert backend.call("run_pretokenize", ("proc:",), False) == ["1", "2"]
        assert "own pid namespace" in (backend.process.confinement() if backend.process else "")
    finally:
        backend.close()
