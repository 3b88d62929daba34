"""One measurement, run by ``bench.run_child`` in a fresh interpreter.

``python -m bench._child SPEC_JSON`` prints one JSON line: ``seconds`` (from before the
contender's library is imported to the end of the work), ``peak_kb`` (the largest of this
process's and its waited-for children's peak resident memory) and task-specific fields.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time


def peak_kb() -> float:
    """Peak resident memory in KiB of this process or of any child it waited for."""
    scale = 1 / 1024 if sys.platform == "darwin" else 1  # macOS reports bytes
    return scale * max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )


def train_reference(path: str, vocab: int, specials: list[str]) -> dict:
    start = time.perf_counter()
    import reference.train as train

    timings = {"import_seconds": time.perf_counter() - start}
    count_file = train.count_file

    def timed_count_file(*args, **kwargs):
        start = time.perf_counter()
        try:
            return count_file(*args, **kwargs)
        finally:
            timings["pretok_seconds"] = time.perf_counter() - start

    train.count_file = timed_count_file  # train_bpe looks it up at call time
    _, merges = train.train_bpe(path, vocab, specials)
    return {**timings, "n_merges": len(merges)}


def train_hf(path: str, vocab: int, specials: list[str]) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train([path], trainer)
    return {"n_merges": tokenizer.get_vocab_size() - 256 - len(specials)}


def _documents(path: str, specials: list[str]):
    """The file's text cut at special tokens (rustbpe has none), read 1 MB at a time."""
    sep = specials[0] if specials else None
    rest = ""
    with open(path, encoding="utf-8") as f:
        while block := f.read(1 << 20):
            docs = (rest + block).split(sep) if sep else [rest + block]
            rest = docs.pop()
            yield from docs
    if rest:
        yield rest


def train_rustbpe(path: str, vocab: int, specials: list[str]) -> dict:
    import rustbpe

    from reference.pretokenize import GPT2_PATTERN

    tokenizer = rustbpe.Tokenizer()
    # same number of merges as the others: rustbpe's vocabulary has no special tokens
    tokenizer.train_from_iterator(_documents(path, specials), vocab - len(specials), pattern=GPT2_PATTERN)
    return {"n_merges": tokenizer.vocab_size - 256}


def encode_reference(path: str, vocab_path: str, merges_path: str, stream: bool) -> dict:
    from bench import ids_digest
    from reference import Tokenizer

    start = time.perf_counter()
    tokenizer = Tokenizer.from_files(vocab_path, merges_path)  # no special tokens, like encode_ordinary
    load = time.perf_counter() - start
    start = time.perf_counter()
    if stream:
        with open(path, encoding="utf-8", newline="") as f:
            ids = list(tokenizer.encode_iterable(f))
    else:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        start = time.perf_counter()
        ids = tokenizer.encode(text)
    return {"seconds": time.perf_counter() - start, "load_seconds": load, "ids_digest": ids_digest(ids), "n_ids": len(ids)}


def encode_tiktoken(path: str) -> dict:
    from bench import ids_digest, use_tiktoken_cache

    use_tiktoken_cache()
    import tiktoken

    encoding = tiktoken.get_encoding("gpt2")
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    start = time.perf_counter()
    ids = encoding.encode_ordinary(text)
    return {"seconds": time.perf_counter() - start, "ids_digest": ids_digest(ids), "n_ids": len(ids)}


TRAINERS = {"reference": train_reference, "hf": train_hf, "rustbpe": train_rustbpe}


def use_cores(n: int | None) -> None:
    """Run this process (and any it starts) on its first ``n`` allowed cores (None: all)."""
    if n is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:n])


def main(spec: dict) -> dict:
    use_cores(spec.get("cores"))
    start = time.perf_counter()
    if spec["task"] == "train":
        out = TRAINERS[spec["contender"]](spec["path"], spec["vocab"], spec.get("specials", []))
        out["seconds"] = time.perf_counter() - start
        if "pretok_seconds" in out:  # the rest: building the pair index and the merge loop
            out["merge_seconds"] = out["seconds"] - out["pretok_seconds"] - out["import_seconds"]
    elif spec["contender"] == "tiktoken":
        out = encode_tiktoken(spec["path"])
    else:
        out = encode_reference(spec["path"], spec["vocab_path"], spec["merges_path"], spec["contender"] == "reference-iter")
    out["peak_kb"] = peak_kb()
    return out


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
