"""Side-by-side benchmarks of the reference BPE against its peers.

Training: ``reference.train_bpe`` against HF ``tokenizers`` (``BpeTrainer`` with the
byte-level pre-tokenizer) and ``rustbpe``. Encoding: ``reference.Tokenizer`` with the GPT-2
vocabulary, on one core and on all, against ``tiktoken``'s ``encode_ordinary`` (one core),
with a check that the ids are identical. Every measurement runs in a fresh subprocess (``python -m
bench._child``) so that start-up is included and peak memory (``ru_maxrss`` of the process
and of any worker processes it waited for: the largest single process, not a sum) is
comparable. All contenders get the same files. Peers that are not installed are reported
as missing, never as a failure (``pip install .[bench]`` installs them).

Run ``python -m bench`` (about 10 minutes on 2 cores) or ``python -m bench --quick``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from harness.childenv import LEAKY, child_env

ROOT = Path(__file__).resolve().parent.parent
EOT = "<|endoftext|>"
MB = 1_000_000
GPT2_URLS = {
    "vocab.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    "merges.txt": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
}
PEER_MODULES = {"hf": "tokenizers", "rustbpe": "rustbpe", "tiktoken": "tiktoken"}
PEER_NAMES = {
    "reference": "reference",
    "reference-iter": "reference encode_iterable",
    "hf": "HF tokenizers",
    "rustbpe": "rustbpe",
    "tiktoken": "tiktoken encode_ordinary",
}


def usable_cores() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def missing_peers() -> list[str]:
    """Peers (keys of ``PEER_MODULES``) whose module cannot be imported here."""
    return [peer for peer, module in PEER_MODULES.items() if importlib.util.find_spec(module) is None]


# ---- inputs ------------------------------------------------------------------------------


def zipf_file(data_dir: Path, n_bytes: int) -> Path:
    """The generated Zipf-like corpus of ``n_bytes`` (with ``<|endoftext|>`` documents),
    written once into ``data_dir``."""
    path = data_dir / f"zipf_{n_bytes}.txt"
    if not path.is_file():
        sys.path.insert(0, str(ROOT))
        from fixtures.generate import write_zipf_corpus

        tmp = path.with_suffix(".part")
        write_zipf_corpus(tmp, n_bytes, seed=0)
        tmp.replace(path)
    return path


def repeated_file(data_dir: Path, source: Path, n_bytes: int) -> Path:
    """``source`` repeated until it holds ``n_bytes`` (the last copy cut at a line end)."""
    path = data_dir / f"{source.stem}_x_{n_bytes}.txt"
    if not path.is_file():
        text = source.read_text(encoding="utf-8")
        copies = text * (n_bytes // len(text.encode("utf-8")) + 1)
        cut = copies.encode("utf-8")[:n_bytes].decode("utf-8", errors="ignore")
        tmp = path.with_suffix(".part")
        tmp.write_text(cut[: cut.rfind("\n") + 1] or cut, encoding="utf-8", newline="")
        tmp.replace(path)
    return path


def python_source_file(data_dir: Path, n_bytes: int) -> Path:
    """Real text: the installed standard library's ``.py`` files (sorted by path, each a
    document ending in ``<|endoftext|>``) concatenated until ``n_bytes`` are reached."""
    path = data_dir / f"pysrc_{n_bytes}.txt"
    if path.is_file():
        return path
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    tmp = path.with_suffix(".part")
    size = 0
    with open(tmp, "w", encoding="utf-8", newline="") as out:
        for source in sorted(stdlib.rglob("*.py")):
            if size >= n_bytes:
                break
            if "site-packages" in source.parts:
                continue
            try:
                text = source.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            doc = text + "\n" + EOT + "\n"
            out.write(doc)
            size += len(doc.encode("utf-8"))
    tmp.replace(path)
    return path


def use_tiktoken_cache() -> None:
    """Point tiktoken at the shared download cache beside the repository, if there is one."""
    shared = ROOT.parent / "shared" / "tiktoken_cache"
    if "TIKTOKEN_CACHE_DIR" not in os.environ and shared.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(shared)


def gpt2_files(data_dir: Path) -> tuple[Path, Path] | None:
    """GPT-2's ``vocab.json`` and ``merges.txt`` written from tiktoken's download cache
    into ``data_dir`` (never into the repository); ``None`` if they cannot be had."""
    vocab, merges = data_dir / "gpt2_vocab.json", data_dir / "gpt2_merges.txt"
    if not (vocab.is_file() and merges.is_file()):
        use_tiktoken_cache()
        try:
            from tiktoken.load import read_file_cached

            vocab.write_bytes(read_file_cached(GPT2_URLS["vocab.json"]))
            merges.write_bytes(read_file_cached(GPT2_URLS["merges.txt"]))
        except Exception:  # no tiktoken, no cache and no network: the encoding part is skipped
            return None
    return vocab, merges


# ---- running one measurement in a fresh process -------------------------------------------


@dataclass
class Result:
    """One contender on one input."""

    task: str  # "train" or "encode"
    input: str  # a label for the input file
    contender: str  # key of PEER_NAMES
    size: int  # input bytes
    vocab: int = 0
    seconds: float | None = None  # None: not run (missing peer or error)
    pretok_seconds: float | None = None
    merge_seconds: float | None = None
    peak_mb: float | None = None
    ids_digest: str | None = None  # encode only: hash of the ids
    n_ids: int | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)
    cores: int | None = None  # encode: the cores the process could run on (None: all)

    @property
    def mb_per_s(self) -> float | None:
        return self.size / MB / self.seconds if self.seconds else None


def run_child(spec: dict, timeout: float = 1800) -> dict:
    """Run ``bench._child`` on ``spec`` in a fresh interpreter; its JSON result."""
    env = child_env(keep=LEAKY, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "bench._child", json.dumps(spec)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {proc.returncode}: {tail}"}
    return json.loads(lines[-1])


def repeats_for(size: int) -> int:
    """Runs per measurement: the median of 5 below 2 MB and of 3 up to 20 MB, where a run
    takes seconds at most and a busy machine skews single runs most; one run above."""
    return 5 if size < 2 * MB else 3 if size <= 20 * MB else 1


def measure(task: str, contender: str, path: Path, label: str, vocab: int = 0, repeats: int = 1, **kw) -> Result:
    """Run one contender on one input in a fresh process, ``repeats`` times; the run with
    the median time."""
    result = Result(task, label, contender, path.stat().st_size, vocab, cores=kw.get("cores"))
    module = PEER_MODULES.get(contender)
    if module and importlib.util.find_spec(module) is None:
        result.note = f"missing: pip install {module}"
        return result
    runs = [run_child({"task": task, "contender": contender, "path": str(path), "vocab": vocab, **kw}) for _ in range(repeats)]
    return summarize(result, runs)


def measure_alternating(specs: list[tuple[str, int | None]], path: Path, label: str, repeats: int, **kw) -> list[Result]:
    """Encoding: each (contender, cores) of ``specs`` once per round, ``repeats`` rounds, so
    that changes in the machine's load hit every contender alike; the median run of each."""
    runs: list[list[dict]] = [[] for _ in specs]
    for _ in range(repeats):
        for i, (contender, cores) in enumerate(specs):
            runs[i].append(run_child({"task": "encode", "contender": contender, "path": str(path), "cores": cores, **kw}))
    return [summarize(Result("encode", label, c, path.stat().st_size, cores=cores), r) for (c, cores), r in zip(specs, runs)]


