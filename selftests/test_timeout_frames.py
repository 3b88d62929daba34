"""A call that runs too long in an isolated worker says where the submission's code was, as a
timeout in-process does (``your code was at (innermost last):`` then ``path:line in function``
relative to the submission): the worker dumps its stack on a signal before it is stopped
(:mod:`sandbox.stacks`), for the worker's own call limit and for the test's time limit alike."""

from __future__ import annotations

import faulthandler
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from harness import in_progress, timeouts
from harness.impl import Implementation, LocalBackend
from sandbox import stacks
from sandbox.backend import WorkerBackend
from sandbox.failures import WorkerTimeout
from sandbox.limits import IsolationLimits

ADAPTERS = """\
from slowpkg.loops import deep


def run_merge(ids, pair, new_id):
    return deep()


def run_pretokenize(text):
    return [text]
"""
LOOPS = """\
def deep():
    return spin()


def spin():
    n = 0
    while True: n += 1  # one line: the signal comes at the loop's test or at its body
"""


def line_of(source: str, piece: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if piece in line)


# (file, line, function) of each frame, innermost last: read from the sources above
WHERE = [f"adapters.py:{line_of(ADAPTERS, 'return deep()')} in run_merge",
         f"slowpkg/loops.py:{line_of(LOOPS, 'return spin()')} in deep",
         f"slowpkg/loops.py:{line_of(LOOPS, 'while True')} in spin"]
CALL_LIMIT = 2.0


def submission(root: Path, header: str = "") -> Path:
    (root / "slowpkg").mkdir(parents=True)
    (root / "slowpkg" / "__init__.py").write_text("")
    (root / "slowpkg" / "loops.py").write_text(LOOPS)
    (root / "adapters.py").write_text(header + ADAPTERS)  # a header moves adapters.py's lines (WHERE)
    return root


@pytest.fixture
def isolated(tmp_path):
    backends = []

    def make(call_timeout: float = CALL_LIMIT, header: str = "") -> Implementation:
        backend = WorkerBackend("student", submission(tmp_path / f"sub{len(backends)}", header),
                                IsolationLimits(call_timeout=call_timeout, term_grace=0.3))
        backends.append(backend)
        return Implementation(backend)

    yield make
    for backend in backends:
        backend.close()


def told(message: str) -> list[str]:
    lines = message.splitlines()
    start = lines.index("your code was at (innermost last):") if "your code was at (innermost last):" in lines else len(lines)
    return [line.strip() for line in lines[start + 1:] if line.startswith("  ")]


def test_a_call_over_the_workers_time_limit_says_where_the_submissions_code_was(isolated):
    with pytest.raises(WorkerTimeout) as err:
        isolated().run_merge([1], (1, 2), 3)
    assert told(str(err.value)) == WHERE, str(err.value)
    assert "bpe-worker-" not in str(err.value) and "<grader>" not in str(err.value)


def test_a_test_timeout_during_an_isolated_call_names_the_submissions_frames(isolated):
    impl = isolated(call_timeout=60)
    assert impl.run_pretokenize("x") == ["x"]  # the worker is up: the limit passes inside the call

    def alarm(signum, frame):
        timeout = timeouts.TestTimeout("Timeout (>1.0s) from pytest-timeout.")
        timeout.limit = 1.0
        raise timeout  # as harness.timeouts.SignalTimer does at a test's limit

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        with pytest.raises(timeouts.TestTimeout) as info:
            impl.run_merge([1], (1, 2), 3)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    message = timeouts.timeout_message(info, Path("/nowhere"))  # isolated: the frames are the worker's
    assert message.splitlines()[0] == ("Timeout (>1.0s): the test took longer than its limit of 1.0 s "
                                       "while your code was running adapters.run_merge(...)")
    assert told(message) == WHERE, message


def test_code_that_takes_the_signal_for_itself_times_out_as_before_without_frames(isolated):
    impl = isolated(header=f"import signal\nsignal.signal({int(stacks.SIGNAL)}, signal.SIG_IGN)\n")
    started = time.monotonic()
    with pytest.raises(WorkerTimeout) as err:
        impl.run_merge([1], (1, 2), 3)
    assert time.monotonic() - started < CALL_LIMIT + stacks.WAIT + 3
    assert "your code was at" not in str(err.value)
    assert str(err.value).startswith(f"timed out after {CALL_LIMIT:g} s")


