"""The memory test's resident-memory check says its measure and its limit in one unit.

test_encode_iterable_memory_does_not_grow_with_input also bounds, when isolated, how much the
worker's resident memory grows while streaming the large input (measured from outside, so a
submission cannot hide it from tracemalloc). Its message read "2,239 KB per MB of input ...
(allowed 737,000 B in all)": a rate beside a total in bytes, the rate divided by the extra
input's 0.9 MB while it said "of input". Graded isolated on a submission that keeps every line
it reads in anonymous memory (resident, never seen by tracemalloc), the message gives what
it grew by and the limit, both in KB.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.childenv import child_env
from tests.public.test_encode_iterable import BASE, REPEAT, RSS_SLACK, SMALL

from .support import ROOT, build_layout

pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="resident memory is read from /proc"),
              pytest.mark.timeout(600)]
MEMORY_TEST = "tests/public/test_encode_iterable.py::test_encode_iterable_memory_does_not_grow_with_input"
KEEPS_LINES_OUTSIDE_PYTHON = '''

import mmap as _mmap

_KEPT = _mmap.mmap(-1, 64 << 20)  # anonymous memory: resident once written, unseen by tracemalloc
_lazy_encode_iterable = Tokenizer.encode_iterable


def _encode_iterable_keeping_lines(self, iterable):
    def kept(lines):
        for line in lines:
            data = line.encode("utf-8")
            if _KEPT.tell() + 2 * len(data) < len(_KEPT):
                _KEPT.write(data + data)  # every line read, twice
            yield line

    return _lazy_encode_iterable(self, kept(iterable))


Tokenizer.encode_iterable = _encode_iterable_keeping_lines
'''


def test_resident_memory_growth_is_said_beside_its_limit_in_one_unit(tmp_path: Path):
    submission = build_layout("stubs", tmp_path / "submission")
    with open(submission / "student" / "tokenizer.py", "a", encoding="utf-8") as f:
        f.write(KEEPS_LINES_OUTSIDE_PYTHON)
    junit = tmp_path / "junit.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--isolate", "--submission", str(submission), MEMORY_TEST, "-q",
         "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=ROOT, env=child_env(BPE_DIAGNOSIS="0"), capture_output=True, text=True, timeout=500, stdin=subprocess.DEVNULL,
    )
    (case,) = ET.parse(junit).iter("testcase")
    failure = case.find("failure")
    assert failure is not None, proc.stdout[-3000:]
    text = failure.text or ""
    said = re.search(r"resident memory grows with the input: it grew by ([\d,]+) KB while streaming ([\d,]+) KB of text "
                     r"already seen \(allowed: under ([\d,]+) KB, ", text)
    assert said, text[:2000]
    grew, streamed, allowed = (int(g.replace(",", "")) for g in said.groups())
    measured = re.search(r"\bassert (\d+) <", text)  # the assertion's measure, in bytes
    assert measured and grew == round(int(measured.group(1)) / 1e3), text[:2000]
    extra = SMALL * (REPEAT - BASE)  # the measured inputs: the same SMALL bytes BASE times, then REPEAT times
    assert allowed == round((0.25 * extra + RSS_SLACK) / 1e3) and streamed == round(SMALL * REPEAT / 1e3), text[:2000]
    assert grew > allowed, text[:2000]
