"""A name read from a stand-in is a class, so annotation libraries take it as a type.

CS336 model modules annotate with jaxtyping over torch (``def forward(self, x: Float[Tensor,
"... d_in"])``, evaluated when the module is imported unless it has ``from __future__ import
annotations``), and a CS336 package's ``__init__.py`` often imports them. Graded with the
packages the repository declares installed (the CS336 policy's default), jaxtyping is the real
one while torch, never installed, is a stand-in: jaxtyping calls ``issubclass(Tensor, ...)``,
which refused the stand-in (an instance) with ``TypeError: issubclass() arg 1 must be a class``,
so ``tests/adapters.py`` could not be imported and a correct tokenizer scored 0 of 100
(found field-testing a starter-shaped repository, 2026-11-27). The submission here does what
jaxtyping does with an ``abc`` class of its own (jaxtyping itself is not a dependency of the
grader), isolated and in-process, and the real jaxtyping is checked too where it is installed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from harness.impl import BrokenImplementation, Implementation, LocalBackend
from harness.stand_in_objects import FINDER, missing_message

ABSENT = "bpe_selftest_absent_torch"  # installed nowhere: stood in like torch
MODEL = f'''import abc

import {ABSENT}
import {ABSENT}.nn as nn
from {ABSENT} import Tensor


class AbstractArray(abc.ABC):  # what jaxtyping's Float[...] checks its array type against
    pass


def Float(array_type, dims):
    if array_type is not None and issubclass(array_type, AbstractArray):
        raise AssertionError("a stand-in is no jaxtyping array")
    return array_type


class Linear(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.shape = (d_out, d_in)

    def forward(self, x: Float(Tensor, "... d_in")) -> Float(Tensor, "... d_out"):
        return {ABSENT}.einsum(x)


LAYER = Linear(2, 3)  # a plain class of the submission's: it runs
assert LAYER.shape == (3, 2) and isinstance(LAYER, object) and not isinstance([], Tensor)
'''
INIT = "from cs336_basics.model import Linear  # noqa: F401\n"
TRAIN = '''def train_bpe(input_path, vocab_size, special_tokens):
    with open(input_path, encoding="utf-8") as f:
        f.read()
    vocab = {i: bytes([i]) for i in range(256)}
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab, []
'''
ADAPTERS = f'''from __future__ import annotations

import {ABSENT}  # noqa: F401
from cs336_basics.train import train_bpe


def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    return train_bpe(input_path, vocab_size, special_tokens)


def run_linear(d_in, d_out, weights, in_features):
    from cs336_basics.model import Linear

    return Linear(d_in, d_out).forward(in_features)
'''


def build(dest: Path) -> Path:
    files = {"cs336_basics/__init__.py": INIT, "cs336_basics/model.py": MODEL, "cs336_basics/train.py": TRAIN,
             "tests/__init__.py": "", "tests/adapters.py": ADAPTERS,
             "pyproject.toml": '[project]\nname = "cs336_basics"\nversion = "1.0.6"\n'}
    for rel, text in files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


@pytest.fixture(autouse=True)
def _path_kept(monkeypatch):
    # an in-process load puts the submission's folder first on sys.path, where its own `tests`
    # package would then answer later imports of this project's `tests` in this process
    monkeypatch.setattr(sys, "path", list(sys.path))


def backend_for(sub: Path, isolate: bool):
    from sandbox.backend import WorkerBackend

    return WorkerBackend("student", sub) if isolate else LocalBackend("student", sub)


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_model_module_annotated_with_a_stand_in_as_a_type_imports_and_the_trainer_runs(tmp_path, isolate):
    if importlib.util.find_spec(ABSENT) is not None:
        pytest.skip(f"{ABSENT} is installed here")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest<|endoftext|>", encoding="utf-8")
    backend = backend_for(build(tmp_path / "sub"), isolate)
    try:
        vocab, merges = Implementation(backend).run_train_bpe(str(corpus), 300, ["<|endoftext|>"])
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    assert len(vocab) == 257 and merges == []


@pytest.fixture
def stood_in(monkeypatch):
    """The stand-in module for ``ABSENT``, imported as the submission's import would get it."""
    monkeypatch.setattr(FINDER, "packages", [ABSENT])
    monkeypatch.setattr(FINDER, "importing", True)
    monkeypatch.setattr(FINDER, "made", [])
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, FINDER])
    try:
        yield importlib.import_module(ABSENT)
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == ABSENT]:
            del sys.modules[name]


def test_a_stand_in_is_a_class_that_still_fails_naming_its_package_when_used(stood_in):
    tensor = stood_in.Tensor
    assert isinstance(tensor, type) and stood_in.Tensor is tensor
    assert not issubclass(tensor, int) and tensor[int, "d"] is tensor and (tensor | None) is tensor
    FINDER.importing = False
    with pytest.raises(ModuleNotFoundError, match="your code uses"):
        stood_in.zeros(3)
    with pytest.raises(ModuleNotFoundError) as caught:
        tensor()
    assert missing_message(ABSENT) in str(caught.value)


def test_the_real_jaxtyping_takes_a_stand_in_as_its_array_type(stood_in):
    jaxtyping = pytest.importorskip("jaxtyping")
    assert jaxtyping.Float[stood_in.Tensor, "... d_in"] is not None


def training_fails(tmp_path, sub, isolate: bool, vocab_size: int, raises: type) -> pytest.ExceptionInfo:
    """``sub`` trained on a small corpus (isolated or in-process) raises ``raises``: its info."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower", encoding="utf-8")
    backend = backend_for(sub, isolate)
    try:
        with pytest.raises(raises) as caught:
            Implementation(backend).run_train_bpe(str(corpus), vocab_size, ["<|endoftext|>"])
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    return caught


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_an_import_error_raised_in_a_library_names_the_submissions_line_that_called_it(tmp_path, isolate):
    # before: only the innermost frame, a file of the library (`_array_types.py, line 563`),
    # never which of the submission's files and lines called it
    sub = build(tmp_path / "sub")
    (sub / "cs336_basics" / "model.py").write_text('import json\n\nCONFIG = json.loads("{")\n', encoding="utf-8")
    message = str(training_fails(tmp_path, sub, isolate, 300, BrokenImplementation).value)
    assert "could not be imported: JSONDecodeError" in message, message
    assert "model.py, line 3; raised in " in message and "decoder.py, line " in message, message


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_key_error_of_the_submission_shows_its_key_as_it_was(tmp_path, isolate):
    # isolated, KeyError(50257) was rebuilt from its message as KeyError('50257'): shown
    # `KeyError: '50257'`, as if the submission had looked up a string (a decode of an unknown id)
    sub = build(tmp_path / "sub")
    (sub / "cs336_basics" / "train.py").write_text(
        "def train_bpe(input_path, vocab_size, special_tokens):\n    return {}[vocab_size]\n", encoding="utf-8")
    caught = training_fails(tmp_path, sub, isolate, 50257, KeyError)
    assert str(caught.value) == "50257" and caught.exconly().splitlines()[0] == "KeyError: 50257", caught.exconly()
