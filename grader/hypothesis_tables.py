"""``python -m grader.hypothesis_tables``: Hypothesis's Unicode tables, computed in this folder.

The first text a process draws with Hypothesis makes it compute its tables of Unicode
categories and of what UTF-8 encodes, over every code point (2.5 s of CPU, 2026-11-27), and
keep them in the storage folder, ``.hypothesis`` in the working folder, for the processes
after it. A grading's test run keeps them in the grader's root (``grader.grade.suite_env``
sets ``HYPOTHESIS_STORAGE_DIRECTORY``; the run itself works in a temporary folder). Where
every grading starts from a fresh copy of that root (a Gradescope container, made from the
image ``setup.sh`` built), each would compute them again: ``setup.sh`` runs this once, in
the root, so that the image holds them. Public API only: one example of ``st.text()``.
"""

from __future__ import annotations


def draw_one_text() -> None:
    """Draw one text, as a test does (the tables land in the storage folder)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=1, database=None)
    @given(st.text(max_size=1))
    def draw(text: str) -> None:
        pass

    draw()


if __name__ == "__main__":
    draw_one_text()
