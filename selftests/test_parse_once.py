"""``harness.parse_once``: while failures are rendered, pytest's renderer parses each test
module once, and the failures read exactly as when it parsed it anew each time."""

from __future__ import annotations

import ast

import pytest

from harness import parse_once as P

TEXT = "def f(x):\n    return x + 1\n"


def failing_comparison(values: list[int]) -> None:
    total = sum(values)
    assert total == 7, "a comparison that fails, with a statement over two lines " + str(
        values)


def rendered(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.getrepr(style="long", funcargs=True))


def test_the_renderers_parse_of_a_text_it_parsed_before_gives_the_same_tree():
    with P.parse_once():
        first = ast.parse(TEXT, P.RENDERER_FILENAME, "exec")
        again = ast.parse(TEXT, P.RENDERER_FILENAME, "exec")
    assert again is first
    assert ast.dump(first) == ast.dump(ast.parse(TEXT))


@pytest.mark.parametrize("args, options", [((TEXT,), {}), ((TEXT, "test_x.py", "exec"), {}),
                                            (("1 + 2", P.RENDERER_FILENAME, "eval"), {}),
                                            ((TEXT.encode(), P.RENDERER_FILENAME, "exec"), {}),
                                            ((TEXT, P.RENDERER_FILENAME, "exec"), {"type_comments": True})])
def test_every_other_parse_is_a_new_one(args, options):
    with P.parse_once():
        first, again = ast.parse(*args, **options), ast.parse(*args, **options)
    assert again is not first and ast.dump(again) == ast.dump(first)


def test_ast_parse_is_itself_again_after_the_block_even_when_it_raises():
    plain = ast.parse
    with pytest.raises(ZeroDivisionError), P.parse_once():
        assert ast.parse is not plain
        1 / 0
    assert ast.parse is plain


def test_no_more_than_keep_trees_are_kept():
    with P.parse_once():
        for n in range(P.KEEP + 5):
            ast.parse(f"x = {n}\n", P.RENDERER_FILENAME, "exec")
    assert len(P._trees) <= P.KEEP


def test_a_failure_reads_the_same_and_its_module_is_parsed_once():
    with pytest.raises(AssertionError) as excinfo:
        failing_comparison([1, 2])
    anew = rendered(excinfo)
    P._trees.clear()
    with P.parse_once():
        first, second = rendered(excinfo), rendered(excinfo)
    assert first == second == anew
    assert "assert total == 7" in anew and "str(" in anew and "values)" in anew  # the whole statement, both lines
    assert any("def failing_comparison" in text for text in P._trees), (
        "pytest's traceback renderer no longer parses a module with ast.parse(text, 'source', 'exec'): "
        "harness.parse_once saves nothing now")
