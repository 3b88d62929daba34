"""pytest plugin: failures that match a catalogued bug say so (course staff only).

Loaded by this repository's ``addopts`` (``-p mutants.plugin``; the student handout has no
``mutants/`` and does not load it). When the diagnosis is on (:func:`mutants.diagnose.enabled`)
it asks the harness to record each test's calls (``harness.keys.RECORD_CALLS``) and answers
the grading plugin's ``pytest_bpe_known_bug`` hook. A test's group comes from the grading
policy in the session's stash (what ``--config`` gave the grade command); a plain ``pytest``
run has none, and then uses the default policy (:func:`grader.policies.default_policy`).
"""

from __future__ import annotations

import pytest

from harness import keys


def pytest_configure(config: pytest.Config) -> None:
    from .diagnose import enabled

    if enabled():
        config.stash[keys.RECORD_CALLS] = True


def _policy(config: pytest.Config) -> keys.GradingPolicy:
    """The grading policy passed down, else (a plain pytest run gets none) the default policy
    file's (its groups; the values it does not set are the defaults :func:`keys.policy_value`
    falls back to)."""
    from grader.policies import default_policy

    policy = config.stash.get(keys.POLICY, None)
    return policy if policy is not None else default_policy()


@pytest.hookimpl(optionalhook=True)
def pytest_bpe_known_bug(item: pytest.Item, records: list, until: float | None) -> str | None:
    from .diagnose import diagnose

    try:
        group = _policy(item.config).group_of(item.nodeid, {m.name for m in item.iter_markers()})
    except Exception:  # never let the diagnosis break a report
        return None
    return diagnose(group.name if group else None, records, until)
