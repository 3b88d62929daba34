"""The order of a graded run under a time budget: each group's share of the budget.

A graded run takes its tests in the collected order (visible first, then by group) until the
budget is used up; the tests after that are not reached. Correct but slow code in one part
then spent the budget on its own part's tests, and the tests of the parts after it, which
never call it, scored 0 as not reached: an encoder applying every GPT-2 merge to every
pre-token passed the CS336 policy's encode_iterable tests each under its 120 s limit, 362 s in
all, and the hidden training tests were never reached (31.49 of 100).

So each group has a share of the budget: its share of the points, and at least
:data:`FLOOR` of the budget (a group of no points too). The next test is the first one left
whose group has spent no more than its share; once every group left has spent more, the
first one left. A slow group's tests thus wait behind the other groups' and run with the time
those leave; a run in which no group spends its share (the reference spends a few seconds of
each) keeps the collected order exactly. A test that has started is never cut by its group's
share: only its own limit and the budget end it.

pytest's ``nextitem`` (which fixtures the test ending may tear down) is fixed before a test
runs, and the choice after it is known only once it has run: :func:`run_tests` runs the
chosen test unless the ending test tore down collectors it needs (it kept those it shares
with the expected one, ``listchain``); then the expected one runs first (one more test of a
group past its share).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest

FLOOR = 0.05  # the least share of the budget a group has: a twentieth, 27 s of 540 s


@dataclass
class Shares:
    """Seconds each group may spend before other groups' tests go first, and what it spent."""

    seconds: dict[str, float]
    spent: dict[str, float] = field(default_factory=dict)
    passed_over: set[str] = field(default_factory=set)  # groups whose tests others' went before

    @classmethod
    def of_points(cls, points: dict[str, float], budget: float) -> "Shares":
        """Each group's share of ``budget`` seconds: its share of the ``points``, at least
        :data:`FLOOR` of the budget."""
        total = sum(points.values())
        return cls({g: budget * max(p / total if total > 0 else 0.0, FLOOR) for g, p in points.items()})

    def spend(self, group: str, seconds: float) -> None:
        self.spent[group] = self.spent.get(group, 0.0) + seconds

    def over(self, group: str) -> bool:
        """Whether ``group`` has spent more than its share."""
        return self.spent.get(group, 0.0) > self.seconds.get(group, float("inf"))

    def first(self, groups: Sequence[str]) -> int:
        """The index, in ``groups`` (the groups of the tests left, in order), of the next test:
        the first whose group is within its share, else the first. ``groups`` is not empty."""
        return next((i for i, group in enumerate(groups) if not self.over(group)), 0)


def run_tests(session: pytest.Session, group_of: Callable[[pytest.Item], str], shares: Shares,
              waited: Callable[[pytest.Item, float], None] = lambda item, share: None,
              items: Sequence[pytest.Item] | None = None) -> None:
    """pytest's test loop (``pytest_runtestloop``) over ``items`` (default: the session's) in
    the order of ``shares``: each test run by ``pytest_runtest_protocol`` as pytest's own loop
    runs it, the seconds it took spent by its group (``group_of``). ``waited(item, share)`` is
    told of each test that runs after other groups' tests went before its group's, and of that
    group's share."""
    left = list(session.items if items is None else items)
    groups = [group_of(item) for item in left]
    expected: int | None = None  # the test the one that just ended was told comes next
    ended: list[pytest.Node] = []  # the collector chain of the one that just ended
    while left:
        i = shares.first(groups)
        if expected is not None and i != expected and not _still_set_up(ended, left[expected], left[i]):
            i = expected  # the ending test tore down what the chosen one needs: the expected one first
        shares.passed_over.update(groups[:i])
        item, group = left.pop(i), groups.pop(i)
        if group in shares.passed_over:
            waited(item, shares.seconds[group])
        expected = shares.first(groups) if left else None  # the next one, if this test changes nothing
        started = time.monotonic()
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=left[expected] if left else None)
        shares.spend(group, time.monotonic() - started)
        ended = item.listchain()
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)


def _still_set_up(ended: list[pytest.Node], expected: pytest.Item, chosen: pytest.Item) -> bool:
    """Whether the collectors the ending test kept set up (those it shares with ``expected``,
    the test it was told comes next) all belong to ``chosen`` too: pytest sets up a test only
    on top of collectors of its own."""
    kept = []
    for mine, theirs in zip(ended, expected.listchain()):
        if mine is not theirs:
            break
        kept.append(mine)
    chain = chosen.listchain()
    return all(any(node is other for other in chain) for node in kept)
