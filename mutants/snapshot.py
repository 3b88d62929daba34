"""Snapshots of a checkout's grading, to show that a refactor of the grading changes no result.

``python -m mutants.snapshot CHECKOUT --out DIR`` grades, with CHECKOUT's own code (its
``python -m grader grade``, isolated, as a course runs it): the reference handed in as a
student's package (``adapters.py`` and ``student/`` holding ``reference/``'s modules, as
``.ci/run`` hands it to the autograder), the untouched stubs (``adapters.py`` and
``student/``), and every mutant of CHECKOUT's catalogue (built by CHECKOUT's
``mutants.build``). It writes one JSON per submission: each results entry (keyed by its test
id) with its name, number, score, max_score, status, visibility, cases and output, the total
and the top-level fields, the grade's exit status and a digest of the submission's files. The
same tool measures old and new code: only CHECKOUT changes.

Normalised, because they vary from run to run and say nothing of the grading, are only
measured values and temporary paths (:func:`normalise`): the times and ratio of a speed
line, the time column of the points table, the checkout's and the submission's paths, names
of temporary folders and object addresses. Limits, scores, statuses and any other text are
compared as written. ``execution_time`` is dropped.

``--against OLD`` compares the new snapshot with an earlier one, entry by entry, and prints
each difference (exit status 1 when any, 0 when none); ``--compare OLD NEW`` compares two
snapshots without grading. When a submission's files differ between the two (the reference
or the catalogue changed), the comparison says so first: its differences may come from that.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.request import GradeRequest
from harness.childenv import child_env

GRADE_TIMEOUT = 1800  # seconds for one grading (grading.yaml's budget is 9 minutes)
META = "_snapshot.json"  # the snapshot's own facts (checkout, commit, timings); not a submission

# builds CHECKOUT's catalogue with CHECKOUT's own builder (run in CHECKOUT): prints the names
# built; a mutant of the extra catalogue (bugs an older test already kills) only when named
BUILD_MUTANTS = """
import json, sys
from pathlib import Path
from mutants.build import build
import mutants.catalogue as c
dest, wanted = Path(sys.argv[1]), set(json.loads(sys.argv[2]))
chosen = [m for m in c.CATALOGUE if not wanted or m.name in wanted]
chosen += [m for m in getattr(c, "EXTRA", ()) if m.name in wanted]
for m in chosen:
    build(m, dest / ("mutant-" + m.name))
print(json.dumps([m.name for m in chosen]))
"""

# measured values (each pattern names what it normalises): the speed line of harness/timing.py
# ("1.295 s, reference 0.958 s (...), 1.4x; limit 10x + 1 s = 10.58 s": the limit's multiple and
# floor are policy and stay), a speed test's stop ("too slow: stopped after 3.72 s"), and the
# time column of grade's points table ("  16.0 s" ending a row)
MEASURED = (
    (re.compile(r"\b\d+\.\d{3} s, reference \d+\.\d{3} s"), "<t> s, reference <t> s"),
    (re.compile(r"\bstopped after \d+\.\d{2} s\b"), "stopped after <t> s"),
    (re.compile(r", \d+\.\dx; limit "), ", <r>x; limit "),
    (re.compile(r"(limit \S+x \+ \S+ s) = \d+\.\d{2} s"), r"\1 = <t> s"),
    (re.compile(r"(?<=  )\d+\.\d s$", re.M), "<t> s"),
    (re.compile(r"\b0x[0-9a-f]{6,}\b"), "0x<addr>"),
)


TABLE_PADDING, TABLE_RULE = re.compile(r" {2,}"), re.compile(r"-{3,}")


def temporary_folder(tmp: str) -> re.Pattern:
    """A temporary folder's name (its parents kept): ``/tmp/bpe-grade-x1y2/student`` -> ``<tmp>/student``."""
    return re.compile(re.escape(tmp.rstrip("/")) + r"/[^\s/'\"`)\]:,]+")


def normalise(text: str, paths: dict[str, str], tmp: str | None = None) -> str:
    """``text`` with the run's own paths (``paths``: path -> label) and measured values
    replaced (:data:`MEASURED`); nothing else changes."""
    for path, label in sorted(paths.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, label)
    text = temporary_folder(tmp or tempfile.gettempdir()).sub("<tmp>", text)
    for pattern, replacement in MEASURED:
        text = pattern.sub(replacement, text)
    return text


def entry_key(test: dict, seen: set[str]) -> str:
    """An entry's key: its test id, with its visibility when the function has several entries."""
    key = test.get("extra_data", {}).get("test") or test.get("name", "?")
    if key in seen:
        key = f"{key} ({test.get('visibility')})"
    while key in seen:
        key += "+"
    seen.add(key)
    return key


