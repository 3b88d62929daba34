"""Training under the module name CS336 repositories often use (selftest fixture). Like
many students' code it logs the process's memory with ``psutil`` when it is installed."""

import os

from .train import train_bpe as _train_bpe

try:
    import psutil
except ImportError:  # optional: only for the log
    psutil = None

LOG: list[str] = []


def train_bpe(input_path, vocab_size, special_tokens):
    vocab, merges = _train_bpe(input_path, vocab_size, special_tokens)
    if psutil is not None:
        LOG.append(f"rss {psutil.Process(os.getpid()).memory_info().rss >> 20} MB")
    return vocab, merges
