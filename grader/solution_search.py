"""The function search: does anything the handout ships outside ``student/`` solve a graded part?

:func:`solution_functions` tries every function and class of a handout tree (outside
``student/``) as the student's implementation of each graded function: called with that
function's arguments (in any order, a file argument also as the file's text), and the
callables and ``encode``/``decode`` methods of what it returns called in turn, compared with
what the reference returns for the same arguments. The calls run in a child process
(:mod:`grader.search_child`, one forked process per candidate, with time and memory limits)
inside a throw-away copy of the tree (the data files the calls read are put back before
each candidate). ``export_handout`` refuses a handout in which the search finds anything.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT
from harness.childenv import child_env

from .exports import HandoutError

EOT = "<|endoftext|>"


def graded_cases(work: Path) -> list[dict]:
    """One case per graded function: its arguments, the reference's result, and for a
    class the method to call on what it returns. Files the cases read are written to
    ``work``."""
    if str(ROOT) not in sys.path:  # this checkout's reference, wherever the command runs (as harness.impl.load_adapters)
        sys.path.insert(0, str(ROOT))
    import reference as R

    corpus = (ROOT / "fixtures" / "stories.txt").read_bytes().decode("utf-8")[:3000]
    path = work / "corpus.txt"
    path.write_bytes(corpus.encode("utf-8"))
    vocab, merges = R.train_bpe(str(path), 320, [EOT])
    text = "Once upon a time, a café<|endoftext|> owned 12 cats. Héllo 🙂!\n"
    tok = R.Tokenizer(vocab, merges, [EOT])
    ids = tok.encode(text)
    R.save_tokenizer_files(vocab, merges, str(work / "vocab.json"), str(work / "merges.txt"))
    word_training = "the cat and the hat, the end."
    cases = [
        {"name": "CharacterTokenizer.encode", "args": [text], "expected": R.CharacterTokenizer().encode(text)},
        {"name": "ByteTokenizer.encode", "args": [text], "expected": R.ByteTokenizer().encode(text)},
        {"name": "WordTokenizer.encode", "args": [word_training, "the hat and the cat"],
         "expected": R.WordTokenizer(word_training).encode("the hat and the cat")},
        {"name": "get_pair_counts", "args": [[1, 2, 3, 1, 2, 2, 2]], "expected": R.get_pair_counts([1, 2, 3, 1, 2, 2, 2])},
        {"name": "merge", "args": [[5, 5, 5, 1, 2, 5, 5], (5, 5), 9], "expected": R.merge([5, 5, 5, 1, 2, 5, 5], (5, 5), 9)},
        {"name": "pretokenize", "args": [text], "expected": R.pretokenize(text)},
        {"name": "split_on_special_tokens", "args": [text + EOT + EOT + "x", [EOT, EOT + EOT]],
         "expected": R.split_on_special_tokens(text + EOT + EOT + "x", [EOT, EOT + EOT])},
        {"name": "train_bpe", "args": [str(path), 320, [EOT]], "file_arg": 0, "expected": (vocab, merges)},
        {"name": "train_bpe (merges)", "args": [str(path), 320, [EOT]], "file_arg": 0, "expected": merges},
        {"name": "Tokenizer.encode", "args": [vocab, merges, [EOT]], "then": ("encode", [text]), "expected": ids},
        {"name": "Tokenizer.encode", "args": [vocab, merges, [EOT], text], "expected": ids},
        {"name": "Tokenizer.encode", "args": [merges, text], "expected": ids},
        {"name": "Tokenizer.encode_iterable", "args": [vocab, merges, [EOT]],
         "then": ("encode_iterable", [text.splitlines(keepends=True)]), "expected": ids},
        {"name": "Tokenizer.decode", "args": [vocab, merges, [EOT]], "then": ("decode", [ids]), "expected": text},
        {"name": "load_tokenizer_files", "args": [str(work / "vocab.json"), str(work / "merges.txt")],
         "expected": R.load_tokenizer_files(str(work / "vocab.json"), str(work / "merges.txt"))},
        {"name": "bytes_to_unicode", "args": [], "expected": R.bytes_to_unicode()},
    ]
    return cases


def solution_functions(tree: Path) -> tuple[int, list[dict]]:
    """``(candidates tried, findings)`` of the function search over ``tree``: each finding
    names the shipped function, the graded function it reproduces and the call that did."""
    with tempfile.TemporaryDirectory(prefix="bpe-search-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp)
        copy = work / "tree"
        shutil.copytree(tree, copy, symlinks=True)
        data = work / "data"
        data.mkdir()
        cases_file = work / "cases.pickle"
        cases_file.write_bytes(pickle.dumps(graded_cases(data)))
        out = work / "found.jsonl"
        out.touch()
        source = (Path(__file__).with_name("search_child.py")).read_text(encoding="utf-8")
        # no BPE_* variable passes (a grading's BPE_GRADER_STATE would have the handout's own
        # per-process folders made there, outside the throw-away tree: a candidate's process
        # ends with os._exit, removing none of them); TMPDIR holds them, removed with it
        env = child_env(drop=("BPE_*",)) | {"HOME": str(work), "TMPDIR": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", source, str(cases_file), str(out)],
                cwd=copy, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as err:
            raise HandoutError("the function search over the handout did not finish in 900 s") from err
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
        if not lines or "candidates" not in lines[0]:
            raise HandoutError(f"the function search over the handout failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        return lines[0]["candidates"], lines[1:]


def describe(findings: list[dict]) -> str:
    return "\n  ".join(f"{f['function']} reproduces {f['graded']}: {f['call']}" for f in findings)


if __name__ == "__main__":  # python -m grader.solution_search TREE
    n, found = solution_functions(Path(sys.argv[1]))
    print(f"{n} candidates; {len(found)} reproduce a graded function" + (":\n  " + describe(found) if found else ""))