def snapshot_of(results: dict, paths: dict[str, str], tmp: str | None = None) -> dict:
    """The normalised results: ``{"top": {...}, "entries": {key: {...}}}``."""
    norm = lambda v: normalise(v, paths, tmp) if isinstance(v, str) else v  # noqa: E731
    top = {k: norm(v) for k, v in results.items() if k not in ("tests", "execution_time")}
    if isinstance(top.get("output"), str):  # the points table: its columns' widths follow the times in it
        top["output"] = TABLE_PADDING.sub("  ", TABLE_RULE.sub("---", top["output"]))
    entries, seen = {}, set()
    for t in results.get("tests", []):
        entries[entry_key(t, seen)] = {k: norm(v) for k, v in t.items()}
    return {"top": top, "entries": entries}


def digest(folder: Path) -> str:
    """The submission's files (names and contents, caches aside) as one sha256."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def build_submissions(checkout: Path, dest: Path, names: list[str]) -> dict[str, Path]:
    """``reference``, ``stubs`` and ``mutant-NAME`` for CHECKOUT's catalogue (``names``: only
    those, when given), under ``dest``."""
    wanted = set(names)
    built: dict[str, Path] = {}
    for name, source in (("reference", checkout / "reference"), ("stubs", checkout / "student")):
        if wanted and name not in wanted:
            continue
        sub = dest / name
        shutil.copytree(source, sub / "student", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copyfile(checkout / "adapters.py", sub / "adapters.py")
        built[name] = sub
    mutants = [n.removeprefix("mutant-") for n in wanted if n.startswith("mutant-")]
    if not wanted or mutants:
        done = subprocess.run([sys.executable, "-c", BUILD_MUTANTS, str(dest), json.dumps(mutants)], cwd=checkout,
                              env=child_env(), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"mutants.snapshot: building {checkout}'s catalogue failed: {done.stderr.strip()[-2000:]}")
        built |= {f"mutant-{n}": dest / f"mutant-{n}" for n in json.loads(done.stdout.splitlines()[-1])}
    missing = wanted - set(built)
    if missing:
        raise SystemExit(f"mutants.snapshot: no submission named {', '.join(sorted(missing))} in {checkout}")
    return built


def grade_one(checkout: Path, name: str, sub: Path, out: Path) -> dict:
    """Grade ``sub`` with CHECKOUT's grader; write ``out/NAME.json`` (normalised) and keep the
    raw results and the output in ``out/raw/NAME/`` (a folder each: grade writes its
    ``grading.log`` beside the results)."""
    raw = out / "raw" / name
    if raw.exists():
        shutil.rmtree(raw)
    raw.mkdir(parents=True)
    results, log = raw / "results.json", raw / "output.log"
    started = time.monotonic()
    with open(log, "w", encoding="utf-8") as output:
        try:
            code = subprocess.run(
                GradeRequest(submission=sub, results=results).argv(),  # the command line every checkout's grade reads
                cwd=checkout, env=child_env(), stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                timeout=GRADE_TIMEOUT, check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            code = f"not finished in {GRADE_TIMEOUT} s"
    seconds = time.monotonic() - started
    data = json.loads(results.read_text(encoding="utf-8")) if results.is_file() else {"tests": [], "missing": "no results file"}
    snap = {"submission": name, "exit_status": code, "files": digest(sub),
            **snapshot_of(data, {str(sub): "<submission>", str(checkout): "<checkout>"})}
    (out / f"{name}.json").write_text(json.dumps(snap, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return {"seconds": round(seconds, 1), "exit_status": code, "score": data.get("score")}


def take(checkout: Path, out: Path, names: list[str], jobs: int, stop_after: float | None = None, resume: bool = False) -> dict:
    """Build and grade every submission (``jobs`` at a time, in the order of ``names`` when
    given); none starts ``stop_after`` seconds after the start; ``resume``: those already in
    ``out`` are not graded again. Returns the snapshot's facts (kept in ``out``)."""
    checkout = checkout.resolve()
    (out / "raw").mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    started = time.monotonic()
    stop_at = started + stop_after if stop_after is not None else float("inf")

    def grade_in_time(name: str, sub: Path) -> dict | None:
        return grade_one(checkout, name, sub, out) if time.monotonic() < stop_at else None

    meta_path = out / META
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if resume and meta_path.is_file() else {"submissions": {}}
    with tempfile.TemporaryDirectory(prefix="bpe-snapshot-") as tmp:
        subs = build_submissions(checkout, Path(tmp), names)
        order = [n for n in (names or subs) if not (resume and (out / f"{n}.json").is_file())]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {name: pool.submit(grade_in_time, name, subs[name]) for name in order}
            try:
                for name, f in futures.items():
                    if (done := f.result()) is not None:
                        meta["submissions"][name] = done
                        print(f"[snapshot] {name}: {done}", flush=True)
            finally:
                pool.shutdown(cancel_futures=True)
    meta |= {"checkout": str(checkout), "commit": commit.stdout.strip(), "jobs": jobs,
             "seconds": round(time.monotonic() - started, 1), "not graded (time)": [n for n in order if n not in meta["submissions"]]}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def load(folder: Path) -> dict[str, dict]:
    """submission name -> its snapshot, from a snapshot folder."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json")) if p.name != META}


def first_difference(old: str, new: str) -> str:
    """Where two texts first differ, as a line of each."""
    a, b = old.splitlines() or [""], new.splitlines() or [""]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: {x[:200]!r} -> {y[:200]!r}"
    return f"{len(a)} lines -> {len(b)} lines" if len(a) != len(b) else "trailing text differs"


def field_differences(where: str, old: dict, new: dict) -> list[str]:
    """``where: field old -> new`` for each field that differs (texts: their first difference)."""
    lines = []
    for field in sorted(set(old) | set(new)):
        a, b = old.get(field, "<absent>"), new.get(field, "<absent>")
        if a == b:
            continue
        if isinstance(a, str) and isinstance(b, str) and ("\n" in a + b or len(a) + len(b) > 160):
            lines.append(f"{where}: {field} {first_difference(a, b)}")
        else:
            lines.append(f"{where}: {field} {json.dumps(a, ensure_ascii=False)} -> {json.dumps(b, ensure_ascii=False)}")
    return lines


def differences(old: dict, new: dict) -> list[str]:
    """Every difference between two snapshots of one submission, entry by entry."""
    name = new.get("submission") or old.get("submission")
    lines = []
    if old.get("files") != new.get("files"):
        lines.append(f"{name}: its files differ between the two checkouts (differences below may come from that)")
    for field in ("exit_status",):
        if old.get(field) != new.get(field):
            lines.append(f"{name}: {field} {old.get(field)} -> {new.get(field)}")
    lines += field_differences(f"{name} (top)", old.get("top", {}), new.get("top", {}))
    a, b = old.get("entries", {}), new.get("entries", {})
    lines += [f"{name}: entry {k} only before" for k in a if k not in b]
    lines += [f"{name}: entry {k} only after" for k in b if k not in a]
    for key in (k for k in a if k in b):
        lines += field_differences(f"{name}: {key}", a[key], b[key])
    return lines


def compare(old_dir: Path, new_dir: Path) -> tuple[list[str], dict[str, list[str]]]:
    """All differences between two snapshot folders, and the submissions by outcome (same,
    differ, graded only before, only after)."""
    old, new = load(old_dir), load(new_dir)
    lines, kinds = [], {"same": [], "differ": [], "only before": [], "only after": []}
    for name in sorted(set(old) | set(new)):
        if name not in new or name not in old:
            kinds["only before" if name not in new else "only after"].append(name)
            continue
        found = differences(old[name], new[name])
        kinds["differ" if found else "same"].append(name)
        lines += found
    return lines, kinds


def report(old_dir: Path, new_dir: Path, common: bool = False) -> int:
    """Print the comparison; 0 when the two snapshots are the same entry by entry (``common``:
    those graded in both), else 1."""
    lines, kinds = compare(old_dir, new_dir)
    one_side = [f"graded {k}: {' '.join(v)}" for k in ("only before", "only after") if (v := kinds[k])]
    print("\n".join(lines + one_side))
    print(f"[snapshot] {old_dir} -> {new_dir}: " + ", ".join(f"{len(v)} {k}" for k, v in kinds.items() if v or k == "same"))
    return 1 if lines or (one_side and not common) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutants.snapshot", description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, nargs="?", help="the checkout whose grading is measured")
    parser.add_argument("--out", type=Path, help="the snapshot folder to write")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME",
                        help="only these submissions, graded in this order: reference, stubs, mutant-NAME "
                             "(default: all; a mutant of the extra catalogue only when named)")
    parser.add_argument("--jobs", type=int, default=2, help="gradings at a time (default 2)")
    parser.add_argument("--stop-after", type=float, metavar="SECONDS", help="start no grading after this many seconds")
    parser.add_argument("--resume", action="store_true", help="grade only the submissions not yet in --out")
    parser.add_argument("--against", type=Path, help="an earlier snapshot folder: print the differences")
    parser.add_argument("--common", action="store_true",
                        help="compare only the submissions graded in both (the others are listed, not counted)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"), help="compare two snapshots, no grading")
    args = parser.parse_args(argv)
    if args.compare:
        return report(*args.compare, common=args.common)
    if args.checkout is None or args.out is None:
        parser.error("give a CHECKOUT and --out DIR (or --compare OLD NEW)")
    if not (args.checkout / "grader").is_dir():
        parser.error(f"{args.checkout} is not a checkout of this project (no grader/)")
    meta = take(args.checkout, args.out, args.only, args.jobs, args.stop_after, args.resume)
    print(f"[snapshot] {len(meta['submissions'])} submissions of {meta['commit'][:7]} in {meta['seconds']:.0f} s: {args.out}"
          + (f"; not graded in time: {' '.join(meta['not graded (time)'])}" if meta["not graded (time)"] else ""))
    return report(args.against, args.out, common=args.common) if args.against else 0


if __name__ == "__main__":
    sys.exit(main())
