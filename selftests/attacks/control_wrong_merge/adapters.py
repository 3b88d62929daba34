"""Control: an honest but wrong merge (the score every merge attack below must not beat)."""
from student.base_adapters import *  # noqa: F401,F403


def run_merge(ids, pair, new_id):
    return []
