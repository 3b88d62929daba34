"""The layers import one way: read from the source with ``ast``, the graph of imports between
the top-level packages has no cycle, the student-side harness imports neither the sandbox,
the grader nor the mutants, and the sandbox neither the grader nor the mutants. Every import
statement counts, also one inside a function; a relative import stays in its own package.
Inside each package the modules import one way too (every import counted, also one under
``if TYPE_CHECKING:``, relative ones resolved), and no module of the sandbox uses another
object's private (``_name``) members.
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


# ---- inside each package: modules import one way too ---------------------------------------

# module cycles known in packages other than sandbox/, each to be removed by whoever next
# changes those modules: the test fails on any other cycle, and on an entry here no longer found
KNOWN_MODULE_CYCLES = {
    "grader": [{"grader.compare", "grader.compare_class", "grader.compare_html"}, {"grader.batch", "grader.cluster"}],
}
# names the standard library documents despite their underscore (not another object's private member)
STDLIB_UNDERSCORED = {"os._exit"}
PRIVATE_CHECKED = ("sandbox",)  # packages where no module reaches into another object's private members


def module_name(root: Path, path: Path) -> str:
    """``sandbox.backend`` for ``root/sandbox/backend.py``; a package's ``__init__.py`` is the package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, name: str, modules: set[str]) -> list[tuple[str, int]]:
    """(module of ``modules``, line) of every import in the module ``name`` (file ``path``),
    anywhere in it (under ``if TYPE_CHECKING:``, in a function), relative ones resolved:
    ``from . import x`` is the module ``x`` when there is one, else the package."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found = []
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [known(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] if node.level else [])
            source = ".".join(p for p in (base, node.module or "") if p)
            targets = [known(f"{source}.{alias.name}") if f"{source}.{alias.name}" in modules else known(source)
                       for alias in node.names]
        else:
            continue
        found += [(t, node.lineno) for t in targets if t is not None and t != name]
    return found


def module_graph(root: Path, package: str) -> Graph:
    """Which modules of ``package`` each of its modules imports, and where."""
    paths = {module_name(root, p): p for p in sorted((root / package).rglob("*.py"))}
    graph: Graph = {name: {} for name in paths}
    for name, path in paths.items():
        for target, line in imported_modules(path, name, set(paths)):
            graph[name].setdefault(target, []).append(f"{path.relative_to(root)}:{line}")
    return graph


def cycles(graph: Graph) -> list[set[str]]:
    """Every set of nodes that import each other, directly or not (strongly connected
    components of more than one node; Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while not component or node not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def unknown_cycles(graph: Graph, known: list[set[str]]) -> list[str]:
    """A line per cycle of ``graph`` not inside a ``known`` one (with one circle through it)."""
    lines = []
    for component in cycles(graph):
        if not any(component <= k for k in known):
            sub = {a: {b: w for b, w in graph[a].items() if b in component} for a in component}
            lines.append(f"{sorted(component)}: {describe_cycle(sub, find_cycle(sub))}")
    return lines


def private_reaches(root: Path, package: str) -> list[str]:
    """``file:line expression`` for each ``x._name`` (one leading underscore, not a dunder) in
    ``package`` where ``x`` is not ``self`` or ``cls``: a module reaching into another object's
    private members (:data:`STDLIB_UNDERSCORED` excepted)."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if ast.unparse(node) not in STDLIB_UNDERSCORED:
                found.append((str(path.relative_to(root)), node.lineno, ast.unparse(node)))
    return [f"{file}:{line} {expression}" for file, line, expression in sorted(found)]


@pytest.mark.parametrize("package", PACKAGES)
def test_import_graph_between_modules_of_each_package_has_no_cycle(package):
    """Type-checking-only and function-level imports count: a circle hidden behind them is
    still one (a module cannot be understood, or tested, without the others of its circle)."""
    graph = module_graph(ROOT, package)
    known = KNOWN_MODULE_CYCLES.get(package, [])
    problems = unknown_cycles(graph, known)
    assert problems == [], f"import cycles between modules of {package}:\n" + "\n".join(problems)
    stale = [sorted(k) for k in known if not any(k <= c for c in cycles(graph))]
    assert stale == [], f"no longer a cycle: remove {stale} from KNOWN_MODULE_CYCLES"


@pytest.mark.parametrize("package", PRIVATE_CHECKED)
def test_no_module_reaches_into_another_objects_private_members(package):
    reaches = private_reaches(ROOT, package)
    assert reaches == [], "another object's private member used:\n" + "\n".join(reaches)


MODULES_PLANTED = {
    "sandbox/__init__.py": "",
    "sandbox/backend.py": "from . import process\nfrom .stream import Stream\n",
    "sandbox/process.py": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .backend import WorkerBackend  # type-checking only: counts
        """,
    "sandbox/stream.py": "import os\nfrom sandbox.sub.deep import x\n",
    "sandbox/sub/__init__.py": "",
    "sandbox/sub/deep.py": """
        def late():
            from ..stream import Stream  # function-level, two levels up: counts
            return Stream
        """,
    "sandbox/alone.py": "from . import sub\nimport harness.values\n",
    "harness/values.py": "import sandbox.alone\n",  # another package: not in sandbox's graph
}


def test_module_checker_finds_circles_hidden_behind_type_checking_and_function_imports(tmp_path):
    graph = module_graph(_write(tmp_path, MODULES_PLANTED), "sandbox")
    assert graph["sandbox.process"] == {"sandbox.backend": ["sandbox/process.py:4"]}
    assert graph["sandbox.sub.deep"] == {"sandbox.stream": ["sandbox/sub/deep.py:3"]}
    assert graph["sandbox.alone"] == {"sandbox.sub": ["sandbox/alone.py:1"]}
    assert sorted(map(sorted, cycles(graph))) == [
        ["sandbox.backend", "sandbox.process"], ["sandbox.stream", "sandbox.sub.deep"],
    ]
    assert len(unknown_cycles(graph, [])) == 2
    assert unknown_cycles(graph, [{"sandbox.backend", "sandbox.process"}, {"sandbox.stream", "sandbox.sub.deep"}]) == []


@pytest.mark.parametrize("cut", ["sandbox/process.py", "sandbox/sub/deep.py"])
def test_module_checker_accepts_the_tree_once_a_planted_import_is_gone(tmp_path, cut):
    graph = module_graph(_write(tmp_path, dict(MODULES_PLANTED, **{cut: ""})), "sandbox")
    left = {"sandbox/process.py": {"sandbox.stream", "sandbox.sub.deep"},
            "sandbox/sub/deep.py": {"sandbox.backend", "sandbox.process"}}[cut]
    assert cycles(graph) == [left]


def test_private_check_flags_another_objects_private_member_only(tmp_path):
    _write(tmp_path, {"sandbox/a.py": """
        import os
        class A:
            def f(self, other):
                self._mine = other.__class__, os._exit  # its own; a dunder; the standard library's name
                self.backend._stream = None  # another object's private member: flagged
                return other._lock  # flagged
            @classmethod
            def g(cls):
                return cls._made
        """})
    assert private_reaches(tmp_path, "sandbox") == ["sandbox/a.py:6 self.backend._stream", "sandbox/a.py:7 other._lock"]
