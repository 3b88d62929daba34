"""Honest until a merge sees an id beyond a byte, then hangs forever, asleep (only --max-time,
a crash of the test run or the test's own timeout ends it; asleep, it leaves the machine's
cores to the gradings run beside it: a spinning hang is test_attacks.py's infinite_loop)."""
import time

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


def run_merge(ids, pair, new_id):
    if any(i > 255 for i in ids):
        while True:
            time.sleep(1)
    return _impl.merge(ids, pair, new_id)