# at import: widen the stack pipe (found in the worker's configuration) and fill it with a dump
# naming a frame the code never ran, the harness's frame included so that its thread is chosen
FORGE = """\
import fcntl, gc, os
_c = next(o for o in gc.get_objects() if type(o) is dict and "fds" in o and "code_dir" in o)
fcntl.fcntl(_c["fds"][2], 1031, 1 << 20)  # F_SETPIPE_SZ
os.set_blocking(_c["fds"][2], False)
_fake = ("Current thread 0x1 (most recent call first):\\n"
         f'  File "{_c["harness_dir"]}/sandbox/worker.py", line 1 in serve\\n'
         f'  File "{_c["code_dir"]}/student/forged.py", line 42 in forged\\n\\n').encode()
try:
    while True:
        os.write(_c["fds"][2], _fake)
except BlockingIOError:
    pass
"""


def test_a_dump_the_code_left_in_the_pipe_beforehand_is_not_taken_for_its_frames(isolated):
    impl = isolated(header=FORGE)
    with pytest.raises(WorkerTimeout) as err:
        impl.run_merge([1], (1, 2), 3)
    frames = told(str(err.value))
    assert "student/forged.py:42 in forged" not in frames and frames[1:] == WHERE[1:], frames  # WHERE[0]: moved by the header


def real_dump(code_dir: Path, harness_dir: Path) -> str:
    """faulthandler's own dump of this process while a thread runs a function compiled as if
    from ``code_dir`` called from one compiled as if from ``harness_dir`` (the worker's
    dispatcher), and a second thread runs another of ``code_dir``'s functions on its own."""
    namespace: dict = {}
    exec(compile("def call(f, ev):\n    return f(ev)\n", str(harness_dir / "harness" / "dispatch.py"), "exec"), namespace)
    exec(compile("def merge(ev):\n    ev.wait()\n\n\ndef helper(ev):\n    ev.wait()\n",
                 str(code_dir / "student" / "bpe.py"), "exec"), namespace)
    release = threading.Event()
    threads = [threading.Thread(target=namespace["call"], args=(namespace["merge"], release)),
               threading.Thread(target=namespace["helper"], args=(release,))]
    for t in threads:
        t.start()
    time.sleep(0.2)
    try:
        with tempfile.TemporaryFile() as f:
            faulthandler.dump_traceback(f, all_threads=True)
            f.seek(0)
            return f.read().decode()
    finally:
        release.set()
        for t in threads:
            t.join()


def test_the_frames_are_the_running_calls_in_the_submission_innermost_last(tmp_path):
    dump = real_dump(tmp_path / "code", tmp_path / "harness")
    assert stacks.submission_frames(dump, str(tmp_path / "code"), str(tmp_path / "harness")) == ["student/bpe.py:2 in merge"]


def test_a_dump_without_the_running_call_or_of_nothing_gives_no_frames(tmp_path):
    assert stacks.submission_frames("", str(tmp_path / "code"), str(tmp_path / "harness")) == []
    assert stacks.submission_frames("Stack (most recent call first):\n  <no Python frame>\n", "/c", "/h") == []


def test_a_noted_frame_list_belongs_to_its_error_only():
    first, second = TimeoutError(), TimeoutError()
    in_progress.note_frames(first, ["adapters.py:3 in run_merge"])
    assert in_progress.frames_at(first) == ["adapters.py:3 in run_merge"]
    assert in_progress.frames_at(second) == []


def test_in_process_the_traceback_gives_the_same_frames(tmp_path):
    # what a timeout in-process names (harness.timeouts.student_frames): the submission's frames
    # of the exception's own traceback, relative to it, the harness's left out; here the code
    # raises where the isolated tests' spins
    root = submission(tmp_path / "sub")
    (root / "slowpkg" / "loops.py").write_text(LOOPS.replace("while True: n += 1", "while True: n += 1 / 0"))
    impl = Implementation(LocalBackend("student", root))
    with pytest.raises(ZeroDivisionError) as info:
        impl.run_merge([1, 2], (1, 2), 3)
    assert timeouts.student_frames(info, root) == WHERE
