"""The environment of a child process the harness starts (a grading, a pytest run, a probe).

One filter for every caller: this process's environment less the variables that would carry
this process's own choices into the child (:data:`LEAKY`), each caller saying only what
differs: more to ``drop``, some of the default to ``keep``, values to set.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# this process's choices, not the child's: the implementation under test (harness.impl),
# pytest options, and a module path pointing at this checkout
LEAKY = ("BPE_IMPL", "PYTEST_ADDOPTS", "PYTHONPATH")


def child_env(*, drop: Iterable[str] = (), keep: Iterable[str] = (), base: Mapping[str, str] | None = None,
              **values: str) -> dict[str, str]:
    """``base`` (default ``os.environ``) less :data:`LEAKY` (except ``keep``) and less
    ``drop`` (a name ending in ``*`` drops every variable starting with the rest), then
    ``values`` set. ``child_env(drop=("BPE_*",), TMPDIR="/x")``: no ``BPE_`` variable, no
    ``PYTHONPATH``, ``TMPDIR=/x``."""
    names = {*(v for v in LEAKY if v not in set(keep)), *drop}
    exact = {n for n in names if not n.endswith("*")}
    prefixes = tuple(n[:-1] for n in names if n.endswith("*"))
    env = base if base is not None else os.environ
    kept = {k: v for k, v in env.items() if k not in exact and not k.startswith(prefixes)}
    return kept | values
