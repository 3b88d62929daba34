"""``batch --similarity [--public DIR]``: which submissions' code matches another's, or a
known public solution's, with the handout's code not counted as copying.

Fingerprints are ``copydetect``'s (``pip install -e .[similarity]``): the code is tokenized
(names become ``V``/``F``/``O``, strings ``S``, comments and layout dropped, so renaming and
reformatting change nothing), then every k-gram of the token text is hashed and winnowed, as
MOSS does. Fingerprints of the handout's stubs (``student/*.py``) and ``adapters.py`` are
boilerplate: they never count as a match.

A submission is one document: its Python files in path order (``# ==== path ====`` before
each), less what the handout ships or the course's tests hold (``tests/``, ``harness/``,
``fixtures/``, ``adapters.py``, ``conftest.py``), caches, virtual environments and files over
1 MB. For a pair, ``a_in_b`` is the share of ``a``'s fingerprinted code also found in ``b``;
the pair's ``similarity`` is the larger share (a student who copied one part of a bigger
public repository is still flagged). A pair is flagged at ``THRESHOLD`` or more with at
least ``MIN_MATCHED`` matched tokens (a few shared lines in a tiny document are no copy).

Writes ``similarity.csv`` (every pair with any match, most similar first) and
``similarity.html`` (the top pairs, matched regions highlighted side by side).
"""

from __future__ import annotations

import csv
import html
import io
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness import ROOT

NOISE = 25  # copydetect's default noise threshold: shortest match (in token text) counted
GUARANTEE = 25  # every match this long is found (window 1: all k-grams kept)
THRESHOLD = 0.5
MIN_MATCHED = 100
TOP = 25  # pairs shown in the HTML page
SKIP_PARTS = {"tests", "harness", "fixtures", "__pycache__", "__MACOSX", "site-packages", "node_modules",
              "venv", "env"}
SKIP_NAMES = {"adapters.py", "conftest.py", "setup.py"}
MAX_FILE = 1_000_000


class SimilarityUnavailable(Exception):
    """``copydetect`` is not installed (the message says how to install it)."""


@dataclass
class Document:
    name: str
    kind: str  # "submission" or "public"
    text: str
    files: int


@dataclass
class Pair:
    a: Document
    b: Document
    a_in_b: float
    b_in_a: float
    matched: int  # matched tokens (copydetect's token overlap)
    slices: tuple  # matched regions in a's and b's text

    @property
    def similarity(self) -> float:
        return max(self.a_in_b, self.b_in_a)

    def flagged(self, threshold: float = THRESHOLD) -> bool:
        return self.similarity >= threshold and self.matched >= MIN_MATCHED


def _copydetect():
    try:
        import copydetect
    except ImportError:
        raise SimilarityUnavailable(
            "the similarity report needs copydetect: pip install -e .[similarity]") from None
    return copydetect


def counted(rel: str) -> bool:
    """Whether the file at ``rel`` (a path inside a submission) is the student's code."""
    path = PurePosixPath(rel)
    if path.suffix != ".py" or path.name in SKIP_NAMES or path.is_absolute() or ".." in path.parts:
        return False
    return not any(p in SKIP_PARTS or p.startswith(".") for p in path.parts[:-1])


def read_code(source: Path) -> dict[str, str]:
    """The student's Python files of a submission folder or zip: relative path -> text
    (links are not followed; undecodable bytes replaced)."""
    files: dict[str, str] = {}
    if source.is_file():
        try:
            with zipfile.ZipFile(source) as zf:
                for info in zf.infolist():
                    name = info.filename.replace("\\", "/")
                    if not info.is_dir() and counted(name) and info.file_size <= MAX_FILE and not name.startswith("/"):
                        files[name] = zf.read(info).decode("utf-8", "replace")
        except (zipfile.BadZipFile, OSError, ValueError):
            return {}
        return files
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(source).as_posix()
            if counted(rel) and not path.is_symlink() and path.stat().st_size <= MAX_FILE:
                files[rel] = path.read_text(encoding="utf-8", errors="replace")
    return files


def document(name: str, kind: str, source: Path) -> Document:
    files = read_code(source)
    return Document(name, kind, _joined(files), len(files))


def _joined(files: dict[str, str]) -> str:
    return "".join(f"# ==== {rel} ====\n{code.rstrip()}\n\n" for rel, code in sorted(files.items()))


class Fingerprinter:
    """copydetect's fingerprints, the handout's stubs and adapters removed as boilerplate."""

    def __init__(self, boilerplate: list[Path] | None = None):
        import numpy as np

        self.cd = _copydetect()
        files = boilerplate if boilerplate is not None else [*sorted((ROOT / "student").glob("*.py")), ROOT / "adapters.py"]
        texts = [f.read_text(encoding="utf-8") for f in files]
        texts.append(_joined({f"student/{f.name}": t for f, t in zip(files, texts) if f.parent.name == "student"}))
        hashes = [h for t in texts for h in self.cd.CodeFingerprint("x.py", NOISE, 1, fp=io.StringIO(t)).hashes]
        self.boilerplate = np.unique(np.array(hashes))

    def __call__(self, doc: Document):
        return self.cd.CodeFingerprint(f"{doc.name}.py", NOISE, GUARANTEE - NOISE + 1, self.boilerplate,
                                       language="python", fp=io.StringIO(doc.text))


