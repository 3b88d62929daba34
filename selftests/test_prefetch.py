"""The selftests' prefetched set-ups (selftests/prefetch.py): each runs once a session,
whoever asks first, also when two ask at once; one not started yet runs in the caller's thread
instead of waiting behind others; an error reaches every caller; the folder of a session
killed before it could remove it goes when the next session starts."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.childenv import child_env

from .prefetch import BACKGROUND, Prefetch
from .support import ROOT


@pytest.fixture
def prefetch():
    p = Prefetch()
    yield p
    p.close()


def test_a_set_up_another_needs_runs_once_when_both_ask_at_once(prefetch):
    calls = []

    def slow(p):
        calls.append(threading.current_thread().name)
        time.sleep(0.5)
        return 42

    def needs_slow(p):
        return p.get(slow) + 1

    prefetch.start([needs_slow, slow])  # the background takes needs_slow, which asks for slow
    time.sleep(0.1)
    assert prefetch.get(slow) == 42 and prefetch.get(needs_slow) == 43
    assert len(calls) == 1, calls


def test_a_set_up_not_started_runs_in_the_callers_thread_not_behind_the_queue(prefetch):
    release = threading.Event()
    blockers = [lambda p: release.wait(10) for _ in range(BACKGROUND)]  # every background thread busy
    prefetch.start([*blockers, (wanted := lambda p: threading.current_thread().name)])
    try:
        assert prefetch.get(wanted) == threading.current_thread().name
    finally:
        release.set()


def test_a_set_ups_error_reaches_every_caller_and_it_is_not_run_again(prefetch):
    calls = []

    def broken(p):
        calls.append(1)
        raise ValueError("broken set-up")

    prefetch.start([broken])
    for _ in range(2):
        with pytest.raises(ValueError, match="broken set-up"):
            prefetch.get(broken)
    assert calls == [1]


def test_gradings_by_name_run_once_and_one_not_started_runs_in_the_caller(prefetch):
    gradings, release, calls = prefetch.gradings, threading.Event(), []
    gradings.submit("blocker 1", lambda: release.wait(10))
    gradings.submit("blocker 2", lambda: release.wait(10))
    gradings.submit("queued", lambda: calls.append(threading.current_thread().name) or len(calls))
    try:
        assert gradings.get("queued") == 1 and gradings.get("queued") == 1
        assert calls == [threading.current_thread().name]
    finally:
        release.set()


SESSION = """
import os, signal, sys
from selftests.prefetch import Prefetch
p = Prefetch()
print(p.base, os.path.exists(sys.argv[1]) if len(sys.argv) > 1 else "", flush=True)
os.kill(os.getpid(), signal.SIGKILL) if len(sys.argv) == 1 else p.close()
"""


def test_the_folder_of_a_killed_session_goes_when_the_next_session_starts(tmp_path):
    env = child_env(TMPDIR=str(tmp_path))
    killed = subprocess.run([sys.executable, "-c", SESSION], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert killed.returncode == -9, killed.stderr
    left = Path(killed.stdout.split()[0])
    assert left.is_dir() and left.parent == tmp_path, killed.stdout  # killed: no clean-up ran
    following = subprocess.run([sys.executable, "-c", SESSION, str(left)], cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=60, check=True)
    assert following.stdout.split()[1] == "False", following.stdout  # gone once the next one started
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)  # and the next one removed its own
