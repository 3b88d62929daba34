"""The randomized cases' examples depend on ``--seed`` alone, not on which other modules the
test process happens to have imported.

Hypothesis (6.131 and later) also draws string and number literals it finds in the local
modules imported so far. A submission graded in the test process (``--no-isolate``) is such a
module; graded isolated, it is not. Without ``harness.plugin``'s guard, the same seed drew
other examples in the two modes, so a bug could be found in one and missed in the other.
Checked from outside: the same seeded test run twice, once with a module full of literals
imported first, must draw the same examples.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DRAWS = '''
import json, os
from hypothesis import given, settings, strategies as st

if os.environ.get("IMPORT_LITERALS"):
    import literals  # noqa: F401  (a local module: its constants join Hypothesis's pool)

SEEN = []

@settings(max_examples=300)
@given(st.text(), st.integers())
def test_draws(text, number):
    SEEN.append([text, number])

def test_write():
    with open(os.environ["DRAWS_OUT"], "w") as out:
        json.dump(SEEN, out)
'''

# Literals no strategy would draw by chance: had Hypothesis added them to its pool, the draws
# of the second run would differ from the first from the first constant drawn on.
LITERALS = "\n".join(f"WORD_{i} = 'qz{i}literal'\nNUMBER_{i} = {7919 * (i + 3)}" for i in range(60)) + "\n"


def draws(folder: Path, *, with_literals: bool) -> list:
    out = folder / f"draws-{with_literals}.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "BPE_SEED")}
    env.update(DRAWS_OUT=str(out), PYTHONPATH=str(folder))
    if with_literals:
        env["IMPORT_LITERALS"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "harness.plugin", "-p", "no:cacheprovider",
         "--seed", "20261126", "-o", "addopts=", "draws_check.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(out.read_text())


def test_examples_depend_on_the_seed_not_on_the_modules_imported(tmp_path: Path) -> None:
    (tmp_path / "draws_check.py").write_text(DRAWS)
    (tmp_path / "literals.py").write_text(LITERALS)
    plain, with_literals = draws(tmp_path, with_literals=False), draws(tmp_path, with_literals=True)
    assert len(plain) > 100, "the seeded test drew too few examples to compare"
    first = next((i for i, (a, b) in enumerate(zip(plain, with_literals)) if a != b), None)
    assert first is None and len(plain) == len(with_literals), (
        f"with a module of literals imported, example #{first} differs: "
        f"{with_literals[first]!r} instead of {plain[first]!r}"
    )
