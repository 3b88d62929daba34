"""Failure reports made without parsing the same test module again for each failure.

To show the statement that failed, pytest's traceback renderer parses the whole source file
of each traceback entry, once per failure: ``ast.parse(text, "source", "exec")``, then a walk
of the whole tree. A submission that fails hundreds of tests paid that hundreds of times
for the same few files (a third of the CPU of grading a submission that returns empty
values, 2026-11-27). :func:`parse_once` keeps the trees of those parses while a failure is
rendered, for the next failure of the same file: the same text gives the same tree, which
the renderer only reads. Any other parse (another file name or mode, bytes, options) goes to
``ast.parse`` as it is. Should pytest stop parsing this way, nothing is kept and nothing
changes but the time.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator

RENDERER_FILENAME = "source"  # the file name pytest's renderer parses under
KEEP = 8  # trees kept (the test modules a run's failures are in), the oldest dropped first
_trees: dict[str, ast.AST] = {}


@contextlib.contextmanager
def parse_once() -> Iterator[None]:
    """While the block runs, the renderer's parse of a text it parsed before returns the tree
    it got then."""
    plain = ast.parse

    def parse(source, filename="<unknown>", mode="exec", **options):
        if type(source) is not str or filename != RENDERER_FILENAME or mode != "exec" or options:
            return plain(source, filename, mode, **options)
        tree = _trees.get(source)
        if tree is None:
            tree = plain(source, filename, mode)
            while len(_trees) >= KEEP:
                del _trees[next(iter(_trees))]
            _trees[source] = tree
        return tree

    ast.parse = parse
    try:
        yield
    finally:
        ast.parse = plain
