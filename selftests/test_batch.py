"""``python -m grader batch``: a folder of 20 submissions (correct, stubs, mutants, attacks)
is graded in parallel, ranked correctly, and each problem costs only its own row.

A small policy of our own (primitives + two tokenizer tests) keeps this quick."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from harness.childenv import child_env
from grader.attention import from_report
from grader.grade import grading_log
from grader.case_facts import LIMIT_MARKERS, note_failure
from grader.intake import Rejected, safe_extract
from grader.report import LIMITS, Case, GradeReport, ScoredCase

from .prefetch import prefetched
from .support import build_layout, folder_on_checkouts_file_system

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(900)  # one batch of 20 submissions, 2 at a time

POLICY = """\
version: 1
timeout: 30
isolation:
  call_timeout: 2
groups:
  - name: primitives
    points: 10
    select: ["tests/*/test_primitives*.py::*"]
  - name: tokenizer
    points: 10
    select: ["tests/*/test_tokenizer*.py::*"]
"""
TESTS = [
    "tests/public/test_primitives.py::test_pair_counts_count_every_adjacent_pair",
    "tests/public/test_primitives.py::test_merge_replaces_left_to_right_without_overlap",
    "tests/public/test_primitives.py::test_merge_takes_overlapping_occurrences_from_the_left",
    "tests/public/test_primitives.py::test_pair_counts_keep_the_order_inside_a_pair",
    "tests/public/test_primitives.py::test_merge_of_each_bpe_step_on_aaabdaaabac",
    # two cases, not all ten: each costs x2_encode_hangs the 2 s call timeout and a new worker
    "tests/public/test_tokenizer.py::test_merges_apply_by_rank_hand_worked[lowest_rank_first_not_leftmost]",
    "tests/public/test_tokenizer.py::test_merges_apply_by_rank_hand_worked[chain_of_merges]",
    # decode of invalid UTF-8 on a small saved vocabulary: no grading here builds GPT-2's
    "tests/public/test_tokenizer_files.py::test_loaded_tokenizer_decodes_non_utf8_tokens",
]


def checkout(dest: Path, code: str = "reference") -> Path:
    """adapters.py + student/ holding the reference solution or the stubs."""
    dest.mkdir(parents=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    shutil.copytree(ROOT / code, dest / "student", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def mutate(dest: Path, module: str, old: str, new: str) -> Path:
    path = dest / "student" / module
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{module} no longer contains {old!r}: update this mutant"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return dest


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> None:
    with zipfile.ZipFile(archive, "w") as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, prefix + p.relative_to(folder).as_posix())
    shutil.rmtree(folder)


def make_submissions(folder: Path) -> dict[str, str]:
    """20 submissions; returns student -> what it is (for messages)."""
    kinds: dict[str, str] = {}

    def sub(name: str, kind: str, code: str = "reference") -> Path:
        kinds[name] = kind
        return checkout(folder / name, code)

    sub("alice_reference", "correct")
    kinds["zoe_cs336_reference"] = "correct, a CS336-layout repository"
    zip_folder(build_layout("cs336", folder / "zoe_cs336_reference"), folder / "zoe_cs336_reference.zip", prefix="repo/")
    zip_folder(sub("carol_zipped_reference", "correct, zipped in a folder"), folder / "carol_zipped_reference.zip",
               prefix="bpe-assignment-main/")
    sub("bob_stubs", "stubs", code="student")
    # mutants: the reference with one function broken
    mutate(sub("m1_merge_overlapping", "mutant"), "primitives.py", "i += 2", "i += 1")
    mutate(sub("m2_pairs_skip_last", "mutant"), "primitives.py", "zip(ids, ids[1:])", "zip(ids[:-1], ids[1:-1])")
    mutate(sub("m3_decode_strict", "mutant"), "tokenizer.py", 'errors="replace"', 'errors="strict"')
    mutate(sub("m4_merge_new_id_off_by_one", "mutant"), "primitives.py", "out.append(new_id)", "out.append(new_id + 1)")
    mutate(sub("m5_pairs_reversed", "mutant"), "primitives.py", "zip(ids, ids[1:])", "zip(ids[1:], ids)")
    partial = sub("m6_only_primitives", "partial", code="student")
    shutil.copyfile(ROOT / "reference" / "primitives.py", partial / "student" / "primitives.py")
    # attacks
    mutate(sub("x1_exit_at_import", "attack"), "__init__.py", '"""', 'import sys; sys.exit(3)\n"""')
    mutate(sub("x2_encode_hangs", "attack, partial"), "tokenizer.py", '"""Text -> ids; special tokens are encoded whole, never split or merged."""',
           '"""Text -> ids."""\n        while True:\n            pass')
    mutate(sub("x3_syntax_error", "attack"), "primitives.py", "def merge(", "def merge(:")
    (sub("x4_no_adapters", "attack") / "adapters.py").unlink()
    mutate(sub("x5_os_exit_in_merge", "attack, partial"), "primitives.py", "first, second = pair", "import os; os._exit(0)")
    mutate(sub("x6_kills_its_parent", "attack, partial"), "primitives.py", "first, second = pair",
           "import os, signal; os.kill(os.getppid(), signal.SIGKILL)")
    kinds["x7_zip_slip"] = "attack"
    with zipfile.ZipFile(folder / "x7_zip_slip.zip", "w") as zf:
        zf.writestr("adapters.py", "")
        zf.writestr("../escaped.py", "print('escaped')\n")
    kinds["x8_zip_symlink"] = "attack"
    with zipfile.ZipFile(folder / "x8_zip_symlink.zip", "w") as zf:
        zf.writestr("adapters.py", "")
        link = zipfile.ZipInfo("student")
        link.external_attr = (0o120777) << 16
        zf.writestr(link, "/etc")
    kinds["x9_zip_bomb"] = "attack"
    with zipfile.ZipFile(folder / "x9_zip_bomb.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("adapters.py", "")
        zf.writestr("student/big.bin", b"\0" * 60_000_000)
    kinds["x10_not_a_zip"] = "attack"
    (folder / "x10_not_a_zip.zip").write_bytes(b"PK\x03\x04 this is not really a zip")
    assert len(kinds) == 20
    return kinds


def run_batch(folder: Path, out: Path, policy: Path, *extra: str) -> subprocess.CompletedProcess:
    env = child_env()
    return subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--jobs", "2", "--config", str(policy),
         "--max-time", "120", "--tests", *TESTS, *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )


@prefetched
def batch(prefetch):
    base = prefetch.mktemp("batch")
    folder = base / "submissions"
    folder.mkdir()
    kinds = make_submissions(folder)
    policy = base / "policy.yaml"
    policy.write_text(POLICY)
    started = time.monotonic()
    proc = run_batch(folder, base / "out", policy)
    return {"proc": proc, "out": base / "out", "kinds": kinds, "folder": folder, "policy": policy,
            "seconds": time.monotonic() - started}


def read_csv(out: Path) -> list[dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_batch_completes_with_one_row_per_submission_sorted(batch):
    proc = batch["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    rows = read_csv(batch["out"])
    assert [r["student"] for r in rows] == sorted(batch["kinds"])
    assert list(rows[0]) == ["student", "total", "primitives", "tokenizer"]
    assert not (batch["folder"].parent / "escaped.py").exists() and not (batch["out"] / "work" / "escaped.py").exists()


@pytest.mark.slow
def test_batch_ranks_correct_first_stubs_zero_and_mutants_between(batch):
    totals = {r["student"]: float(r["total"]) for r in read_csv(batch["out"])}
    summary = (batch["out"] / "summary.txt").read_text()
    summary = summary[summary.find("slowest submissions"):]
    kinds = batch["kinds"]
    best = max(totals.values())
    assert best == pytest.approx(20.0)
    for student, kind in kinds.items():
        if kind.startswith("correct"):
            assert totals[student] == best, f"{student} ({kind}): {totals[student]}\n{summary}"
        elif kind in ("mutant", "partial"):
            assert 0 < totals[student] < best, f"{student} ({kind}) should score between 0 and {best}: {totals[student]}\n{summary}"
        elif kind == "attack, partial":  # breaks one function: the others still score, the broken one not
            assert totals[student] < best, f"{student} ({kind}): {totals[student]}\n{summary}"
        else:
            assert totals[student] == 0, f"{student} ({kind}) should score 0: {totals[student]}\n{summary}"


@pytest.mark.slow
def test_csv_totals_equal_the_per_student_results_files(batch):
    for row in read_csv(batch["out"]):
        results = json.loads((batch["out"] / "results" / f"{row['student']}.json").read_text())
        assert float(row["total"]) == pytest.approx(results["score"], abs=1e-3), row["student"]
        for group in ("primitives", "tokenizer"):
            score = sum(t["score"] for t in results["tests"] if t["tags"][0] == group)
            assert float(row[group]) == pytest.approx(score, abs=0.01), (row["student"], group)  # per-test scores are rounded
        assert float(row["total"]) == pytest.approx(float(row["primitives"]) + float(row["tokenizer"]), abs=1e-3)


@pytest.mark.slow
def test_summary_reports_distribution_pass_rates_slowest_and_failures(batch):
    text = (batch["out"] / "summary.txt").read_text()
    assert "median" in text and "mean" in text and "#" in text
    assert "pass rate per test" in text and "test_merge_takes_overlapping_occurrences_from_the_left" in text
    assert "slowest submissions:" in text
    failures = text.split("could not be graded:")[1]
    for student in ("x4_no_adapters", "x7_zip_slip", "x8_zip_symlink", "x9_zip_bomb", "x10_not_a_zip"):
        assert student in failures, f"{student} should be listed as not graded"
    assert "outside the submission" in failures and "link" in failures and "MB" in failures
    assert "summary.txt" in batch["proc"].stdout


@pytest.mark.slow
def test_rerun_skips_up_to_date_results_unless_forced(batch, tmp_path):
    out, folder = tmp_path / "out", tmp_path / "submissions"  # copies (mtimes kept): the other tests keep theirs
    shutil.copytree(batch["out"], out, symlinks=True)
    shutil.copytree(batch["folder"], folder, symlinks=True)
    before = {p.name: p.stat().st_mtime for p in (out / "results").glob("*.json")}
    csv_before = (out / "grades.csv").read_text()
    # one submission changes: only it is graded again
    changed = folder / "bob_stubs" / "student" / "primitives.py"
    shutil.copyfile(ROOT / "reference" / "primitives.py", changed)
    proc = run_batch(folder, out, batch["policy"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = {p.name: p.stat().st_mtime for p in (out / "results").glob("*.json")}
    regraded = sorted(n for n in before if after[n] != before[n])
    assert regraded == ["bob_stubs.json"]
    assert "19 reused" in proc.stdout
    rows = {r["student"]: r for r in read_csv(out)}
    assert float(rows["bob_stubs"]["primitives"]) == pytest.approx(10.0)
    assert csv_before != (out / "grades.csv").read_text()


@pytest.mark.slow
def test_batch_keeps_going_past_a_submission_that_uses_its_whole_budget_and_names_it(tmp_path):
    """A correct but slow submission (a second per merge) uses up its time budget: it keeps
    the points of the tests it finished, the submission beside it is graded in full, and the
    summary names the one that hit the budget."""
    folder = tmp_path / "submissions"
    checkout(folder / "alice_reference")
    mutate(checkout(folder / "sam_slow_merge"), "primitives.py", "first, second = pair", "import time; time.sleep(1); first, second = pair")
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    budget = 20
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2", "--config", str(policy),
         "--max-time", str(budget), "--tests", *TESTS[:5]],
        cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["student"]: r for r in read_csv(tmp_path / "out")}
    assert float(rows["alice_reference"]["primitives"]) == pytest.approx(10.0), proc.stdout
    assert 0 < float(rows["sam_slow_merge"]["primitives"]) < 10, proc.stdout
    summary = (tmp_path / "out" / "summary.txt").read_text()
    used_up = summary.split("used up their time budget", 1)[-1]
    assert "sam_slow_merge" in used_up and "alice_reference" not in used_up, summary
    results = json.loads((tmp_path / "out" / "results" / "sam_slow_merge.json").read_text())
    assert results["execution_time"] <= budget + 1, results["output"]


@pytest.mark.slow
def test_sigterm_to_batch_stops_the_gradings_under_way_each_writing_its_results(tmp_path):
    """SIGTERM to batch: each grade command under way is stopped too and writes its results
    from the tests it finished (not SIGKILLed, leaving nothing); the batch ends within seconds,
    and a re-run grades that submission again instead of reusing its partial results."""
    folder = tmp_path / "submissions"
    mutate(checkout(folder / "sam_slow_merge"), "primitives.py", "first, second = pair", "import time; time.sleep(2); first, second = pair")
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    cmd = [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(tmp_path / "out"), "--config", str(policy),
           "--tests", *TESTS[:5]]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    results = tmp_path / "out" / "results" / "sam_slow_merge.json"
    logs = tmp_path / "out" / "logs"
    until = time.monotonic() + 60
    while time.monotonic() < until and not any(logs.glob("*.log")):  # its grade command has started
        time.sleep(0.2)
    time.sleep(8)
    proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert time.monotonic() - signalled < 25, err[-2000:]
    written = json.loads(results.read_text())
    assert "grading stopped by SIGTERM" in written["output"] or "stopped by SIGTERM" in json.dumps(written), written
    again = run_batch(folder, tmp_path / "out", policy)  # not reused: graded in full this time
    assert "0 reused" in again.stdout, again.stdout[-2000:]


def test_safe_extract_rejects_escapes_links_and_oversize(tmp_path):
    cases = {
        "abs.zip": [("/etc/evil", b"x")],
        "dots.zip": [("a/../../evil", b"x")],
        "big.zip": [("big", b"\0" * 2000)],
    }
    for name, members in cases.items():
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            for member, data in members:
                zf.writestr(member, data)
        with pytest.raises(Rejected):
            safe_extract(tmp_path / name, tmp_path / f"out_{name}", max_bytes=1000)
        assert not (tmp_path / f"out_{name}").exists()


def _broken_zips(folder: Path) -> list[Path]:
    """Zips whose reading fails past the checks: an entry flagged encrypted (zipfile asks for
    its password: RuntimeError), a deflate stream cut up (zlib.error), a name flagged UTF-8
    that is not (UnicodeDecodeError when the zip is opened)."""
    def made(name: str, member: str, edit) -> Path:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("adapters.py", "")
            zf.writestr(member, "x = 1\n" * 1000)
        data = bytearray(buf.getvalue())
        edit(data, data.rfind(b"PK\x03\x04"), data.rfind(b"PK\x01\x02"), member.encode())
        (folder / name).write_bytes(bytes(data))
        return folder / name

    def encrypted(data, local, central, _):
        data[local + 6] |= 1
        data[central + 8] |= 1

    def cut(data, local, central, name):
        start = local + 30 + len(name)
        data[start + 2:start + 12] = bytes(b ^ 0xFF for b in data[start + 2:start + 12])

    def not_utf8(data, local, central, name):
        for at in (local + 30, central + 46):
            data[at:at + 2] = b"\xff\xfe"

    return [made("encrypted.zip", "secret.py", encrypted), made("cut.zip", "big.py", cut), made("bad_name.zip", "\u00e9vil.py", not_utf8)]


def test_a_zip_that_breaks_while_read_is_rejected_with_a_results_file(tmp_path):
    from grader.batch import BatchOptions, grade_one
    from grader.intake import Submission

    for archive in _broken_zips(tmp_path):
        with pytest.raises(Rejected, match="zip"):
            safe_extract(archive, tmp_path / f"out_{archive.stem}")
        assert not (tmp_path / f"out_{archive.stem}").exists()
        row = grade_one(Submission(archive.stem, archive), BatchOptions(out=tmp_path / "graded"), run=None)
        results = json.loads((tmp_path / "graded" / "results" / f"{archive.stem}.json").read_text())
        assert row.error and "zip" in row.error and results["score"] == 0.0 and "zip" in results["output"], (row, results)


def test_odd_and_colliding_names_get_safe_distinct_ones(tmp_path):
    from grader.intake import discover

    for name in ("alice", "Alice", "José Ruiz (2)", "-rf", "a" * 200, "bob"):
        (tmp_path / name).mkdir()
    for name in ("alice.zip", "bob.ZIP", "___.zip", "x y.zip"):
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            zf.writestr("adapters.py", "")
    (tmp_path / "link").symlink_to(tmp_path / "bob")
    subs, notes = discover(tmp_path)
    names = [s.student for s in subs]
    assert len(names) == 10 and len({n.lower() for n in names}) == 10, names
    assert all(re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9._@+-]{0,78}[A-Za-z0-9])?", n) for n in names), names
    by_source = {s.source.name: s.student for s in subs}
    assert by_source["José Ruiz (2)"] == "Jose_Ruiz_2" and by_source["-rf"] == "rf" and by_source["bob"] == "bob"
    assert by_source["x y.zip"] == "x_y" and by_source["___.zip"] == "submission"
    assert {by_source["Alice"], by_source["alice"], by_source["alice.zip"]} == {"Alice", "alice-2", "alice-3"}
    assert any("'link': a symbolic link, ignored" in n for n in notes)
    assert any("graded as Jose_Ruiz_2" in n for n in notes)


def test_a_name_that_only_becomes_a_students_name_never_takes_it(tmp_path):
    """``!alice`` sorts before ``alice`` and is made ``alice`` too: the real alice keeps her
    name (her row of grades.csv), the other gets ``alice-2`` (a friend's perfect copy handed
    in as ``!alice`` scored alice's row)."""
    from grader.intake import discover

    for name in ("!alice", "alice", "-bob", "bob!", "zoe"):
        (tmp_path / name).mkdir()
    with zipfile.ZipFile(tmp_path / "+zoe.zip", "w") as zf:
        zf.writestr("adapters.py", "")
    subs, notes = discover(tmp_path)
    by_source = {s.source.name: s.student for s in subs}
    assert by_source == {"alice": "alice", "!alice": "alice-2", "-bob": "bob", "bob!": "bob-2", "zoe": "zoe", "+zoe.zip": "zoe-2"}
    assert "'!alice': graded as alice-2" in notes and [s.student for s in subs] == sorted(by_source.values())


def test_folders_are_copied_without_following_links_out(tmp_path):
    from grader.intake import copy_folder

    src = folder_on_checkouts_file_system("bpe-links-out-")  # a hard link to the reference needs its file system
    try:
        (src / "student").mkdir()
        (src / "adapters.py").write_text("")
        (src / "student" / "ok.py").write_text("x = 1\n")
        (src / "reference").symlink_to(ROOT / "reference", target_is_directory=True)
        os.link(ROOT / "reference" / "__init__.py", src / "student" / "__init__.py")
        left_out = copy_folder(src, tmp_path / "dest")
    finally:
        shutil.rmtree(src)
    assert sorted(p.name for p in (tmp_path / "dest").rglob("*")) == ["adapters.py", "ok.py", "student"]
    assert len(left_out) == 2


@pytest.mark.parametrize(
    "raw, expected",
    [("Dave Müller", "Dave_Muller"), ("José Ruiz", "Jose_Ruiz"), ("Søren Ærø", "Soren_AEro"), ("Łukasz Żółć", "Lukasz_Zolc"),
     ("Straße", "Strasse"), ("ﬁnn", "finn"), ("王小明", "submission")],
)
def test_names_are_transliterated_to_ascii_where_unicode_says_how(raw, expected):
    from grader.intake import student_name

    assert student_name(raw) == expected


def test_names_that_transliterate_alike_stay_distinct(tmp_path):
    from grader.intake import discover

    for name in ("Müller", "Muller", "Mùller", "王", "李"):
        (tmp_path / name).mkdir()
    names = [s.student for s in discover(tmp_path)[0]]
    assert sorted(names) == ["Muller", "Muller-2", "Muller-3", "submission", "submission-2"]


def test_the_output_folder_inside_the_submissions_folder_is_no_ones_submission(tmp_path):
    """``batch subs --out subs/graded``: the second run found ``graded/`` (its own results) among
    the submissions and gave it a row."""
    from grader.intake import discover

    for name in ("alice", "graded", "nested"):
        (tmp_path / name).mkdir()
    subs, notes = discover(tmp_path, tmp_path / "graded")
    assert [s.student for s in subs] == ["alice", "nested"]
    assert "'graded': holds batch's output folder (--out), not graded" in notes
    subs, notes = discover(tmp_path, tmp_path / "nested" / "deeper" / "out")
    assert [s.student for s in subs] == ["alice", "graded"]


def test_batch_with_only_its_own_output_folder_in_the_folder_grades_no_one(tmp_path):
    out = tmp_path / "subs" / "graded"
    for sub in ("results", "reports", "work", "logs"):
        (out / sub).mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "subs"), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "no submissions in" in proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
