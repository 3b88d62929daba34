"""``python -m bench``: the reference against its peers, side by side; prints Markdown.

    python -m bench                  # full run (inputs up to 100 MB; about 10 minutes on 2 cores)
    python -m bench --quick          # tiny inputs, a smoke test of the benchmark itself
    python -m bench --only train     # or encode
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

import bench
from bench import MB, Result, measure


def training_inputs(data_dir: Path, quick: bool) -> list[tuple[str, Path, int]]:
    """(label, file, vocab size) for the training benchmark."""
    corpus_en = bench.ROOT / "fixtures" / "corpus_en.txt"
    if quick:
        return [("zipf 0.2 MB", bench.zipf_file(data_dir, 200_000), 400)]
    inputs = []
    if corpus_en.is_file():
        inputs.append(("fixtures/corpus_en.txt", corpus_en, 500))
    inputs.append(("Python stdlib source", bench.python_source_file(data_dir, 20 * MB), 10_000))
    for n in (1, 10, 50, 100):
        inputs.append((f"zipf {n} MB", bench.zipf_file(data_dir, n * MB), 10_000))
    return inputs


def run_training(data_dir: Path, quick: bool, peers: list[str], log) -> list[Result]:
    results = []
    for label, path, vocab in training_inputs(data_dir, quick):
        for contender in ["reference", *peers]:
            r = measure("train", contender, path, label, vocab, repeats=1 if quick else bench.repeats_for(path.stat().st_size), specials=[bench.EOT])
            log(f"train {label} vocab {vocab} {contender}: {r.seconds if r.seconds is not None else r.note}")
            results.append(r)
    return results


def encoding_inputs(data_dir: Path, quick: bool) -> list[tuple[str, Path]]:
    """(label, file) for the encoding benchmark: generated text and real text."""
    if quick:
        return [("zipf 0.2 MB", bench.zipf_file(data_dir, 200_000))]
    multilingual = bench.ROOT / "fixtures" / "multilingual.txt"
    return [
        ("zipf 10 MB", bench.zipf_file(data_dir, 10 * MB)),
        ("Python stdlib source 10 MB", bench.python_source_file(data_dir, 10 * MB)),
        ("fixtures/multilingual.txt repeated to 10 MB", bench.repeated_file(data_dir, multilingual, 10 * MB)),
    ]


def encoding_contenders() -> list[tuple[str, int | None]]:
    """(contender, cores): the reference on one core and on all (it uses a process per core
    on large inputs), encode_iterable and tiktoken (single-threaded) on one core."""
    specs: list[tuple[str, int | None]] = [("reference", 1)]
    if bench.usable_cores() > 1:
        specs.append(("reference", None))
    return specs + [("reference-iter", 1), ("tiktoken", 1)]


def run_encoding(data_dir: Path, quick: bool, log) -> list[Result]:
    files = bench.gpt2_files(data_dir)
    if files is None:
        log("encoding skipped: GPT-2 files unavailable (no tiktoken cache)")
        return []
    results = []
    for label, path in encoding_inputs(data_dir, quick):
        repeats = 1 if quick else bench.repeats_for(path.stat().st_size)
        rows = bench.measure_alternating(
            encoding_contenders(), path, label, repeats, vocab_path=str(files[0]), merges_path=str(files[1])
        )
        for r in rows:
            log(f"encode {label} {r.contender} cores={r.cores or 'all'}: {r.seconds if r.seconds is not None else r.note}")
        results += rows
    return results


def scaling_table(results: list[Result]) -> str:
    """Training cost against input size, from the generated-corpus rows."""
    lines = [
        "| contender | " + " | ".join(r.input for r in results if r.contender == "reference" and r.input.startswith("zipf")) + " |",
    ]
    zipf = [r for r in results if r.input.startswith("zipf")]
    labels = list(dict.fromkeys(r.input for r in zipf))
    lines = [
        "| contender | " + " | ".join(f"{label}: s / peak MB" for label in labels) + " |",
        "| --- |" + " ---: |" * len(labels),
    ]
    for contender in dict.fromkeys(r.contender for r in zipf):
        cells = []
        for label in labels:
            r = next((r for r in zipf if r.contender == contender and r.input == label), None)
            cells.append("-" if r is None or r.seconds is None else f"{r.seconds:.1f} / {r.peak_mb:.0f}")
        lines.append(f"| {bench.PEER_NAMES[contender]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny inputs (a smoke test)")
    parser.add_argument("--only", choices=["train", "encode"], help="run one part only")
    parser.add_argument("--data-dir", type=Path, help="where generated inputs are kept (default: a temp dir)")
    args = parser.parse_args(argv)
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / "bpe-bench"
    data_dir.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    missing = bench.missing_peers()
    peers = [p for p in ("hf", "rustbpe") if p not in missing]
    import os

    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.machine()}")
    if missing:
        print(f"Missing peers (pip install .[bench]): {', '.join(bench.PEER_MODULES[p] for p in missing)}")
    if args.only in (None, "train"):
        results = run_training(data_dir, args.quick, peers, log)
        print("\n### Training (special token `<|endoftext|>`; time includes start-up)\n")
        print(bench.train_table(results))
        if not args.quick:
            print("\n### Scaling (training, vocab 10,000)\n")
            print(scaling_table(results))
    if args.only in (None, "encode"):
        results = run_encoding(data_dir, args.quick, log)
        if results:
            print(f"\n### Encoding with the GPT-2 vocabulary (cache cold; cores: 1 or all {bench.usable_cores()})\n")
            print(bench.encode_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
