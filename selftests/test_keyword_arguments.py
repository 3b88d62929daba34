"""``run_train_bpe`` is called as CS336's tests call it, by keyword (``input_path=``,
``vocab_size=``, ``special_tokens=``), wherever the submission's adapter takes those names;
positionally where it does not (an adapter whose parameters were renamed): in-process as
isolated (``harness.registry``: the adapter's ``keywords``). An adapter with keyword-only
parameters, or with them in another order, passes CS336's own tests, and so its training is
graded here."""

from __future__ import annotations

import pytest

from .support import implementation_of

ADAPTERS = {
    "keyword-only": "def run_train_bpe(*, input_path, vocab_size, special_tokens, **kwargs):",
    "another order": "def run_train_bpe(special_tokens, vocab_size, input_path):",
    "forwarding **kwargs": "def run_train_bpe(**kwargs):\n    input_path, vocab_size, special_tokens = kwargs['input_path'], kwargs['vocab_size'], kwargs['special_tokens']",
    "as CS336 ships it": "def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):",
    "renamed, positional": "def run_train_bpe(path, size, specials):\n    input_path, vocab_size, special_tokens = path, size, specials",
}
BODY = """
    return {0: str(vocab_size).encode(), 1: "|".join(special_tokens).encode(), 2: input_path.read_bytes()}, []
"""


@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_run_train_bpe_gets_each_argument_under_its_name_where_the_adapter_takes_names(tmp_path, isolate, adapter):
    sub = tmp_path / "sub"
    (sub / "student").mkdir(parents=True)
    (sub / "adapters.py").write_text(ADAPTERS[adapter] + BODY)
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"low lower")
    with implementation_of(sub, isolate) as impl:
        vocab, merges = impl.run_train_bpe(corpus, 300, ["<|endoftext|>", "<pad>"])
    assert vocab == {0: b"300", 1: b"<|endoftext|>|<pad>", 2: b"low lower"} and merges == []
