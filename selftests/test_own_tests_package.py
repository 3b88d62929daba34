"""A CS336 repository's ``tests/adapters.py`` may import its own ``tests`` package by name
(``from tests.common import FIXTURES_PATH``): where its author runs it, and in the isolated
worker, ``tests`` is the repository's folder. In-process, the grader's test run has imported a
``tests`` package of its own; the submission's import must still get the submission's, and
the grader's must be back afterwards: the same outcome in-process and isolated."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tests as graders_tests  # as in a graded run: the grader's tests package imported first
from harness.impl import ROOT, Implementation, LocalBackend

ADAPTERS = (
    "from tests.common import ORIGIN\n"
    "import tests.common\n\n\n"
    "def run_pretokenize(text):\n"
    "    return [ORIGIN, tests.common.__name__]\n"
)


def submission(tmp_path: Path, regular_package: bool) -> Path:
    """A CS336-layout submission whose adapters return what its ``tests.common`` says."""
    sub = tmp_path / "sub"
    (sub / "cs336_basics").mkdir(parents=True)
    (sub / "cs336_basics" / "__init__.py").write_text("")
    (sub / "tests").mkdir()
    if regular_package:
        (sub / "tests" / "__init__.py").write_text("")
    (sub / "tests" / "common.py").write_text('ORIGIN = "the submission\'s tests/common.py"\n')
    (sub / "tests" / "adapters.py").write_text(ADAPTERS)
    return sub


def seen(sub: Path, isolate: bool) -> list[str]:
    if isolate:
        from sandbox.backend import WorkerBackend

        backend = WorkerBackend("student", sub)
        try:
            return Implementation(backend).run_pretokenize("x")
        finally:
            backend.close()
    return Implementation(LocalBackend("student", sub)).run_pretokenize("x")


@pytest.mark.parametrize("regular_package", [True, False], ids=["tests_with_init", "tests_without_init"])
@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_the_submissions_tests_package_is_its_own(tmp_path, isolate, regular_package):
    if isolate and sys.platform != "linux":
        pytest.skip("isolated workers need Linux")
    assert seen(submission(tmp_path, regular_package), isolate) == ["the submission's tests/common.py", "tests.common"]


def test_the_graders_tests_package_is_back_after_the_import(tmp_path):
    seen(submission(tmp_path, True), isolate=False)
    assert sys.modules["tests"] is graders_tests
    assert Path(sys.modules["tests"].__file__).resolve().parent == ROOT / "tests"
    assert not [m for m, mod in sys.modules.items() if m.startswith("tests.") and str(tmp_path) in (getattr(mod, "__file__", "") or "")]


CALL_TIME_ADAPTERS = (
    "def run_pretokenize(text):\n"
    "    from cs336_basics.late import origin  # imported only when called, as real repositories do\n"
    "    return [origin()]\n"
)


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_code_that_imports_the_submissions_tests_package_when_called_gets_its_own(tmp_path, isolate):
    # a real CS336 repository (steven14414): its cs336_basics/bpe.py, imported by the adapters inside
    # get_tokenizer, does `from tests.common import gpt2_bytes_to_unicode`; in-process it got the
    # grader's `tests` (ModuleNotFoundError: No module named 'tests.common'), isolated its own
    if isolate and sys.platform != "linux":
        pytest.skip("isolated workers need Linux")
    sub = submission(tmp_path, True)
    (sub / "tests" / "adapters.py").write_text(CALL_TIME_ADAPTERS)
    (sub / "cs336_basics" / "late.py").write_text(
        "from tests.common import ORIGIN\n\n\ndef origin():\n    return ORIGIN\n"
    )
    assert seen(sub, isolate) == ["the submission's tests/common.py"]
    if not isolate:  # and the grader's package is back after the call
        assert sys.modules["tests"] is graders_tests
        assert not [m for m, mod in sys.modules.items() if m.startswith("tests.") and str(tmp_path) in (getattr(mod, "__file__", "") or "")]
