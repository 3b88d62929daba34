"""The start-up self-check: does the reference run in a worker confined like the submission's?

If the grading environment is set up so that the worker cannot import what the reference
needs (a package installed where the worker's private root does not show it, a path it
cannot read), every test would fail and every student would score 0 in silence. So before
grading, ``grade`` and ``batch`` import the reference and call it once in an identically
confined worker (:class:`sandbox.backend.WorkerBackend` for ``reference/``, with the
limits of ``grading.yaml``). A failure is a harness error, never a student's score.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from sandbox.limits import IsolationLimits

EXAMPLE = "Hello, world! It's 2026."
EXPECTED_PIECES = ["Hello", ",", " world", "!", " It", "'s", " 2026", "."]  # the GPT-2 pattern, by hand


def _short(message: str) -> str:
    """One line, sandbox paths cut to what follows the worker's code folder."""
    line = " ".join(message.split())
    return re.sub(r"/\S*?/bpe-worker-[^/\s]+/code/", "", line)[:400]


def check_reference(isolation: IsolationLimits | None = None, forbidden: tuple[str, ...] | None = None) -> str | None:
    """Import the reference in a confined worker and call it once (pre-tokenize a sentence,
    encode it with the byte-level vocabulary). ``isolation`` holds grading.yaml's limits
    (``Config.isolation``; None: the defaults), ``forbidden`` its ``forbidden_modules``. Returns ``None`` when it works, else the cause as
    one line."""
    from sandbox.backend import WorkerBackend

    backend = WorkerBackend("reference", None, isolation, label="reference (self-check)", forbidden=forbidden)
    try:
        pieces = backend.call("run_pretokenize", (EXAMPLE,), False)
        if pieces != EXPECTED_PIECES:
            return f"run_pretokenize({EXAMPLE!r}) returned {pieces!r:.200}, expected {EXPECTED_PIECES!r}"
        vocab = {i: bytes([i]) for i in range(256)}
        handle = backend.call("get_tokenizer", (vocab, [], None), True)
        ids = backend.method(handle, "encode", ("hi",))
        if ids != [104, 105]:
            return f"encode('hi') with the byte vocabulary returned {ids!r:.200}, expected [104, 105]"
    except BaseException as err:  # noqa: BLE001 - whatever it is, it is the harness's
        if isinstance(err, KeyboardInterrupt):
            raise
        return _short(f"{type(err).__name__}: {err}" if not str(err).startswith("adapters.py") else str(err))
    finally:
        backend.close()
    return None


def harness_error(cause: str) -> str:
    """The one-line message ``grade`` and ``batch`` print when the self-check fails."""
    return (
        f"harness error: the reference does not run in the isolated worker ({cause}); "
        "nothing was graded. The worker sees only this environment's interpreter and site-packages: "
        "install what is missing there (pip install -e . in the environment that runs the grader)"
    )
