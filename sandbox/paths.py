"""Path arguments of calls into an isolated worker: files it reads are copied into its
sandbox (a directory becomes an empty directory, a missing path stays missing, as they are
in-process), files it writes are copied back, and error messages show the paths the test gave."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from harness.registry import PATH_ARGS
from harness.values import WrongResult  # which arguments are files read ("in") or written ("out")

if TYPE_CHECKING:  # pragma: no cover
    from .process import WorkerProcess


class PathArguments:
    """The path arguments of one backend's current call (a backend makes one call at a time)."""

    def __init__(self) -> None:
        self.made_files = False  # the last call copied files into the sandbox
        self.renamed: list[tuple[str, str]] = []  # (sandbox path, path the test gave) of the last call

    def rewrite(self, key: str, args: tuple, proc: "WorkerProcess", rid: int) -> tuple[list, list[tuple[Path, str]]]:
        """Path arguments replaced by copies in the worker's sandbox (inputs) or places it may
        write (outputs, copied back by :meth:`copy_back`); ``self.renamed`` maps each
        sandbox path back to the one the test passed, for error messages."""
        self.renamed = []
        kinds = PATH_ARGS.get(key, {})
        if not kinds and not any(isinstance(a, os.PathLike) for a in args):
            return list(args), []
        out, copy_back = list(args), []
        for i, value in enumerate(args):
            kind = kinds.get(i)
            if kind is None and isinstance(value, os.PathLike):
                kind = "in"
            if kind is None or not isinstance(value, (str, os.PathLike)):
                continue
            original = Path(os.fspath(value))
            self.made_files = True
            if kind == "in":
                folder = proc.inputs / f"{rid}-{i}"
                folder.mkdir(mode=0o755)
                target = folder / (original.name or "input")
                if original.is_file():
                    shutil.copyfile(original, target)
                    os.chmod(target, 0o444)  # root-owned and read-only when the worker is not root
                elif original.is_dir():  # what the path is, the worker sees: a directory stays one
                    target.mkdir(mode=0o555)  # (empty: a test passing a directory tests its rejection)
                out[i] = str(target)
            else:
                folder = proc.outputs / f"{rid}-{i}"
                folder.mkdir(mode=0o700)
                if proc.uid is not None:
                    os.chown(folder, proc.uid, proc.gid)
                target = folder / (original.name or "output")
                if not original.parent.is_dir():  # as it would fail locally
                    target = folder / "missing-directory" / target.name
                out[i] = proc.worker_path(target)  # target: the same file, as the trusted side reaches it
                copy_back.append((target, str(original)))
            self.renamed.append((out[i], os.fspath(value)))
        return out, copy_back

    def unsandboxed(self, err: BaseException) -> None:
        """Put the paths the test gave back in place of sandbox paths in ``err``'s message and
        notes, so a student reads the path they passed (as they would in-process)."""
        if not self.renamed:
            return

        def fix(text: str) -> str:
            for sandboxed, original in self.renamed:
                text = text.replace(sandboxed, original)
                folder, given = os.path.dirname(sandboxed), os.path.dirname(original)
                if folder and given:
                    text = text.replace(folder + os.sep, given + os.sep)
            return text

        if err.args and all(type(a) is str for a in err.args):
            err.args = tuple(fix(a) for a in err.args)
        notes = getattr(err, "__notes__", None)
        if type(notes) is list:
            notes[:] = [fix(n) if type(n) is str else n for n in notes]

    def copy_back(self, pairs: list[tuple[Path, str]], proc: "WorkerProcess", most: int, adapter: str = "") -> None:
        """Copy what the worker wrote to each sandbox path (a regular file it owns, never a
        link) to the path the test gave, in pieces (never whole in memory). A file over
        ``most`` bytes is not copied: the call fails with one line saying so (the tests
        read what is copied back whole, and no tokenizer file is that big)."""
        for sandboxed, original in pairs:
            try:
                fd = _open_beneath(proc.outputs, sandboxed)
            except (OSError, ValueError):
                continue  # not written, or not as a file below the output folder (the test will say so)
            with os.fdopen(fd, "rb") as src:
                st = os.fstat(src.fileno())
                if not stat.S_ISREG(st.st_mode) or (proc.uid is not None and st.st_uid != proc.uid):
                    continue  # only a regular file the worker wrote itself, never a link
                if st.st_size > most:
                    raise WrongResult(
                        f"adapters.{adapter or 'run_save_tokenizer'}(...) wrote {st.st_size:,} bytes to {Path(original).name}, "
                        f"more than the {most:,} bytes a file written for the tests may have"
                    )
                _copy_at_most(src, Path(original), most)

    def call(self, proc: "WorkerProcess") -> "_Call":
        """The scope of one call using rewritten paths: an error raised in it shows the paths
        the test gave, and the sandbox's copies are removed after it (unless ``proc`` was
        closed meanwhile, its sandbox gone with it). A class, not a generator: no extra frame
        in tracebacks."""
        return _Call(self, proc)

    def cleanup(self, proc: "WorkerProcess") -> None:
        """Empty the sandbox's input and output folders after a call that used them."""
        if not self.made_files:
            return
        self.made_files = False
        for d in (proc.inputs, proc.outputs):
            for entry in list(d.iterdir()) if d.is_dir() else []:
                shutil.rmtree(entry, ignore_errors=True)


def _open_beneath(base: Path, path: Path) -> int:
    """``path``, below the folder ``base``, opened for reading without following a symbolic
    link anywhere below ``base``: the worker can write in its output folder, so it can replace
    a call's folder there by a link, and an absolute link resolves in the root of the process
    following it (the trusted side's, also below ``/proc/<pid>/root``): a folder of the machine."""
    parts = path.relative_to(base).parts
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def _copy_at_most(src, dest: Path, most: int) -> None:
    """Copy at most ``most`` bytes of the open file ``src`` to ``dest``, a piece at a time
    (a process left running could still be making it grow)."""
    with open(dest, "wb") as out:
        left = most
        while left > 0:
            piece = src.read(min(left, 1 << 20))
            if not piece:
                break
            out.write(piece)
            left -= len(piece)


class _Call:
    def __init__(self, paths: PathArguments, proc: "WorkerProcess") -> None:
        self.paths, self.proc = paths, proc

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, err, tb) -> bool:
        if err is not None:
            self.paths.unsandboxed(err)
        if not self.proc.closed:
            self.paths.cleanup(self.proc)
        return False
