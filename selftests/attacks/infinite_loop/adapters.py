from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


def run_merge(ids, pair, new_id):
    if ids == [1, 2, 3, 1, 2]:  # hangs on a few inputs only (keeps the suite fast)
        while True:
            pass
    return _impl.merge(ids, pair, new_id)
