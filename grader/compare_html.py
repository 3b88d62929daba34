"""``compare``'s HTML: one self-contained page per submission, and an index for a class.

A submission's page has the terminal's order: the score, the summary per group (each row
links to that group's cases), the known-bug diagnoses, then a table of the cases, failing
ones first within each group, each row with the first line of its first difference and a
link to the whole of it below (the first difference with its indentation kept, the full
output in a fold). Filters need no script: radio buttons and CSS show the failing cases
(default) or all, of every group or of one. Everything is escaped; no external asset.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from .compare import Case, Comparison, GroupRow, ratio_text, secs_text, headline, points
from .report import known_bug_line
from .wording import count, failing

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em 2em;color:#222;max-width:1400px}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1em;margin:.2em 0}
p.head{margin:.2em 0}ul.notes{margin:.2em 0;color:#555;font-size:.9em}
table{border-collapse:collapse;font-size:.85em}table.cases{width:100%}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
thead th{background:#f0f0f0;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.id{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
td.diff code{white-space:pre;font-size:.95em}
.passed{background:#e6f4ea}.failed,.missing,.not-run,.error{background:#fce8e6}.skipped{background:#fef7e0}
.full{background:#e6f4ea}.none{background:#fce8e6}.part{background:#fef7e0}
tr.grouphead th{background:#e8eaf6;text-align:left}
pre{background:#f8f8f8;border:1px solid #ddd;padding:.6em;overflow-x:auto;font-size:.85em;white-space:pre;tab-size:4}
.diag{background:#fff4ce;border-left:4px solid #e0a800;padding:.3em 1em}
section.detail{border-top:1px solid #ddd;padding:.4em 0}
.filters label{border:1px solid #bbb;border-radius:3px;padding:.1em .5em;margin:0 .15em;cursor:pointer;display:inline-block}
.pick{position:absolute;opacity:0;pointer-events:none}
#show-failed:checked~table tr.ok{display:none}
#show-failed:checked~.filters label[for=show-failed],#show-all:checked~.filters label[for=show-all],
#grp-all:checked~.filters label[for=grp-all]{background:#333;color:#fff}
"""


def _group_css(groups: list[GroupRow]) -> str:
    """One rule per group: its radio button shows only that group's rows and sections."""
    rules = []
    for i, _ in enumerate(groups):
        rules.append(f"#grp-{i}:checked~table tr:not(.g-{i}):not(.top),#grp-{i}:checked~section.detail:not(.g-{i}){{display:none}}")
        rules.append(f"#grp-{i}:checked~.filters label[for=grp-{i}]{{background:#333;color:#fff}}")
    return "\n".join(rules)


def _outcome(x: str) -> str:
    return f'<td class="{html.escape(x.replace(" ", "-"))}">{html.escape(x)}</td>'


def _summary(c: Comparison) -> list[str]:
    e = html.escape
    rows = ['<table class="summary"><thead><tr><th>group</th><th>points</th><th>reference</th><th>failing cases</th>'
            "<th>time ratio</th></tr></thead><tbody>"]
    for i, g in enumerate(c.groups):
        share = "full" if g.sub_score >= g.points else ("none" if g.sub_score <= 0 else "part")
        rows.append(f'<tr><td><a href="#g-{i}">{e(g.title)}</a></td><td class="num {share}">{points(g.sub_score)} / {points(g.points)}</td>'
                    f'<td class="num">{points(g.ref_score)}</td><td class="num">{len(g.failed)} of {len(g.cases)}</td>'
                    f'<td class="num">{ratio_text(g.ratio)}</td></tr>')
    total = sum(g.sub_score for g in c.groups)
    rows.append(f'<tr><th>total</th><th class="num">{points(total)} / {points(sum(g.points for g in c.groups))}</th>'
                f'<th class="num">{points(sum(g.ref_score for g in c.groups))}</th>'
                f'<th class="num">{sum(len(g.failed) for g in c.groups)} of {len(c.cases)}</th><th></th></tr></tbody></table>')
    return rows


def _ordered(c: Comparison, g: GroupRow) -> list[Case]:
    """A group's cases: the failing ones first, in the order of their tests (most points lost
    first), then the others in report order."""
    failing = [x for t in c.failing_tests if t.group == g.name for x in t.failing]
    return failing + [x for x in g.cases if not x.failed]


def _case_row(x: Case, n: int | None, gi: int) -> str:
    e = html.escape
    first = x.divergence().splitlines()[0] if x.failed else ""
    name = f'<a href="#d-{n}">{e(x.nodeid)}</a>' if n is not None else e(x.nodeid)
    return (f'<tr class="g-{gi} {"bad" if x.failed else "ok"}"{f" id=r-{n}" if n is not None else ""}>'
            f'<td class="id">{name}</td>{_outcome(x.submission)}{_outcome(x.reference)}'
            f'<td class="num">{secs_text(x.sub_time)}</td><td class="num">{secs_text(x.ref_time)}</td><td class="num">{ratio_text(x.ratio)}</td>'
            f'<td class="num">{points(x.score)} / {points(x.max_score)}</td><td class="diff"><code>{e(first[:200])}</code></td></tr>')


