"""Folders a grading closes to other users (no private root: file permissions keep the worker
out) get their modes back when the grading ends, machine-wide: not while another grading
still needs them closed, also after a grading that was killed, never over a mode someone
changed meanwhile (sandbox.closing)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox.closing import ClosedFolders, held
from sandbox.confine import close_to_others

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lock folder must be root's, as the grader runs as root")


@pytest.fixture
def place(tmp_path):
    """A root-only lock folder and three folders open to everyone (0o755)."""
    locks = tmp_path / "locks"
    folders = [tmp_path / name for name in ("sibling", "submissions", "checkout")]
    for folder in folders:
        folder.mkdir()
        os.chmod(folder, 0o755)
    return locks, [str(f) for f in folders]


def modes(folders: list[str]) -> list[int]:
    return [stat.S_IMODE(os.stat(f).st_mode) for f in folders]


def test_a_grading_gives_back_what_its_worker_closed(place):
    locks, folders = place
    grading = ClosedFolders(locks)
    grading.hold(folders)
    assert close_to_others(folders) == folders  # as the worker does
    assert modes(folders) == [0o750] * 3
    assert sorted(grading.release()) == sorted(folders)
    assert modes(folders) == [0o755] * 3
    assert not list(locks.iterdir()), "no record or lock file outlives the grading"


def test_folders_stay_closed_while_another_grading_still_needs_them(place):
    locks, folders = place
    first, second = ClosedFolders(locks), ClosedFolders(locks)
    first.hold(folders)
    close_to_others(folders)
    second.hold(folders)  # sees them closed already: the record keeps their mode from before
    assert first.release() == []
    assert modes(folders) == [0o750] * 3
    assert len(second.release()) == 3
    assert modes(folders) == [0o755] * 3


def test_a_folder_is_held_from_the_first_hold_until_the_last_release(place):
    locks, folders = place
    first, second = ClosedFolders(locks), ClosedFolders(locks)
    assert not any(held(f, locks) for f in folders)
    first.hold(folders)
    second.hold(folders[:1])
    first.release()
    assert [held(f, locks) for f in folders] == [True, False, False]
    second.release()
    assert not held(folders[0], locks)


def test_folders_a_killed_grading_closed_are_given_back_by_the_next_one(place, tmp_path):
    locks, folders = place
    holder = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from sandbox.closing import ClosedFolders
        from sandbox.confine import close_to_others
        ClosedFolders(__import__("pathlib").Path({str(locks)!r})).hold({folders!r})
        close_to_others({folders!r})
        print("closed", flush=True)
        time.sleep(300)
    """)
    proc = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "closed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert modes(folders) == [0o750] * 3, "killed outright, it could give nothing back"
    nxt = ClosedFolders(locks)
    nxt.hold(folders)
    close_to_others(folders)
    assert len(nxt.release()) == 3
    assert modes(folders) == [0o755] * 3


def test_a_mode_changed_during_the_grading_is_left_as_it_was_changed(place):
    locks, folders = place
    grading = ClosedFolders(locks)
    grading.hold(folders)
    close_to_others(folders)
    os.chmod(folders[0], 0o700)  # the owner changed it meanwhile
    assert sorted(grading.release()) == sorted(folders[1:])
    assert modes(folders) == [0o700, 0o755, 0o755]


def test_a_folder_closed_before_the_grading_stays_closed(place):
    locks, folders = place
    os.chmod(folders[0], 0o750)
    grading = ClosedFolders(locks)
    grading.hold(folders)
    close_to_others(folders)
    grading.release()
    assert modes(folders) == [0o750, 0o755, 0o755]
