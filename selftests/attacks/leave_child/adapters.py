"""Leaves a detached child behind that would forge results later."""
import os
import time

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl

_started = []


def _daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # bpe-attack-leftover-child: test_attacks looks for this marker after grading
            os.execvp("sleep", ["sleep", "299.4242"])
        os._exit(0)


def run_merge(ids, pair, new_id):
    if not _started:
        _started.append(1)
        _daemon()
    return _impl.merge(ids, pair, new_id)
