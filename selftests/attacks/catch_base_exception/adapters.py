"""Catches everything (SystemExit, KeyboardInterrupt, GeneratorExit...) and never gives up."""
from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


def run_merge(ids, pair, new_id):
    while True:
        try:
            if ids == [1, 2, 3, 1, 2]:
                while True:
                    pass
            return _impl.merge(ids, pair, new_id)
        except BaseException:
            continue
