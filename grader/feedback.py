"""Failure text for people: the first difference of a failure, readable rule names, and
Markdown that nothing a submission printed can break out of.
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
from functools import lru_cache
from itertools import takewhile
from pathlib import Path

from harness.in_progress import FRAMES_HEADER
from harness.call_text import CALL_NOTE
from harness.raised_text import FRAME_LINE, HEADER_LINE

from .report import KNOWN_BUG_PREFIX, Case, known_bug_line

# what a failed hidden test says about itself, by hidden_output (true also after publication)
HIDDEN_NOTES = {
    "first_line": "(a hidden test: only the first line of its first difference is shown)",
    "none": "(a hidden test: its inputs and differences are not shown)",
}
HIDDEN_NOTE = HIDDEN_NOTES["first_line"]

MAX_DIVERGENCE_LINES = 8
MAX_FRAME_LINES = 6  # lines of the submission's innermost frames shown for an exception it raised (code and markers)
MAX_BLOCK_CHARS = 1500  # characters of one failure shown in a results entry
NOT_RUN = "not run: grading stopped before this test (see the log)"
MAX_OTHER_CASES = 8  # failing cases listed by id after the first one
MAX_SPEED_LINES = 4


# what pytest adds after a test's own assertion message: the assert statement with its values
# (``assert 9 == 1``) and its ``where``s, which can name objects by address (another each run);
# a comparison's diff lines (``At index 0 diff: ...``, ``- abd``) are kept
PYTEST_RESTATEMENT = re.compile(r"assert .*|\+\s+(where|and|or) .*")
# no use on a results page: pytest's advice on verbosity, and the harness's fixtures in a failing
# Hypothesis example's arguments (``impl=impl,``: the submission, ``ref=ref,``: the reference,
# ``corpus_files=<corpus files>,``: where drawn corpora are written)
PYTEST_VERBOSITY = re.compile(r"Use -v+ to get (more|the full) diff|Omitting \d+ identical items, use -vv to show|impl=impl,|ref=ref,"
                              r"|corpus_files=<corpus files>,")


def first_divergence(output: str, max_lines: int = MAX_DIVERGENCE_LINES, keep_indent: bool = False) -> str:
    """The assertion message of a failure (pytest's ``E`` lines, without the traceback),
    which for the graded tests names the first difference; else its first line. An exception
    the submission raised has, after its first line, where: the innermost of its frames in the
    submission (:func:`_where_raised`), their code's indentation kept. With ``keep_indent``
    the other lines keep theirs relative to each other too."""
    lines = output.splitlines()
    message = [ln[1:] if ln.startswith("E ") or ln == "E" else None for ln in lines]
    picked = [m for m in message if m is not None]
    frames: list[str] = []
    at = 1
    if picked:
        picked = textwrap.dedent("\n".join(picked)).splitlines()
        start = next((i for i, m in enumerate(picked) if m.lstrip().startswith(("AssertionError:", "Failed:"))), 0)
        picked = [ln.rstrip() for ln in picked[start:] if ln.strip() and not PYTEST_VERBOSITY.fullmatch(ln.strip())]
        if picked:
            picked[0] = picked[0].lstrip().removeprefix("AssertionError: ").removeprefix("Failed: ")
        if picked and not picked[0].startswith("assert "):  # the test's own message: pytest's restatement dropped
            picked = [ln for ln in picked if not PYTEST_RESTATEMENT.match(ln.strip())]
        at = 2 if len(picked) > 1 and picked[1].startswith(CALL_NOTE) else 1  # the exception, the call, then where
        picked, frames = _where_raised(picked, min(MAX_FRAME_LINES, max(max_lines - 2, 1)))
        if max_lines - at < 2 and len(frames) > 1:  # no room for the header and a frame: the innermost frame alone
            frames = frames[1:]
        if not keep_indent:
            picked = [ln.strip() for ln in picked]
    else:
        picked = _grouped_message(lines) or _first_line_and_frames(lines, max_lines)
    if len(picked) > max_lines:
        picked = picked[:max_lines] + ["..."]
    return "\n".join(picked[:at] + frames + picked[at:])


def _where_raised(lines: list[str], budget: int) -> tuple[list[str], list[str]]:
    """``lines`` without the frames of the note saying where the submission raised the
    exception (:mod:`harness.raised`), and that note cut to its innermost frames in the
    submission's own files (paths relative to it; any file's where none is) that fit in
    ``budget`` lines (at least the innermost frame's first line)."""
    header = next((i for i, ln in enumerate(lines) if HEADER_LINE.fullmatch(ln)), None)
    if header is None:
        return lines, []
    end = header + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    frames: list[list[str]] = []
    for ln in textwrap.dedent("\n".join(lines[header + 1:end])).splitlines():
        found = FRAME_LINE.fullmatch(ln)
        if found:
            frames.append([ln])
        elif frames:
            frames[-1].append(ln)
    own = [f for f in frames if not _elsewhere(FRAME_LINE.fullmatch(f[0])["path"])]
    frames = own or frames
    kept: list[list[str]] = []
    for frame in reversed(frames):
        if sum(map(len, kept)) + len(frame) > budget:
            break
        kept.insert(0, frame)
    if not kept and frames:  # not even the innermost frame's code and markers fit: its first lines
        kept = [frames[-1][:budget]]
    shown = ["  " + ln for frame in kept for ln in frame]
    if len(kept) < len(frames) and budget == MAX_FRAME_LINES:  # room to say outer frames are left out
        shown.insert(0, "  ...")
    return lines[:header] + lines[end:], [lines[header], *shown] if shown else []


def _elsewhere(path: str) -> bool:
    """Whether a traceback's path is outside the submission: an absolute one, or one the
    worker shortened (``<python>/json/decoder.py``, ``<site-packages>/``, ``<string>``)."""
    return os.path.isabs(path) or path.startswith("<")


def _first_line_and_frames(lines: list[str], max_lines: int) -> list[str]:
    """The first line of a failure without pytest's ``E`` lines (a test timeout's), then, when
    it says where the submission's code was, that header and the innermost frames that fit
    in ``max_lines``."""
    first = [ln.strip() for ln in lines if ln.strip() and KNOWN_BUG_PREFIX not in ln][:1]
    if not first or FRAMES_HEADER not in lines:
        return first
    frames = list(takewhile(lambda ln: ln.startswith("  "), lines[lines.index(FRAMES_HEADER) + 1:]))
    return first + [FRAMES_HEADER] + frames[-max(max_lines - 2, 1):]


def _grouped_message(lines: list[str]) -> list[str]:
    """The first assertion message inside an exception group's ``|``-drawn traceback (as
    Hypothesis reports several distinct failures), with its indented continuation lines."""
    contents = [ln.strip().removeprefix("|").removeprefix(" ") if ln.strip().startswith("|") else None for ln in lines]
    for i, text in enumerate(contents):
        if text is not None and text.startswith(("AssertionError: ", "Failed: ")):
            picked = [text.split(": ", 1)[1]]
            for more in contents[i + 1:]:
                if more is None or not more.startswith("  "):
                    break
                picked.append(more.strip())
            return picked
    return []


def bounded(text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ---- a results entry's feedback ---------------------------------------------------------


def case_id(nodeid: str) -> str:
    """The parametrization of a case (``"[merge-3]"``), or ``""`` for a plain test."""
    return split_nodeid(nodeid)[2]


def case_output(case: Case) -> str:
    """A case's failure text as the grader reports it (``not run`` explained: the reason the
    grading gave, else :data:`NOT_RUN`)."""
    if case.outcome == "not run":
        return case.output or NOT_RUN
    return case.output or case.outcome


def _speed_lines(entry) -> list[str]:
    lines = [str(c.properties.get("speed")) for c in entry.cases if c.properties.get("speed")]
    return lines[:MAX_SPEED_LINES] + ([f"... and {len(lines) - MAX_SPEED_LINES} more"] if len(lines) > MAX_SPEED_LINES else [])


def entry_feedback(entry, policy: str) -> tuple[str, str]:
    """(plain text, Markdown) feedback of one results entry (a :class:`grader.scoring.Entry`)
    under ``hidden_output`` ``policy``. Outside ``visible`` entries (unless
    ``hidden_output: full``): ``first_line`` keeps the first line of the first difference
    and any known-bug line, ``none`` keeps only the counts."""
    restricted = entry.visibility != "visible" and policy != "full"
    show_ids = not (restricted and policy == "none")
    failing = entry.failing()
    n, ok = len(entry.cases), entry.passed_cases
    first = failing[0] if failing else None
    header = ""
    if n > 1:
        header = f"{ok} of {n} cases passed"
        if first is not None and show_ids and case_id(first.nodeid):
            header += f"; first failing case: {case_id(first.nodeid)}"
    difference, bugs = "", []
    if first is not None:
        out = case_output(first)
        difference = (first_divergence(out) or out.strip().splitlines()[0]) if out.strip() else first.outcome
        bugs = [known_bug_line(first.known_bug)] if first.known_bug else []
        if restricted:
            difference = difference.splitlines()[0] if policy == "first_line" and difference else ""
            bugs = bugs if policy == "first_line" else []
    difference = bounded(difference)
    others = [case_id(c.nodeid) for c in failing[1:]] if show_ids else []
    others_text = ", ".join(others[:MAX_OTHER_CASES]) + (f" and {len(others) - MAX_OTHER_CASES} more" if len(others) > MAX_OTHER_CASES else "")
    speed = [s for s in _speed_lines(entry) if s not in difference]  # a failure's message already states it
    note = HIDDEN_NOTES.get(policy, HIDDEN_NOTE) if restricted and first is not None else ""

    text = [x for x in [header, difference, *bugs, *speed] if x]
    if others:
        text.append(f"other failing cases: {others_text}")
    if note:
        text.append(note)

    md: list[str] = []
    if header:
        head = f"{ok} of {n} cases passed"
        if first is not None and show_ids and case_id(first.nodeid):
            head = f"**{head}**; first failing case: {md_code(case_id(first.nodeid))}"
        else:
            head = f"**{head}**"
        md.append(head)
    if difference:
        md.append(md_block(difference))
    md += [md_text(b) for b in bugs] + [md_text(s) for s in speed]
    if others:
        shown = ", ".join(md_code(o) for o in others[:MAX_OTHER_CASES])
        more = f" and {len(others) - MAX_OTHER_CASES} more" if len(others) > MAX_OTHER_CASES else ""
        md.append(f"Other failing cases: {shown}{more}")
    if note:
        md.append(f"_{md_text(note)}_")
    return "\n".join(text), "\n\n".join(md)


# ---- names -------------------------------------------------------------------------------


def split_nodeid(nodeid: str) -> tuple[str, str, str]:
    """``"tests/x.py::test_f[a-b]"`` -> ``("tests/x.py", "test_f", "[a-b]")`` (a class
    stays in the middle part: ``"TestK::test_f"``)."""
    path, _, rest = nodeid.partition("::")
    function, bracket, params = rest.partition("[")
    return path, function, bracket + params


@lru_cache(maxsize=64)
def _docstrings(path: Path) -> dict[str, str]:
    """Qualified function name -> first line of its docstring, for one test file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and doc.strip():
                    found[prefix + node.name] = doc.strip().splitlines()[0].rstrip(".")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}::")

    visit(tree.body, "")
    return found


def rule_name(nodeid: str, root: Path) -> str:
    """The rule a test function checks, readable: the first line of its docstring, else
    its name without ``test_`` and with spaces (``test_merge_does_not_modify_its_input``
    -> ``merge does not modify its input``)."""
    path, function, _ = split_nodeid(nodeid)
    doc = _docstrings((root / path).resolve()).get(function)
    if doc:
        return doc
    name = function.rsplit("::", 1)[-1].removeprefix("test_").removeprefix("test")
    return name.replace("_", " ").strip() or function


# ---- Markdown ----------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")  # special wherever they stand
_MD_LINE_START = re.compile(r"^(\s*)(?:([-+=])|(\d+)([.)]))", re.MULTILINE)  # list items, setext headings
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def md_text(text: str) -> str:
    """Plain text as Markdown that renders as exactly that text: HTML and Markdown
    characters escaped (list and heading markers only where they would act: at the start
    of a line), control characters dropped."""
    text = _CONTROL.sub("", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MD_LINE_START.sub(_escape_line_start, text)


def _escape_line_start(m: re.Match) -> str:
    indent, mark, digits, dot = m.groups()
    return indent + ("\\" + mark if mark else digits + "\\" + dot)


def md_code(text: str) -> str:
    """An inline code span holding ``text`` literally (a fence longer than any run of
    backticks inside; newlines become spaces)."""
    text = _CONTROL.sub("", text).replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: str) -> str:
    """A fenced code block holding ``text`` literally: the fence is longer than any run of
    backticks in it, so no line of ``text`` can close it early (CommonMark)."""
    text = _CONTROL.sub("", text).rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"

