"""The figures the README and the docs pages state are the project's: each phrase below,
with the value computed here from the code or a grading, must appear in its page, and the
README's top layer states no figure outside this list (code aside) except measurements,
which carry the date they were measured."""

from __future__ import annotations

import inspect
import re
import signal
from pathlib import Path

import pytest

from grader import intake
from grader.compare import TERMINAL_LIMIT
from grader.grade import EXIT_CONFIG, EXIT_HARNESS, EXIT_OK
from grader.config import load_config
from grader import install
from harness import submission as S
from mutants import CATALOGUE
from sandbox.forbidden import FORBIDDEN_MODULES
from harness.timing import best_time
from reference.tokenizer import PART_CHARS
from tests.conftest import STOP_MARGIN
from sandbox import confine
from sandbox.limits import IsolationLimits
from sandbox.proctree import TreeLimit, TreeMemory

ROOT = Path(__file__).resolve().parent.parent
LIMITS = IsolationLimits()
SHIPPED = load_config(ROOT / "grading.yaml")


def thousands(n: int) -> str:
    return f"{n:,}"


def mb(n: int) -> str:
    """Bytes as the docs write them: binary MB for limits set in MiB, decimal for caps set in bytes."""
    return f"{n >> 20 if n % (1 << 20) == 0 else n // 1_000_000:g}"


def _default(fn, name: str):
    return inspect.signature(fn).parameters[name].default


def _tmpfs_mb(*mounts: str) -> tuple[int, ...]:
    """The size the worker's tmpfs at each mount point gets (``size=NNm`` in sandbox/confine.py)."""
    source = inspect.getsource(confine)
    return tuple(int(re.search(rf'tmpfs\("{re.escape(m)}", f?"size=(\d+)m', source).group(1)) for m in mounts)


