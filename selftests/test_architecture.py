"""The layers import one way: read from the source with ``ast``, the graph of imports between
the top-level packages has no cycle, the student-side harness imports neither the sandbox,
the grader nor the mutants, and the sandbox neither the grader nor the mutants. Every import
statement counts, also one inside a function; a relative import stays in its own package.
Outside the tests, no module is over 400 lines and no function over 60 (docstring not counted).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "sandbox", "grader", "mutants", "reference", "tests", "bench", "student")
# package -> packages it must never import (the layers above it)
FORBIDDEN = {"harness": {"sandbox", "grader", "mutants"}, "sandbox": {"grader", "mutants"}}

MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 60
SIZED = ("harness", "sandbox", "grader", "mutants", "reference", "bench", "student", "fixtures")  # not tests/selftests

Graph = dict[str, dict[str, list[str]]]  # package -> imported package -> "file:line" of each import


def imported_packages(path: Path) -> list[tuple[str, int]]:
    """(top-level package, line) of every absolute import in a Python file, anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name.partition(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.partition(".")[0], node.lineno))
    return found


def import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> Graph:
    """Which of ``packages`` each of them imports, and where."""
    graph: Graph = {p: {} for p in packages}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            for target, line in imported_packages(path):
                if target in graph and target != package:
                    graph[package].setdefault(target, []).append(f"{path.relative_to(root)}:{line}")
    return graph


def find_cycle(graph: Graph) -> list[str] | None:
    """A cycle of packages (``[a, b, a]``), or None: depth-first search with colours."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, {}):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in graph:
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def layer_violations(graph: Graph, forbidden: dict[str, set[str]] = FORBIDDEN) -> list[str]:
    """``a -> b at file:line`` for each import of a package ``a`` must not import."""
    return [
        f"{package} -> {target} at {where}"
        for package, banned in forbidden.items()
        for target in sorted(banned & set(graph.get(package, {})))
        for where in graph[package][target]
    ]


def describe_cycle(graph: Graph, cycle: list[str]) -> str:
    return "; ".join(f"{a} -> {b} ({graph[a][b][0]})" for a, b in zip(cycle, cycle[1:]))


@pytest.fixture(scope="module")
def repository_graph() -> Graph:
    return import_graph(ROOT)


def test_import_graph_between_packages_has_no_cycle(repository_graph):
    cycle = find_cycle(repository_graph)
    assert cycle is None, f"import cycle between packages: {describe_cycle(repository_graph, cycle)}"


def test_lower_layers_import_no_layer_above_them(repository_graph):
    assert layer_violations(repository_graph) == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


PLANTED = {
    "harness/__init__.py": "",
    "harness/plugin.py": """
        from . import impl  # relative: its own package
        def make():
            import sandbox.isolation  # function-level: counts
            return sandbox.isolation
        """,
    "harness/impl.py": "import os\n",
    "sandbox/__init__.py": "",
    "sandbox/backend.py": "from harness import impl\n",
    "grader/__init__.py": "from sandbox import backend\nimport mutants.catalogue\n",
    "mutants/__init__.py": "from grader import config\n",
}


def test_checker_finds_a_planted_cycle_and_layer_violation(tmp_path):
    graph = import_graph(_write(tmp_path, PLANTED), ("harness", "sandbox", "grader", "mutants"))
    assert graph["harness"] == {"sandbox": ["harness/plugin.py:4"]}
    assert layer_violations(graph) == ["harness -> sandbox at harness/plugin.py:4"]
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert set(cycle) in ({"harness", "sandbox"}, {"grader", "mutants"})


@pytest.mark.parametrize("cut", ["harness/plugin.py", "mutants/__init__.py"])
def test_checker_accepts_the_tree_once_the_planted_imports_are_gone(tmp_path, cut):
    files = dict(PLANTED, **{cut: ""})
    graph = import_graph(_write(tmp_path, files), ("harness", "sandbox", "grader", "mutants"))
    remaining = find_cycle(graph)
    if cut == "harness/plugin.py":
        assert layer_violations(graph) == [] and set(remaining) == {"grader", "mutants"}
    else:
        assert layer_violations(graph) and set(remaining) == {"harness", "sandbox"}


def oversized(root: Path, folders: tuple[str, ...] = SIZED) -> list[str]:
    """``file: N lines`` for each module over :data:`MAX_MODULE_LINES` and ``file:line name: N
    lines`` for each function over :data:`MAX_FUNCTION_LINES`, its docstring not counted."""
    paths = sorted(root.glob("*.py")) + [p for folder in folders for p in sorted((root / folder).rglob("*.py"))]
    found = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(root)
        if len(source.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{rel}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                start = body[0].end_lineno + 1 if ast.get_docstring(node) and len(body) > 1 else body[0].lineno
                if node.end_lineno - start + 1 > MAX_FUNCTION_LINES:
                    found.append(f"{rel}:{node.lineno} {node.name}: {node.end_lineno - start + 1} lines")
    return found


def test_no_module_or_function_outside_the_tests_is_oversized():
    assert oversized(ROOT) == []


def test_size_check_flags_a_long_module_and_a_long_function_but_not_a_docstring(tmp_path):
    long_body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES + 1))
    docstring = '    """' + "\n" * MAX_FUNCTION_LINES + '    """\n    return 1\n'
    _write(tmp_path, {
        "harness/long.py": "def long():\n" + long_body,
        "harness/documented.py": "def documented():\n" + docstring,
        "grader/big.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
    })
    assert oversized(tmp_path, ("harness", "grader")) == [
        f"harness/long.py:1 long: {MAX_FUNCTION_LINES + 1} lines", f"grader/big.py: {MAX_MODULE_LINES + 1} lines",
    ]