def test_each_log_keeps_its_students_grade_output(batch):
    log = (batch["out"] / "logs" / "zoe_cs336_reference.log").read_text(encoding="utf-8")
    assert "layout: CS336" in log and "not installed where grading runs: " in log, log[-2000:]
    assert "unwrapped: everything in the submission is inside one folder, repo/, graded from there" in log, log[-2000:]
    assert re.search(r"^seed \d+.*isolation: ", log, re.M), log[-2000:]
    assert re.search(r"^total\s", log, re.M), "the table of points"


@pytest.mark.slow
def test_summary_ends_with_who_hit_limits_errors_or_known_bugs(batch):
    text = (batch["out"] / "summary.txt").read_text(encoding="utf-8")
    table = text.split("to look at (")[1].splitlines()
    rows = {ln.split()[0]: ln for ln in table[3:] if ln.strip()}
    assert "call time limit" in rows["x2_encode_hangs"]
    assert "no adapters.py" in rows["x4_no_adapters"] and "import failed: SyntaxError" in rows["x3_syntax_error"]
    assert "worker exited" in rows["x5_os_exit_in_merge"]
    assert "merge" in rows["m1_merge_overlapping"].split("  ")[-1], "a known bug of the catalogue"
    assert "alice_reference" not in rows and "zoe_cs336_reference" not in rows


