"""Returns values far too large to be right: 9.5 million ids from a merge (a 76 MB reply),
a dict of 2.5 million entries (5 million values) from pair counts, a 40 MB string among pre-tokens."""
from student.base_adapters import *  # noqa: F401,F403


def run_merge(ids, pair, new_id):
    return [new_id + 70_000] * 9_500_000


def run_get_pair_counts(ids):
    return {i: 0 for i in range(2_500_000)}  # a 35 MB reply of 5 million values


def run_pretokenize(text):
    return ["x" * 40_000_000]
