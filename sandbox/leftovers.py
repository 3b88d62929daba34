"""What a grading's workers leave behind if the test process dies without stopping them.

The test process records each worker's sandbox and process (pid, start time, user id) in
``$BPE_GRADER_STATE/workers.jsonl`` (``grade`` points it at its private temporary folder)
as soon as they exist. When the test process ends in any way, even killed, ``grade`` calls
:func:`sweep`: every recorded process still running (same pid and start time) is killed with
its process group, every process of a recorded worker user id nobody holds any more too,
and every recorded sandbox is removed. Other files of the test process that must not outlive
the grading (the known-bug diagnosis's mutants, the submission's on-disk metadata and
stand-ins: :func:`harness.proc_folders.own_folder`) are made inside ``$BPE_GRADER_STATE``,
which ``grade`` removes however the test process ended.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

from harness.proc_folders import STATE_ENV, start_time
FILE = "workers.jsonl"


def record(**fields: Any) -> None:
    """Append one record (``sandbox=...`` or ``pid=..., uid=...``) when a grading asked for it."""
    folder = os.environ.get(STATE_ENV)
    if not folder:
        return
    if "pid" in fields:
        fields["start"] = start_time(fields["pid"])
    with open(Path(folder) / FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields) + "\n")


def sweep(folder: Path) -> int:
    """Kill what the records in ``folder`` name and is still there; remove recorded
    sandboxes. Returns how many processes or folders were found left behind."""
    from . import uids

    try:
        lines = (Path(folder) / FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    found = 0
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        pid = item.get("pid")
        if type(pid) is int and item.get("start") is not None and start_time(pid) == item["start"]:
            found += 1
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        uid = item.get("uid")
        if type(uid) is int and os.geteuid() == 0:
            lease = uids.claim(uid)  # only an id no running grading holds
            if lease is not None:
                found += bool(uids.processes_of(uid))
                uids.sweep(uid)
                lease.release()
        sandbox = item.get("sandbox")
        if type(sandbox) is str and os.path.isdir(sandbox):
            found += 1
            shutil.rmtree(sandbox, ignore_errors=True)
    return found
