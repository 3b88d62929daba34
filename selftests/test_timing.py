"""The speed machinery on its own: correct-result verdicts, the speed line, and stopping every
process of a worker (including ones that left its process group) while the reference is timed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from sandbox import proctree
from harness.timing import SpeedPolicy, result_difference, speed_report

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


@pytest.mark.parametrize(
    "expected, actual, says",
    [
        ([1, 2, 3], [1, 2, 4], "result[2] is 4, expected 3"),
        ([1, 2, 3], [1, 2], "result has 2 items, 3 expected"),
        ([1, 2], [1, True], "result[1] should be int, got bool"),
        (({0: b"a"}, [(b"a", b"b")]), ({0: b"a"}, [(b"a", b"c")]), "result[1][0][1] is b'c', expected b'b'"),
        (({0: b"a", 1: b"b"}, []), ({0: b"a"}, []), "result[0] lacks the key 1"),
        ([], [0], "result has 1 items, 0 expected"),
    ],
)
def test_result_difference_names_the_first_difference(expected, actual, says):
    assert says in result_difference(expected, actual)


@pytest.mark.parametrize("value", [[], [1, 2], ({1: b"x"}, [(b"x", b"y")]), "text", 0])
def test_result_difference_is_none_only_for_equal_results(value):
    assert result_difference(value, value) is None


def test_speed_line_shows_the_reference_time_and_how_it_was_taken():
    line = speed_report("encode", 2.0, 0.25, SpeedPolicy(multiple=10, floor=1), stopped=3)
    assert "encode: 2.000 s, reference 0.250 s (best of 3, timed with the submission's 3 process(es) stopped), 8.0x" in line
    assert "limit 10x + 1 s = 3.50 s" in line


SPIN = "import time\nwhile True: time.time()\n"
TREE = f"""
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", {SPIN!r}])                          # a child in the group
subprocess.Popen([sys.executable, "-c", {SPIN!r}], start_new_session=True)  # one that left it
{SPIN}
"""


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_frozen_stops_every_process_of_a_worker_and_continues_them_after():
    leader = subprocess.Popen([sys.executable, "-c", TREE], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while len(proctree.submission_pids(leader.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = proctree.submission_pids(leader.pid)
        assert len(pids) == 3, pids
        with proctree.frozen(leader.pid) as stopped:
            assert stopped == 3
            before = {pid: _cpu_ticks(pid) for pid in pids}
            time.sleep(0.3)
            assert {pid: _cpu_ticks(pid) for pid in pids} == before, "a stopped process used CPU"
        time.sleep(0.3)
        assert all(proctree._stat(pid)[0] != "T" for pid in pids), "not continued after the block"
    finally:
        for pid in proctree.submission_pids(leader.pid):
            os.kill(pid, signal.SIGKILL)
        leader.wait()