@pytest.mark.parametrize("graded, out_of", [(("primitives",), "out of 10 graded"), (("primitives", "tokenizer"), "out of 20)")])
def test_a_partial_grade_is_summarised_out_of_the_points_graded(tmp_path, graded, out_of):
    from grader.batch import Row, summary
    from grader.config import load_config

    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    config = load_config(policy)
    rows = [Row(s, total=t, groups={g: t / len(graded) for g in graded}) for s, t in (("a", 4.0), ("b", 10.0))]
    text = summary(rows, config, [])
    assert out_of in text, text
    by_group = text.split("by group")[1].split("\n\n")[0]
    assert [ln.split()[0] for ln in by_group.splitlines()[1:]] == list(graded)
    assert ("partial grade (--tests)" in text) == (len(graded) < len(config.groups))


@pytest.mark.parametrize("limit, text", LIMIT_MARKERS, ids=[name for name, _ in LIMIT_MARKERS])
def test_a_failing_case_notes_the_limit_its_failure_names(limit, text):
    failed = Case("t::f", "g", 1.0, "visible", "failed", f"E   something\nE   {text} here")
    passed = Case("t::f", "g", 1.0, "visible", "passed", f"{text} printed by a passing test")
    note_failure(failed), note_failure(passed)
    assert (failed.limits, passed.limits) == ([limit], [])


