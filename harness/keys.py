"""Every piece of state the pytest plugins share, as typed ``pytest.StashKey``\\ s, in one place.

Session state (``config.stash``):

- :data:`POLICY`: the grading policy (``grader.config.Config``), put there by the grading
  plugin from what the grade command passed down; absent in a plain ``pytest`` run. The
  speed check, the isolation limits, the forbidden modules and the known-bug diagnosis
  all read it from here, through :func:`policy_value` (the policy's, else the default).
- :data:`RECORD_CALLS`: True when a plugin (the mutants' diagnosis) wants each test's calls
  into the submission recorded.
- :data:`CALL_LOG`: where the submission's :class:`~harness.impl.Implementation` records
  its calls (the running test's list, or nowhere).
- :data:`LOADED`: how the submission was loaded (``layout``, ``left_out``, ``stand_ins``):
  the live facts of the submission's backend.
- :data:`CONFINEMENT`: how the submission's worker is isolated (put there by
  ``sandbox.plugin``; absent in-process).
- :data:`BREAKER`: the circuit breaker of the submission's calls (:mod:`harness.breaker`),
  put there by the grading plugin; absent in a plain ``pytest`` run.

Test state (``item.stash``): :data:`RECORDS`, the submission's calls during the test's call
phase with their outcomes (the last 20, bounded in size: :mod:`harness.recording`), until
its teardown, when :data:`RECORD_CALLS` asked for them.
"""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from .breaker import Breaker
from .recording import CallLog
from .timing import SpeedPolicy


class GradingPolicy(Protocol):
    """What the harness and the sandbox read of the grading policy (``grader.config.Config``)."""

    speed: SpeedPolicy
    isolation: Any  # limits by IsolationLimits' field names
    forbidden_modules: tuple[str, ...]

    def group_of(self, nodeid: str, markers: set[str]) -> Any: ...


POLICY = pytest.StashKey[GradingPolicy]()
RECORD_CALLS = pytest.StashKey[bool]()
CALL_LOG = pytest.StashKey[CallLog]()
LOADED = pytest.StashKey[dict[str, object]]()
CONFINEMENT = pytest.StashKey[str]()
RECORDS = pytest.StashKey[list]()
BREAKER = pytest.StashKey[Breaker]()


def policy_value(config: pytest.Config, key: str, default: Any) -> Any:
    """``key`` of the session's grading policy (:data:`POLICY`), else ``default``: the layer
    reading it passes the default it declares (a plain pytest run has no policy). The one
    place deciding between the policy and the defaults."""
    policy = config.stash.get(POLICY, None)
    return default if policy is None else getattr(policy, key)