# (page, phrase with {} for each figure, the figures computed)
FIGURES = [
    ("README.md", "{} catalogued bugs", lambda: (len(CATALOGUE),)),
    ("README.md", "under {} lines", lambda: (TERMINAL_LIMIT,)),
    ("README.md", "exit status `{}` whenever grading completed, `{}` for an invalid `grading.yaml`, `{}` when the harness could not grade, `{}` / `{}` when SIGTERM / SIGINT",
     lambda: (EXIT_OK, EXIT_CONFIG, EXIT_HARNESS, 128 + signal.SIGTERM, 128 + signal.SIGINT)),
    ("docs/isolation.md", "{} s per call and {} s of CPU", lambda: (f"{LIMITS.call_timeout:g}", LIMITS.cpu_seconds)),
    ("docs/isolation.md", "is capped at {} MB", lambda: (LIMITS.work_mb,)),
    ("docs/isolation.md", "each capped ({} MB, {} MB, `work_mb` each) at {} files", lambda: (*_tmpfs_mb("/tmp", "/dev/shm"), thousands(confine.FILES))),
    ("docs/isolation.md", "summed every {} s", lambda: (f"{_default(TreeLimit, 'period'):g}",)),
    ("docs/isolation.md", "sampled every {} ms", lambda: (f"{_default(TreeMemory, 'period') * 1000:g}",)),
    ("docs/isolation.md", "best of {}", lambda: (_default(best_time, "repeat"),)),
    ("docs/isolation.md", "stopped {} s past its limit", lambda: (f"{STOP_MARGIN:g}",)),
    ("docs/isolation.md", "to the group's {} s", lambda: (f"{next(g for g in SHIPPED.groups if g.name == 'speed').timeout:g}",)),
    ("docs/isolation.md", "under {}M characters", lambda: (2 * PART_CHARS // 1_000_000,)),
    ("docs/isolation.md", "{} MB and {} million values per reply", lambda: (mb(LIMITS.reply_bytes), LIMITS.reply_values // 1_000_000)),
    ("docs/submissions.md", "at most {} files and folders and {} MB", lambda: (thousands(S.MAX_FILES), mb(S.MAX_BYTES))),
    ("docs/submissions.md", "files over {} MB, folders nested over {} deep", lambda: (mb(S.MAX_FILE_BYTES), S.MAX_DEPTH)),
    ("docs/policy.md", "`budget: {}`", lambda: (f"{SHIPPED.time.budget:g}",)),
    ("docs/policy.md", "`timeouts_in_a_row: {}`", lambda: (SHIPPED.time.timeouts_in_a_row,)),
    ("docs/isolation.md", "`budget`, {} s as shipped", lambda: (f"{SHIPPED.time.budget:g}",)),
    ("docs/isolation.md", "on `timeouts_in_a_row` tests in a row ({})", lambda: (SHIPPED.time.timeouts_in_a_row,)),
    # docs/policy.md's table of keys gives each one's default (grader.policy_keys)
    ("docs/policy.md", "`call_timeout: {}`", lambda: (f"{LIMITS.call_timeout:g}",)),
    ("docs/policy.md", "`memory_mb: {}`", lambda: (LIMITS.memory_mb,)),
    ("docs/policy.md", "`cpu_seconds: {}`", lambda: (LIMITS.cpu_seconds,)),
    ("docs/policy.md", "`max_processes: {}`", lambda: (LIMITS.max_processes,)),
    ("docs/policy.md", "`output_bytes: {}`", lambda: (LIMITS.output_bytes,)),
    ("docs/isolation.md", "one deadline for every pip run ({} s, at most a fifth of the time budget; no retries), {} MB per file pip "
     "writes and for the whole folder, {} packages", lambda: (f"{install.INSTALL_SECONDS:g}", install.MAX_BYTES >> 20, install.MAX_PACKAGES)),
    ("docs/isolation.md", "(`NEVER_INSTALLED`: {})", lambda: (", ".join(f"`{n}`" for n in install.NEVER_INSTALLED),)),
    ("docs/isolation.md", "raises the per-call limit to {} s", lambda: (f"{SHIPPED.isolation.call_timeout:g}",)),
    ("docs/policy.md", "by default {}", lambda: (", ".join(FORBIDDEN_MODULES),)),
    ("docs/results.md", "at most {} MB and {} files", lambda: (mb(intake.MAX_BYTES), thousands(intake.MAX_FILES))),
]


@pytest.mark.parametrize("page, phrase, figures", FIGURES, ids=[f"{p}:{t}" for p, t, _ in FIGURES])
def test_each_figure_stated_is_the_codes(page, phrase, figures):
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    expected = phrase.format(*figures())
    assert expected in text, f"{page} should say {expected!r} (or not state the figure)"


@pytest.mark.slow
def test_the_results_entries_counted_in_the_readme_are_those_of_a_grading(graded_reference):
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    stated = re.search(r"one entry per test function \((\d[\d,]*) with the shipped `grading.yaml`\)", text)
    assert stated, "the README says how many results entries the shipped policy gives"
    assert int(stated.group(1).replace(",", "")) == len(graded_reference.tests)


@pytest.mark.slow
def test_the_readme_sample_totals_are_those_of_a_grading(graded_reference):
    # the sample output's total line: its results entries and cases (the stubs pass none)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"^total +0 / 100 +0/(\d+) +0/(\d+) ", text, flags=re.M)
    assert sample, "the README's sample output ends its table with a total line"
    cases = sum(t["extra_data"].get("cases", 1) for t in graded_reference.tests)
    assert (int(sample.group(1)), int(sample.group(2))) == (len(graded_reference.tests), cases)


MEASURED = re.compile(r"measured [^.]*\b\d{4}-\d\d-\d\d\b")


def _prose_numbers(text: str) -> list[tuple[str, str]]:
    """(number, its sentence) for each figure of the README's prose: code blocks and code
    spans, link targets, names (GPT-2, CS336, "Part N"), list numbers, dates and versions left
    out; the sentence keeps its dates (a measurement says when it was made)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`|\]\([^)]*\)|^#.*$|^\s*\d+\. ", " ", text, flags=re.M)
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n\n", text):
        bare = re.sub(r"\b(?:Part|GPT-|CS)\s?\d+\b|\b\d{4}-\d\d-\d\d\b|\b\d+\.\d+\+?(?=[ ,;:)])", " ", sentence)
        found += [(n, " ".join(sentence.split())) for n in re.findall(r"(?<![\w.-])\d[\d,.]*\d?(?![\w])", bare)]
    return found


def test_the_readme_states_no_figure_that_is_not_checked_or_a_dated_measurement():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    flat = " ".join(text.split())
    checked = {m for p, phrase, figures in FIGURES if p == "README.md" for m in map(str, figures())}
    checked.add(re.search(r"one entry per test function \((\d[\d,]*)", flat).group(1) if "one entry per test function (" in flat else "")
    loose = [(n, s) for n, s in _prose_numbers(text) if n.rstrip(".,") not in checked and not MEASURED.search(s)]
    assert not loose, "figures neither checked here nor dated measurements:\n" + "\n".join(f"  {n}: {s[:160]}" for n, s in loose)
