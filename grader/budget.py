"""``grading.yaml``'s time keys, read by :func:`grader.config.load_config`.

``budget``: the whole grading's time, seconds (``grade --max-time`` overrides it). By default
9 minutes: inside the common platforms' 10-minute defaults (Gradescope's autograder timeout,
GitHub Classroom's command-grader step) with a minute to spare for copying the submission
and starting up. ``timeouts_in_a_row``: a function of the submission that ran into a limit on
this many tests in a row is no longer called (:mod:`harness.breaker`; 0: always called), nor
one whose tests that ran into a limit took :data:`LOST_SHARE` of the budget in all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MIN_BUDGET = 10.0  # seconds: less cannot even start the test run
# A function whose tests that ran into a limit took this share of the budget in all is no
# longer called (harness.breaker), in a row or not: a fifth of 540 s, two tests at 60 s
LOST_SHARE = 0.2
# A function the breaker stopped calling that had returned in some test (slow, not stuck) is
# called again once every other test has run: its refused tests run then, each with its limit
# cut to this many seconds (a correct but slow encoder passes its small inputs' tests in 3 s
# at most: grader/second_chance.py)
SECOND_CHANCE = 10.0


@dataclass(frozen=True)
class TimePolicy:
    """The time keys of a grading policy (``Config.time``), their defaults declared here only."""

    budget: float = field(default=540.0, metadata={
        "policy": "the whole grading's time, seconds (`grade --max-time` overrides it): a test never runs past it, "
                  "the tests after it score 0 as not reached; a group that spent more than its share of it (its share "
                  "of the points, at least a twentieth) lets the other groups' tests go first ([isolation](isolation.md)); "
                  "keep it under the platform's limit"})
    timeouts_in_a_row: int = field(default=3, metadata={
        "policy": "a function of the submission that ran into a limit on this many tests in a row is no longer called "
                  "(its other tests fail at once), nor one whose tests that ran into a limit took a fifth of the budget "
                  f"in all; if it had returned in some test, its refused tests run again once every other test has, "
                  f"{SECOND_CHANCE:g} s each at most; 0: always called"})


def time_policy(top: dict) -> TimePolicy:
    """The time keys ``top`` (grading.yaml's top-level mapping of ``grader.config._Doc``) sets,
    validated (one ``ConfigError`` line naming the file and line otherwise), over the defaults."""
    keys = {}
    if "budget" in top:
        keys["budget"] = float(top["budget"].number(MIN_BUDGET))
    if "timeouts_in_a_row" in top:
        keys["timeouts_in_a_row"] = int(top["timeouts_in_a_row"].number(0, integer=True))
    return TimePolicy(**keys)
