"""A failing ``assert impl.run_X(...) == expected`` in a test is explained with the adapter's
name and arguments (``where 0.18 = run_compression_ratio('hello world', [1, 2])``), not with
the harness's internals (``functools.partial(<bound method Implementation.call of impl>,
'run_compression_ratio')``), which students saw in their feedback."""

from __future__ import annotations

import subprocess
import sys

from harness.childenv import child_env
from harness.impl import Implementation, LocalBackend

from .support import ROOT, adapters_only

FAILING = '''
from harness.impl import Implementation, LocalBackend


def test_ratio():
    impl = Implementation(LocalBackend("reference"))
    assert impl.run_compression_ratio("hello world", [1, 2]) == 0.5
'''


def test_an_adapter_call_is_named_by_its_adapter():
    impl = Implementation(LocalBackend("reference"))
    assert repr(impl.run_compression_ratio) == "run_compression_ratio"
    assert impl.run_compression_ratio("hello world", [1, 2]) == 5.5  # and still calls it


def test_a_failing_assert_names_the_adapter_call_not_the_harness(tmp_path):
    path = tmp_path / "test_failing.py"
    path.write_text(FAILING, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT),
         str(path), "-q", "-p", "no:randomly"],
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # the test ran and failed
    assert "where 5.5 = run_compression_ratio('hello world', [1, 2])" in out, out
    assert "functools.partial" not in out and "bound method" not in out, out


TOKENIZER_ADAPTERS = """
class Tokenizer:
    def encode(self, text):
        return []


def get_tokenizer(vocab, merges, special_tokens=None):
    return Tokenizer()
"""


def test_a_tokenizer_is_named_by_the_adapter_that_made_it(tmp_path):
    # what a failing Hypothesis example shows for a tokenizer argument: the function a student
    # can find (adapters.py's), not the package the harness loaded it from
    vocab = {i: bytes([i]) for i in range(256)}
    student = Implementation(LocalBackend("student", adapters_only(tmp_path / "sub", TOKENIZER_ADAPTERS)))
    assert repr(student.get_tokenizer(vocab, [])) == "<tokenizer from adapters.get_tokenizer(...)>"
    reference = Implementation(LocalBackend("reference"))
    assert repr(reference.get_tokenizer(vocab, [])) == "<tokenizer from the reference's adapters.get_tokenizer(...)>"