def test_a_failing_case_notes_the_line_saying_the_submission_did_not_load():
    line = "adapters.py could not be imported: SyntaxError in x.py, line 3"
    failed = Case("t::f", "g", 1.0, "visible", "failed", f"E   {line}\nE   more")
    note_failure(failed)
    assert failed.load_error == line


def test_limits_errors_and_known_bugs_are_counted_from_failing_cases_only():
    def case(outcome, **facts):
        return ScoredCase("t::f", "g", "1.1", outcome, **facts)

    tests = [case("failed", limits=[name]) for name in LIMITS]
    tests += [case("passed", limits=["test time limit"], known_bug="passing", load_error="passing"),
              case("failed", known_bug="merge skips a pair."), case("failed", known_bug="merge skips a pair."),
              case("error"), case("failed", load_error="adapters.py could not be imported: SyntaxError in x.py, line 3")]
    found = from_report(GradeReport(tests=tests), None)
    assert found.limits == {name: 1 for name in LIMITS}
    assert found.known_bugs == ["merge skips a pair."]
    assert found.errors == ["adapters.py could not be imported: SyntaxError in x.py, line 3",
                            "1 case ended in an error (neither passed nor failed)"]
    assert not from_report(GradeReport(tests=[case("passed", limits=["test time limit"])]))


