"""A slow trainer (its slow part, standing for a slow pre-tokenization, is a sleep) that
remembers, by the file's content, what the slow part found: the speed test trains on a file
an earlier hidden test trained on (another vocabulary size), so a timed run in the same worker
would skip the slow part. Graded alone (test_attacks.py's SOLO): its verdict is a time."""
import hashlib
import time

from student.base_adapters import *  # noqa: F401,F403
from student.base_adapters import _impl

SLOW_PART = 6.0  # seconds: several times the limit the reference's time gives (about 2.5 s)
_seen = set()


def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    with open(input_path, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()
    if key not in _seen:
        time.sleep(SLOW_PART)
        _seen.add(key)
    return _impl.train_bpe(input_path, vocab_size, special_tokens, **kwargs)
