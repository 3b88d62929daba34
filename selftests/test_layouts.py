"""Submissions laid out in different ways are graded alike (issue 11).

The same correct code (the reference solution copied under another name at test time) is
laid out three ways: the stubs' layout (``adapters.py`` + ``student/``), its own package with
``adapters.py`` edited, and a CS336-layout repository (``tests/adapters.py`` over
``cs336_basics/``, importing ``torch`` and ``jaxtyping``, which are not installed here). Each
is graded by ``python -m grader grade``, isolated and in-process, on a selection calling every
adapter function and touching every group but speed: it passes all of it in every layout;
the isolated CS336 repository (the layout furthest from the stubs: its own adapters file,
stand-ins for missing packages) is graded on the whole suite and gets full marks. A buggy
CS336 submission loses points only in the group its bug touches. Issue 18's link attacks
(``student`` linked to the harness's reference, hard links to its files, a link to the folder
holding the checkout)
score 0 or leak nothing. No grading leaves anything in its (private) temporary folder. All
gradings run in one module fixture, two at a time, the whole-suite one first.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.config import load_config
from grader.report import KNOWN_BUG_PREFIX
from harness.impl import ROOT, Implementation, LocalBackend
from mutants.catalogue import by_name

from .support import build_layout as build
from .prefetch import prefetched
from .support import LAYOUT_FIXTURES, GradeRun, folder_on_checkouts_file_system, implementation_of, record_adapter_calls, run_grade

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="isolated grading needs Linux"),
    pytest.mark.timeout(900),  # the first test waits for every grading of the module
]
SELECTION = [  # calls every adapter function (checked below) and touches every group but speed
    "tests/public/test_warmup.py::test_character_round_trip",
    "tests/public/test_warmup.py::test_byte_round_trip",
    "tests/public/test_warmup.py::test_word_tokenizers_do_not_share_a_vocabulary",
    "tests/public/test_warmup.py::test_compression_ratio_is_a_number",
    "tests/public/test_primitives.py::test_primitives_compose_into_bpe_on_aaabdaaabac",
    "tests/public/test_pretokenize.py::test_pretokenize_hand_worked_examples",
    "tests/public/test_special_tokens.py::test_split_on_special_tokens_hand_worked",
    "tests/public/test_train_bpe.py::test_hand_worked_merges",
    "tests/public/test_train_bpe.py::test_missing_file_is_a_value_error_or_file_not_found_naming_it",
    "tests/public/test_tokenizer_files.py::test_loading_saved_files_gives_the_same_ids",
    "tests/public/test_encode_iterable.py::test_encode_iterable_is_independent_of_chunk_boundaries",
]
CS336_SELECTION = [  # the CS336 policy's three parts, and one rule beyond CS336 (the vocab layout)
    "tests/cs336/test_cs336_contract.py",
    "tests/public/test_tokenizer.py::test_special_token_is_one_id_wherever_it_appears",
    "tests/public/test_encode_iterable.py::test_encode_iterable_of_file_lines_matches_tiktoken",
    "tests/public/test_train_bpe.py::test_vocab_layout_bytes_then_merges_then_specials",
]
CS336_VISIBLE_BUGS = ["ties_smallest_pair", "specials_left_in_training_text"]  # CS336's own tests fail these
# bugs CS336's suite misses on rules its handout or tests state (docs/cs336.md: the reasons where
# the verdicts differ): the CS336 part each loses points in, on a selection of that part
CS336_MISSED_BUGS = {
    "encode_iterable_chunks_independently": ("encode_iterable", [
        "tests/public/test_encode_iterable.py::test_encode_iterable_of_file_lines_matches_tiktoken",
        "tests/hidden/test_encode_iterable_hidden.py::test_encode_iterable_of_hidden_fixture_lines"]),
    "specials_not_added_to_vocab": ("tokenizer", [
        "tests/public/test_tokenizer.py::test_specials_missing_from_vocab_get_distinct_new_ids",
        "tests/public/test_tokenizer.py::test_special_token_is_one_id_wherever_it_appears"]),
}
# A real CS336 trainer's counting bug, catalogued (docs/cs336.md: weiddeng; mutants/catalogue/
# training.py works an example by hand): its merges differ from the reference's, the rule
# CS336's test_train_bpe states, so it must lose CS336 train_bpe points, its failures naming it
REAL_COUNTING_BUG = "pair_between_occurrences_subtracted_twice"
REAL_COUNTING_SELECTION = ["tests/cs336/test_cs336_contract.py::test_merges_and_vocab_match_the_reference_as_cs336_compares_them"]
LAYOUT_LINE = {
    "stubs": "layout: stubs layout (adapters.py, package student/)",
    "own": "layout: own package layout (adapters.py, package mycode/)",
    "cs336": "layout: CS336 layout (tests/adapters.py, package cs336_basics/)",
    "cs336_buggy": "layout: CS336 layout (tests/adapters.py, package cs336_basics/)",
}
def build_failing(dest: Path) -> Path:
    build("own", dest)
    (dest / "adapters.py").write_text("raise SystemExit('broken on purpose')\n")
    return dest


def build_stub_only(dest: Path) -> Path:
    """The handout's adapters.py alone: no student/ package beside it."""
    dest.mkdir(parents=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    return dest


def build_student_link(dest: Path) -> Path:
    """Issue 18's attack: ``student`` is a symbolic link to the harness's reference solution."""
    build_stub_only(dest)
    (dest / "student").symlink_to(ROOT / "reference", target_is_directory=True)
    return dest


def build_hard_links(dest: Path) -> Path:
    """Issue 18's attack: ``student/`` holds hard links to the reference solution's files."""
    build_stub_only(dest)
    (dest / "student").mkdir()
    for module in (ROOT / "reference").glob("*.py"):
        os.link(module, dest / "student" / module.name)
    return dest


LEAK = f"""

def run_merge(ids, pair, new_id):
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in ("grading.yaml", "tests/hidden/test_train_bpe_hidden.py"):
        try:
            with open(os.path.join(here, "up", {ROOT.name!r}, rel)) as f:
                raise ValueError("LEAKED " + f.read(3000))
        except OSError:
            pass
    return _impl.merge(ids, pair, new_id)
"""


def build_checkout_link(dest: Path) -> Path:
    """Issue 18's attack: a link to the folder holding the harness checkout, read by run_merge
    and shown in feedback if it were followed. Otherwise honest code."""
    build("stubs", dest)
    (dest / "up").symlink_to(ROOT.parent, target_is_directory=True)
    with open(dest / "adapters.py", "a") as f:
        f.write(LEAK)
    return dest


def build_inside_link(dest: Path) -> Path:
    """An honest submission whose ``student`` is a link to its own ``src/student``: kept."""
    build("stubs", dest)
    (dest / "src").mkdir()
    (dest / "student").rename(dest / "src" / "student")
    (dest / "student").symlink_to("src/student", target_is_directory=True)
    return dest


# (layout, isolated, whole suite): correct code, or a broken submission graded for leftovers
CASES = [
    ("stubs", True, False), ("stubs", False, False), ("own", True, False), ("own", False, False),
    ("cs336", True, True), ("cs336", False, False), ("cs336_buggy", True, False),
    *[(f"cs336:{bug}", True, False) for bug in [*CS336_VISIBLE_BUGS, *CS336_MISSED_BUGS, "specials_numbered_first", REAL_COUNTING_BUG]],
    ("failing", True, False), ("stub_only", True, False),
    ("student_link", True, False), ("hard_links", True, False), ("checkout_link", True, False),
]
BUILD = {"failing": build_failing, "stub_only": build_stub_only, "student_link": build_student_link,
         "hard_links": build_hard_links, "checkout_link": build_checkout_link}
ATTACK_TESTS = [
    "tests/public/test_primitives.py::test_primitives_compose_into_bpe_on_aaabdaaabac",
    "tests/public/test_primitives.py::test_merge_accepts_ids_beyond_a_byte",
]


RECORDED = ("stubs", False, False)  # its adapters.py also logs each call (in-process: to a file outside)
CALLS = "calls.txt"  # where, beside its results


def case_id(case) -> str:
    return f"{case[0]}-{'isolated' if case[1] else 'in-process'}{'-whole' if case[2] else ''}"


@prefetched
def graded(prefetch) -> dict:
    base = prefetch.mktemp("layouts")

    def run(case):
        layout, isolated, whole = case
        name = case_id(case)
        dest = base / name
        try:
            if layout == "hard_links":  # hard links to this checkout's files: made on its file system
                dest = folder_on_checkouts_file_system("bpe-hard-links-")
            sub = BUILD.get(layout, lambda d: build(layout, d))(dest / "submission")
        except OSError as err:  # e.g. no temporary folder on the checkout's file system
            if dest != base / name:
                shutil.rmtree(dest, ignore_errors=True)
            return f"{name} could not be built here: {err}"  # the reason to skip it
        bug = layout.partition(":")[2]
        tests = None if whole else (ATTACK_TESTS if layout in BUILD else CS336_MISSED_BUGS[bug][1] if bug in CS336_MISSED_BUGS
                                    else REAL_COUNTING_SELECTION if bug == REAL_COUNTING_BUG
                                    else CS336_SELECTION if bug else SELECTION)
        if case == RECORDED:
            record_adapter_calls(sub / "adapters.py", base / name / CALLS)
        try:
            # isolated, the start-up self-check (tested in test_venv) runs in the whole-suite grading
            # layouts graded like the other layouts, by grading.yaml
            config = "default" if layout in ("cs336", "cs336_buggy") and not whole else None
            # the known-bug replay only where a test reads the line it adds (the real counting bug,
            # named): it never changes a point, which is all the other cases check, and was a
            # third of the CPU of the bugs' gradings (the replay has its own tests, test_diagnosis.py)
            return run_grade(base / name, submission=sub, isolate=None if isolated else False, self_checked=isolated and not whole,
                             config=config, tests=tests, private_tmp=True, side_by_side=True, timeout=600,
                             diagnosis=bug == REAL_COUNTING_BUG)
        finally:
            if layout == "hard_links":  # its links raise the link count of this checkout's files
                shutil.rmtree(dest, ignore_errors=True)

    # two at a time on 2 cores, as `batch --jobs 2` grades (speed limits are 10x the reference
    # + 1 s, the reference timed in the same run); the whole-suite grading, the longest, first
    order = sorted(CASES, key=lambda c: not c[2])
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(order, pool.map(run, order)))


