"""The isolated worker backend: results, errors, limits and crashes cross the boundary safely."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.impl import ROOT, BrokenImplementation, Implementation
from sandbox import closing
from sandbox.backend import WorkerBackend
from sandbox.failures import StudentExit, WorkerDied, WorkerTimeout
from sandbox.limits import IsolationLimits
from sandbox.paths import PathArguments
from harness.values import WrongResult

from .support import VENV_IN_CHECKOUT

FAST = IsolationLimits(call_timeout=3.0, term_grace=0.3)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker needs a POSIX system")


def submission(tmp_path: Path, adapters: str, **package_files: str) -> Path:
    """A submission folder: ``adapters.py`` (prefixed with common imports) and ``student/``."""
    root = tmp_path / "sub"
    (root / "student").mkdir(parents=True)
    (root / "student" / "__init__.py").write_text("")
    for name, text in package_files.items():
        (root / "student" / f"{name}.py").write_text(textwrap.dedent(text))
    header = "import os, sys, time, signal\n"
    (root / "adapters.py").write_text(header + textwrap.dedent(adapters))
    return root


@pytest.fixture
def make(tmp_path):
    backends = []

    def make(adapters: str, limits: IsolationLimits = FAST, backend_options: dict | None = None, **files: str) -> Implementation:
        backend = WorkerBackend("student", submission(tmp_path, adapters, **files), limits, **(backend_options or {}))
        backends.append(backend)
        return Implementation(backend)

    yield make
    for b in backends:
        b.close()


@pytest.fixture(scope="module")
def reference():
    backend = WorkerBackend("reference", ROOT, IsolationLimits(call_timeout=30))
    yield Implementation(backend)
    backend.close()


def test_reference_results_and_handles_cross_the_boundary(reference, tmp_path):
    assert reference.run_merge([1, 2, 3, 1, 2], (1, 2), 9) == [9, 3, 9]
    assert reference.run_get_pair_counts([5, 5, 5]) == {(5, 5): 2}
    tok = reference.get_tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")], ["<|x|>"])
    assert tok.encode("abc<|x|>") == [256, 99, 257]
    assert tok.decode([256, 99]) == "abc"
    assert list(tok.encode_iterable(["ab", "c ", "<|x|>", "ab"])) == tok.encode("abc <|x|>ab")
    with pytest.raises(ValueError):
        tok.decode([10**6])


def test_streams_are_chunked_and_can_be_abandoned(reference):
    tok = reference.get_byte_tokenizer()
    big = reference.get_tokenizer({i: bytes([i]) for i in range(256)}, [])
    lines = (f"line {i}\n" for i in range(20000))
    stream = big.encode_iterable(lines)
    first = [next(stream) for _ in range(10)]
    assert first == list(b"line 0\nlin")
    assert tok.encode("hi") == [104, 105]  # another call while the stream is suspended
    with pytest.raises(AssertionError, match="interrupted"):
        next(stream)
    assert sum(1 for _ in big.encode_iterable(f"line {i}\n" for i in range(20000))) == sum(
        len(f"line {i}\n") for i in range(20000)
    )


class InputTooFar(Exception):
    pass


def endless(limit: int):
    for _ in range(limit):
        yield "hello world "
    raise InputTooFar(f"read {limit} chunks")


@pytest.mark.parametrize("reads", ["all", "some"])
def test_an_exception_the_input_raises_reaches_the_caller_at_once(make, reads):
    # the public laziness tests' endless input raises after 10,000 chunks: an encode_iterable
    # that reads it all (a real CS336 tokenizer buffers 67 million lines) waited for more input
    # until the call's deadline (120 s under the CS336 policy) and failed with a timeout, three
    # such tests stopping every later call of encode_iterable; in-process the exception is at once
    impl = make(
        """
        class Tok:
            def encode_iterable(self, iterable):
                it = iter(iterable)
                if READS == "some":
                    next(it)
                    yield 1
                yield len("".join(it))


        def get_tokenizer(vocab, merges, special_tokens=None):
            return Tok()
        """.replace("READS", repr(reads)),
        limits=IsolationLimits(call_timeout=30.0, term_grace=0.3),
    )
    tok = impl.get_tokenizer({}, [])
    started = time.monotonic()
    with pytest.raises(InputTooFar, match="read 10000 chunks"):
        list(tok.encode_iterable(endless(10_000)))
    assert time.monotonic() - started < 10
    assert list(tok.encode_iterable(["ab", "c"])) == ([1, 1] if reads == "some" else [3])  # the worker still answers


def test_paths_are_copied_in_and_written_files_copied_back(reference, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest " * 50 + "<|endoftext|>" + "new newer " * 20)
    vocab, merges = reference.run_train_bpe(corpus, 270, ["<|endoftext|>"])
    assert len(vocab) == 256 + len(merges) + 1 and merges[0] == (b"o", b"w")  # ties (l, o); the greater wins
    out = tmp_path / "saved"
    out.mkdir()
    reference.run_save_tokenizer(vocab, merges, out / "vocab.json", out / "merges.txt")
    assert (out / "vocab.json").stat().st_size > 0 and (out / "merges.txt").is_file()
    again = reference.get_tokenizer_from_files(out / "vocab.json", str(out / "merges.txt"), ["<|endoftext|>"])
    assert again.encode("lowest<|endoftext|>") == reference.get_tokenizer(vocab, merges, ["<|endoftext|>"]).encode(
        "lowest<|endoftext|>"
    )


def test_errors_name_the_paths_the_test_gave_not_the_sandbox_copies(reference, tmp_path):
    missing = tmp_path / "no_such_corpus.txt"
    with pytest.raises(ValueError) as err:
        reference.run_train_bpe(str(missing), 300, [])
    assert str(missing) in str(err.value)
    assert "bpe-worker" not in str(err.value)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9")
    with pytest.raises(ValueError) as err:
        reference.run_train_bpe(bad, 300, [])
    assert str(bad) in str(err.value) and "bpe-worker" not in str(err.value)


def test_probe_runs_in_the_worker_and_reports_resident_memory(reference, tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("hello world\n" * 2000)
    tok = reference.get_tokenizer({i: bytes([i]) for i in range(256)}, [])
    result = tok.probe("encode_iterable_file", path)
    assert result["count"] == 2000 * 12
    assert isinstance(result["peak"], int)
    if Path("/proc/self/clear_refs").exists():
        assert isinstance(result["rss_peak"], int) and result["rss_peak"] >= 0


def test_student_exceptions_come_back_as_the_first_builtin_class(make):
    impl = make(
        """
        class Mine(KeyError): pass
        class Odd(UnicodeDecodeError): pass
        def run_merge(ids, pair, new_id): raise Mine("custom")
        def run_pretokenize(text): raise NotImplementedError
        def run_get_pair_counts(ids): raise UnicodeDecodeError("utf-8", b"x", 0, 1, "bad")
        def run_split_on_special_tokens(text, specials): sys.exit(3)
        def run_compression_ratio(text, ids): raise KeyboardInterrupt
        """
    )
    with pytest.raises(KeyError, match="custom") as info:
        impl.run_merge([1], (1, 2), 3)
    assert "Mine" in "".join(getattr(info.value, "__notes__", []))
    with pytest.raises(NotImplementedError, match="run_pretokenize"):
        impl.run_pretokenize("x")
    with pytest.raises(UnicodeError):
        impl.run_get_pair_counts([1])
    with pytest.raises(StudentExit, match="SystemExit"):
        impl.run_split_on_special_tokens("x", [])
    with pytest.raises(StudentExit, match="KeyboardInterrupt"):
        impl.run_compression_ratio("x", [1])
    with pytest.raises(NotImplementedError, match="missing"):
        impl.run_train_bpe("nowhere", 300, [])


def test_wrong_types_fail_with_what_came_back(make):
    impl = make(
        """
        class Liar(list):
            def __eq__(self, other): return True
        class Always:
            def __eq__(self, other): return True
        def run_merge(ids, pair, new_id): return Liar([1])
        def run_pretokenize(text): return Always()
        def run_get_pair_counts(ids): return {(1, 2): "3"}
        """
    )
    with pytest.raises(WrongResult, match="subclass of list"):
        impl.run_merge([1], (1, 2), 3)
    with pytest.raises(WrongResult, match="Always"):
        impl.run_pretokenize("x")
    with pytest.raises(WrongResult, match="should be int"):
        impl.run_get_pair_counts([1])


def test_broken_import_is_reported_on_every_call(make):
    impl = make("from student import does_not_exist\n")
    for _ in range(2):
        with pytest.raises(BrokenImplementation, match="does_not_exist"):
            impl.run_merge([1], (1, 2), 3)


def test_a_hung_call_times_out_and_the_next_call_gets_a_fresh_worker(make):
    impl = make(
        """
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        class T:
            def encode(self, text): return [1]
            def decode(self, ids): return "x"
        def get_byte_tokenizer(): return T()
        def run_merge(ids, pair, new_id):
            while True:
                try:
                    time.sleep(0.01)
                except BaseException:
                    pass
        def run_pretokenize(text): return text.split()
        """
    )
    tok = impl.get_byte_tokenizer()
    start = time.monotonic()
    with pytest.raises(WorkerTimeout, match="timed out after 3 s"):
        impl.run_merge([1], (1, 2), 3)
    assert time.monotonic() - start < 3 + 2
    assert impl.run_pretokenize("a b") == ["a", "b"]
    # the tokenizer made in the worker that was stopped is made again in a fresh one
    assert tok.encode("x") == [1]


@pytest.mark.parametrize(
    "body, message",
    [
        ("os._exit(0)", "exited with status 0"),
        ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
        ("os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
    ],
)
def test_a_crash_fails_only_the_call_in_progress(make, body, message):
    impl = make(
        f"""
        def run_merge(ids, pair, new_id):
            {body}
        def run_pretokenize(text): return text.split()
        """
    )
    assert impl.run_pretokenize("a b") == ["a", "b"]
    with pytest.raises(WorkerDied, match=message):
        impl.run_merge([1], (1, 2), 3)
    assert impl.run_pretokenize("c d") == ["c", "d"]


def test_printing_cannot_forge_replies_and_output_is_capped(make):
    impl = make(
        """
        def run_merge(ids, pair, new_id):
            print('["ok",2,[7,7,7]]')
            sys.stdout.write("x" * 5_000_000)
            sys.stdout.flush()
            raise ValueError("after printing")
        def run_pretokenize(text): return ["honest"]
        """,
        limits=IsolationLimits(call_timeout=20, output_bytes=10_000),
    )
    with pytest.raises(ValueError) as info:
        impl.run_merge([1], (1, 2), 3)
    assert "truncated" in "".join(info.value.__notes__)
    assert impl.run_pretokenize("x") == ["honest"]


def test_memory_limit_gives_a_memory_error_not_a_dead_grader(make):
    impl = make(
        """
        def run_merge(ids, pair, new_id):
            blocks = []
            while True:
                blocks.append(bytearray(50 << 20))
        def run_pretokenize(text): return ["ok"]
        """,
        limits=IsolationLimits(call_timeout=20, memory_mb=600),
    )
    with pytest.raises((MemoryError, WorkerDied)):
        impl.run_merge([1], (1, 2), 3)
    assert impl.run_pretokenize("x") == ["ok"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can drop privileges and hide paths")
def test_as_root_the_worker_is_unprivileged_and_cannot_see_the_harness(make):
    impl = make(
        f"""
        def run_pretokenize(text):
            out = [str(os.getuid())]
            for p in {[str(ROOT / "tests"), str(ROOT / "reference"), str(ROOT / "grader"), "/root"]!r}:
                out.append(p + ":" + ",".join(sorted(os.listdir(p))) if os.path.isdir(p) else p + ":absent")
            return out
        def run_merge(ids, pair, new_id):
            n = 0
            try:
                for _ in range(500):
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                    n += 1
            except OSError:
                pass
            return [n]
        """
    )
    seen = impl.run_pretokenize("")
    assert seen[0] != "0"
    for entry in seen[1:]:
        path, _, listing = entry.partition(":")
        assert "test" not in listing and "train.py" not in listing and "values.py" not in listing, entry
    forks = impl.run_merge([1], (1, 2), 3)[0]
    assert forks < FAST.max_processes + (os.cpu_count() or 1)  # the process limit: sandbox.confine


def environment_under_tmp() -> set[str]:
    """The folders directly in ``/tmp`` that hold this environment's Python (a venv made
    under ``/tmp``): the worker's private root shows them, read-only, in its own ``/tmp``."""
    from sandbox.pyenv import environment_path, prefixes

    tmp = Path("/tmp").resolve()
    paths = [*prefixes(), *(Path(os.path.realpath(p)) for p in environment_path())]
    return {p.relative_to(tmp).parts[0] for p in paths if p != tmp and p.is_relative_to(tmp)}


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give the worker a private root directory")
def test_as_root_no_copy_of_the_harness_anywhere_on_the_machine_is_readable(make):
    # another checkout of the tests (an instructor's working copy, a previous clone) in a
    # world-readable place that has nothing to do with this repository's path
    import shutil
    import tempfile

    copy = Path(tempfile.mkdtemp(prefix="bpe-other-checkout-", dir="/var/tmp"))
    try:
        os.chmod(copy, 0o755)
        (copy / "tests").mkdir()
        (copy / "tests" / "secret.py").write_text("ANSWER = 42\n")
        os.chmod(copy / "tests" / "secret.py", 0o644)
        impl = make(
            f"""
            def run_pretokenize(text):
                out = []
                for p in {[str(copy / "tests" / "secret.py"), str(ROOT / "grading.yaml"), "/tmp"]!r}:
                    try:
                        out.append(p + ":" + (open(p).read(20) if not os.path.isdir(p) else ",".join(os.listdir(p))))
                    except OSError as err:
                        out.append(p + ":" + type(err).__name__)
                return out + sorted(os.listdir("/"))
            """
        )
        seen = impl.run_pretokenize("")
        assert seen[0].endswith(":FileNotFoundError") and seen[1].endswith(":FileNotFoundError"), seen
        others = [n for n in seen[2].partition(":")[2].split(",") if n and n not in environment_under_tmp()]
        assert len(others) <= 1, f"the worker's /tmp holds only its own sandbox (and this environment's Python): {seen[2]}"
        assert "var" not in seen[3:] and "home" not in seen[3:], seen
    finally:
        shutil.rmtree(copy, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run the worker under another user id")
def test_as_root_without_a_private_root_the_harness_folders_are_closed_by_permissions(make):
    # as in a container that refuses mount namespaces (no CAP_SYS_ADMIN): the worker still
    # gets its own user id, and the folders it must not see lose their "other" permissions
    import shutil
    import stat
    import tempfile


    other = Path(tempfile.mkdtemp(prefix="bpe-other-checkout-", dir="/var/tmp"))
    # the worker closes every folder it must not see, down to two levels under the one holding
    # this checkout (sibling checkouts, other people's virtual environments): all get their modes back
    near = [p for d in ROOT.parent.iterdir() if d.is_dir() and not d.is_symlink() for p in (d, *d.iterdir()) if p.is_dir() and not p.is_symlink()]
    folders = [ROOT, ROOT.parent, other, *near]
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in folders}
    try:
        os.chmod(other, 0o755)
        modes[other] = 0o755
        (other / "tests").mkdir()
        (other / "tests" / "secret.py").write_text("ANSWER = 42\n")
        os.chmod(other / "tests" / "secret.py", 0o644)
        probed = [str(other / "tests" / "secret.py"), str(ROOT / "grading.yaml"), str(ROOT / "tests")]
        impl = make(
            f"""
            def run_pretokenize(text):
                out = []
                for p in {probed!r}:
                    try:
                        out.append(p + ":" + (open(p).read(20) if not os.path.isdir(p) else ",".join(os.listdir(p))))
                    except OSError as err:
                        out.append(p + ":" + type(err).__name__)
                return out
            """,
            backend_options={"private_root": False, "hide": [other]},
        )
        seen = impl.run_pretokenize("")
        # a venv inside the checkout keeps the checkout open for the worker to reach its
        # interpreter: the files directly in it stay readable, never its folders
        readable = [p for p, entry in zip(probed, seen) if not entry.endswith(":PermissionError")]
        assert readable == ([str(ROOT / "grading.yaml")] if VENV_IN_CHECKOUT else []), seen
        assert "closed to other users by file permissions" in impl.backend.confinement
        # its files are on no noexec mount there: a library it writes could load
        assert "no compiled code of its own runs" not in impl.backend.confinement, impl.backend.confinement
        assert not other.stat().st_mode & 0o007
        impl.backend.close()  # the grading ends: the machine's folders get their modes back

        def changed() -> dict[str, str]:
            return {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p, mode in modes.items()
                    if p.exists() and stat.S_IMODE(p.stat().st_mode) != mode}

        # a grading running beside this one (CI's other stages, one after another) may hold a
        # folder too: the last to let go gives it back (test_closing.py). Wait a while for
        # those; a folder no grading holds (asked first: one given back meanwhile no longer
        # differs) must have its mode back
        deadline = time.monotonic() + 60
        while any(closing.held(p) for p in changed()) and time.monotonic() < deadline:
            time.sleep(0.5)
        unheld = {str(p) for p in modes if not closing.held(str(p))}
        left = {p: mode for p, mode in changed().items() if p in unheld}
        assert not left, f"folders left closed after the grading: {left}"
    finally:
        for path, mode in modes.items():
            try:
                os.chmod(path, mode)
            except OSError:  # removed meanwhile
                pass
        shutil.rmtree(other, ignore_errors=True)