def compare(submissions: list[Document], public: list[Document] = (), fingerprint: Fingerprinter | None = None) -> list[Pair]:
    """Every pair of submissions and every (submission, public solution) with any match, most
    similar first (pairs under ``MIN_MATCHED`` matched tokens after all the others)."""
    fingerprint = fingerprint or Fingerprinter()
    prints = {id(d): fingerprint(d) for d in [*submissions, *public]}
    pairs = []
    for i, a in enumerate(submissions):
        for b in [*submissions[i + 1:], *public]:
            matched, (a_in_b, b_in_a), slices = fingerprint.cd.compare_files(prints[id(a)], prints[id(b)])
            if matched > 0:
                pairs.append(Pair(a, b, float(a_in_b), float(b_in_a), int(matched), slices))
    return sorted(pairs, key=lambda p: (p.matched < MIN_MATCHED, -p.similarity, -p.matched, p.a.name, p.b.name))


# ---- outputs ---------------------------------------------------------------------------


def write_csv(path: Path, pairs: list[Pair], threshold: float = THRESHOLD) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student_a", "b", "b_kind", "similarity", "a_in_b", "b_in_a", "matched_tokens", "flagged"])
    for p in pairs:
        writer.writerow([p.a.name, p.b.name, p.b.kind, f"{p.similarity:.3f}", f"{p.a_in_b:.3f}", f"{p.b_in_a:.3f}",
                         p.matched, "yes" if p.flagged(threshold) else "no"])
    path.write_text(buf.getvalue(), encoding="utf-8")


CSS = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:2px 8px;text-align:left}.flag{background:#fdd}.side{display:grid;grid-template-columns:1fr 1fr;gap:1em}
pre{background:#f7f7f7;padding:.5em;overflow:auto;max-height:40em;font-size:12px}mark{background:#fc6}"""


def _highlighted(text: str, slices) -> str:
    from copydetect.utils import highlight_overlap

    marked, _ = highlight_overlap(text, slices, "<mark>", "</mark>", truncate=10, escape_html=True)
    return marked


def render_html(pairs: list[Pair], n_submissions: int, n_public: int, threshold: float = THRESHOLD) -> str:
    e = html.escape
    cd = _copydetect()
    top = pairs[:TOP]
    flagged = sum(p.flagged(threshold) for p in pairs)
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Code similarity</title>',
           f"<style>{CSS}</style></head><body><h1>Code similarity</h1>",
           f"<p>{n_submissions} submissions, {n_public} public solutions; {flagged} pairs flagged (similarity "
           f"&ge; {threshold:g} and &ge; {MIN_MATCHED} matched tokens). Handout stubs and adapters are boilerplate, "
           f"never counted. Fingerprints: copydetect {e(cd.__version__)} (winnowing, k = {NOISE}).</p>",
           "<table><tr><th>#</th><th>a</th><th>b</th><th>similarity</th><th>a in b</th><th>b in a</th>"
           "<th>matched tokens</th></tr>"]
    for i, p in enumerate(top, 1):
        b = e(p.b.name) + (" (public)" if p.b.kind == "public" else "")
        out.append(f'<tr class="{"flag" if p.flagged(threshold) else ""}"><td><a href="#pair{i}">{i}</a></td>'
                   f"<td>{e(p.a.name)}</td><td>{b}</td><td>{p.similarity:.0%}</td><td>{p.a_in_b:.0%}</td>"
                   f"<td>{p.b_in_a:.0%}</td><td>{p.matched}</td></tr>")
    out.append("</table>")
    for i, p in enumerate(top, 1):
        out.append(f'<h2 id="pair{i}">{i}. {e(p.a.name)} &harr; {e(p.b.name)}: {p.similarity:.0%}</h2><div class="side">')
        for doc, slices, share in ((p.a, p.slices[0], p.a_in_b), (p.b, p.slices[1], p.b_in_a)):
            out.append(f"<div><h3>{e(doc.name)} ({doc.kind}, {share:.0%} matched)</h3>"
                       f"<pre>{_highlighted(doc.text, slices)}</pre></div>")
        out.append("</div>")
    out.append("</body></html>")
    return "\n".join(out)


def report(submissions: list, out: Path, public: Path | None = None) -> tuple[list[Pair], str]:
    """Write ``out/similarity.csv`` and ``out/similarity.html`` for the discovered
    ``submissions`` (and the entries of ``public``); the pairs, and a line to print."""
    from .intake import discover

    docs = [document(s.student, "submission", s.source) for s in submissions]
    known = [document(s.student, "public", s.source) for s in discover(public)[0]] if public is not None else []
    pairs = compare(docs, known)
    write_csv(out / "similarity.csv", pairs)
    (out / "similarity.html").write_text(render_html(pairs, len(docs), len(known)), encoding="utf-8")
    flagged = [p for p in pairs if p.flagged()]
    line = (f"similarity: {len(flagged)} pairs flagged of {len(pairs)} with any match"
            + (f" (top: {flagged[0].a.name} ~ {flagged[0].b.name} {flagged[0].similarity:.0%})" if flagged else "")
            + f"; {out / 'similarity.html'}")
    return pairs, line


def main(submissions: list, out: Path, public: Path | None = None) -> int:
    """``batch --similarity``: the report for the discovered ``submissions``; exit status."""
    import sys

    if public is not None and not Path(public).is_dir():
        print(f"batch: --public {public} is not a folder", file=sys.stderr)
        return 2
    try:
        _copydetect()
    except SimilarityUnavailable as err:
        print(f"batch: {err}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    _, line = report(submissions, out, public)
    print(line)
    print(f"pairs: {out / 'similarity.csv'}")
    return 0
