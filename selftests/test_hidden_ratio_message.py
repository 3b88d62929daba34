"""A hidden test's feedback shows only the first line of its failure: the hidden
compression-ratio test's first line says what was returned and what was expected (it said
only ``615 bytes, 616 ids`` to a submission computing ids per byte)."""

from __future__ import annotations

import random

import pytest

from tests.hidden.test_warmup_hidden import test_compression_ratio_of_random_text_and_ids as ratio_test


class InvertedRatio:  # a catalogued bug: tokens per byte instead of bytes per token
    def run_compression_ratio(self, text, ids):
        return len(ids) / max(len(text.encode("utf-8")), 1)


def test_first_line_of_the_hidden_ratio_failure_gives_both_values():
    with pytest.raises(AssertionError) as err:
        ratio_test(InvertedRatio(), random.Random(0), 0)
    first = str(err.value).splitlines()[0]
    assert "returned" in first and "expected" in first, first
