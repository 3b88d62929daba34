"""A submission's code may write beside its own files, as where its author runs it: the
isolated worker's copy of the submission is its own, writable (a capped tmpfs in a private
root, ``sandbox.confine``), so code that keeps a cache or a log beside its module gets the
same outcome isolated as in-process. The submission itself never changes in an isolated
grading, and each worker starts from it again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness.impl import Implementation, LocalBackend
from sandbox.backend import WorkerBackend
from sandbox.limits import IsolationLimits

ADAPTERS = '''\
import pathlib

CACHE = pathlib.Path(__file__).resolve().parent / "student" / "cache"


def run_pretokenize(text):
    """What the cache beside the package held before this call, then ``text`` added to it."""
    CACHE.mkdir(exist_ok=True)
    entry = CACHE / "seen.txt"
    before = entry.read_text() if entry.exists() else ""
    entry.write_text(before + text)
    return [before]
'''

# backend options per way of running the submission (None: in-process)
MODES = {"in-process": None, "isolated": {}, "isolated without a private root": {"private_root": False}}


def submission(tmp_path: Path) -> Path:
    sub = tmp_path / "sub"
    (sub / "student").mkdir(parents=True)
    (sub / "student" / "__init__.py").write_text("")
    (sub / "adapters.py").write_text(ADAPTERS)
    return sub


def implementation(sub: Path, options: dict | None):
    if options is None:
        return Implementation(LocalBackend("student", sub))
    if sys.platform != "linux":
        pytest.skip("isolated workers need Linux")
    if options.get("private_root") is False and os.geteuid() != 0:
        pytest.skip("without a private root the worker gets its own user id only under root")
    return Implementation(WorkerBackend("student", sub, IsolationLimits(call_timeout=10), **options))


def close(impl: Implementation) -> None:
    if isinstance(impl.backend, WorkerBackend):
        impl.backend.close()


@pytest.mark.parametrize("mode", MODES)
def test_code_that_writes_beside_its_module_reads_back_what_it_wrote(tmp_path, mode):
    impl = implementation(submission(tmp_path), MODES[mode])
    try:
        assert impl.run_pretokenize("a") == [""]
        assert impl.run_pretokenize("b") == ["a"]
    finally:
        close(impl)


@pytest.mark.parametrize("mode", [m for m, options in MODES.items() if options is not None])
def test_an_isolated_worker_writes_its_own_copy_never_the_submission(tmp_path, mode):
    sub = submission(tmp_path)
    before = sorted(p.relative_to(sub) for p in sub.rglob("*"))
    first = implementation(sub, MODES[mode])
    try:
        assert first.run_pretokenize("a") == [""]
    finally:
        close(first)
    assert sorted(p.relative_to(sub) for p in sub.rglob("*")) == before
    again = implementation(sub, MODES[mode])  # a new worker: the submission's files again, not the last one's
    try:
        assert again.run_pretokenize("b") == [""]
    finally:
        close(again)
