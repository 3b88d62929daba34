"""The student-side harness: what runs the tests against an implementation.

``harness.plugin`` is the pytest plugin (options, failure messages), ``harness.impl`` the
seam to an implementation (``adapters.py``), ``harness.values`` the checks of returned
values, ``harness.probes`` and ``harness.timing`` memory and speed. It imports neither the
sandbox (``sandbox``) nor the instructor-side grader (``grader``): both plug into it.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_TIKTOKEN_CACHE = ROOT.parent / "shared" / "tiktoken_cache"
# the seed of the randomized cases when none is given: pytest's --seed default (unless
# $BPE_SEED) and grading.yaml's when it has no ``seed: value:``; declared here only
DEFAULT_SEED = 20261122


def hash_seed(seed: int) -> str:
    """``PYTHONHASHSEED`` for a grading's ``seed`` (its range: 0 to 2**32 - 1): the submission
    runs under it in-process (grader.grade) and in the isolated workers (sandbox.launch) alike."""
    return str(seed % 2**32)


def use_shared_tiktoken_cache() -> None:
    """Point tiktoken at ``../shared/tiktoken_cache`` when it exists (machines without internet)."""
    import os

    if SHARED_TIKTOKEN_CACHE.is_dir():
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(SHARED_TIKTOKEN_CACHE))
