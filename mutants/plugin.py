"""pytest plugin: failures that match a catalogued bug say so (course staff only).

Loaded by this repository's ``addopts`` (``-p mutants.plugin``; the student handout has no
``mutants/`` and does not load it). When the diagnosis is on (:func:`mutants.diagnose.enabled`)
it asks the harness to record each test's calls (``harness.keys.RECORD_CALLS``) and answers
the grading plugin's ``pytest_bpe_known_bug`` hook. A test's group comes from the grading
policy in the session's stash (what ``--config`` gave the grade command); a plain ``pytest``
run has none, and then uses this repository's ``grading.yaml``.
"""

from __future__ import annotations

import functools

import pytest

from harness import keys


def pytest_configure(config: pytest.Config) -> None:
    from .diagnose import enabled

    if enabled():
        config.stash[keys.RECORD_CALLS] = True


@functools.cache
def _repository_policy() -> keys.GradingPolicy:
    """This repository's ``grading.yaml`` (a plain pytest run gets no policy passed down)."""
    from grader.config import load_config

    from .build import ROOT

    return load_config(ROOT / "grading.yaml")


def _policy(config: pytest.Config) -> keys.GradingPolicy:
    policy = config.stash.get(keys.POLICY, None)
    return policy if policy is not None else _repository_policy()


@pytest.hookimpl(optionalhook=True)
def pytest_bpe_known_bug(item: pytest.Item, records: list) -> str | None:
    from .diagnose import diagnose

    try:
        group = _policy(item.config).group_of(item.nodeid, {m.name for m in item.iter_markers()})
    except Exception:  # never let the diagnosis break a report
        return None
    return diagnose(group.name if group else None, records)
