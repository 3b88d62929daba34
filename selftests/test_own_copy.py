"""A submission's code may write beside its own files, as where its author runs it: the
isolated worker's copy of the submission is its own, writable (a capped tmpfs in a private
root, ``sandbox.confine``), so code that keeps a cache or a log beside its module gets the
same outcome isolated as in-process. The submission itself never changes in an isolated
grading, and each worker starts from it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import implementation_of

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


@pytest.mark.parametrize("mode", MODES)
def test_code_that_writes_beside_its_module_reads_back_what_it_wrote(tmp_path, mode):
    with implementation_of(submission(tmp_path), MODES[mode] is not None, **(MODES[mode] or {})) as impl:
        assert impl.run_pretokenize("a") == [""]
        assert impl.run_pretokenize("b") == ["a"]


@pytest.mark.parametrize("mode", [m for m, options in MODES.items() if options is not None])
def test_an_isolated_worker_writes_its_own_copy_never_the_submission(tmp_path, mode):
    sub = submission(tmp_path)
    before = sorted(p.relative_to(sub) for p in sub.rglob("*"))
    with implementation_of(sub, True, **MODES[mode]) as first:
        assert first.run_pretokenize("a") == [""]
    assert sorted(p.relative_to(sub) for p in sub.rglob("*")) == before
    with implementation_of(sub, True, **MODES[mode]) as again:  # a new worker: the submission's files, not the last one's
        assert again.run_pretokenize("b") == [""]
