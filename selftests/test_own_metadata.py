"""A CS336 repository imports as it does for its author (issue 28): its own package's
metadata, read from its ``pyproject.toml`` without running its build, is there for
``importlib.metadata`` in the worker and in-process; packages CS336's starter declares are
the ``cs336`` extra, and their absence is named on the note line."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from grader.grade import GradeRequest
from grader.intake import CS336_EXTRA, submission_notes
from harness import own_metadata, stand_ins
from harness.childenv import child_env
from harness.proc_folders import STATE_ENV, made_folder, own_folder, start_time
from harness.impl import ROOT, BrokenImplementation, Implementation, LocalBackend
from mutants import diagnose

VERSION_AT_IMPORT = 'import importlib.metadata\n\n__version__ = importlib.metadata.version("{name}")\n'


def submission(tmp_path: Path, pyproject: str | None, reads: str = "cs336_basics") -> Path:
    """A CS336-layout submission whose package reads the version of ``reads`` at import and
    whose adapters return it from ``get_version`` (through ``run_pretokenize``, an adapter
    with a list-of-strings result)."""
    sub = tmp_path / "sub"
    (sub / "cs336_basics").mkdir(parents=True)
    (sub / "tests").mkdir()
    (sub / "cs336_basics" / "__init__.py").write_text(VERSION_AT_IMPORT.format(name=reads))
    (sub / "tests" / "adapters.py").write_text(
        "import cs336_basics\n\n\ndef run_pretokenize(text):\n    return [cs336_basics.__version__]\n"
    )
    if pyproject is not None:
        (sub / "pyproject.toml").write_text(pyproject)
    return sub


def version_seen(sub: Path, isolate: bool) -> str:
    if isolate:
        from sandbox.backend import WorkerBackend

        backend = WorkerBackend("student", sub)
        try:
            return Implementation(backend).run_pretokenize("x")[0]
        finally:
            backend.close()
    return Implementation(LocalBackend("student", sub)).run_pretokenize("x")[0]


PYPROJECTS = {
    "project_table": ('[project]\nname = "cs336_basics"\nversion = "1.0.6"\n', "1.0.6"),
    "dashed_name": ('[project]\nname = "cs336-basics"\nversion = "25.1"\n', "25.1"),
    "dynamic_version": ('[project]\nname = "cs336_basics"\ndynamic = ["version"]\n', own_metadata.NO_VERSION),
    "poetry_table": ('[tool.poetry]\nname = "cs336_basics"\nversion = "0.3.0"\n', "0.3.0"),
}


@pytest.mark.skipif(sys.platform != "linux", reason="isolated workers need Linux")
@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
@pytest.mark.parametrize("pyproject, version", list(PYPROJECTS.values()), ids=list(PYPROJECTS))
def test_a_package_reading_its_own_version_at_import_gets_its_pyproject_version(tmp_path, isolate, pyproject, version):
    assert version_seen(submission(tmp_path, pyproject), isolate) == version


@pytest.mark.parametrize("pyproject", [None, "[project\nname = 'x'\n", '[project]\nversion = "1.0"\n'],
                         ids=["no_pyproject", "invalid_toml", "no_name"])
def test_without_a_named_project_the_import_fails_as_it_does_uninstalled_at_home(tmp_path, pyproject):
    sub = submission(tmp_path, pyproject)
    with pytest.raises(BrokenImplementation, match="PackageNotFoundError"):
        Implementation(LocalBackend("student", sub)).run_pretokenize("x")


def test_only_the_submissions_own_name_is_provided(tmp_path):
    sub = submission(tmp_path, '[project]\nname = "cs336_basics"\nversion = "1.0.6"\n', reads="cs336_systems")
    with pytest.raises(BrokenImplementation, match="PackageNotFoundError"):
        Implementation(LocalBackend("student", sub)).run_pretokenize("x")


@pytest.fixture
def restored():
    """sys.meta_path and sys.path as they were, the on-disk metadata emptied, after the test."""
    meta_path, path = sys.meta_path[:], sys.path[:]
    yield
    sys.meta_path[:], sys.path[:] = meta_path, path
    if made_folder(own_metadata.PREFIX) is not None:
        for entry in Path(own_metadata.on_disk_folder()).iterdir():
            shutil.rmtree(entry)


def test_an_installed_distribution_of_the_same_name_is_found_first(tmp_path, restored):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "pytest"\nversion = "0.0.1"\n')
    assert own_metadata.provide(str(sub)) == ("pytest", "0.0.1")
    assert importlib.metadata.version("pytest") == importlib.metadata.distribution("pytest").version != "0.0.1"


def test_a_later_submission_replaces_the_earlier_ones_metadata(tmp_path, restored):
    for version in ("1.0", "2.0"):
        sub = tmp_path / version
        sub.mkdir()
        (sub / "pyproject.toml").write_text(f'[project]\nname = "cs336_basics"\nversion = "{version}"\n')
        own_metadata.provide(str(sub))
        assert importlib.metadata.version("cs336_basics") == version
    assert sum(isinstance(f, own_metadata.OwnMetadataFinder) for f in sys.meta_path) == 1
    assert [p.name for p in Path(own_metadata.on_disk_folder()).iterdir()] == ["cs336_basics-2.0.dist-info"]


SPAWNS = """import multiprocessing