def summarize(result: Result, runs: list[dict]) -> Result:
    """``result`` filled in from the run with the median time (or the first error)."""
    failed = [r for r in runs if "error" in r]
    if failed:
        result.note = failed[0]["error"]
        return result
    out = sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]
    result.seconds = out["seconds"]
    result.pretok_seconds = out.get("pretok_seconds")
    result.merge_seconds = out.get("merge_seconds")
    result.peak_mb = out["peak_kb"] / 1024
    result.ids_digest = out.get("ids_digest")
    result.n_ids = out.get("n_ids")
    result.extra = {k: v for k, v in out.items() if k.endswith("_seconds") and k not in ("pretok_seconds", "merge_seconds")}
    return result


def ids_digest(ids) -> str:
    """A short hash of a list of ids, to compare outputs across processes."""
    return hashlib.sha256(array("q", ids).tobytes()).hexdigest()[:16]


# ---- tables ----------------------------------------------------------------------------------


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def train_table(results: list[Result]) -> str:
    """Markdown table of training results; ``ratio`` is the reference's time (and peak
    memory) divided by that contender's, so <= 1.0 means the reference is as fast (small)."""
    lines = [
        "| input | MB | vocab | contender | time s | pre-tok s | merges s | MB/s | peak MB | ref/peer time | ref/peer mem |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for group in _groups(results):
        ref = group[0] if group[0].contender == "reference" else None
        for r in group:
            ratio_t = ratio_m = "-"
            if r.contender != "reference" and ref and ref.seconds and r.seconds:
                ratio_t = f"{ref.seconds / r.seconds:.2f}"
                ratio_m = f"{ref.peak_mb / r.peak_mb:.2f}"
            time = _fmt(r.seconds) if r.seconds is not None else r.note
            lines.append(
                f"| {r.input} | {r.size / MB:.1f} | {r.vocab} | {PEER_NAMES[r.contender]} | {time} | "
                f"{_fmt(r.pretok_seconds)} | {_fmt(r.merge_seconds)} | {_fmt(r.mb_per_s)} | {_fmt(r.peak_mb, 0)} | "
                f"{ratio_t} | {ratio_m} |"
            )
    return "\n".join(lines)


def encode_table(results: list[Result]) -> str:
    """Markdown table of encoding results; ``/ tiktoken MB/s`` is each reference row's
    throughput as a fraction of tiktoken's single-thread throughput on the same input."""
    lines = [
        "| input | MB | contender | cores | time s | MB/s | peak MB | / tiktoken MB/s | ids equal |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for group in _groups(results):
        base = next((r for r in group if r.contender == "tiktoken" and r.ids_digest), None)
        for r in group:
            name = PEER_NAMES[r.contender]
            ratio = "-"
            if r.contender != "tiktoken" and base and base.seconds and r.seconds:
                ratio = f"{r.mb_per_s / base.mb_per_s:.2f}"
            equal = "-" if not (base and r.ids_digest) or r is base else ("yes" if r.ids_digest == base.ids_digest else "NO")
            time = _fmt(r.seconds) if r.seconds is not None else r.note
            cores = "all" if r.cores is None else str(r.cores)
            lines.append(
                f"| {r.input} | {r.size / MB:.1f} | {name} | {cores} | {time} | {_fmt(r.mb_per_s)} | {_fmt(r.peak_mb, 0)} | {ratio} | {equal} |"
            )
    return "\n".join(lines)


def _groups(results: list[Result]) -> list[list[Result]]:
    """Results grouped by (input, vocab), in first-seen order."""
    groups: dict[tuple[str, int], list[Result]] = {}
    for r in results:
        groups.setdefault((r.input, r.vocab), []).append(r)
    return list(groups.values())