def given(graded: dict, case: tuple) -> GradeRun:
    out = graded[case]
    if isinstance(out, str):
        pytest.skip(out)
    return out


def missing_imports(path: Path) -> list[str]:
    """The top-level packages ``path`` imports, in order, that are not installed here (its
    stand-ins, as grading names them)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name.partition(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.partition(".")[0])
    local = {p.name for p in path.parent.parent.iterdir()}
    return [n for n in dict.fromkeys(names) if n not in local and importlib.util.find_spec(n) is None]


def _context(out: GradeRun) -> str:
    return out.context()


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c[0] in LAYOUT_LINE and c[0] != "cs336_buggy"], ids=case_id)
def test_correct_code_passes_every_adapters_tests_in_every_layout(graded, case):
    out = graded[case]
    data = out.results
    assert out.code == 0 and data.get("tests"), _context(out)
    most = sum(t["max_score"] for t in data["tests"])
    assert data["score"] == pytest.approx(most) and most > 0, _context(out)
    assert LAYOUT_LINE[case[0]] in out.stdout, _context(out)
    if case[0].startswith("cs336"):  # the packages stood in, named on one line (in no particular order)
        (line,) = [ln for ln in out.stdout.splitlines() if "not installed where grading runs: " in ln and "stand-in" in ln]
        named = line.partition("not installed where grading runs: ")[2].partition(" (")[0].split(", ")
        assert set(missing_imports(LAYOUT_FIXTURES / 'cs336' / 'tests' / 'adapters.py')) <= set(named), _context(out)


@pytest.mark.slow
def test_a_correct_cs336_repository_gets_full_marks_on_the_whole_suite(graded):
    (case,) = [c for c in CASES if c[2]]
    out = graded[case]
    assert out.code == 0 and out.results["score"] == pytest.approx(100), _context(out)
    assert "partial grade" not in out.stdout, _context(out)


@pytest.mark.slow
def test_a_correct_cs336_repository_is_graded_by_the_cs336_policy_and_passes_beyond_it_too(graded):
    (case,) = [c for c in CASES if c[2]]
    out = graded[case]
    assert "policy: grading-cs336.yaml" in out.stdout, _context(out)
    assert set(out.group_points()) == {"speed", "train_bpe", "tokenizer", "encode_iterable", "beyond_cs336"}, _context(out)
    assert out.group_points()["beyond_cs336"] == [0, 0], _context(out)
    beyond = [t for t in out.results["tests"] if t["tags"][0] == "beyond_cs336"]
    assert beyond and all(t["status"] == "passed" for t in beyond), _context(out)


@pytest.mark.slow
@pytest.mark.parametrize("bug", CS336_VISIBLE_BUGS)
def test_a_bug_cs336_catches_loses_points_in_cs336_train_bpe_only(graded, bug):
    out = graded[(f"cs336:{bug}", True, False)]
    assert "policy: grading-cs336.yaml" in out.stdout, _context(out)
    for group, (got, most) in out.group_points().items():
        if group == "train_bpe":
            assert got < most, f"{group}: {got}/{most}\n{_context(out)}"
        else:
            assert got == pytest.approx(most), f"{group}: {got}/{most}\n{_context(out)}"


@pytest.mark.slow
@pytest.mark.parametrize("bug", CS336_MISSED_BUGS)
def test_a_bug_cs336s_suite_misses_on_a_rule_it_states_loses_points_in_that_part(graded, bug):
    out = graded[(f"cs336:{bug}", True, False)]
    part = CS336_MISSED_BUGS[bug][0]
    got, most = out.group_points()[part]
    assert got < most, f"{part}: {got}/{most}\n{_context(out)}"
    assert all(g == pytest.approx(m) for name, (g, m) in out.group_points().items() if name not in (part, "beyond_cs336")), _context(out)


@pytest.mark.slow
def test_a_real_trainers_counting_bug_loses_cs336_train_bpe_points_and_is_named(graded):
    out = graded[(f"cs336:{REAL_COUNTING_BUG}", True, False)]
    assert "policy: grading-cs336.yaml" in out.stdout, _context(out)
    assert list(out.group_points()) == ["train_bpe"], _context(out)
    got, most = out.group_points()["train_bpe"]
    assert most > 0 and got < most, f"train_bpe: {got}/{most}\n{_context(out)}"
    failed = [t for t in out.results["tests"] if t["status"] == "failed"]
    named = KNOWN_BUG_PREFIX + by_name(REAL_COUNTING_BUG).description
    assert failed and all(named in t["output"] for t in failed), _context(out)
    # the reference, graded on the whole suite in the same layout, passes these same entries
    whole = graded[("cs336", True, True)]
    same = [t for t in whole.results["tests"] if t["name"] in {f["name"] for f in failed}]
    assert len(same) == len(failed) and all(t["status"] == "passed" for t in same), _context(whole)


@pytest.mark.slow
def test_a_bug_only_this_assignments_rules_catch_costs_nothing_and_is_shown_beyond_cs336(graded):
    out = graded[("cs336:specials_numbered_first", True, False)]
    data = out.results
    most = sum(t["max_score"] for t in data["tests"])
    assert most > 0 and data["score"] == pytest.approx(most), _context(out)
    failed = [t for t in data["tests"] if t["status"] == "failed"]
    assert [t["tags"][0] for t in failed] == ["beyond_cs336"], _context(out)
    assert failed[0]["name"].startswith("Beyond CS336") and "vocab layout" in failed[0]["name"], failed[0]["name"]


@pytest.mark.slow
def test_the_selection_calls_every_adapter_function_and_touches_every_group(graded):
    out = graded[RECORDED]
    adapters = {n.name for n in ast.parse((ROOT / "adapters.py").read_text()).body if isinstance(n, ast.FunctionDef)}
    called = set((out.out / CALLS).read_text().split()) if (out.out / CALLS).exists() else set()
    assert len(adapters) >= 12 and adapters <= called, f"never called by SELECTION: {sorted(adapters - called)}"
    groups = {g.name for g in load_config(ROOT / "grading.yaml").groups} - {"speed"}
    assert groups <= set(out.group_points()), f"no test of SELECTION in: {sorted(groups - set(out.group_points()))}"


@pytest.mark.slow
def test_a_buggy_cs336_submission_loses_points_only_where_its_bug_is(graded):
    out = graded[("cs336_buggy", True, False)]
    context = out.context()
    for group, (got, most) in out.group_points().items():
        if group == "train_bpe":
            assert got < most, f"{group}: {got}/{most}\n{context}"
        else:
            assert got == pytest.approx(most), f"{group}: {got}/{most}\n{context}"
    assert "train_bpe" in out.group_points(), context


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_tracebacks_name_paths_relative_to_the_submission(tmp_path, isolate):
    sub = build("cs336", tmp_path / "sub")
    (sub / "cs336_basics" / "bpe_tokenizer.py").write_text(
        "class BPETokenizer:\n    def __init__(self, vocab, merges, special_tokens=None):\n"
        "        raise RuntimeError('broken on purpose')\n"
    )
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", sub) if isolate else LocalBackend("student", sub)
    try:
        impl = Implementation(backend)
        with pytest.raises(RuntimeError) as err:
            impl.get_tokenizer({0: b"a"}, [], None)
        notes = "\n".join(getattr(err.value, "__notes__", []))
        if isolate:
            assert 'File "cs336_basics/bpe_tokenizer.py", line 3' in notes, notes
            assert 'File "tests/adapters.py"' in notes, notes
            assert "bpe-worker-" not in notes and str(tmp_path) not in notes, notes
    finally:
        if isolate:
            backend.close()


def test_an_adapters_file_that_does_not_import_names_itself_relative_to_the_submission(tmp_path):
    sub = tmp_path / "sub"
    (sub / "mycode").mkdir(parents=True)
    (sub / "mycode" / "__init__.py").write_text("X = 1\n\n\nraise ValueError('at import')\n")
    (sub / "adapters.py").write_text("import os\n\nimport mycode\n")
    from harness.impl import BrokenImplementation
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", sub)
    try:
        with pytest.raises(BrokenImplementation) as err:
            Implementation(backend).run_merge([1], (1, 2), 3)
    finally:
        backend.close()
    assert str(err.value) == "adapters.py could not be imported: ValueError in mycode/__init__.py, line 4: at import"


def test_a_cs336_adapters_file_lacking_adapters_counts_them_as_not_implemented(tmp_path):
    sub = build("cs336", tmp_path / "sub")
    text = (sub / "tests" / "adapters.py").read_text()
    (sub / "tests" / "adapters.py").write_text(text.split("def get_character_tokenizer")[0] + (
        "def get_tokenizer(vocab, merges, special_tokens=None):\n    return BPETokenizer(vocab, merges, special_tokens)\n"
    ))
    impl = Implementation(LocalBackend("student", sub))
    with pytest.raises(NotImplementedError, match="adapters.run_merge is missing"):
        impl.run_merge([1, 2], (1, 2), 3)
    assert impl.get_tokenizer({i: bytes([i]) for i in range(256)}, [], None).encode("hi") == [104, 105]


def test_stand_ins_stay_out_of_sys_modules_once_the_submission_is_loaded(tmp_path):
    # pytest.approx looks numpy up in sys.modules: a stand-in there would break it
    impl = Implementation(LocalBackend("student", build("cs336", tmp_path / "sub")))
    assert impl.get_tokenizer({i: bytes([i]) for i in range(256)}, [], None).encode("hi") == [104, 105]
    assert not [n for n, m in sys.modules.items() if "stand-in" in repr(getattr(m, "__getattr__", ""))
                or type(m).__name__ == "StandInModule"]
    assert 0.1 + 0.2 == pytest.approx(0.3)


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_cs336_adapters_file_may_import_its_neighbours_relatively(tmp_path, isolate):
    # CS336's tests/ is a package (its tests import `.adapters`); students' adapters import
    # helpers beside them (`from .common import ...`), two submissions in a row each their own
    results = []
    for n in (1, 2):
        sub = build("cs336", tmp_path / f"sub{n}")
        (sub / "tests" / "common.py").write_text(f"MARK = 'submission {n}'\n")
        with open(sub / "tests" / "adapters.py", "a") as f:
            f.write("\n\nfrom .common import MARK\n\n\ndef run_pretokenize(text):\n    return [MARK]\n")
        from sandbox.backend import WorkerBackend

        backend = WorkerBackend("student", sub) if isolate else LocalBackend("student", sub)
        try:
            results += Implementation(backend).run_pretokenize("x")
        finally:
            if isolate:
                backend.close()
    assert results == ["submission 1", "submission 2"]


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_a_cs336_repository_with_its_package_under_src_imports_as_installed(tmp_path, isolate):
    sub = build("cs336", tmp_path / "sub")
    (sub / "src").mkdir()
    (sub / "cs336_basics").rename(sub / "src" / "cs336_basics")
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", sub) if isolate else LocalBackend("student", sub)
    try:
        assert Implementation(backend).get_tokenizer({i: bytes([i]) for i in range(256)}, [], None).encode("hi") == [104, 105]
        if not isolate:  # this submission's package, not one an earlier test left importable
            assert Path(sys.modules["cs336_basics"].__file__).resolve().is_relative_to((sub / "src").resolve())
    finally:
        if isolate:
            backend.close()


def test_code_that_uses_a_missing_package_fails_naming_it(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adapters.py").write_text(
        "import torch\nfrom jaxtyping import Int\n\n\ndef run_merge(ids: Int[torch.Tensor, 'n'], pair, new_id):\n"
        "    return torch.tensor(ids).tolist()\n"
    )
    impl = Implementation(LocalBackend("student", sub))
    with pytest.raises(ModuleNotFoundError, match="uses 'torch', which is neither in your submission nor installed"):
        impl.run_merge([1, 2], (1, 2), 3)


@pytest.mark.parametrize("use", [
    "logging.getLogger('selftest.rich').info('merging')",  # a handler whose level is compared
    "len(HANDLER)", "list(HANDLER)", "HANDLER + 1", "1 < HANDLER.level", "int(HANDLER.level)",
], ids=["logging", "len", "iter", "add", "compare", "int"])
def test_an_object_a_missing_package_made_at_import_fails_naming_the_package_when_used(tmp_path, use):
    """What a stand-in made while the submission was imported (a real case: a ``rich``
    handler added to a logger at import, the logger used while training) fails, when the
    code runs, naming the package, never with a TypeError about a harness class."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adapters.py").write_text(
        "import logging\nfrom bpe_selftest_never_installed.logging import RichHandler\n\n"
        "HANDLER = RichHandler(level='INFO')\nlogger = logging.getLogger('selftest.rich')\n"
        "logger.setLevel('INFO')\nlogger.addHandler(HANDLER)\nlogger.propagate = False\n\n\n"
        f"def run_merge(ids, pair, new_id):\n    {use}\n    return ids\n"
    )
    impl = Implementation(LocalBackend("student", sub))
    with pytest.raises(ModuleNotFoundError, match="uses 'bpe_selftest_never_installed', which is neither in your submission"):
        impl.run_merge([1, 2], (1, 2), 3)


