"""Processes a submission spawns get the stand-ins its own process has (issue 28).

A real CS336 trainer may count in a ``multiprocessing`` pool started with the ``spawn`` or
``forkserver`` method: each worker is a new interpreter, which gets the grading process's
``sys.path`` but not its ``sys.meta_path``, and imports the submission's package afresh to
unpickle the function it runs. CS336's package imports ``torch`` at import (its
``__init__.py``, or a model module it imports), which the grading environment lacks: the
stand-in finder on ``sys.meta_path`` served the grading process only, so every pool worker
failed with ``No module named 'torch'`` and the pool hung (as tsunrise's did for its package
metadata, docs/cs336.md). The stand-ins are now also a folder on disk, last on ``sys.path``
(``harness/stand_ins.py``), while they serve: here a CS336-layout submission (its
``cs336_basics/__init__.py`` imports ``nn_utils``, which imports ``torch``) trains in a pool
of each start method, isolated and in-process, and gets what it gets without a pool.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness import stand_ins
from harness.childenv import child_env
from harness.impl import ROOT, Implementation, LocalBackend
from harness.stand_in_objects import missing_message

from .prefetch import prefetched
from .support import build_layout, run_grade

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="isolated workers need Linux")

METHODS = ["spawn", "forkserver"]
# the pool trains; {wait}: how the caller waits for it (graded as real trainers do: no limit of its own)
POOL_TRAINER = '''"""Training in a pool of the {method!r} start method, as real CS336 trainers count in
one (selftest fixture): its worker imports this package to unpickle the function it runs."""

import multiprocessing

from .train import train_bpe as _train_bpe


def train_bpe(input_path, vocab_size, special_tokens):
    with multiprocessing.get_context("{method}").Pool(1) as pool:
        return pool.apply_async(_train_bpe, (input_path, vocab_size, special_tokens)).get({wait})
'''
# a stand-in in the pool's worker: usable while a module imports, naming its package once used
STAND_IN_USE = '''import multiprocessing

import torch

AT_IMPORT = torch.nn.Linear(2, 2)  # as a model module's top level may


def use():
    try:
        torch.zeros(3)
    except ModuleNotFoundError as err:
        return str(err)
    return "no error"


def used_in_a_child():
    with multiprocessing.get_context("{method}").Pool(1) as pool:
        return pool.apply_async(use).get(60)
'''
TEXT = "low low low lower lowest newer newest<|endoftext|>the cat in the hat"


def pool_submission(dest: Path, method: str, wait: str = "60") -> Path:
    """The CS336-layout fixture (its package importing torch at import) training in a pool."""
    sub = build_layout("cs336", dest)
    (sub / "cs336_basics" / "train_bpe.py").write_text(POOL_TRAINER.format(method=method, wait=wait), encoding="utf-8")
    return sub


def in_own_process(sub: Path, code: str) -> str:
    """``code`` (an expression on ``impl``, the submission in-process) printed by a Python
    process of its own (a forkserver and the resource tracker a pool starts live until their
    process ends, and later tests check this one has no children), in a TMPDIR of its own that
    it must leave empty (its stand-ins and metadata folders removed at its exit). That TMPDIR
    is short: a forkserver's socket lies in it, and a socket's path has at most 107 bytes."""
    tmp = tempfile.mkdtemp(prefix="bpe-st-")
    try:
        script = (f"from harness.impl import Implementation, LocalBackend\n"
                  f"impl = Implementation(LocalBackend('student', {str(sub)!r}))\nprint(repr({code}))\n")
        proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=180,
                              env=child_env(keep=("PYTHONPATH",), TMPDIR=tmp), stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
        assert os.listdir(tmp) == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return proc.stdout.strip().splitlines()[-1]


def isolated(sub: Path, call):
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", sub)
    try:
        return call(Implementation(backend))
    finally:
        backend.close()


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
@pytest.mark.parametrize("method", METHODS)
def test_a_pool_whose_workers_import_a_package_that_imports_a_missing_one_trains_as_without_a_pool(tmp_path, method, isolate):
    # failed without the stand-ins on disk: every pool worker died on `import torch` and the
    # pool waited for it (here 60 s, then TimeoutError)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    args = (str(corpus), 256 + 12 + 1, ["<|endoftext|>"])
    expected = Implementation(LocalBackend("reference")).run_train_bpe(*args)
    sub = pool_submission(tmp_path / "sub", method)
    if isolate:
        got = isolated(sub, lambda impl: impl.run_train_bpe(*args))
    else:
        got = ast.literal_eval(in_own_process(sub, f"impl.run_train_bpe(*{args!r})"))
    assert got == expected


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
@pytest.mark.parametrize("method", METHODS)
def test_a_stand_in_in_a_spawned_process_names_its_package_once_used(tmp_path, method, isolate):
    sub = build_layout("cs336", tmp_path / "sub")
    (sub / "cs336_basics" / "pooled.py").write_text(STAND_IN_USE.format(method=method), encoding="utf-8")
    with open(sub / "tests" / "adapters.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef run_pretokenize(text):\n    from cs336_basics.pooled import used_in_a_child\n\n"
                "    return [used_in_a_child()]\n")
    if isolate:
        (said,) = isolated(sub, lambda impl: impl.run_pretokenize("x"))
    else:
        (said,) = ast.literal_eval(in_own_process(sub, "impl.run_pretokenize('x')"))
    assert said == missing_message("torch")


def test_an_in_process_submissions_stand_ins_folder_is_on_the_path_only_while_its_code_runs(tmp_path):
    # the test process's own imports must never find a stand-in (pytest.approx looks for numpy)
    sub = build_layout("cs336", tmp_path / "sub")
    with open(sub / "tests" / "adapters.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef run_pretokenize(text):\n    import sys\n\n    return [p for p in sys.path if 'bpe-stand-ins-' in p]\n")
    backend = LocalBackend("student", sub)
    seen = Implementation(backend).run_pretokenize("x")
    assert "torch" in backend.facts["stand_ins"]
    assert len(seen) == 1 and sorted(os.listdir(seen[0])) == sorted([*backend.facts["stand_ins"], stand_ins.ON_DISK_MODULE + ".py"])
    assert [p for p in sys.path if stand_ins.PREFIX in p] == []
    assert stand_ins.ON_DISK_MODULE not in sys.modules


FORKS = """import os, sys
from harness.proc_folders import own_folder

