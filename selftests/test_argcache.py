"""Large arguments of calls into a worker (sandbox/argcache.py): sent once, then referenced.

A vocabulary or merges list is serialized and sent to a worker once; a later call passing the
same object, or another object holding the same merges or vocabulary in the same order (a
test's fresh copy of GPT-2's), sends only a reference to it. Anything else that merely
compares equal (another key order, ``True`` or ``2.0`` for a key ``1`` or ``2``) would
reach the worker as other data, so it is sent again, as it is.
"""

from __future__ import annotations

import json

import pytest

from harness import wire
from sandbox.argcache import REF_MIN, ArgumentCache

N = REF_MIN + 10
VOCAB = {i: bytes([i % 256]) * (1 + i // 256) for i in range(N)}
MERGES = [(bytes([i % 256]), bytes([(i * 7) % 256]) * 2) for i in range(N)]


def refs_of(cache: ArgumentCache, sent: set[int], *args) -> list[tuple[int, int, object]]:
    """What a call with ``args`` sends: (position, key, payload or None) for each reference."""
    _, refs = cache.split(list(args), sent)
    return [tuple(json.loads(ref)) for ref in refs]


@pytest.mark.parametrize("value", [VOCAB, MERGES], ids=["vocab", "merges"])
def test_the_same_object_is_sent_once_then_referenced(value):
    cache, sent = ArgumentCache(), set()
    ((_, key, payload),) = refs_of(cache, sent, value)
    assert payload is not None
    assert refs_of(cache, sent, value) == [(0, key, None)]


@pytest.mark.parametrize("value, copy", [(VOCAB, dict), (MERGES, list)], ids=["vocab", "merges"])
def test_an_equal_copy_in_the_same_order_is_referenced_not_sent_again(value, copy):
    cache, sent = ArgumentCache(), set()
    ((_, key, _),) = refs_of(cache, sent, value)
    assert refs_of(cache, sent, "text", copy(value)) == [(1, key, None)]


def _other_order(vocab: dict) -> dict:
    return dict(reversed(list(vocab.items())))


def _true_for_one(vocab: dict) -> dict:
    return {(True if k == 1 else k): v for k, v in vocab.items()}


def _float_for_two(vocab: dict) -> dict:
    return {(2.0 if k == 2 else k): v for k, v in vocab.items()}


@pytest.mark.parametrize("variant", [_other_order, _true_for_one, _float_for_two],
                         ids=["other-key-order", "True-for-1", "2.0-for-2"])
def test_an_equal_vocab_the_worker_would_see_differently_is_sent_again_as_it_is(variant):
    other = variant(VOCAB)
    assert other == VOCAB  # equal, yet not the same data on the wire
    cache, sent = ArgumentCache(), set()
    ((_, key, _),) = refs_of(cache, sent, VOCAB)
    ((_, other_key, payload),) = refs_of(cache, sent, other)
    assert other_key != key and payload is not None
    assert wire.dumps(other) == json.dumps(payload, separators=(",", ":"))
