"""``python -m grader compare --submission DIR [--html OUT.html]``: a submission beside the
reference, test by test.

Runs the graded suite twice through ``python -m grader grade`` (the submission, then
``--impl reference``) with ``--report`` into a temporary folder, joins the two reports by
test, and shows one table: each test's outcome for both, both times and their ratio, and
the points. Below it, for every test the submission fails, the first divergence its
failure message names (``merge #37 differs ...``, ``ids differ at position 12 ...``), and
at the end any diagnosis lines of the mutant catalogue (``this matches a known bug: ...``).
The same content can be written as a self-contained HTML page to share with a student.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT
from harness.childenv import child_env
from .feedback import KNOWN_BUG, first_divergence



@dataclass
class Row:
    nodeid: str
    group: str
    submission: str  # passed | failed | skipped | not run | missing
    reference: str
    sub_time: float | None
    ref_time: float | None
    score: float
    max_score: float
    divergence: str = ""

    @property
    def ratio(self) -> float | None:
        if self.sub_time is None or self.ref_time is None or self.ref_time <= 0:
            return None
        return self.sub_time / self.ref_time


def diagnoses(reports: list[dict]) -> list[str]:
    """The distinct ``... matches a known bug ...`` lines of the failure outputs, in order."""
    seen: list[str] = []
    for report in reports:
        for t in report.get("tests", []):
            for line in t.get("output", "").splitlines():
                line = line.strip().removeprefix("E").strip()
                if KNOWN_BUG in line and line not in seen:
                    seen.append(line)
    return seen


def join(sub: dict, ref: dict) -> list[Row]:
    """One row per test of either report, in the submission report's order (then any test
    only the reference ran)."""
    ref_tests = {t["nodeid"]: t for t in ref.get("tests", [])}
    rows = []
    seen = set()
    for t in sub.get("tests", []):
        r = ref_tests.get(t["nodeid"], {})
        seen.add(t["nodeid"])
        rows.append(
            Row(t["nodeid"], t["group"], t["outcome"], r.get("outcome", "missing"), t.get("duration"), r.get("duration"),
                t.get("score", 0.0), t.get("max_score", 0.0),
                first_divergence(t.get("output", "")) if t["outcome"] != "passed" else "")
        )
    for nodeid, r in ref_tests.items():
        if nodeid not in seen:
            rows.append(Row(nodeid, r["group"], "missing", r["outcome"], None, r.get("duration"), 0.0, r.get("max_score", 0.0)))
    return rows


# ---- running -----------------------------------------------------------------------------


def run_grade(args: list[str], report: Path, results: Path, max_time: float) -> dict:
    env = child_env()
    cmd = [sys.executable, "-m", "grader", "grade", *args, "--results", str(results), "--report", str(report),
           "--max-time", f"{max_time:g}", "--quiet"]
    subprocess.run(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=max_time + 120)
    try:
        return json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"error": "the grade command wrote no report", "tests": []}


def compare(submission: Path, config: Path | None = None, tests: list[str] | None = None, max_time: float = 3600.0) -> tuple[dict, dict]:
    """The grade reports of the submission and of the reference."""
    common: list[str] = []
    if config is not None:
        common += ["--config", str(Path(config).resolve())]
    if tests:
        common += ["--tests", *tests]
    with tempfile.TemporaryDirectory(prefix="bpe-compare-") as tmp:
        t = Path(tmp)
        sub = run_grade(["--submission", str(Path(submission).resolve()), *common], t / "sub.json", t / "sub-results.json", max_time)
        ref = run_grade(["--impl", "reference", *common], t / "ref.json", t / "ref-results.json", max_time)
    return sub, ref


# ---- output --------------------------------------------------------------------------------


def _secs(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def _short(nodeid: str, width: int = 90) -> str:
    nodeid = nodeid.removeprefix("tests/")
    return nodeid if len(nodeid) <= width else nodeid[: width // 2 - 1] + "…" + nodeid[-(width // 2):]


def headline(sub: dict, ref: dict, rows: list[Row], name: str) -> list[str]:
    lines = [f"submission {name}: {sub.get('score', 0):g} points; reference: {ref.get('score', 0):g} points"]
    failing = sum(r.submission != "passed" for r in rows)
    lines.append(f"{len(rows)} tests: the submission fails {failing}, the reference fails {sum(r.reference != 'passed' for r in rows)}")
    notes = sub.get("notes") if isinstance(sub.get("notes"), list) else []
    lines += [f"submission {n}" for n in notes if str(n).startswith(("layout:", "left out of the copy", "not installed where"))]
    for which, report in (("submission", sub), ("reference", ref)):
        if report.get("error"):
            lines.append(f"{which}: grading failed: {report['error']}")
    return lines


def terminal(sub: dict, ref: dict, rows: list[Row], name: str) -> str:
    header = ("test", "group", "submission", "reference", "sub s", "ref s", "ratio", "points")
    table = [header] + [
        (_short(r.nodeid), r.group, r.submission, r.reference, _secs(r.sub_time), _secs(r.ref_time), _ratio(r.ratio),
         f"{r.score:.3g}/{r.max_score:.3g}")
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    out = headline(sub, ref, rows, name) + [""]
    for k, row in enumerate(table):
        out.append("  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if k == 0:
            out.append("-" * len(out[-1]))
    failing = [r for r in rows if r.submission != "passed"]
    if failing:
        out += ["", "first divergence of each failing test:"]
        for r in failing:
            out.append(f"- {r.nodeid}")
            out += [f"    {ln}" for ln in (r.divergence or r.submission).splitlines()]
    found = diagnoses([sub])
    if found:
        out += ["", "diagnosis:"] + [f"  {ln}" for ln in found]
    return "\n".join(out)


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em;color:#222;max-width:1400px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;width:100%}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.id{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.passed{background:#e6f4ea}.failed,.missing,.not-run{background:#fce8e6}.skipped{background:#fef7e0}
pre{background:#f8f8f8;border:1px solid #ddd;padding:.6em;overflow-x:auto;font-size:.85em;white-space:pre-wrap}
.diag{background:#fff4ce;border-left:4px solid #e0a800;padding:.5em 1em}
"""


