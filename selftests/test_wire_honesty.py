"""The wire protocol patched from inside the worker: whatever the submission does to its own
copy of the worker module, the trusted side accepts a reply only to the request it made."""

from __future__ import annotations

import os

import pytest

from harness.impl import Implementation
from sandbox.backend import WorkerBackend
from sandbox.failures import WorkerFailure
from sandbox.limits import IsolationLimits

from .test_isolation import submission

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker needs a POSIX system")

PRESEND = '''
import sys
_worker = sys.modules["sandbox.channel"]
_send = _worker.Channel.send


def send(self, message):
    """Each reply is followed by a forged one for the request with the next id, which the
    trusted side would take as the answer to its next request before the worker saw it."""
    _send(self, message)
    if message and message[0] == "ok" and type(message[1]) is int:
        _send(self, ["ok", message[1] + 1, ["forged"]])
        _send(self, ["ok", message[1] + 2, ["forged"]])


_worker.Channel.send = send


def run_pretokenize(text):
    return ["honest"]
'''

CLAIM_SUCCESS = '''
import sys
_worker = sys.modules["sandbox.channel"]
_send = _worker.Channel.send


def send(self, message):
    """Every error the submission raises goes out as success with a plausible value."""
    if message and message[0] == "err":
        message = ["ok", message[1], []]
    _send(self, message)


_worker.Channel.send = send


def run_merge(ids, pair, new_id):
    raise NotImplementedError
'''


@pytest.fixture
def make(tmp_path):
    backends = []

    def make(adapters: str) -> Implementation:
        backend = WorkerBackend("student", submission(tmp_path, adapters), IsolationLimits(call_timeout=10.0, term_grace=0.3))
        backends.append(backend)
        return Implementation(backend)

    yield make
    for b in backends:
        b.close()


def test_a_reply_sent_before_its_request_is_never_taken_as_the_answer(make):
    impl = make(PRESEND)
    answers = []
    for _ in range(4):
        try:
            answers.append(impl.run_pretokenize("x"))
        except WorkerFailure as err:
            assert "unexpected message" in str(err)
            answers.append("violation")
    assert ["forged"] not in answers, answers
    assert "violation" in answers, f"forged replies went unnoticed: {answers}"


def test_an_error_sent_as_success_is_still_checked_on_the_trusted_side(make):
    impl = make(CLAIM_SUCCESS)
    assert impl.run_merge([1, 2, 3], (1, 2), 9) == []  # the claimed value is all it gets: a wrong result


FORGED_CHANGE = '''
import sys
_worker = sys.modules["sandbox.channel"]
_send = _worker.Channel.send


def send(self, message):
    """Each success claims the call changed its arguments in place, as FORGED says."""
    if message and message[0] == "ok" and len(message) == 3:
        message = [*message, FORGED]
    _send(self, message)


_worker.Channel.send = send


def run_merge(ids, pair, new_id):
    return list(ids)
'''


@pytest.mark.parametrize("forged", [[[7, [0]]], [[0, {"1": 1}]], [[1, [9, 9]]], [[2, 5]], [[0]], "changed"],
                         ids=["no-such-argument", "list-becomes-dict", "tuple-changed", "int-changed", "no-value", "not-a-list"])
def test_a_forged_change_to_the_arguments_stops_the_worker_and_changes_nothing(make, forged):
    impl = make(FORGED_CHANGE.replace("FORGED", repr(forged)))
    ids = [1, 2, 3]
    with pytest.raises(WorkerFailure, match="changed argument"):
        impl.run_merge(ids, (1, 2), 9)
    assert ids == [1, 2, 3]


def test_a_change_to_a_list_argument_reaches_the_callers_list(make):
    impl = make('''
def run_merge(ids, pair, new_id):
    ids.append(new_id)
    return []
''')
    ids = [1, 2, 3]
    assert impl.run_merge(ids, (1, 2), 9) == []
    assert ids == [1, 2, 3, 9]


SHRINKS_ITS_ARGUMENTS = '''
def get_tokenizer(vocab, merges, special_tokens=None):
    seen = (len(vocab), len(merges))
    vocab.pop(max(vocab))
    merges.pop()

    class Sizes:
        def decode(self, ids):
            return str(seen)

    return Sizes()
'''


def test_each_call_gets_a_large_argument_as_its_caller_passed_it_and_changes_only_the_callers(make):
    # GPT-2-sized arguments go to the worker once and are referenced after (sandbox.argcache):
    # every call, the second with equal copies of the first's arguments, must get them whole
    impl = make(SHRINKS_ITS_ARGUMENTS)
    vocab = {i: bytes([i % 256]) * (1 + i // 256) for i in range(3000)}
    merges = [(bytes([i % 256]), bytes([i // 256])) for i in range(3000)]
    first, second = (dict(vocab), list(merges)), (dict(vocab), list(merges))
    for args in (first, second):
        assert impl.get_tokenizer(*args).decode([]) == "(3000, 3000)"
        assert (len(args[0]), len(args[1])) == (2999, 2999)
        assert max(args[0]) == 2998 and args[1] == merges[:-1]