def _cases(c: Comparison) -> tuple[list[str], list[str]]:
    """The case table's rows and the sections holding each failing case's difference."""
    e = html.escape
    rows, details, n = [], [], 0
    for gi, g in enumerate(c.groups):
        rows.append(f'<tr class="grouphead g-{gi}" id="g-{gi}"><th colspan="8">{e(g.title)}: '
                    f"{failing(len(g.failed), len(g.cases), 'case')}, {points(g.sub_score)} / {points(g.points)} points</th></tr>")
        for x in _ordered(c, g):
            if not x.failed:
                rows.append(_case_row(x, None, gi))
                continue
            n += 1
            rows.append(_case_row(x, n, gi))
            details.append(
                f'<section class="detail g-{gi}" id="d-{n}"><h3 class="id">{e(x.nodeid)}</h3>'
                f'<p>{e(g.title)} · submission {e(x.submission)}, reference {e(x.reference)} · <a href="#r-{n}">back to its row</a></p>'
                f'<pre class="diff">{e(x.divergence(keep_indent=True))}</pre>'
                + (f"<details><summary>full output</summary><pre>{e(x.output)}</pre></details>" if x.output.strip() else "")
                + "</section>"
            )
    return rows, details


def page(c: Comparison, back: str | None = None) -> str:
    """The self-contained HTML page of one comparison (``back``: a link to the class index)."""
    e = html.escape
    head = headline(c)
    rows, details = _cases(c)
    radios = ['<input class="pick" type="radio" name="show" id="show-failed" checked>',
              '<input class="pick" type="radio" name="show" id="show-all">',
              '<input class="pick" type="radio" name="grp" id="grp-all" checked>',
              *(f'<input class="pick" type="radio" name="grp" id="grp-{i}">' for i in range(len(c.groups)))]
    labels = ('<p class="filters">show: <label for="show-failed">failing cases</label><label for="show-all">all cases</label>'
              ' · group: <label for="grp-all">all</label>'
              + "".join(f'<label for="grp-{i}">{e(g.title)}</label>' for i, g in enumerate(c.groups)) + "</p>")
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(c.name)}: comparison with the reference</title>", f"<style>{CSS}{_group_css(c.groups)}</style></head><body>",
        *([f'<p><a href="{e(back)}">all students</a></p>'] if back else []),
        f"<h1>{e(c.name)}: comparison with the reference</h1>", f'<p class="head">{e(head[0])}</p>',
        *(['<ul class="notes">' + "".join(f"<li>{e(ln.strip())}</li>" for ln in head[1:]) + "</ul>"] if head[1:] else []),
        '<h2 id="summary">Summary by group</h2>', *_summary(c),
    ]
    if c.diagnoses:
        parts += ['<h2 id="diagnosis">Diagnosis</h2><div class="diag">',
                  *(f"<p>{e(known_bug_line(bug))} ({count(n, 'failing case')})</p>" for bug, n in c.diagnoses), "</div>"]
    parts += [
        '<h2 id="cases">Cases</h2><div class="cases">', *radios, labels,
        '<table class="cases"><thead><tr class="top"><th>case</th><th>submission</th><th>reference</th><th>submission s</th>'
        "<th>reference s</th><th>ratio</th><th>points</th><th>first difference</th></tr></thead><tbody>",
        *rows, "</tbody></table>",
        *(['<h2 id="differences">First difference and output of each failing case</h2>'] if details else []), *details,
        "</div></body></html>",
    ]
    return "\n".join(parts) + "\n"


def class_page(comparisons: list[Comparison], links: dict[str, str]) -> str:
    """The index of a class: one row per student (linking to their page), one column per group."""
    e = html.escape
    groups = comparisons[0].groups if comparisons else []
    possible = sum(g.points for g in groups)
    head = "".join(f'<th title="{e(g.title)}">{e(g.title)}<br>({points(g.points)})</th>' for g in groups)
    rows = []
    for c in comparisons:
        scores = {g.name: g.sub_score for g in c.groups}
        cells = []
        for g in groups:
            s = scores.get(g.name, 0.0)
            share = "full" if s >= g.points else ("none" if s <= 0 else "part")
            cells.append(f'<td class="num {share}">{points(s)}</td>')
        state = (f'<td class="error">could not be graded: {e(c.sub.error)}</td>' if c.sub.error
                 else f'<td class="num">{sum(x.failed for x in c.cases)}</td>')
        bugs = "".join(f"<div>{e(bug)}</div>" for bug, _ in c.diagnoses)
        rows.append(f'<tr><td><a href="{e(quote(links[c.name]))}">{e(c.name)}</a></td>'
                    f'<td class="num">{points(c.sub.score)}</td>{"".join(cells)}{state}<td>{bugs}</td></tr>')
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>the class beside the reference</title>",
        f"<style>{CSS}</style></head><body>", f"<h1>{count(len(comparisons), 'submission')} beside the reference</h1>",
        f"<table><thead><tr><th>student</th><th>total<br>({points(possible)})</th>{head}<th>failing cases</th><th>known bugs</th></tr></thead>",
        "<tbody>", *rows, "</tbody></table></body></html>",
    ]) + "\n"
