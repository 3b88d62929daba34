"""``batch --similarity``: a renamed and reformatted copy of a submission ranks first, two
independent implementations of the same rules stay below the threshold, and the handout's
stubs never count as copying (``grader/similarity.py``, over ``copydetect``)."""

from __future__ import annotations

import ast
import builtins
import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.childenv import child_env

pytest.importorskip("copydetect", reason="the similarity report needs the optional extra: pip install -e .[similarity]")

from grader import similarity as SIM  # noqa: E402
from grader.intake import discover  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class _Rename(ast.NodeTransformer):
    """Every name the code defines gets another (builtins and dunders kept)."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def new(self, name: str) -> str:
        if name in vars(builtins) or name.startswith("__"):
            return name
        return self.names.setdefault(name, f"v{len(self.names)}_{name[::-1]}")

    def visit_Name(self, node):
        node.id = self.new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.new(node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.new(node.name)
        self.generic_visit(node)
        return node


def disguise(source: str) -> str:
    """``source`` as a copier hides it: names renamed, docstrings and comments gone, laid out
    again by ``ast.unparse`` (quotes, spacing, parentheses, line breaks)."""
    tree = _Rename().visit(ast.parse(source))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree).replace("    ", "  ")


def submission(dest: Path, modules: dict[str, str]) -> Path:
    """adapters.py + the stubs, with ``modules`` (file name -> code) written over them."""
    dest.mkdir(parents=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    shutil.copytree(ROOT / "student", dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    for name, code in modules.items():
        (dest / "student" / name).write_text(code, encoding="utf-8")
    return dest


def reference_modules() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "reference").glob("*.py"))}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """A class: the reference (alice), a disguised copy of it (bob), the naive solution of
    tests/hidden/naive.py, written from the rules alone (carol), untouched stubs (dave, erin)."""
    folder = tmp_path_factory.mktemp("similarity") / "submissions"
    submission(folder / "alice", reference_modules())
    submission(folder / "bob", {f"mod{i}.py": disguise(code) for i, code in enumerate(reference_modules().values())})
    submission(folder / "carol", {"train.py": (ROOT / "tests" / "hidden" / "naive.py").read_text(encoding="utf-8")})
    submission(folder / "dave", {})
    submission(folder / "erin", {})
    subs, _ = discover(folder)
    pairs = SIM.compare([SIM.document(s.student, "submission", s.source) for s in subs])
    return {"folder": folder, "pairs": {frozenset((p.a.name, p.b.name)): p for p in pairs}, "ranked": pairs}


@pytest.mark.slow
def test_a_renamed_and_reformatted_copy_ranks_first_and_is_flagged(klass):
    top = klass["ranked"][0]
    assert {top.a.name, top.b.name} == {"alice", "bob"}, [(p.a.name, p.b.name, p.similarity) for p in klass["ranked"]]
    assert top.flagged()


@pytest.mark.slow
def test_independent_implementations_of_the_same_rules_stay_below_the_threshold(klass):
    pair = klass["pairs"].get(frozenset(("alice", "carol")))
    assert pair is not None, "the two implementations of the same rules share no code at all: the test proves nothing"
    assert pair.similarity < SIM.THRESHOLD and not pair.flagged()


@pytest.mark.slow
@pytest.mark.parametrize("other", ["alice", "dave"])
def test_the_handouts_stubs_are_not_counted_as_copying(klass, other):
    pair = klass["pairs"].get(frozenset(("erin", other)))
    assert pair is None or (pair.similarity < SIM.THRESHOLD and not pair.flagged()), pair


def test_the_handouts_tests_and_adapters_are_not_part_of_a_submissions_code():
    assert SIM.counted("student/bpe.py") and SIM.counted("cs336_basics/train_bpe.py")
    for path in ("adapters.py", "tests/adapters.py", "tests/public/test_primitives.py", "harness/plugin.py",
                 ".venv/lib/x.py", "student/__pycache__/x.py", "student/notes.txt", "../x.py"):
        assert not SIM.counted(path), path


def test_a_copy_of_a_public_solution_is_flagged_against_it(tmp_path):
    public = tmp_path / "public"
    submission(public / "someone-on-github", {f"m{i}.py": code for i, code in enumerate(reference_modules().values())})
    docs = [SIM.document("frank", "submission", submission(tmp_path / "frank", {"bpe.py": disguise(
        (ROOT / "reference" / "train.py").read_text(encoding="utf-8"))}))]
    known = [SIM.document(s.student, "public", s.source) for s in discover(public)[0]]
    [pair] = SIM.compare(docs, known)
    assert (pair.a.name, pair.b.name, pair.b.kind) == ("frank", "someone-on-github", "public")
    assert pair.flagged() and pair.a_in_b > pair.b_in_a  # frank copied one part of a larger solution


@pytest.mark.slow
def test_batch_similarity_writes_the_csv_and_the_side_by_side_page(klass, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(klass["folder"]), "--out", str(out), "--similarity"],
        cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(out / "similarity.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {rows[0]["student_a"], rows[0]["b"]} == {"alice", "bob"} and rows[0]["flagged"] == "yes"
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert page.count("<pre>") == 2 * min(len(rows), SIM.TOP) and "<mark>" in page
    assert "similarity: 1 pairs flagged" in proc.stdout and not (out / "grades.csv").exists()
