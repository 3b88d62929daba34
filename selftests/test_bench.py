"""Smoke test of the benchmark code (bench/) on tiny inputs; peers that are not installed
are reported as missing by the benchmark itself, so nothing here needs them. The quick run
(a subprocess) starts with the module and is checked last, the other tests running meanwhile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
bench = pytest.importorskip("bench")


@pytest.fixture(scope="module", autouse=True)
def quick_run(tmp_path_factory):
    """``python -m bench --quick``, started at once; its output is read by the last test."""
    out = tmp_path_factory.mktemp("bench-quick")
    with open(out / "stdout", "w+") as stdout, open(out / "stderr", "w+") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "bench", "--quick", "--data-dir", str(out / "data")],
                                cwd=ROOT, stdout=stdout, stderr=stderr, text=True)
        try:
            yield proc, stdout, stderr
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_tables_name_missing_peers_and_ratios():
    ref = bench.Result("train", "x", "reference", 2 * bench.MB, 300, seconds=2.0, pretok_seconds=0.5, merge_seconds=1.4, peak_mb=100)
    hf = bench.Result("train", "x", "hf", 2 * bench.MB, 300, seconds=4.0, peak_mb=200)
    gone = bench.Result("train", "x", "rustbpe", 2 * bench.MB, 300, note="missing: pip install rustbpe")
    table = bench.train_table([ref, hf, gone])
    assert "| x | 2.0 | 300 | HF tokenizers | 4.00 | - | - | 0.50 | 200 | 0.50 | 0.50 |" in table
    assert "missing: pip install rustbpe" in table


def test_encode_table_checks_ids_and_gives_each_reference_row_its_ratio_and_cores():
    common = dict(task="encode", input="t", size=bench.MB)
    rows = [
        bench.Result(contender="reference", seconds=2.0, peak_mb=1, ids_digest="a", cores=1, **common),
        bench.Result(contender="reference", seconds=1.0, peak_mb=1, ids_digest="a", **common),
        bench.Result(contender="reference-iter", seconds=2.0, peak_mb=1, ids_digest="b", cores=1, **common),
        bench.Result(contender="tiktoken", seconds=0.8, peak_mb=1, ids_digest="a", cores=1, **common),
    ]
    table = bench.encode_table(rows)
    assert "| t | 1.0 | reference | 1 | 2.00 | 0.50 | 1 | 0.40 | yes |" in table
    assert "| t | 1.0 | reference | all | 1.00 | 1.00 | 1 | 0.80 | yes |" in table
    assert "| 0.40 | NO |" in table  # encode_iterable's ids differ from tiktoken's in this made-up row
    assert "| tiktoken encode_ordinary | 1 | 0.80 | 1.25 | 1 | - | - |" in table


def test_repeated_file_has_the_size_asked_and_whole_lines(tmp_path):
    source = tmp_path / "s.txt"
    source.write_text("héllo wörld\nsecond line\n", encoding="utf-8")
    path = bench.repeated_file(tmp_path, source, 1000)
    data = path.read_bytes()
    assert 1000 - 30 < len(data) <= 1000 and data.endswith(b"\n")
    assert data.startswith(source.read_bytes() * 2)


def test_measure_reference_training_in_a_subprocess(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("low lower lowest<|endoftext|>new newer newest " * 50, encoding="utf-8")
    r = bench.measure("train", "reference", path, "tiny", 270, specials=["<|endoftext|>"])
    assert r.seconds is not None, r.note
    assert r.pretok_seconds is not None and r.merge_seconds is not None
    assert r.peak_mb > 1


def test_isolation_overhead_table_gives_both_ratios():
    from bench.isolation import table

    text = table({"in-process": [10.0, 12.0, 11.0], "isolated": [11.0, 13.0, 12.1]})
    assert "| in-process | 11.00 | 10.00 | 3 |" in text
    assert "+10% median to median, +10% best to best" in text


@pytest.mark.timeout(300)
def test_isolation_overhead_is_measured_on_a_test_selection():
    from bench.isolation import measure

    times = measure(1, ["tests/public/test_primitives.py::test_merge_accepts_ids_beyond_a_byte"])
    assert {k: len(v) for k, v in times.items()} == {"in-process": 1, "isolated": 1}
    assert all(t > 0 for v in times.values() for t in v)


@pytest.mark.timeout(600)
def test_quick_run_prints_tables(quick_run):
    proc, stdout, stderr = quick_run
    proc.wait(timeout=300)
    stdout.seek(0)
    stderr.seek(0)
    out = stdout.read()
    assert proc.returncode == 0, stderr.read()
    assert "### Training" in out
    assert "| reference |" in out
    if "### Encoding" in out:  # needs the GPT-2 files from tiktoken's cache
        assert "| NO |" not in out
    for peer in bench.missing_peers():
        assert bench.PEER_MODULES[peer] in out
