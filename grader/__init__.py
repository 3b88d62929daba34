"""bpe-harness: grading machinery for the byte-level BPE assignment.

``grader.plugin`` is the pytest plugin, ``grader.impl`` the seam to an implementation,
``grader.diff`` the failure messages, and ``python -m grader`` the command line.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_TIKTOKEN_CACHE = ROOT.parent / "shared" / "tiktoken_cache"


def use_shared_tiktoken_cache() -> None:
    """Point tiktoken at ``../shared/tiktoken_cache`` when it exists (machines without internet)."""
    import os

    if SHARED_TIKTOKEN_CACHE.is_dir():
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(SHARED_TIKTOKEN_CACHE))
