"""The corpus path reaches a submission's ``run_train_bpe`` as a ``pathlib.Path``, as CS336's
tests give it (``FIXTURES_PATH / "corpus.en"``), whatever the test passed and in-process as
isolated (``harness.registry``: the adapter's ``pathlib`` arguments): a CS336 trainer calling
``input_path.read_text()`` passes CS336's own tests, and so its training is graded here."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import adapters_only, implementation_of

ADAPTERS = '''
def run_train_bpe(input_path, vocab_size, special_tokens):
    """What it was given: the argument's type, and the text read through a Path method."""
    return {0: type(input_path).__name__.encode(), 1: input_path.read_bytes()}, []
'''


@pytest.mark.parametrize("given", [str, Path], ids=["given a str", "given a Path"])
@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_run_train_bpe_gets_its_corpus_as_a_pathlib_path(tmp_path, isolate, given):
    sub = adapters_only(tmp_path / "sub", ADAPTERS)
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"low lower")
    with implementation_of(sub, isolate) as impl:
        vocab, merges = impl.run_train_bpe(given(corpus), 300, [])
    assert vocab == {0: type(Path()).__name__.encode(), 1: b"low lower"} and merges == []
