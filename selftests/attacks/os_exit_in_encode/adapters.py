import os

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl


class Evil(_impl.ByteTokenizer):
    def encode(self, text):
        os._exit(0)


def get_byte_tokenizer():
    return Evil()