@pytest.mark.parametrize("package", ["numpy", "bpe_selftest_never_installed"])
def test_stand_ins_of_an_in_process_submission_stay_out_of_the_test_process(tmp_path, package):
    """The stand-ins serve the submission's import only: afterwards the test process imports
    (and ``pytest.approx``, which looks for ``numpy`` in ``sys.modules``) see what is installed."""
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here: nothing to stand in")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adapters.py").write_text(
        f"import {package}\nimport {package}.typing as typing\n\n\ndef run_merge(ids, pair, new_id):\n"
        f"    return {package}.array(ids).tolist()\n"
    )
    impl = Implementation(LocalBackend("student", sub))
    with pytest.raises(ModuleNotFoundError, match=f"uses '{package}', which is neither in your submission"):
        impl.run_merge([1, 2], (1, 2), 3)  # the submission keeps its stand-in
    assert [m for m in sys.modules if m.partition(".")[0] == package] == []
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(package)
    assert [0.1 + 0.2, 1.0] == pytest.approx([0.3, 1.0])


class _Raises:
    """The reference for existing files; for a missing one, raises ``error``."""

    def __init__(self, error: type) -> None:
        self.error = error
        self.reference = Implementation(LocalBackend("reference"))

    def run_train_bpe(self, path, vocab_size, specials):
        if os.path.exists(path):
            return self.reference.run_train_bpe(path, vocab_size, specials)
        if self.error is FileNotFoundError:
            open(path, "rb")  # as Python itself says it: "[Errno 2] No such file or directory: '...'"
        raise self.error(f"training file not found: {path}")


