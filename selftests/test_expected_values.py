"""The precomputed values the public tests compare with (they ship no trainer):
``fixtures/expected_training.json`` holds the naive trainer's merges (``tests/hidden/naive.py``),
and the reference trains the same."""

from __future__ import annotations

import json

import pytest

from tests.hidden import naive
from tests.oracles import EXPECTED_TRAINING, expected_training

import reference


def test_the_stored_trainings_are_the_naive_trainers():
    stored = json.loads(EXPECTED_TRAINING.read_text(encoding="utf-8"))
    assert stored == naive.expected_training(), "rewrite fixtures/expected_training.json with `python -m tests.hidden.naive`"


@pytest.mark.parametrize("name", list(naive.FIXTURE_TRAININGS))
def test_the_reference_trains_the_stored_merges(tmp_path, name):
    file, n_chars, vocab_size, specials, merges = expected_training(name)
    text = (EXPECTED_TRAINING.parent / file).read_bytes().decode("utf-8")
    path = tmp_path / "corpus.txt"
    path.write_bytes((text if n_chars is None else text[:n_chars]).encode("utf-8"))
    assert merges and reference.train_bpe(str(path), vocab_size, specials)[1] == merges
