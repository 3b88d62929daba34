"""``forbidden_modules``: libraries a submission may not hand the assignment's work to.

``grading.yaml`` names them (default :data:`grader.config.FORBIDDEN_MODULES`: tiktoken, HF
tokenizers, sentencepiece, transformers, rustbpe, bpeasy). The grading plugin puts the list
in the pytest session's stash under :data:`KEY`; :func:`grader.isolation.backend_for` hands it
to every worker, where two layers keep the modules out: their files are absent from the
worker's private root (covered by empty mounts, :func:`grader.worker.confine`), and an import
hook refuses the names (:func:`grader.worker.forbid`), so that a submission importing one
fails that call with "your code uses the forbidden module NAME". The tests and the
reference on the trusted side keep using tiktoken.
"""

from __future__ import annotations

import pytest

from .config import FORBIDDEN_MODULES

KEY = pytest.StashKey[tuple[str, ...]]()


def forbidden_for(config: pytest.Config) -> tuple[str, ...]:
    """The session's forbidden modules: grading.yaml's, else the defaults."""
    return config.stash.get(KEY, FORBIDDEN_MODULES)