@pytest.mark.parametrize("error, accepted", [(ValueError, True), (FileNotFoundError, True), (RuntimeError, False)])
def test_a_missing_training_file_may_raise_value_error_or_file_not_found(tmp_path, error, accepted):
    from tests.public.test_train_bpe import test_missing_file_is_a_value_error_or_file_not_found_naming_it as check

    if accepted:
        check(_Raises(error), tmp_path)
    else:
        with pytest.raises(RuntimeError):
            check(_Raises(error), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_grading_leaves_nothing_in_its_temporary_folder(graded, case):
    out = given(graded, case)
    assert out.code == 0 and out.tests, out.context()
    assert out.left == [], f"left behind in TMPDIR: {out.left[:10]}"


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["failing", "stub_only", "student_link", "hard_links"])
def test_a_broken_empty_or_linked_submission_scores_zero(graded, layout):
    out = given(graded, (layout, True, False))
    assert out.results["tests"] and out.results["score"] == 0, out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("layout, note", [
    ("student_link", "student: a symbolic link to outside the submission, left out"),
    ("hard_links", "student/__init__.py: a hard link to a file outside the submission, left out"),
    ("checkout_link", "up: a symbolic link to outside the submission, left out"),
])
def test_what_the_copy_left_out_is_said_in_the_output(graded, layout, note):
    out = given(graded, (layout, True, False))
    assert "left out of the copy graded: " in out.stdout and note in out.stdout, out.stdout