import cs336_basics


def version():
    return cs336_basics.__version__


def spawned_version():
    with multiprocessing.get_context("{method}").Pool(1) as pool:
        return pool.apply_async(version).get(timeout=60)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="isolated workers need Linux")
@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_process_the_submission_spawns_finds_its_package_metadata_too(tmp_path, isolate, method, restored):
    # a new interpreter gets sys.path, not sys.meta_path: a real CS336 trainer's spawn pool,
    # whose workers import its package (reading its version), hung, each worker failing with
    # PackageNotFoundError where, installed at home, it trains (here: 60 s, then TimeoutError)
    sub = submission(tmp_path, '[project]\nname = "cs336_basics"\nversion = "1.0.6"\n')
    (sub / "cs336_basics" / "spawns.py").write_text(SPAWNS.format(method=method))
    (sub / "tests" / "adapters.py").write_text(
        "def run_pretokenize(text):\n    from cs336_basics.spawns import spawned_version\n\n    return [spawned_version()]\n"
    )
    if isolate:
        assert version_seen(sub, isolate) == "1.0.6"
        return
    # in-process in a process of its own: a forkserver and the resource tracker such a pool
    # starts live until their process ends, and later tests check this one has no children
    code = ("import sys; from harness.impl import Implementation, LocalBackend; "
            f"print(Implementation(LocalBackend('student', {str(sub)!r})).run_pretokenize('x')[0])")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env=child_env(keep=("PYTHONPATH",)), stdin=subprocess.DEVNULL)
    assert proc.stdout.strip() == "1.0.6", proc.stdout + proc.stderr


def test_a_metadata_folder_whose_process_is_gone_is_removed_by_the_next_one(tmp_path):
    # a process ending without atexit (killed, or forked and ending with os._exit, as the
    # mutant catalogue's runs do) left its folder in TMPDIR for good (12 in /tmp in one morning)
    gone = tmp_path / f"{own_metadata.PREFIX}999999999-1-x"  # above any pid
    alive = tmp_path / f"{own_metadata.PREFIX}{os.getpid()}-{start_time(os.getpid())}-y"
    gone.mkdir()
    alive.mkdir()
    made = own_folder(own_metadata.PREFIX, str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, made.name])
    shutil.rmtree(made)


@pytest.mark.parametrize("prefix", [own_metadata.PREFIX, stand_ins.PREFIX, diagnose.PREFIX])
def test_in_a_grading_a_process_folder_lies_in_the_gradings_own_folder(tmp_path, monkeypatch, prefix):
    # grade removes its own folder however the test process ends; TMPDIR kept a killed
    # test process's stand-ins folder (test_diagnosis' killed run)
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "grading"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)
    for folder in ("grading", "tmp"):
        (tmp_path / folder).mkdir()
    made = own_folder(prefix)
    assert made.parent == tmp_path / "grading" and not any((tmp_path / "tmp").iterdir())
    shutil.rmtree(made)


def test_an_installed_distribution_gets_no_copy_on_disk(tmp_path, restored):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "pytest"\nversion = "0.0.1"\n')
    own_metadata.provide(str(sub))
    assert made_folder(own_metadata.PREFIX) is None or not any(Path(own_metadata.on_disk_folder()).iterdir())


