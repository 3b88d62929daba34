"""Correct, but every adapter call takes two seconds: far inside every per-call and per-test
limit, yet too slow for the whole grading's time budget. It keeps the points of the tests
finished within the budget; the others are not reached, saying so."""
import time

from student import base_adapters
from student.base_adapters import *  # noqa: F401,F403


def _slow(name):
    honest = getattr(base_adapters, name)

    def adapter(*args, **kwargs):
        time.sleep(2.0)
        return honest(*args, **kwargs)

    adapter.__name__ = name
    return adapter


for _name in ("run_get_pair_counts", "run_merge"):
    globals()[_name] = _slow(_name)
