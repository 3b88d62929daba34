"""The resident memory a probe reports (``rss_peak``, measured from outside the worker) cannot
be lowered from inside it.

It was the kernel's high-water mark (``VmHWM``) alone, which the worker's own user may reset:
writing "5" to ``/proc/self/clear_refs`` sets it to the current resident size. An
encode_iterable joining its whole input, with tracemalloc's answer faked, that freed the input
at the end of the stream and then reset the mark, passed
test_encode_iterable_memory_does_not_grow_with_input (2026-11-27). Only where the worker may
write that file: graded by an ordinary user (user namespaces) on a kernel without Landlock,
which otherwise keeps it from writing anything outside its folders; under a root grader the
worker changed its user id, so its ``/proc`` files are root's. Now the worker's resident size is
also sampled from outside during the probe, and a reset cannot hide memory held for longer
than a sample's period. Here the trusted side makes the reset itself, at the moment such a
worker would, so the test holds whatever the kernel lets this worker do."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from harness.impl import Implementation
from sandbox import proctree
from sandbox.backend import WorkerBackend
from sandbox.limits import IsolationLimits

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not Path("/proc/self/clear_refs").exists(),
    reason="needs Linux's /proc/<pid>/clear_refs")

BLOCK_MB = 128
HOLDER = f'''
import time


class Holding:
    def encode_iterable(self, lines):
        block = b"\\x01" * ({BLOCK_MB} << 20)  # resident (written), mmapped: freed at once
        for line in lines:
            yield len(line)
        time.sleep(0.3)  # held a while, as a whole input is held for a whole stream
        del block
        time.sleep(0.5)  # freed: the moment the high-water mark is reset


def get_tokenizer(vocab, merges, special_tokens=None):
    return Holding()
'''


def reset_once_freed(pid: int, base_kb: int, stop: threading.Event, done: list) -> None:
    """Reset ``pid``'s high-water mark once its resident size rose by most of the block and
    fell back: what the worker itself does where it may write its own clear_refs."""
    high = False
    while not stop.wait(0.005):
        rss = proctree.status_kb(pid, "VmRSS")
        if rss is None:
            return
        high = high or rss > base_kb + (BLOCK_MB * 3 // 4) * 1024
        if high and rss < base_kb + (BLOCK_MB // 4) * 1024:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")
            done.append(rss)
            return


def test_a_reset_of_the_kernels_peak_does_not_hide_memory_the_worker_held(tmp_path):
    sub = tmp_path / "sub"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(HOLDER)
    (tmp_path / "lines.txt").write_text("hello world\n" * 100)
    backend = WorkerBackend("student", sub, IsolationLimits(call_timeout=30))
    try:
        tokenizer = Implementation(backend).get_tokenizer({}, [])
        pid = backend._proc.pid
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError as err:
            pytest.skip(f"the worker's peak cannot be reset from here ({err.strerror}): the probe has no rss_peak")
        stop, done = threading.Event(), []
        resetter = threading.Thread(target=reset_once_freed, args=(pid, proctree.status_kb(pid, "VmRSS"), stop, done))
        resetter.start()
        try:
            got = tokenizer.probe("encode_iterable_file", tmp_path / "lines.txt")
        finally:
            stop.set()
            resetter.join()
    finally:
        backend.close()
    assert done, "the block was never seen resident and freed: the reset this test is about did not happen"
    assert got["rss_peak"] >= BLOCK_MB * 3 // 4 << 20, (
        f"the worker held {BLOCK_MB} MB during the probe, then freed it and its peak was reset; "
        f"rss_peak says {got['rss_peak']:,} B")
