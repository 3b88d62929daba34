"""Packages missing where grading runs, imported at call time (issue 28).

CS336 adapters often import the trainer inside ``run_train_bpe``, and the trainer imports
packages CS336's environment has through torch (``sympy``) and never uses them. The rule
(:mod:`harness.stand_ins`): a missing package the submission imports somewhere unguarded
(found in its source: outside a ``try`` whose handlers catch ``ImportError``) gets a stand-in
at any time, at the import of the adapters or in a call, since that import would fail for sure
without one; a package imported only under such a guard gets none, so the fallback runs.
Checked on a CS336-layout submission whose trainer module is imported at call time, isolated
and in-process: one that imports a missing package and uses nothing of it is graded as correct
(full marks in CS336 train_bpe), one that guards the import takes its fallback, one that calls
into the package fails with the one readable line.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from harness.impl import ROOT, Implementation, LocalBackend
from harness.stand_in_objects import missing_message
from harness.submission import _imports, graded_names, package_imports, scan

from .support import build_layout, run_grade

ABSENT = "bpe_selftest_absent"  # installed nowhere
EOT = "<|endoftext|>"
TRAINERS = {  # cs336_basics/call_time_train.py, imported by run_train_bpe when called
    "unused": f"""
import {ABSENT}
from {ABSENT}.sets.contains import Set  # noqa: F401  (as students leave editor auto-imports)
from torch._dynamo.utils import count_calls  # noqa: F401  (torch is missing too, and stood in for the adapters)
from .train import train_bpe  # noqa: F401
""",
    "guarded": f"""
try:
    import {ABSENT} as fast
except ImportError:  # optional: the pure-Python fallback below
    fast = None
from .train import train_bpe as _train


def train_bpe(input_path, vocab_size, special_tokens):
    if fast is not None:
        raise RuntimeError(f"the fallback was not taken: {{fast!r}}")
    return _train(input_path, vocab_size, special_tokens)
""",
    "used": f"""
import {ABSENT}


def train_bpe(input_path, vocab_size, special_tokens):
    return {ABSENT}.train(input_path, vocab_size, special_tokens)
""",
}
CALL_TIME_ADAPTER = """

def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    from cs336_basics.call_time_train import train_bpe as train  # imported when called, as CS336 repositories do

    return train(input_path, vocab_size, special_tokens)
