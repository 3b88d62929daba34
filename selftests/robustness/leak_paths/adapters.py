"""Tries to put the grading machine's paths into its feedback: every path-like string it can
find (its argv, environment, mounts, working directory, the strings in its own memory, the
parent's command line) is raised as the message of a failing call. It also keeps every
merge input it is given and shows the earlier ones in each merge failure: inputs of hidden
tests must never reach a visible test's feedback."""
import gc
import os
import re
import sys

from student.base_adapters import *  # noqa: F401,F403

PATH = re.compile(r"/[\w.+-]+(?:/[\w.+-]+)+")


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError as err:
        return f"<{err}>"


def _paths(text):
    system = ("/proc", "/dev", "/sys", "/usr/lib", "/lib", sys.prefix, sys.base_prefix)
    return sorted({p for p in PATH.findall(text) if not p.startswith(system)})


def _memory():
    found = set()
    for obj in gc.get_objects():
        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
        for item in items:
            if isinstance(item, str) and item.startswith("/") and len(item) < 300:
                found.add(item)
    return " ".join(sorted(found))


def run_get_pair_counts(ids):
    raise ValueError("argv/env/cwd: " + " ".join(_paths(_read("/proc/self/cmdline") + " " + _read("/proc/self/environ") + " " + os.getcwd())))


SEEN = []


def run_merge(ids, pair, new_id):
    SEEN.append(list(ids))
    if len(SEEN) > 1:
        raise ValueError(f"earlier merge inputs: {SEEN[:-1]!r:.300}")
    parent = _read(f"/proc/{os.getppid()}/cmdline") + _read("/proc/1/cmdline")
    raise ValueError("mounts/parent: " + " ".join(_paths(_read("/proc/self/mountinfo") + " " + parent)))


def run_pretokenize(text):
    raise ValueError("memory: " + " ".join(_paths(_memory())))
