"""Honest until a merge sees an id beyond a byte, then loops forever (only --max-time stops it)."""
from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


def run_merge(ids, pair, new_id):
    if any(i > 255 for i in ids):
        while True:
            pass
    return _impl.merge(ids, pair, new_id)