"""


def build(trainer: str, dest: Path) -> Path:
    build_layout("cs336", dest)
    (dest / "cs336_basics" / "call_time_train.py").write_text(TRAINERS[trainer], encoding="utf-8")
    with open(dest / "tests" / "adapters.py", "a", encoding="utf-8") as f:
        f.write(CALL_TIME_ADAPTER)
    return dest


@pytest.mark.parametrize("source, guarded", [
    ("import a", {"a": False}),
    ("def f():\n    from a.b import c", {"a": False}),
    ("try:\n    import a\nexcept ImportError:\n    a = None", {"a": True}),
    ("try:\n    import a\nexcept ModuleNotFoundError:\n    pass", {"a": True}),
    ("try:\n    import a\nexcept (OSError, ImportError):\n    pass", {"a": True}),
    ("try:\n    import a\nexcept:\n    pass", {"a": True}),
    ("try:\n    import a\nexcept Exception:\n    pass", {"a": True}),
    ("try:\n    import a\nexcept ValueError:\n    pass", {"a": False}),
    ("try:\n    import a\nfinally:\n    pass", {"a": False}),
    ("try:\n    import a\nexcept ImportError:\n    import b\nelse:\n    import c", {"a": True, "b": False, "c": False}),
    ("try:\n    def f():\n        import a\nexcept ImportError:\n    pass", {"a": True}),
])
def test_an_import_is_guarded_only_in_the_body_of_a_try_catching_import_error(source, guarded):
    assert dict(_imports(ast.parse(source))) == guarded


@pytest.mark.parametrize("source", [
    "class C:\n    def m(self):\n        import a",
    "async def f():\n    async with x:\n        import a",
    "if x:\n    pass\nelif y:\n    pass\nelse:\n    import a",
    "for i in x:\n    pass\nelse:\n    import a",
    "while x:\n    import a",
    "with open(p) as f, g:\n    import a",
    "match x:\n    case [1, *_] if y:\n        import a",
    "try:\n    pass\nexcept* ValueError:\n    import a",
    "@decorator(lambda: 1)\ndef f(x=[i for i in y]):\n    import a",
])
def test_an_import_is_found_in_every_kind_of_block(source):
    assert dict(_imports(ast.parse(source))) == {"a": False}


@pytest.mark.parametrize("impl", ["student", "reference"])
def test_in_this_checkout_only_the_package_in_use_and_adapters_py_are_read_as_an_isolated_worker_gets_them(tmp_path, impl):
    for rel, package in [("adapters.py", "absent_in_adapters"), (f"{impl}/train.py", "absent_in_package"),
                         ("grader/grade.py", "absent_in_grader"), ("selftests/test_x.py", "absent_in_selftests"),
                         ("other.py", "absent_in_other")]:
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(f"import {package}\n")
    in_repo = graded_names(ROOT, impl)
    read = package_imports(tmp_path, only=in_repo)
    assert read == {"absent_in_adapters": True, "absent_in_package": True}
    copied = {rel.split("/")[0] for rel, _ in scan(tmp_path, in_repo).files}
    assert copied == {"adapters.py", impl}  # the files a worker gets of it (sandbox.backend)
    assert graded_names(tmp_path, impl) is None  # a submission: all of it
    assert len(package_imports(tmp_path, only=graded_names(tmp_path, impl))) == 5


def run_train(backend, path: str):
    try:
        return Implementation(backend).run_train_bpe(path, 300, [EOT])
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()


def backend_for(sub: Path, isolate: bool):
    from sandbox.backend import WorkerBackend

    return WorkerBackend("student", sub) if isolate else LocalBackend("student", sub)


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
@pytest.mark.parametrize("trainer", ["unused", "guarded"])
def test_a_trainer_imported_at_call_time_trains_as_at_home(tmp_path, trainer, isolate):
    if importlib.util.find_spec(ABSENT) is not None:
        pytest.skip(f"{ABSENT} is installed here")
    path = str(ROOT / "fixtures" / "stories.txt")
    expected = Implementation(LocalBackend("reference")).run_train_bpe(path, 300, [EOT])
    assert run_train(backend_for(build(trainer, tmp_path / "sub"), isolate), path) == expected
    if not isolate:  # the stand-ins served the call only: the test process imports as before
        assert [m for m in sys.modules if m.partition(".")[0] in (ABSENT, "torch")] == []
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(ABSENT)


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_trainer_calling_into_a_missing_package_fails_with_one_line_naming_it(tmp_path, isolate):
    path = str(ROOT / "fixtures" / "stories.txt")
    with pytest.raises(ModuleNotFoundError) as caught:
        run_train(backend_for(build("used", tmp_path / "sub"), isolate), path)
    assert missing_message(ABSENT) in str(caught.value)


TRAIN_BPE_FILES = ["tests/cs336/test_cs336_contract.py", "tests/public/test_train_bpe.py"]


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_trainer_importing_an_unused_missing_package_at_call_time_gets_full_marks_in_cs336_train_bpe(tmp_path, isolate):
    sub = build("unused", tmp_path / "sub")
    out = run_grade(tmp_path / "out", submission=sub, isolate=None if isolate else False, tests=TRAIN_BPE_FILES,
                    self_checked=True, side_by_side=True, timeout=800)
    assert "policy: grading-cs336.yaml" in out.stdout, out.context()
    got, most = out.group_points()["train_bpe"]
    assert most > 0 and got == pytest.approx(most), f"train_bpe {got}/{most}\n{out.context()}"
    (line,) = [ln for ln in out.stdout.splitlines() if "not installed where grading runs: " in ln and ABSENT in ln]
    assert "a stand-in takes its place" in line, line


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_module_of_the_submission_imported_as_top_level_gets_no_stand_in_and_says_how_to_import_it(tmp_path, isolate):
    # cs336_basics/chunking.py imported as `chunking`: where the submission's tests run (its root
    # on the path) that import fails, so it fails here too, never rescued by a stand-in
    sub = build_layout("cs336", tmp_path / "sub")
    (sub / "cs336_basics" / "chunking.py").write_text("def boundaries():\n    return []\n")
    with open(sub / "cs336_basics" / "train_bpe.py", "a", encoding="utf-8") as f:
        f.write("\nfrom chunking import boundaries  # noqa: E402\n")
    from harness.impl import BrokenImplementation

    with pytest.raises(BrokenImplementation) as caught:
        run_train(backend_for(sub, isolate), str(ROOT / "fixtures" / "stories.txt"))
    assert ("No module named 'chunking': the submission's cs336_basics/chunking.py is imported as a top-level "
            "module" in str(caught.value)) and "import it as cs336_basics.chunking" in str(caught.value), str(caught.value)
