"""Hooks the harness calls, declared by :mod:`harness.plugin` (``pytest_addhooks``), so that
the layers above it plug in without the harness importing them."""

from __future__ import annotations

import pytest


@pytest.hookspec(firstresult=True)
def pytest_bpe_make_backend(config: pytest.Config, which: str):
    """The backend running ``which`` ("submission" or "reference") for this session, or None
    for the in-process :class:`harness.impl.LocalBackend` (``sandbox.plugin`` returns an
    isolated worker's under ``--isolate``)."""
