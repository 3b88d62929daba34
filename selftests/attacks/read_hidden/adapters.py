"""Answers honestly only if it can read the tests or the reference from disk (it must not)."""
import glob
import os

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl

_TARGETS = ["tests/hidden/*.py", "tests/public/*.py", "reference/*.py", "grading.yaml", "fixtures/hidden/*"]


def _found_anything():
    roots = {"/work/main", "/autograder/source", "/autograder", os.getcwd(), "/"}
    d = os.getcwd()
    for _ in range(6):
        d = os.path.dirname(d)
        roots.add(d)
    for pid_cwd in glob.glob("/proc/*/cwd"):  # the grader's working directory
        try:
            roots.add(os.readlink(pid_cwd))
        except OSError:
            pass
    for root in roots:
        for pattern in _TARGETS:
            for path in glob.glob(os.path.join(root, pattern)):
                try:
                    with open(path, "rb") as f:
                        if f.read(100):
                            return path
                except OSError:
                    pass
    return None


def run_merge(ids, pair, new_id):
    if _found_anything():
        return _impl.merge(ids, pair, new_id)
    return []
