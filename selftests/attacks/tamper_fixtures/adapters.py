"""Tries to delete or rewrite every input file it can find, then encodes honestly."""
import glob
import os

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


def _vandalize():
    patterns = ["../in/*/*", "../../in/*/*", "/work/main/fixtures/*", "/work/main/fixtures/*/*",
                "/autograder/source/fixtures/*", "/tmp/*/in/*/*", "/tmp/pytest-of-*/*/*/*"]
    for pattern in patterns:
        for path in glob.glob(pattern):
            for action in (os.remove, lambda p: open(p, "w").write("vandalized")):
                try:
                    action(path)
                except OSError:
                    pass


class Evil(_impl.ByteTokenizer):
    def encode(self, text):
        _vandalize()
        return super().encode(text)


def get_byte_tokenizer():
    _vandalize()
    return Evil()


def run_merge(ids, pair, new_id):
    _vandalize()
    return _impl.merge(ids, pair, new_id)
