import os
import sys

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl

_done = []


def run_merge(ids, pair, new_id):
    if not _done:  # 100 MB once per worker
        _done.append(1)
        block = "x" * (1 << 20) + "\n"
        for _ in range(100):
            sys.stdout.write(block)
        sys.stdout.flush()
        os.write(2, b"y" * (1 << 20))
    return _impl.merge(ids, pair, new_id)
