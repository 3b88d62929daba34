"""Busy-polling for the other side's next message (``sandbox.channel.default_spin``) only
while the CPUs are not contended: on an idle machine a 2 ms spin saves the 50-100 us of waking
a sleeping process on every call; where several gradings share the cores, the spinning side
takes a core another grading needs (a whole-suite grading beside two busy processes: 27.5 s of
CPU and 37 s spinning, 18.6 s and 23 s not). Contended: more tasks runnable than CPUs
(/proc/loadavg), or tasks waited for a CPU over a tenth of the last 10 s (Linux's pressure
stall information), here written to files of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import channel
from sandbox.backend import WorkerBackend


def pressure_file(folder: Path, avg10: str) -> str:
    path = folder / "cpu"
    path.write_text(f"some avg10={avg10} avg60=1.00 avg300=0.50 total=123456\n"
                    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", encoding="ascii")
    return str(path)


def load_file(folder: Path, running: int) -> str:
    path = folder / "loadavg"
    path.write_text(f"0.50 0.40 0.30 {running}/250 12345\n", encoding="ascii")
    return str(path)


@pytest.fixture(autouse=True)
def several_cores_and_no_setting(monkeypatch):
    monkeypatch.setattr(channel.os, "cpu_count", lambda: 4)
    monkeypatch.delenv("BPE_GRADER_SPIN", raising=False)


@pytest.mark.parametrize("avg10, spins", [("0.00", True), ("9.99", True), ("10.01", False), ("87.50", False)])
def test_replies_are_busy_polled_only_while_tasks_waited_for_a_cpu_at_most_a_tenth_of_the_time(tmp_path, avg10, spins):
    assert channel.default_spin(pressure_file(tmp_path, avg10), load_file(tmp_path, 1)) == (channel.SPIN_SECONDS if spins else 0.0)


@pytest.mark.parametrize("running, spins", [(1, True), (4, True), (5, False), (40, False)])
def test_replies_are_busy_polled_only_while_the_tasks_runnable_now_are_no_more_than_the_cpus(tmp_path, running, spins):
    """A load begun a moment ago shows in the runnable tasks before it shows in the pressure."""
    assert channel.default_spin(pressure_file(tmp_path, "0.00"), load_file(tmp_path, running)) == (channel.SPIN_SECONDS if spins else 0.0)


@pytest.mark.parametrize("content", [None, "", "some avg10=high 0.1 0.1 x/9\n", "some total=1\n", "garbage\n"],
                         ids=["no file", "empty", "not numbers", "no avg10", "no fields"])
def test_without_readable_load_files_the_spin_is_decided_by_the_cores_alone(tmp_path, monkeypatch, content):
    path = tmp_path / "unreadable"
    if content is not None:
        path.write_text(content, encoding="ascii")
    assert channel.default_spin(str(path), str(path)) == channel.SPIN_SECONDS
    monkeypatch.setattr(channel.os, "cpu_count", lambda: 1)
    assert channel.default_spin(str(path), str(path)) == 0.0


@pytest.mark.parametrize("setting, spin", [("0", 0.0), ("0.005", 0.005), ("-1", 0.0), ("fast", 0.0)])
def test_the_environment_setting_decides_whatever_the_pressure(tmp_path, monkeypatch, setting, spin):
    monkeypatch.setenv("BPE_GRADER_SPIN", setting)
    assert channel.default_spin(pressure_file(tmp_path, "0.00"), load_file(tmp_path, 1)) == spin
    assert channel.default_spin(pressure_file(tmp_path, "95.00"), load_file(tmp_path, 40)) == spin


def test_a_backend_decides_as_each_worker_starts_unless_given_a_spin(tmp_path, monkeypatch):
    """The pressure when a worker starts counts, not when its backend was made: a grading
    begun on a quiet machine stops spinning at its next worker once others share the cores."""
    backend = WorkerBackend("reference", label="spin")
    monkeypatch.setattr(channel, "LOAD", load_file(tmp_path, 1))
    monkeypatch.setattr(channel, "CPU_PRESSURE", pressure_file(tmp_path, "0.00"))
    assert backend._spec().spin == channel.SPIN_SECONDS
    monkeypatch.setattr(channel, "CPU_PRESSURE", pressure_file(tmp_path, "50.00"))
    assert backend._spec().spin == 0.0
    assert WorkerBackend("reference", label="spin", spin=0.001)._spec().spin == 0.001