@pytest.mark.slow
def test_a_link_to_the_checkout_folder_leaks_nothing_and_costs_honest_code_nothing(graded):
    out = given(graded, ("checkout_link", True, False))
    text = json.dumps(out.results)
    assert "LEAKED" not in text and "hidden_visibility" not in text, text[:3000]
    assert out.results["score"] == pytest.approx(sum(t["max_score"] for t in out.results["tests"]))


def test_a_link_inside_the_submission_is_kept(tmp_path):
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", build_inside_link(tmp_path / "sub"))
    try:
        assert Implementation(backend).run_merge([1, 2, 1, 2], (1, 2), 7) == [7, 7]
    finally:
        backend.close()


def test_an_adapters_only_submission_loads_and_runs_isolated(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adapters.py").write_text(
        "def run_merge(ids, pair, new_id):\n"
        "    out, i = [], 0\n"
        "    while i < len(ids):\n"
        "        if tuple(ids[i:i + 2]) == tuple(pair):\n"
        "            out.append(new_id)\n"
        "            i += 2\n"
        "        else:\n"
        "            out.append(ids[i])\n"
        "            i += 1\n"
        "    return out\n"
    )
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("student", sub)
    try:
        impl = Implementation(backend)
        assert impl.run_merge([1, 2, 1, 2, 3], (1, 2), 9) == [9, 9, 3]
        with pytest.raises(NotImplementedError, match="adapters.run_pretokenize is missing"):
            impl.run_pretokenize("x")
    finally:
        backend.close()
    assert backend.layout.kind == "adapters only"


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
@pytest.mark.parametrize("excluded", [True, False], ids=["requires-a-newer-python", "admits-this-python"])
def test_an_import_failure_names_a_requires_python_that_excludes_the_grading_python(tmp_path, isolate, excluded):
    # CS336's 2026 starter asks for Python >=3.12; its code may use 3.12's syntax (`type X = ...`), a
    # SyntaxError under 3.11 for that reason alone. Here: a syntax error in any Python, and a
    # requires-python one minor version past the running one (or one that admits it)
    from harness.impl import BrokenImplementation
    from sandbox.backend import WorkerBackend

    major, minor, micro = sys.version_info[:3]
    wanted = f">={major}.{minor + 1}" if excluded else f">={major}.{minor}"
    sub = tmp_path / "sub"
    (sub / "mycode").mkdir(parents=True)
    (sub / "mycode" / "__init__.py").write_text("def broken(:\n    pass\n")
    (sub / "adapters.py").write_text("import mycode\n")
    (sub / "pyproject.toml").write_text(f'[project]\nname = "mycode"\nversion = "1"\nrequires-python = "{wanted}"\n')
    backend = WorkerBackend("student", sub) if isolate else LocalBackend("student", sub)
    try:
        with pytest.raises(BrokenImplementation) as err:
            Implementation(backend).run_merge([1], (1, 2), 3)
    finally:
        if isolate:
            backend.close()
    message = str(err.value)
    assert message.startswith("adapters.py could not be imported: SyntaxError in "), message
    hint = (f"grading runs Python {major}.{minor}.{micro}; the submission's pyproject.toml requires Python {wanted}: "
            "code that needs a newer Python fails here for that reason alone; grade with a Python it accepts")
    assert (hint in message) is excluded, message


def test_tracebacks_name_the_standard_library_and_installed_packages_without_the_machines_paths(tmp_path):
    sub = build("cs336", tmp_path / "sub")
    (sub / "cs336_basics" / "bpe_tokenizer.py").write_text(
        "import json\n\nimport regex\n\n\nclass BPETokenizer:\n    def __init__(self, vocab, merges, special_tokens=None):\n"
        "        regex.compile('(') if special_tokens else json.loads('{')\n"
    )
    shown = []
    with implementation_of(sub, True) as impl:
        for specials in (None, ["<s>"]):
            with pytest.raises(Exception) as err:
                impl.get_tokenizer({0: b"a"}, [], specials)
            shown.append("\n".join(getattr(err.value, "__notes__", [])))
    assert 'File "<python>/json/decoder.py"' in shown[0], shown[0]
    assert 'File "<site-packages>/regex/' in shown[1], shown[1]
    for notes in shown:
        assert 'File "cs336_basics/bpe_tokenizer.py", line 8' in notes, notes
        assert not re.search(r'File "/', notes), notes  # no absolute path of the grading machine