def test_a_batch_shares_one_pip_cache_among_its_gradings_and_removes_it(tmp_path, monkeypatch):
    """grade --install-declared keeps no pip cache (nothing of a grading stays behind); a class
    declaring the same packages would download them once per student. A batch hands each of its
    gradings the same cache folder, in TMPDIR, and removes it when it ends."""
    from grader import batch as B
    from grader import install

    seen: list[str | None] = []

    class FakeGrade:
        def __init__(self, cmd, env, **kwargs):
            seen.append(env.get(install.CACHE_ENV))
            assert os.path.isdir(seen[-1]), "the cache folder exists while the batch grades"
            self.pid, self.returncode = os.getpid(), 0

        def wait(self, timeout=None):
            return 0

    for name in ("alice", "bob"):
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "adapters.py").write_text("")
    monkeypatch.setattr(B, "_start", lambda opts, config: (None, 0))
    monkeypatch.setattr(B.subprocess, "Popen", FakeGrade)
    monkeypatch.setattr(B, "kill_group", lambda pid: None)
    monkeypatch.setattr(B.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    B.run_batch(tmp_path / "subs", B.BatchOptions(out=tmp_path / "out", jobs=1, quiet=True))
    assert len(seen) == 2 and seen[0] == seen[1] and Path(seen[0]).parent == tmp_path / "tmp"
    assert not os.path.exists(seen[0])


@pytest.mark.parametrize("in_batch", [True, False], ids=["in_a_batch", "alone"])
def test_pip_caches_only_in_a_batch(tmp_path, monkeypatch, in_batch):
    from grader import install

    monkeypatch.delenv("PIP_NO_CACHE_DIR", raising=False)
    if in_batch:
        monkeypatch.setenv(install.CACHE_ENV, str(tmp_path))
    else:
        monkeypatch.delenv(install.CACHE_ENV, raising=False)
    envs = []
    monkeypatch.setattr(install.subprocess, "run", lambda cmd, env, **kw: envs.append(env) or subprocess.CompletedProcess(cmd, 0, "", ""))
    install._pip(["--version"], tmp_path, time.monotonic() + 60)
    expected = {"PIP_CACHE_DIR": str(tmp_path)} if in_batch else {"PIP_NO_CACHE_DIR": "1"}
    assert {k: v for k, v in envs[0].items() if k in ("PIP_CACHE_DIR", "PIP_NO_CACHE_DIR")} == expected


def test_a_rerun_reuses_results_only_for_the_entry_they_were_graded_for(tmp_path):
    """Names are given over the whole folder: an entry added later can take a name another
    entry was graded under (``alice/`` arriving beside ``!alice/``, graded as ``alice`` before).
    Its results, newer than the newcomer's files (unpacked with their old times), are not its."""
    from grader.batch import BatchOptions, grade_one
    from grader.formats import write_json
    from grader.intake import Submission

    graded = []

    def run(root, results_path, report_path, log, opts):  # stands for grade: a score per entry
        graded.append(root.name)
        write_json(results_path, {"score": {"!alice": 1.0, "alice": 7.0}[(root / "who").read_text()], "tests": []})
        return 0

    opts = BatchOptions(out=tmp_path / "out")
    for name in ("!alice", "alice"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "adapters.py").write_text("")
        (tmp_path / name / "who").write_text(name)
        for path in (tmp_path / name, *(tmp_path / name).iterdir()):
            os.utime(path, (1_000_000_000, 1_000_000_000))
    assert grade_one(Submission("alice", tmp_path / "!alice"), opts, run).total == 1.0
    assert grade_one(Submission("alice", tmp_path / "!alice"), opts, run).skipped, "the same entry again: reused"
    row = grade_one(Submission("alice", tmp_path / "alice"), opts, run)
    assert (row.total, row.skipped, len(graded)) == (7.0, False, 2)


def test_summary_shows_a_submissions_escape_sequences_literally():
    """An import error quoting the submission's message (the attention table) and a reason it
    could not be graded reach the terminal and summary.txt: shown, never run."""
    from grader.attention import Attention
    from grader.batch import Row, summary
    from grader.config import load_config
    from grader.policies import DEFAULT_POLICY

    hostile = "\x1b]0;PWNED\x07\x1b[2J\x1b[32mALL TESTS PASSED\x1b[0m\r\x9b2J"
    rows = [Row("ansi_import", attention=Attention(errors=[f"adapters.py could not be imported: RuntimeError: {hostile}"])),
            Row("bad_zip", error=f"the zip could not be extracted: {hostile}")]
    text = summary(rows, load_config(DEFAULT_POLICY), [])
    assert "\x1b" not in text and "\x9b" not in text and "\r" not in text
    assert "RuntimeError: \\x1b]0;PWN" in text and "extracted: \\x1b]0;PWNED" in text


def test_tests_worth_no_points_are_left_out_of_the_pass_rates():
    # under the CS336 policy the "Beyond CS336" tests carry 0 points: a repository correct by
    # CS336's contract had its summary's "hardest first" list filled with their 0% rows
    from grader.batch import row_from_results

    entries = [{"name": "a", "status": "failed", "score": 0, "max_score": 0, "extra_data": {"test": "tests/x.py::beyond"}},
               {"name": "b", "status": "passed", "score": 1, "max_score": 1, "extra_data": {"test": "tests/x.py::graded"}}]
    row = row_from_results("zoe", {"score": 1, "tests": entries})
    assert row.tests == {"tests/x.py::graded": "passed"}


def test_the_pass_rates_count_what_the_grading_log_counts():
    # under the CS336 policy the summary said "212 tests" where each grading log's table said
    # 215: three tests' cases were split between a group worth points and "Beyond CS336",
    # each part its own results entry, and the pass rates kept one entry per test (the last)
    import re

    from grader.batch import row_from_results, summary
    from grader.config import load_config
    from grader.policies import DEFAULT_POLICY

    def entry(name, test, status, points):
        return {"name": name, "status": status, "score": points if status == "passed" else 0, "max_score": points,
                "extra_data": {"test": test}}

    entries = [entry("Train — vocab size (visible cases)", "tests/x.py::vocab_size", "failed", 2),
               entry("Train — vocab size (hidden cases)", "tests/x.py::vocab_size", "passed", 1),
               entry("Train — merges", "tests/x.py::merges", "passed", 3),
               entry("Beyond — vocab size", "tests/x.py::vocab_size", "passed", 0)]
    row = row_from_results("zoe", {"score": 4, "tests": entries})
    assert sorted(row.tests.values()) == ["failed", "passed", "passed"], row.tests
    text = summary([row], load_config(DEFAULT_POLICY), [])
    assert text.startswith("1 submission: 1 graded"), text
    header = next(ln for ln in text.splitlines() if ln.startswith("pass rate per test"))
    scored, unscored = map(int, re.search(r"\((\d+) tests that carry points; .* also counts the (\d+) worth none\)", header).groups())
    assert scored + unscored == len(entries), header  # the log's "tests passed" counts every entry
    listed = [ln for ln in text.splitlines() if ln.startswith("  ") and "tests/x.py::" in ln]
    assert len(listed) == scored and sum("[Train — vocab size" in ln for ln in listed) == 2, listed


def test_the_summary_names_an_import_errors_file_and_line_within_its_column():
    # the errors column cut "adapters.py could not be imported: SyntaxError in student/t…"
    from grader.attention import Attention, table

    error = "adapters.py could not be imported: SyntaxError in student/train.py, line 68: invalid syntax"
    (line,) = table([("frank", Attention(errors=[error]))])[3:]
    assert "import failed: SyntaxError in student/train.py, line 68" in line, line


def test_gradings_sharing_a_results_folder_write_logs_of_their_own():
    # batch's results/alice.json and results/bob.json, graded two at a time, wrote one
    # results/grading.log between them; grade's own results.json keeps grading.log beside it
    assert grading_log(Path("out/results.json")) == Path("out/grading.log")
    logs = {grading_log(Path(f"out/results/{name}.json")) for name in ("alice", "bob", "grading")}
    assert logs == {Path("out/results/alice.grading.log"), Path("out/results/bob.grading.log"),
                    Path("out/results/grading.grading.log")}
