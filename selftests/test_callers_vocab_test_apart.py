"""A test gives points for the rule it names only: test_callers_vocab_and_merges_are_not_modified
checked that the tokenizer had worked by asking encode('ab<pad>') for two ids, so a bug of
encode's special tokens lost the points of the rule that the caller's vocab and merges are left
alone. It now checks that the ids decode back to the text: the encode bugs pass it, the bug of
its own rule still fails it."""

from __future__ import annotations

import pytest

from selftests.support import pytest_outcomes

TEST = "tests/public/test_tokenizer_rules.py::test_callers_vocab_and_merges_are_not_modified"


@pytest.mark.parametrize("mutant, outcome", [
    ("encode_ignores_special_tokens", "passed"),  # '<pad>' encoded as ordinary text: encode's tests
    ("encode_specials_not_escaped", "passed"),  # '|' of '<|endoftext|>' a regex operator: encode's tests
    ("tokenizer_modifies_callers_vocab", "failed"),  # the rule's own bug (extra catalogue)
], ids=["encode_ignores_specials", "encode_specials_not_escaped", "modifies_callers_vocab"])
def test_callers_vocab_test_does_not_depend_on_encode_of_specials(tmp_path, mutant, outcome):
    from mutants.build import build
    from mutants.catalogue import by_name

    sub = build(by_name(mutant), tmp_path / "sub")
    got = pytest_outcomes(sub, False, False, tmp_path / "out.xml", [TEST])
    assert list(got.values()) == [outcome], got
