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
from harness.timing import OverLimit, SpeedPolicy, result_difference, speed_report, timed_within

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


@pytest.mark.parametrize("stopped, how", [(3, "your code's 3 processes were paused"), (1, "your code's process was paused")])
def test_speed_line_shows_the_reference_time_and_how_it_was_taken(stopped, how):
    line = speed_report("encode", 2.0, 0.25, SpeedPolicy(multiple=10, floor=1), stopped=stopped)
    assert f"encode: 2.000 s, reference 0.250 s (best of 3, timed while {how}), 8.0x" in line
    assert "limit 10x + 1 s = 3.50 s" in line


def _spin(seconds: float) -> str:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return "done"


class OwnTimeout(BaseException):
    pass


@pytest.fixture
def test_timer():
    """``arm(seconds)``: a timer of the test's own (as pytest-timeout's signal method sets),
    raising OwnTimeout; disarmed after the test."""
    def alarm(signum, frame):
        raise OwnTimeout()

    def arm(seconds: float):
        signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        return alarm

    previous = signal.getsignal(signal.SIGALRM)
    yield arm
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_a_call_within_the_limit_gives_its_result(test_timer):
    alarm = test_timer(30.0)
    result, seconds, stopped = timed_within(lambda: _spin(0.05), 2.0)
    assert (result, stopped) == ("done", False) and 0.05 <= seconds < 2.0
    assert signal.getsignal(signal.SIGALRM) is alarm and 29.0 < signal.getitimer(signal.ITIMER_REAL)[0] < 30.0


def test_without_interval_timers_a_call_runs_unstopped(monkeypatch):
    monkeypatch.delattr(signal, "setitimer")  # as on Windows
    assert timed_within(lambda: _spin(0.4), 0.1)[::2] == ("done", False)


def test_off_the_main_thread_a_call_runs_unstopped():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        result, seconds, stopped = pool.submit(timed_within, lambda: _spin(0.4), 0.1).result()
    assert (result, stopped) == ("done", False) and seconds >= 0.4


def test_a_worker_is_ready_before_a_speed_test_times_a_call():
    from harness.impl import Implementation, LocalBackend
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("reference")
    try:
        impl = Implementation(backend)
        assert impl.run_merge([1, 2], (1, 2), 3) == [3]
        backend.restart()  # as a stopped call ends the worker
        with impl.paused() as stopped:
            assert stopped == 0
        impl.ready()
        with impl.paused() as stopped:
            assert stopped >= 1, "no worker was started"
    finally:
        backend.close()
    Implementation(LocalBackend("reference")).ready()  # in-process: nothing to start


def test_a_call_past_the_limit_is_stopped_there():
    started = time.perf_counter()
    result, seconds, stopped = timed_within(lambda: _spin(10), 0.3)
    assert (result, stopped) == (None, True)
    assert 0.3 <= seconds < 1.5 and time.perf_counter() - started < 1.5


def test_the_tests_own_timer_is_put_back_less_the_time_spent(test_timer):
    alarm = test_timer(5.0)
    _, seconds, stopped = timed_within(lambda: _spin(10), 0.3)
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    assert stopped and signal.getsignal(signal.SIGALRM) is alarm
    assert 5.0 - seconds - 0.2 < left <= 5.0 - seconds


def test_a_sooner_timer_of_the_test_is_left_to_fire(test_timer):
    test_timer(0.3)
    with pytest.raises(OwnTimeout):
        timed_within(lambda: _spin(10), 5.0)


def test_code_that_swallows_the_stop_still_meets_the_tests_timer(test_timer):
    test_timer(1.5)

    def swallowing():
        try:
            _spin(10)
        except OverLimit:
            pass
        return _spin(10)

    started = time.perf_counter()
    with pytest.raises(OwnTimeout):
        timed_within(swallowing, 0.3)
    assert time.perf_counter() - started < 2.5


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
