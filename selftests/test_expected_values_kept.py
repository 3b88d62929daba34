"""No graded test takes what it expects from an object it handed to the submission.

A call may change its arguments in place, and the change reaches the caller, isolated as
in-process (docs/isolation.md): a test that computes its expected value from an argument after
the call (``assert impl.f(ids) == oracle(ids)``), or hands the submission an object that later
tests read (a session's GPT-2 vocabulary, a module's constant), can be passed by code that
empties or rewrites its input and answers for what is left (a field test's attack did:
4.94 of 10 points on pair counts and merge, doing no work).

The oracle: ``selftests/scribbler`` answers as the reference does, from copies, then scribbles
on every list, dict and set it was given. Run on the whole suite, it may fail only the tests of
the rule that arguments are left alone (their names say ``modif``), and must fail each of those.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .attack_grading import attack_submission
from .prefetch import prefetched
from .support import pytest_outcomes

SCRIBBLER = Path(__file__).resolve().parent / "scribbler"
RULE = re.compile(r"modif")  # test_merge_does_not_modify_its_input, ..._are_not_modified, ..._unmodified
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@prefetched
def scribbled(prefetch) -> dict[str, str]:
    """The whole suite, in-process, on the scribbler: node id -> passed | failed | skipped."""
    base = prefetch.mktemp("scribbled")
    sub = attack_submission(SCRIBBLER, base / "submission")
    # in-process: the changes reach the test's objects directly (isolated, they are made there
    # too: test_same_outcome)
    return pytest_outcomes(sub, False, False, base / "junit.xml", ["tests"], timeout=800)


def test_no_test_but_the_rule_on_arguments_fails_when_they_are_changed_after_the_answer(scribbled):
    assert len(scribbled) > 500
    wrong = sorted(n for n, o in scribbled.items() if o == "failed" and not RULE.search(n))
    assert not wrong, (f"{len(wrong)} tests compute what they expect from an object the submission was given "
                       f"(pass it a copy): " + ", ".join(wrong[:8]))


def test_every_test_of_the_rule_on_arguments_sees_them_changed(scribbled):
    rule = {n: o for n, o in scribbled.items() if RULE.search(n)}
    assert len(rule) >= 4 and all(o == "failed" for o in rule.values()), rule
