"""``python -m grader handout``: the repository students receive, and the autograder bundles.

``export_handout(out)`` writes the student repository: the ``student/`` stubs,
``adapters.py``, the public tests with the support modules they import, the
student-side ``harness/`` those need to run under plain ``pytest``, the public fixtures, the public part
of ``grading.yaml``, a ``pyproject.toml`` with ``grading.lock`` (the pinned versions its README
and workflow install), a README, and a GitHub Classroom workflow. What
goes in is computed from imports and from ``grading.yaml``, never listed by hand, and the
export is refused if any function body of ``reference/`` appears in it, or if any function
or class it ships outside ``student/``, tried as the student's implementation, reproduces
a graded function of the reference (:mod:`grader.solution_search`).

The Classroom workflow comes from :mod:`grader.classroom`; ``--gradescope`` writes
Gradescope's autograder zip (:mod:`grader.gradescope`); both share :mod:`grader.exports`.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml

from harness import ROOT
from .classroom import PublicGroup, classroom_workflow, public_groups
from .config import Config, ConfigError, load_config
from .exports import LOCK, PYTHON_VERSION, HandoutError, clear_folder, locked, python_version, render, replaceable, student_parts
from .exports import dependencies as _dependencies
from .formats import why_not
from .gradescope import export_gradescope
from .policies import NAMED_POLICIES, default_policy, policy_path
from .solution_search import describe, solution_functions
from .grade import suite_plugin_options

# the packages students get: the student-side layer of the harness beside the public tests
# and fixtures; the sandbox and the grader (the layers above it) are never shipped
STUDENT_SIDE = ("harness", "tests", "fixtures")
INSTRUCTOR_SIDE = ("sandbox", "grader")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


# ---- what the public tests need --------------------------------------------------------


def _imports(path: Path) -> set[str]:
    """Absolute module names a Python file imports (anywhere in it); relative imports are
    resolved against the file's package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                base_name = ".".join(p for p in base if p)
                mod = f"{base_name}.{node.module}" if node.module else base_name
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import module`
    return names


def _module_file(root: Path, name: str) -> Path | None:
    parts = name.split(".")
    as_file = root.joinpath(*parts).with_suffix(".py")
    if as_file.is_file():
        return as_file
    as_pkg = root.joinpath(*parts, "__init__.py")
    return as_pkg if as_pkg.is_file() else None


def public_test_files(root: Path = ROOT) -> list[Path]:
    return sorted((root / "tests" / "public").glob("test_*.py"))


def support_files(root: Path = ROOT) -> list[Path]:
    """Every repository module the public tests and ``tests/conftest.py`` need, found by
    following their imports into the student-side packages (:data:`STUDENT_SIDE`), plus the packages' ``__init__.py`` files and the plugin that
    ``pyproject.toml`` loads."""
    start = [root / "tests" / "conftest.py", *public_test_files(root), root / "harness" / "plugin.py"]
    seen: set[Path] = set()
    todo = list(start)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path):
            top = name.split(".")[0]
            if top not in STUDENT_SIDE:
                continue
            if name.startswith("tests.hidden") or name.startswith("fixtures.hidden"):
                continue
            target = _module_file(root, name)
            if target is not None:
                todo.append(target)
    packages = {p.parent / "__init__.py" for p in seen}
    return sorted(p for p in seen | {q for q in packages if q.is_file()} if "hidden" not in p.relative_to(root).parts)


def public_fixture_files(root: Path = ROOT) -> list[Path]:
    """Data files directly in ``fixtures/`` (the public corpora); never ``fixtures/hidden``."""
    return sorted(p for p in (root / "fixtures").iterdir() if p.is_file() and p.suffix != ".pyc")


_COLLECT = r"""
import json, sys, pytest
class Collector:
    items = {}
    def pytest_collection_modifyitems(self, items):
        Collector.items = {i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in items}
pytest.main(["--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[Collector()])
sys.stdout.flush()
print("\n@@COLLECTED@@" + json.dumps(Collector.items))
"""


def collect(root: Path, *paths: str) -> dict[str, set[str]]:
    """Node id -> marker names of the tests under ``paths`` (collected in a subprocess)."""
    proc = subprocess.run(  # with a grading's plugins only, as grade runs them (about 1 s less start-up)
        [sys.executable, "-c", _COLLECT, *suite_plugin_options(), *paths], cwd=root, capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    marker = "@@COLLECTED@@"
    line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith(marker)), None)
    if line is None:
        raise HandoutError(f"could not collect {' '.join(paths)}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return {k: set(v) for k, v in json.loads(line[len(marker):]).items()}


# ---- the guarantee: no solution code ---------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _segments(source: str):
    """``ast.get_source_segment`` for ``source`` without splitting the whole source again
    for every node (quadratic: seconds for the reference)."""
    data = source.encode("utf-8")
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]

    def segment(node: ast.AST) -> str:
        begin = starts[node.lineno - 1] + node.col_offset
        return data[begin : starts[node.end_lineno - 1] + node.end_col_offset].decode("utf-8")

    return segment


def reference_bodies(reference: Path) -> list[tuple[str, str]]:
    """(``file:function``, normalised body) of every function in ``reference/*.py`` whose
    body has 2+ statements, also without its docstring (when 2+ statements remain)."""
    out = []
    for path in sorted(reference.glob("*.py")):
        src = path.read_text(encoding="utf-8")
        segment = _segments(src)
        for node in ast.walk(ast.parse(src)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                variants = [body, body[1:]]
            else:
                variants = [body]
            for stmts in variants:
                if len(stmts) >= 2:
                    out.append((f"{path.name}:{node.name}", _norm("\n".join(segment(s) for s in stmts))))
    return out


def solution_leaks(tree: Path, reference: Path = ROOT / "reference") -> list[str]:
    """``file: reference function`` for every reference body found in a file under ``tree``
    (text files; zip members are not opened)."""
    bodies = reference_bodies(reference)
    leaks = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        try:
            text = _norm(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
        leaks += [f"{path.relative_to(tree)}: body of {where}" for where, body in bodies if body in text]
    return leaks


# ---- generated files -------------------------------------------------------------------


def public_grading_yaml(config: Config, groups: list[PublicGroup]) -> str:
    """grading.yaml without what only grading needs (hidden visibility and output policy,
    seed, isolation limits, overrides that only concern hidden tests)."""
    out_groups = []
    for g, pg in zip(config.groups, groups):
        item: dict = {"name": g.name, "title": g.title, "points": g.points}
        if g.select:
            item["select"] = list(g.select)
        if g.markers:
            item["markers"] = list(g.markers)
        if g.timeout:
            item["timeout"] = g.timeout
        overrides = []
        for o in g.overrides:
            if any(fnmatch.fnmatchcase(n, p) for n in pg.tests for p in o.select):
                ov: dict = {"select": list(o.select)}
                if o.weight != 1.0:
                    ov["weight"] = o.weight
                overrides.append(ov)
        if overrides:
            item["overrides"] = overrides
        item["public_tests"] = len(pg.tests)
        out_groups.append(item)
    doc = {"total": config.total, "timeout": config.timeout,
           "speed": {"multiple": config.speed.multiple, "floor": config.speed.floor}, "groups": out_groups}
    if config.total is None:
        del doc["total"]
    header = (
        "# How the assignment is graded: groups of tests and their points (generated from the course's\n"
        "# grading.yaml). Grading runs these public tests and more hidden tests of the same kinds;\n"
        "# `public_tests` counts the tests you have in tests/public. A group's points are shared among\n"
        "# its tests (by weight), and only passing tests score.\n"
    )
    return header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def student_addopts(addopts: str) -> str:
    """``addopts`` without the ``-p`` plugins the handout does not ship (those of the
    sandbox, the grader and the mutants): only :data:`STUDENT_SIDE` packages' load.
    ``student_addopts("-p harness.plugin -p grader.grading_plugin -q")`` is ``"-p harness.plugin -q"``."""
    args, out, i = shlex.split(addopts), [], 0
    while i < len(args):
        option = args[i : i + 2] if args[i] == "-p" else args[i : i + 1]
        plugin = option[-1].removeprefix("-p") if option[0].startswith("-p") else None
        if plugin is None or plugin.startswith("no:") or plugin.split(".")[0] in STUDENT_SIDE:
            out += option
        i += len(option)
    return shlex.join(out)


def handout_pyproject(root: Path, python: str = PYTHON_VERSION) -> str:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    ini = dict(data.get("tool", {}).get("pytest", {}).get("ini_options", {}))
    if "addopts" in ini:
        ini["addopts"] = student_addopts(ini["addopts"])
    deps = ",\n".join(f"    {json.dumps(d)}" for d in _dependencies(root))
    ini_lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in ini.items())
    return f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "bpe-assignment"
version = "1.0.0"
description = "Byte-level BPE tokenization assignment"
requires-python = ">={python}"
dependencies = [
{deps},
]

[tool.setuptools]
packages = ["student", "harness"]

[tool.pytest.ini_options]
{ini_lines}
"""


def backward_dependencies(root: Path = ROOT) -> list[str]:
    """One sentence per function a part's module imports from a LATER part's module (the
    order "part by part" does not hold there: that function must be written first)."""
    parts = student_parts(root)
    notes = []
    for module, part in sorted(parts.items(), key=lambda kv: (kv[1], kv[0])):
        tree = ast.parse((root / "student" / f"{module}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and parts.get(node.module or "", 0) > part:
                names = ", ".join(f"`{a.name}`" for a in node.names)
                notes.append(
                    f"Part {part} (`student/{module}.py`) uses {names} from Part {parts[node.module]} "
                    f"(`student/{node.module}.py`): write {names} first."
                )
    return notes


def handout_readme(groups: list[PublicGroup], config: Config, python: str = PYTHON_VERSION) -> str:
    rows = ["| group | points | public tests | how to run them |", "| --- | ---: | ---: | --- |"]
    for g in groups:
        files = sorted({n.split("::", 1)[0] for n in g.tests})
        run = "`pytest " + " ".join(files) + "`" if files else "(graded by hidden tests only)"
        rows.append(f"| {g.title} | {g.points:g} | {len(g.tests)} | {run} |")
    total = config.total if config.total is not None else sum(g.points for g in groups)
    return render(
        "handout_README.md",
        groups_table="\n".join(rows), total=f"{total:g}", python=python,
        classroom_total=f"{sum(g.points for g in groups if g.tests):g}",
        dependencies="\n".join(f"- {n}" for n in backward_dependencies()) or "Each part only uses earlier ones.",
        multiple=f"{config.speed.multiple:g}", floor=f"{config.speed.floor:g}",
    )


# ---- export ----------------------------------------------------------------------------


def _copy(root: Path, path: Path, out: Path) -> None:
    dest = out / path.relative_to(root)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dest)


def export_handout(out: Path, config: Config, root: Path = ROOT, force: bool = False, python: str = PYTHON_VERSION) -> list[str]:
    """Write the student repository to ``out`` (must not exist or be empty, unless ``force``)
    under the loaded grading policy ``config``; returns the notes worth printing (e.g. public
    tests that need the reference and will skip). With ``force`` an existing handout is
    replaced, once the new one is built and checked: everything in ``out`` but its ``.git``
    is removed (:func:`grader.exports.replaceable` says which folders it refuses). ``python``:
    the oldest Python it asks for (``requires-python``, README, Classroom workflow)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise HandoutError(f"{out} is a file; choose a folder")
    replace = out.exists() and any(out.iterdir())
    if replace and not force:
        raise HandoutError(f"{out} exists and is not empty; choose a new folder, or add --force to replace it (its .git is kept)")
    if replace:
        replaceable(out, root)
    collected = collect(root, "tests/public")
    groups = public_groups(config, collected)
    notes = []
    needs_ref = sorted(
        n for n in collected
        if re.search(r"\bdef\s+%s\s*\([^)]*\bref\b" % re.escape(n.split("::")[1].split("[")[0]),
                     (root / n.split("::")[0]).read_text(encoding="utf-8"))
    )
    if needs_ref:
        notes.append(f"{len(needs_ref)} public tests use the `ref` fixture and will skip in the handout: {needs_ref[:5]}")
    with tempfile.TemporaryDirectory(prefix="bpe-handout-") as tmp:
        stage = Path(tmp) / "handout"
        stage.mkdir()
        shutil.copyfile(root / "adapters.py", stage / "adapters.py")
        shutil.copytree(root / "student", stage / "student", ignore=SKIP)
        for path in [*public_test_files(root), *support_files(root), *public_fixture_files(root)]:
            _copy(root, path, stage)
        (stage / "grading.yaml").write_text(public_grading_yaml(config, groups), encoding="utf-8")
        (stage / "pyproject.toml").write_text(handout_pyproject(root, python), encoding="utf-8")
        locked(root)  # a lock that pins nothing exactly stops the export
        shutil.copyfile(root / LOCK, stage / LOCK)  # the pinned environment: the README's and the workflow's install
        (stage / "README.md").write_text(handout_readme(groups, config, python), encoding="utf-8")
        (stage / ".gitignore").write_text("__pycache__/\n*.egg-info/\n.pytest_cache/\n.hypothesis/\n.venv/\n", encoding="utf-8")
        workflow = stage / ".github" / "workflows" / "classroom.yml"
        workflow.parent.mkdir(parents=True)
        workflow.write_text(classroom_workflow(groups, collected, python), encoding="utf-8")
        forbidden = [p for p in ("reference", "mutants", "tests/hidden", "fixtures/hidden") if (stage / p).exists()]
        if forbidden:
            raise HandoutError(f"the handout would contain {forbidden}")
        leaks = solution_leaks(stage, root / "reference")
        if leaks:
            raise HandoutError("the handout would contain solution code:\n  " + "\n  ".join(leaks))
        tried, solving = solution_functions(stage)
        if solving:
            raise HandoutError("the handout would ship working solutions outside student/:\n  " + describe(solving))
        notes.append(f"function search: none of the {tried} functions and classes shipped outside student/ "
                     f"reproduces a graded function")
        if replace:
            clear_folder(out)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(stage, out, dirs_exist_ok=True)
    return notes


def main(out: Path | None, gradescope: Path | None, config: Path | None = None, force: bool = False, python: str = PYTHON_VERSION) -> int:
    try:
        python = "{}.{}".format(*python_version(python))  # a wrong one stops it before anything is written
        if out is not None:
            for note in export_handout(out, load_config(policy_path(config)), force=force, python=python):
                print(f"handout: note: {note}")
            files = sorted(p.relative_to(out).as_posix() for p in Path(out).rglob("*") if p.is_file())
            print(f"handout: wrote {len(files)} files to {out}")
        if gradescope is not None:
            default_policy()  # refuse to bundle a broken policy
            for path in [ROOT / name for name in NAMED_POLICIES.values()] + [policy_path(config)]:
                load_config(path)  # and the one it grades by (--config), whatever the upload's layout
            names = export_gradescope(gradescope, python=python, policy=policy_path(config))
            print(f"handout: wrote the Gradescope autograder {gradescope} ({len(names)} files)")
    except (HandoutError, ConfigError, OSError) as err:  # OSError: where it writes cannot be made or written
        text = f"cannot write {err.filename or out or gradescope} ({why_not(err)})" if isinstance(err, OSError) else err
        print(f"handout: {text}", file=sys.stderr)
        return 2 if isinstance(err, ConfigError) else 1  # an invalid grading.yaml: as grade says it
    return 0
