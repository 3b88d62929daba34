"""Which grading policy grades a submission: a file, a name (``--config cs336``), or, when
none is given, the one its layout selects (``grading-cs336.yaml`` for a CS336 repository)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from harness import ROOT
from harness.submission import detect_layout

if TYPE_CHECKING:
    from .config import Config

NAMED_POLICIES = {"default": "grading.yaml", "cs336": "grading-cs336.yaml"}  # --config NAME -> file of the repository
DEFAULT_POLICY = ROOT / NAMED_POLICIES["default"]  # the policy grading uses unless told (or a layout chooses) otherwise


def policy_path(config: str | Path | None, submission: Path | None = None) -> Path:
    """The policy file to grade with: ``config`` (a path, or a name of :data:`NAMED_POLICIES`
    that is not a file in the current folder); when None, ``grading-cs336.yaml`` for a
    CS336-layout submission, ``grading.yaml`` otherwise."""
    if config is None:
        layout = detect_layout(submission) if submission is not None and Path(submission).is_dir() else None
        return ROOT / NAMED_POLICIES["cs336"] if layout is not None and layout.kind == "CS336" else DEFAULT_POLICY
    if str(config) in NAMED_POLICIES and not Path(config).exists():
        return ROOT / NAMED_POLICIES[str(config)]
    return Path(config)


@functools.cache
def default_policy() -> "Config":
    """:data:`DEFAULT_POLICY` loaded, once per process (``ConfigError`` if it is invalid)."""
    from .config import load_config

    return load_config(DEFAULT_POLICY)


def policy_titles(config: Path | None) -> dict[str, str]:
    """Group name -> title of the policy (``config``, else the default; none if it is
    invalid), for reports written before reports carried titles."""
    from .config import ConfigError, load_config

    try:
        return {g.name: g.title for g in (load_config(config) if config else default_policy()).groups}
    except ConfigError:
        return {}
