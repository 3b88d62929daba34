"""encode_iterable misbehaving by input (honest otherwise):
- on no input at all it yields ids forever (a never-ending stream);
- on "hello world " it stalls forever after its first chunk (a stalled exchange);
- on "<|endoftext|>\\n" it reads the whole iterator first and, past 2,000 chunks, dies
  as the kernel's out-of-memory killer would kill it (a non-lazy tokenizer).
"""
import itertools
import os
import signal
import time

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import get_tokenizer as honest_get_tokenizer


class Misbehaving:
    def __init__(self, inner):
        self.inner = inner

    def encode(self, text):
        return self.inner.encode(text)

    def decode(self, ids):
        return self.inner.decode(ids)

    def encode_iterable(self, iterable):
        it = iter(iterable)
        first = next(it, None)
        if first is None:
            while True:
                yield 0
        if first == "hello world ":
            while True:
                time.sleep(1)
        if first == "<|endoftext|>\n":
            seen = [first]
            for piece in it:
                seen.append(piece)
                if len(seen) > 2000:
                    os.kill(os.getpid(), signal.SIGKILL)
        yield from self.inner.encode_iterable(itertools.chain([first], it))


def get_tokenizer(vocab, merges, special_tokens=None):
    return Misbehaving(honest_get_tokenizer(vocab, merges, special_tokens))