def test_a_forged_reply_on_the_protocol_pipe_is_only_a_returned_value(make):
    # writing to every descriptor cannot get more than returning a value would
    impl = make(
        """
        def run_merge(ids, pair, new_id):
            for fd in range(3, 256):
                try:
                    os.write(fd, b'garbage\\n')
                except OSError:
                    pass
            return [1]
        def run_pretokenize(text): return ["ok"]
        """
    )
    with pytest.raises(AssertionError):
        impl.run_merge([1], (1, 2), 3)
    assert impl.run_pretokenize("x") == ["ok"]


HASHES = """
def run_pretokenize(text):
    return [str(hash(text)), *{"alpha", "beta", "gamma", "delta", "epsilon"}]
"""


def hash_under(seed: int, text: str) -> str:
    """``hash(text)`` in a Python started with ``PYTHONHASHSEED=seed``: the oracle."""
    done = subprocess.run([sys.executable, "-c", f"print(hash({text!r}))"], env={"PYTHONHASHSEED": str(seed)},
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.mark.parametrize("seed", [0, 20261122])
def test_a_workers_hash_seed_is_the_one_its_backend_is_given_so_its_sets_come_in_one_order(tmp_path, seed):
    results = []
    for run in ("first", "again"):
        backend = WorkerBackend("student", submission(tmp_path / run, HASHES), FAST, hash_seed=seed)
        try:
            results.append(Implementation(backend).run_pretokenize("bpe"))
        finally:
            backend.close()
    assert results[0][0] == hash_under(seed, "bpe")
    assert results[1] == results[0]


def test_a_written_file_is_never_copied_back_through_a_link_the_worker_made(tmp_path):
    """The worker may write in its call's output folder and so replace that folder by a
    symbolic link to a folder of the machine (an absolute link resolves in the root of the
    process following it, the trusted side's, even below ``/proc/<pid>/root``): nothing is
    copied back through it. Where the worker shares the grader's user id (not root) no owner
    check stood in the way: a grading copied a file of the grader's, unreadable to the worker,
    into the test's folder and its failure message showed its content (2026-11-27)."""
    machine = tmp_path / "machine"
    machine.mkdir()
    for name in ("vocab.json", "merges.txt"):
        (machine / name).write_text("the grader's own file")
    proc = SimpleNamespace(outputs=tmp_path / "out", inputs=tmp_path / "in", uid=None, gid=None, worker_path=str)
    proc.outputs.mkdir()
    given = tmp_path / "given"
    given.mkdir()
    paths = PathArguments()
    _, copy_back = paths.rewrite("run_save_tokenizer", ({}, [], str(given / "vocab.json"), str(given / "merges.txt")), proc, 7)
    assert len(copy_back) == 2
    for sandboxed, _ in copy_back:  # what the worker does: its call's folder moved aside, a link in its place
        folder = sandboxed.parent
        folder.rename(folder.with_name(folder.name + "-away"))
        folder.symlink_to(machine)
    paths.copy_back(copy_back, proc, 1 << 20)
    assert sorted(os.listdir(given)) == [], "a file of the machine was copied back as the worker's"
