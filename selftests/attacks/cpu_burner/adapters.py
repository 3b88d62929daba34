"""Honest code (the reference), plus processes that leave the worker's process group and burn
every core for the rest of grading: aimed at the reference timing, which a busy machine would
slow down, widening the submission's own speed limit. Each burner gives up after 90 s."""
import os
import sys

from student.base_adapters import *  # noqa: F401,F403

BURNERS = 6  # three per core on the grading machine


def _burn() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            loop = "import time\nend = time.monotonic() + 90\nwhile time.monotonic() < end: sum(range(10000))"
            os.execv(sys.executable, [sys.executable, "-c", loop, "bpe-attack-cpu-burner"])  # marker
        os._exit(0)


for _ in range(BURNERS):
    _burn()