def render_html(sub: dict, ref: dict, rows: list[Row], name: str) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(name)}: comparison with the reference</title>", f"<style>{CSS}</style></head><body>",
        f"<h1>{e(name)}: comparison with the reference</h1>",
        *[f"<p>{e(line)}</p>" for line in headline(sub, ref, rows, name)],
        "<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in
                                       ("test", "group", "submission", "reference", "submission s", "reference s", "ratio", "points")) +
        "</tr></thead><tbody>",
    ]
    for r in rows:
        parts.append(
            "<tr>"
            f'<td class="id">{e(r.nodeid)}</td><td>{e(r.group)}</td>'
            f'<td class="{e(r.submission.replace(" ", "-"))}">{e(r.submission)}</td>'
            f'<td class="{e(r.reference.replace(" ", "-"))}">{e(r.reference)}</td>'
            f'<td class="num">{_secs(r.sub_time)}</td><td class="num">{_secs(r.ref_time)}</td>'
            f'<td class="num">{_ratio(r.ratio)}</td><td class="num">{r.score:.3g} / {r.max_score:.3g}</td>'
            "</tr>"
        )
    parts.append("</tbody></table>")
    failing = [r for r in rows if r.submission != "passed"]
    if failing:
        parts.append("<h2>First divergence of each failing test</h2>")
        for r in failing:
            parts.append(f'<h3 class="id">{e(r.nodeid)}</h3><pre>{e(r.divergence or r.submission)}</pre>')
    found = diagnoses([sub])
    if found:
        parts.append('<h2>Diagnosis</h2><div class="diag">' + "".join(f"<p>{e(ln)}</p>" for ln in found) + "</div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def main(submission: Path, html_path: Path | None, config: Path | None, tests: list[str] | None, max_time: float) -> int:
    if not Path(submission).is_dir():
        print(f"compare: {submission} is not a folder", file=sys.stderr)
        return 2
    sub, ref = compare(submission, config, tests, max_time)
    rows = join(sub, ref)
    name = Path(submission).resolve().name
    print(terminal(sub, ref, rows, name))
    if html_path is not None:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(render_html(sub, ref, rows, name), encoding="utf-8")
        print(f"\nhtml: {html_path}")
    return 0 if not sub.get("error") and not ref.get("error") else 1