folder = own_folder("bpe-selftest-fork-", sys.argv[1])
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a normal exit: the atexit functions inherited from the parent run
os.waitpid(pid, 0)
print(folder.is_dir())
"""


def test_a_forked_child_exiting_normally_leaves_its_parents_folder(tmp_path):
    # a child forked by the submission that exits through sys.exit runs the atexit functions it
    # inherited: they removed its parent's stand-ins (and metadata) folder, so the processes the
    # parent spawned afterwards found nothing
    proc = subprocess.run([sys.executable, "-c", FORKS, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=child_env(keep=("PYTHONPATH",)), stdin=subprocess.DEVNULL)
    assert proc.stdout.strip() == "True", proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []  # the parent removed it at its own exit


# ---- graded: the same points as without a pool, in bounded time ----------------------------

# CS336's train_bpe rules on this policy's own tests (no hypothesis: one pool per call)
TRAINING = [
    "tests/cs336/test_cs336_contract.py::test_hand_worked_merges_with_a_special_token_given",
    "tests/cs336/test_cs336_contract.py::test_ties_go_to_the_lexicographically_greater_pair_with_a_special_token_given",
    "tests/cs336/test_cs336_contract.py::test_merges_and_vocab_match_the_reference_as_cs336_compares_them",
    "tests/cs336/test_cs336_contract.py::test_the_special_token_is_in_the_vocab_and_inside_no_learned_token",
]
MAX_TIME = 300  # grade's own budget: without the fix each pool waits until the test's time limit


@prefetched
def pooled_gradings(prefetch) -> dict:
    """The CS336-layout fixture graded isolated on :data:`TRAINING` without a pool and with a
    pool of each start method (waiting as real trainers do, with no limit of its own), in the
    usual TMPDIR (a forkserver's socket lies in the worker's: a long one, as a private TMPDIR
    per grading here is, fails at its 107-byte limit, as it would at home)."""
    base = prefetch.mktemp("pooled")
    for method in [None, *METHODS]:
        name = method or "no_pool"
        sub = (pool_submission(base / name / "sub", method, wait="") if method
               else build_layout("cs336", base / name / "sub"))
        prefetch.gradings.start(f"pooled-{name}", submission=sub, tests=TRAINING, max_time=MAX_TIME, self_checked=True,
                                side_by_side=True, timeout=MAX_TIME + 300)
    return {method: prefetch.gradings.get(f"pooled-{method or 'no_pool'}") for method in [None, *METHODS]}


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("method", METHODS)
def test_a_cs336_repository_training_in_a_pool_gets_the_points_it_gets_without_one(pooled_gradings, method):
    plain, pooled = pooled_gradings[None], pooled_gradings[method]
    assert "policy: grading-cs336.yaml" in pooled.stdout, pooled.context()
    got, most = plain.group_points()["train_bpe"]
    assert most > 0 and got == pytest.approx(most), plain.context()
    assert pooled.group_points()["train_bpe"] == pytest.approx([got, most]), pooled.context()
    assert pooled.seconds < MAX_TIME + 120, pooled.context()  # grade's budget and its start-up: never a hang
