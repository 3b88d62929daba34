"""Starting a worker's process: ``python -s -P -B -c BOOTSTRAP`` in a session and process
group of its own, in an environment built here whole (what ``-I`` gives, but for ``-E``, which
would ignore the ``PYTHONHASHSEED`` it is given: the order of its sets and dicts of strings is
then the same every run of a grading, as its score must be), given only its two protocol pipes and its stdout/stderr pipe, then told its
configuration on the request pipe (never in its argv, which every process can read from
``/proc/<pid>/cmdline``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import harness

# the worker's first line of code: read the configuration (one JSON line) from the request
# pipe whose descriptor is the only argument, then hand over to sandbox.worker.main
BOOTSTRAP = """\
import sys, os, json
fd, line = int(sys.argv[1]), bytearray()
while not line.endswith(b"\\n"):
    byte = os.read(fd, 1)
    if not byte:
        raise SystemExit(1)
    line += byte
c = json.loads(line)
del fd, line, byte
sys.path.insert(0, c["harness_dir"])
import sandbox.worker as w
w.main(c)
"""


def spawn(package: str, work: Path, fds: tuple[int, ...], out_r: int, out_w: int,
          hash_seed: int | None = None) -> subprocess.Popen:
    """Start the worker's process in ``work`` (its own session and process group) on these
    pipes (``fds``: the worker's ends, its configuration's ``fds``), ``BPE_IMPL`` set to
    ``package``, ``PYTHONHASHSEED`` to ``hash_seed`` (None: Python draws one). The worker's
    ends of the pipes (and ``out_w``) are closed here whatever happens; ``out_r`` too if it
    fails to start."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work),
        "TMPDIR": str(work),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "BPE_IMPL": package,
    } | ({} if hash_seed is None else {"PYTHONHASHSEED": harness.hash_seed(hash_seed)})
    try:
        return subprocess.Popen(
            [sys.executable, "-s", "-P", "-B", "-c", BOOTSTRAP, str(fds[0])],
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            pass_fds=fds,
            cwd=str(work),
            env=env,
            start_new_session=True,  # its own process group, killed as a whole
        )
    except BaseException:
        os.close(out_r)
        raise
    finally:
        for fd in (*fds, out_w):
            os.close(fd)


def send_config(fd: int, config: dict) -> None:
    """Write the worker's configuration, one JSON line, to its request pipe (still blocking)."""
    view = memoryview((json.dumps(config) + "\n").encode("utf-8"))
    while view:
        view = view[os.write(fd, view):]
