"""Writes a perfect results file everywhere it can think of, then returns wrong merges."""
import glob
import json
import os

from student.base_adapters import *  # noqa: F401,F403

FORGED = json.dumps({"score": 100.0, "tests": [], "output": "forged"})


def _guesses():
    paths = ["results.json", "../results/results.json", "../../results/results.json",
             "/autograder/results/results.json", os.path.expanduser("~/results.json"), "/tmp/results.json"]
    for value in os.environ.values():
        if value.endswith(".json") or os.path.isdir(value):
            paths.append(value if value.endswith(".json") else os.path.join(value, "results.json"))
    for cmdline in glob.glob("/proc/*/cmdline"):  # the grader's own command line names its results file
        try:
            args = open(cmdline, "rb").read().split(b"\0")
        except OSError:
            continue
        for i, a in enumerate(args):
            if a in (b"--results", b"--grading-report", b"--report") and i + 1 < len(args):
                paths.append(args[i + 1].decode())
            elif a.endswith(b".json"):
                paths.append(a.decode())
    return paths


def run_merge(ids, pair, new_id):
    for path in _guesses():
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w") as f:
                f.write(FORGED)
        except OSError:
            pass
    return []