def test_the_cs336_extra_lists_the_tokenizer_packages_of_cs336s_environment():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = [req.split(">")[0].split("=")[0].split("<")[0].strip() for req in extras["cs336"]]
    assert sorted(n.replace("-", "_") for n in names) == sorted(CS336_EXTRA)  # distribution -> module names
    assert "torch" not in names  # torch keeps its stand-in


@pytest.mark.parametrize("missing, hint", [(["psutil", "torch"], True), (["torch", "jaxtyping"], False)], ids=["psutil", "torch"])
def test_a_missing_starter_package_is_named_with_the_extra_that_installs_it(tmp_path, missing, hint):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adapters.py").write_text("".join(f"import {name}\n" for name in missing))
    notes = submission_notes(GradeRequest(submission=sub), {"stand_ins": missing})
    (line,) = [n for n in notes if n.startswith("not installed where grading runs: ")]
    assert line.startswith(f"not installed where grading runs: {', '.join(missing)} ")
    assert ("psutil: in CS336's environment, installed by `pip install -e .[cs336]`" in line) is hint, line


@pytest.mark.skipif(sys.platform != "linux", reason="isolated workers need Linux")
def test_with_the_cs336_extra_installed_memory_logging_with_psutil_works_in_the_worker(tmp_path):
    pytest.importorskip("psutil", reason="the cs336 extra is not installed here")
    from sandbox.backend import WorkerBackend

    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adapters.py").write_text(
        "import os\n\nimport psutil\n\n\ndef run_pretokenize(text):\n"
        "    rss = psutil.Process(os.getpid()).memory_info().rss\n    return [text, str(rss > 0)]\n"
    )
    backend = WorkerBackend("student", sub)
    try:
        assert Implementation(backend).run_pretokenize("x") == ["x", "True"]
        assert backend.facts.get("stand_ins") in (None, [])
    finally:
        backend.close()


@pytest.mark.parametrize("spec, noted", [(">=3.12,<3.14", True), (">=3.11", None), ("~=3.12", True),
                                         ("==3.11.*", None), ("<3.0", True), ("odd spec", None)])
def test_a_python_requirement_grading_does_not_meet_is_a_note(tmp_path, spec, noted):
    from grader.intake import python_requirement_note

    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "cs336_basics"\nrequires-python = "{spec}"\n')
    note = python_requirement_note(tmp_path, running=(3, 11, 7))
    if noted is None:
        assert note is None, note
    else:
        assert note.startswith(f"the submission's pyproject.toml requires Python {spec}; grading runs Python 3.11.7"), note


def test_the_python_note_is_among_the_submission_notes(tmp_path):
    sub = tmp_path / "sub"
    (sub / "tests").mkdir(parents=True)
    (sub / "tests" / "adapters.py").write_text("")
    (sub / "pyproject.toml").write_text('[project]\nname = "cs336_basics"\nrequires-python = ">=99"\n')
    notes = submission_notes(GradeRequest(submission=sub), {})
    assert any(n.startswith("the submission's pyproject.toml requires Python >=99") for n in notes), notes


GUARD_LINE = "imported by the submission only inside try/except ImportError or by its test files"


@pytest.mark.parametrize("source, named", [
    ("try:\n    from no_such_package_here import SortedThing\nexcept ImportError:\n    SortedThing = None\n", True),
    ("from no_such_package_here import SortedThing\n", False),  # unguarded: it gets a stand-in at any time
])
def test_a_missing_package_imported_only_under_an_import_error_guard_is_named_as_such(tmp_path, source, named):
    sub = tmp_path / "sub"
    (sub / "tests").mkdir(parents=True)
    (sub / "pkg").mkdir()
    (sub / "tests" / "adapters.py").write_text("import os\n\ndef run_train_bpe(p, n, s):\n    from pkg.train import train\n    return train(p, n, s)\n")
    (sub / "pkg" / "train.py").write_text("import json\nimport regex\nfrom pkg import other\n" + source)
    notes = submission_notes(GradeRequest(submission=sub), {})
    lines = [n for n in notes if n.startswith(GUARD_LINE)]
    assert len(lines) == named, notes
    if named:
        assert lines[0].startswith(GUARD_LINE + ", and not installed where grading runs: no_such_package_here ("), lines[0]
