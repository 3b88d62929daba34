"""The reference solution wearing the stubs' docstrings: a ``student/`` folder whose code is
the reference's and whose docstrings (with their ``>>>`` examples) are the stubs', so that a
student's doctest command can be run as it would run on a finished assignment.
"""

from __future__ import annotations

import ast
from pathlib import Path


def _docstrings(tree: ast.Module) -> dict[str, ast.Expr]:
    """qualified name ("" for the module) -> the docstring statement of that scope."""
    found: dict[str, ast.Expr] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found[prefix] = body[0]
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{prefix}.{child.name}" if prefix else child.name)

    visit(tree, "")
    return found


def _scopes(tree: ast.Module) -> dict[str, ast.AST]:
    scopes: dict[str, ast.AST] = {"": tree}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in getattr(node, "body", []):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                scopes[name] = child
                visit(child, name)

    visit(tree, "")
    return scopes


def _offset(lines: list[str], lineno: int, col: int) -> int:
    """Character offset of (1-based line, UTF-8 byte column), as ``ast`` positions are."""
    return sum(len(line) for line in lines[: lineno - 1]) + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8"))


def with_stub_docstrings(code: str, stub: str) -> str:
    """``code`` (a reference module) with each docstring replaced by the stub's docstring of
    the same qualified name (inserted where the reference has none), plus the stub's own
    imports at the end (its examples may use names only the stub imports)."""
    code_tree, stub_tree = ast.parse(code), ast.parse(stub)
    stub_docs, code_docs, scopes = _docstrings(stub_tree), _docstrings(code_tree), _scopes(code_tree)
    lines = code.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []  # (start, end, text) on ``code``
    for name, doc in stub_docs.items():
        text = ast.get_source_segment(stub, doc)
        if name in code_docs:
            old = code_docs[name]
            edits.append((_offset(lines, old.lineno, old.col_offset), _offset(lines, old.end_lineno, old.end_col_offset), text))
        elif name in scopes and name:
            first = scopes[name].body[0]
            lineno = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
            start = _offset(lines, lineno, 0)
            edits.append((start, start, " " * first.col_offset + text + "\n"))
    for start, end, text in sorted(edits, reverse=True):
        code = code[:start] + text + code[end:]
    imports = [
        ast.get_source_segment(stub, node) for node in stub_tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__"
    ]
    return code.rstrip("\n") + "\n\n" + "\n".join(imports) + "\n"


def transplant(reference: Path, stubs: Path, out: Path) -> None:
    """Write into ``out`` each reference module, wearing the docstrings of the stub of the
    same name in ``stubs`` (modules without a stub are copied as they are)."""
    for path in sorted(reference.glob("*.py")):
        code = path.read_text(encoding="utf-8")
        stub = stubs / path.name
        if stub.is_file() and path.name != "__init__.py":
            code = with_stub_docstrings(code, stub.read_text(encoding="utf-8"))
        (out / path.name).write_text(code, encoding="utf-8")
