"""A submission graded in-process (``--no-isolate``, ``pytest --submission``) goes first on the
test process's ``sys.path``. A repository made from the handout holds its own ``harness/``,
``tests/`` and ``fixtures/``; loading it took the test process's own ``harness`` and ``fixtures``
modules out of ``sys.modules``, so the hidden tests' ``from fixtures.generate import
zipf_corpus`` (and any later import of a harness module) ran the submission's copy: a student
could choose the hidden tests' inputs, in-process only. The test process's own packages now stay
its own (:func:`harness.impl.test_side_names`), and an installed package the submission has a
folder of the same name for (``regex/``) is no longer taken out of them either."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from harness.impl import ROOT

PROBE = """
import json, sys
sys.path.insert(0, {root!r})  # as pytest's pythonpath = ["."] puts this checkout first
import harness.values, regex
from harness.impl import Implementation, LocalBackend

backend = LocalBackend("student", {sub!r})
impl = Implementation(backend)
assert impl.run_merge([1, 2, 3], (1, 2), 9) == [9, 3]
import harness.bounded, fixtures.generate, regex as again, tiktoken  # the test side's imports after the load
print(json.dumps({{"harness": harness.bounded.__file__, "fixtures": fixtures.generate.__file__,
                  "regex": again.__file__, "same_regex": again is regex, "tiktoken": tiktoken.__file__,
                  "not_its_own": backend.facts.get("not_its_own")}}))
"""


def handout_shaped(dest: Path, generate: str) -> Path:
    """The reference as ``student/`` in a repository shaped like the handout: its own copies of
    ``harness/`` and ``fixtures/`` (``fixtures/generate.py`` given), a ``regex/`` folder and a
    ``tiktoken.py`` script."""
    dest.mkdir(parents=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    shutil.copytree(ROOT / "reference", dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "harness", dest / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "fixtures").mkdir()
    (dest / "fixtures" / "__init__.py").write_text("")
    (dest / "fixtures" / "generate.py").write_text(textwrap.dedent(generate))
    (dest / "regex").mkdir()
    (dest / "regex" / "__init__.py").write_text("# the student's notes on the GPT-2 pattern, a package\n")
    (dest / "tiktoken.py").write_text("# the student's comparison script, never imported by its code\nRAN = True\n")
    # a standard module whose import prints (the Zen of Python): a name the tests never import
    (dest / "this.py").write_text("# the student's scratch file\n")
    return dest


TAMPERED = """
def zipf_corpus(n_bytes, seed=0, **kw):
    raise RuntimeError("the submission's own fixtures/generate.py ran")
"""


def test_loading_a_handout_shaped_submission_keeps_the_test_sides_own_modules(tmp_path):
    sub = handout_shaped(tmp_path / "sub", TAMPERED)
    code = PROBE.format(root=str(ROOT), sub=str(sub))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(proc.stdout.strip().splitlines()) == 1, proc.stdout[:2000]  # nothing printed by an import made for it
    found = json.loads(proc.stdout)
    assert found["harness"] == str(ROOT / "harness" / "bounded.py")
    assert found["fixtures"] == str(ROOT / "fixtures" / "generate.py")
    assert found["same_regex"] and not found["regex"].startswith(str(sub)), found["regex"]
    assert not found["tiktoken"].startswith(str(sub)), found["tiktoken"]  # the tests' oracle stays the installed one
    # student/ imports regex, which the test process had first: said, as the isolated worker imports its own
    assert found["not_its_own"] == ["regex/"]


EARLIER_SRC = """
import sys
sys.path.insert(0, {root!r})
from harness.impl import Implementation, LocalBackend

print(Implementation(LocalBackend("student", {a!r})).run_merge([1, 2], (1, 2), 9))
sys.modules.pop("cs336_basics")  # as a test cleaning up after itself does; a/src stays on the path
print(Implementation(LocalBackend("student", {b!r})).run_merge([1, 2], (1, 2), 9))
"""


def test_a_later_submission_never_runs_the_code_of_an_earlier_ones_src_folder(tmp_path):
    # the earlier submission's src/ stays on the path; the later one's cs336_basics/, which its
    # adapters never import, had the test side import "the environment's" cs336_basics: the
    # earlier submission's, its __init__.py run again (seen as test_layouts, then test_own_tests_package)
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "src" / "cs336_basics").mkdir(parents=True)
    (a / "src" / "cs336_basics" / "__init__.py").write_text('print("the earlier submission\'s cs336_basics ran")\n')
    (a / "adapters.py").write_text("import cs336_basics\n\ndef run_merge(ids, pair, new_id):\n    return [1]\n")
    (b / "cs336_basics").mkdir(parents=True)
    (b / "cs336_basics" / "__init__.py").write_text("")
    (b / "adapters.py").write_text("def run_merge(ids, pair, new_id):\n    return [2]\n")
    code = EARLIER_SRC.format(root=str(ROOT), a=str(a), b=str(b))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["the earlier submission's cs336_basics ran", "[1]", "[2]"], proc.stdout
