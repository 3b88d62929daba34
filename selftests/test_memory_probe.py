"""The memory probe (harness/probes.py) measures what a tokenizer keeps, not CPython's free
lists: a tokenizer making a tuple per pre-token and dropping it at once (common in CS336
students' code) grows by nothing from the small to the large input of
test_encode_iterable_memory_does_not_grow_with_input, and one keeping every id still grows.
Each is measured in a fresh interpreter, whose free lists start empty as a worker's do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.childenv import child_env

ROOT = Path(__file__).resolve().parent.parent

MEASURE = """
import json, sys
from fixtures.generate import zipf_corpus
from harness.probes import encode_iterable_file
from tests.public.test_encode_iterable import BASE, REPEAT, SMALL

class TupleChurn:  # a tuple of single bytes per word, freed at once: nothing is kept
    def encode_iterable(self, lines):
        for line in lines:
            for word in line.split():
                yield len(tuple(bytes([b]) for b in word.encode()))

class KeepsIds(TupleChurn):  # the same, but every id is kept too: grows with the input
    kept = []
    def encode_iterable(self, lines):
        for i in super().encode_iterable(lines):
            self.kept.append(i)
            yield i

text = zipf_corpus(SMALL, seed=5, vocab_words=2000, doc_sep="<|endoftext|>") * (REPEAT if sys.argv[2] == "large" else BASE)
with open(sys.argv[3], "w", encoding="utf-8", newline="") as f:
    f.write(text)
tokenizer = {"churn": TupleChurn, "keeps": KeepsIds}[sys.argv[1]]()
print(json.dumps([len(text.encode()), encode_iterable_file(tokenizer, sys.argv[3])["peak"]]))
"""


def peak(kind: str, size: str, tmp_path: Path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", MEASURE, kind, size, str(tmp_path / f"{kind}-{size}.txt")], cwd=ROOT,
                         env=child_env(keep=("PYTHONPATH",), PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return tuple(json.loads(out.stdout))


@pytest.mark.parametrize("kind, grows", [("churn", False), ("keeps", True)])
def test_the_probe_counts_what_the_tokenizer_keeps_not_cpythons_free_lists(tmp_path, kind, grows):
    (small_bytes, small_peak), (large_bytes, large_peak) = (peak(kind, size, tmp_path) for size in ("small", "large"))
    allowed = 0.25 * (large_bytes - small_bytes)  # test_encode_iterable_memory_does_not_grow_with_input's bound
    assert (large_peak - small_peak >= allowed) == grows, (small_peak, large_peak, allowed)
