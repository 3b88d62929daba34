"""The worker's process limit leaves room for a pool of the default size on any machine
(``sandbox.confine``: ``max_processes`` and one per core): ``multiprocessing.Pool()`` starts
``os.cpu_count()`` processes, so a limit of a fixed number failed a CS336 trainer with a
default pool on a machine of more cores than that number, and passed it on its author's (a
pool of 80 processes: ``BlockingIOError: [Errno 11] Resource temporarily unavailable``, 0 of
30 points). A submission that starts more than the limit allows is told which limit it met."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from sandbox.limits import IsolationLimits

from .support import adapters_only, implementation_of

MAX_PROCESSES = 8
OWN = 2  # tasks of the worker itself counted against the limit: its main thread, and one to spare
ADAPTERS = '''
import os
import time


def run_merge(ids, pair, new_id):
    """Start ids[0] sleeping children (pair[0]: 1 for processes, 0 for threads) and return how many started."""
    count, kind = ids[0], pair[0]
    if kind == 0:
        import threading

        for _ in range(count):
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        return [count]
    for _ in range(count):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
    return [count]
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds only a worker of a user id of its own (root's grading)")
@pytest.mark.parametrize("kind", [1, 0], ids=["processes", "threads"])
def test_a_pool_of_one_process_per_core_fits_beside_the_limit(tmp_path, kind):
    limits = replace(IsolationLimits(), max_processes=MAX_PROCESSES)
    started = (os.cpu_count() or 1) + MAX_PROCESSES - OWN  # a default pool, and the limit's own room filled
    with implementation_of(adapters_only(tmp_path / "sub", ADAPTERS), True, limits=limits) as impl:
        assert impl.run_merge([started, 0], (kind, 0), 0) == [started]


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds only a worker of a user id of its own (root's grading)")
@pytest.mark.parametrize("kind", [1, 0], ids=["processes", "threads"])
def test_more_processes_than_the_limit_fail_saying_which_limit(tmp_path, kind):
    limits = replace(IsolationLimits(), max_processes=MAX_PROCESSES)
    with implementation_of(adapters_only(tmp_path / "sub", ADAPTERS), True, limits=limits) as impl:
        with pytest.raises(Exception) as info:
            impl.run_merge([(os.cpu_count() or 1) + 2 * MAX_PROCESSES, 0], (kind, 0), 0)
    assert f"at most {MAX_PROCESSES} processes and threads besides one per core of the machine" in str(info.getrepr()), info.getrepr()
