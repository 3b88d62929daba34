"""A submission folder as the grader sees it: its layout (:mod:`harness.layout`, re-exported
here), and a safe copy of it.

:func:`scan` walks a submission without following any link and :func:`copy_submission`
copies what it found: bounded in total size and file count (one clear error beyond),
folders nested too deep and oversized files left out; version-control folders,
caches and virtual environments left out; a symbolic link kept (as a link) only when it
resolves inside the submission; a file hard-linked to something outside the submission
left out (a hard link to the harness would otherwise carry the reference in); everything
else copied by content into files of its own. What was left out is named in ``notes``.
"""

from __future__ import annotations

import ast
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT
from .layout import SKIP_DIRS, Layout, detect_layout, statement_imports  # noqa: F401  (re-exported: the layout of a submission)
from .printable import printable

MAX_BYTES = 100_000_000  # total size of what is copied
MAX_FILES = 5_000  # files and folders copied
MAX_DEPTH = 32  # folders inside folders; deeper ones are left out, with a note
MAX_FILE_BYTES = 16_000_000  # bigger files (data sets, checkpoints) are left out, with a note
NOTES_SHOWN = 5  # notes named one by one; the rest are counted
MAX_NAME = 200  # characters of a path shown in a note


class SubmissionError(Exception):
    """The submission cannot be copied at all (too big, too many files); the message says why."""


@dataclass
class Scan:
    """What :func:`copy_submission` will copy, and what it leaves out (``notes``)."""

    root: Path
    dirs: list[str] = field(default_factory=list)  # relative paths, parents first
    files: list[tuple[str, int]] = field(default_factory=list)  # (relative path, size)
    links: list[tuple[str, str]] = field(default_factory=list)  # (relative path, relative target)
    left_out: list[str] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The files left out, a few by name and the rest counted."""
        shown = self.left_out[:NOTES_SHOWN]
        more = len(self.left_out) - len(shown)
        return shown + ([f"and {more} more left out"] if more else [])


def _shown(path: str) -> str:
    """A path of the submission as a note shows it: on one line, whatever bytes its name
    holds (escaped: :func:`harness.printable.printable`), cut to :data:`MAX_NAME`."""
    return printable(path, MAX_NAME)


def left_out_by_name(name: str) -> bool:
    """A folder the graded copy leaves out by its name alone (:data:`SKIP_DIRS`, ``*.egg-info``);
    a virtual environment under another name is known by its ``pyvenv.cfg``."""
    return name in SKIP_DIRS or name.endswith(".egg-info")


def scan(root: Path | str, only: tuple[str, ...] | None = None, outside: tuple[Path | str, ...] = ()) -> Scan:
    """Walk ``root`` (iteratively, never following a link); ``only`` limits the walk to
    these top-level names (the harness's own checkout: its files may have hard links
    elsewhere, made by anyone, and are copied all the same); ``outside``: folders that are
    not the submission's even where they lie inside it (the grader's temporary folder:
    other workers' sandboxes, the grading's own files), left out with a note. Raises
    :class:`SubmissionError` for a tree over the limits."""
    walk = _Walk(Path(os.path.realpath(root)), only, {os.path.realpath(p) for p in outside})
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel, depth = stack.pop()
        subdirs = walk.folder(rel, depth)
        walk.out.dirs += subdirs
        stack += [(d, depth + 1) for d in reversed(subdirs)]
    walk.add_hard_links()
    out = walk.out
    if len(out.files) + len(out.dirs) > MAX_FILES or walk.total > MAX_BYTES:
        raise SubmissionError(f"the submission holds more than {MAX_FILES} files and folders or {MAX_BYTES // 1_000_000} MB")
    out.files.sort()
    return out


class _Walk:
    """One :func:`scan` under way: what it found so far (``out``) and the bytes to copy."""

    def __init__(self, root: Path, only: tuple[str, ...] | None, outside: set[str] = frozenset()) -> None:
        self.out = Scan(root)
        self.only = only
        self.outside = outside  # real paths of folders left out wherever they lie
        self.total = 0
        self.inodes: dict[tuple[int, int], list[tuple[str, int, int]]] = {}  # hard-linked files seen

    def folder(self, rel: str, depth: int) -> list[str]:
        """Scan the folder ``rel`` (at ``depth``); its sub-folders to walk next."""
        out = self.out
        folder = os.path.join(out.root, rel) if rel else str(out.root)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as err:
            out.left_out.append(f"{_shown(rel or '.')}: unreadable ({err.strerror})")
            return []
        subdirs: list[str] = []
        for entry in entries:
            if self.only is not None and not rel and entry.name not in self.only:
                continue
            self.entry(entry, f"{rel}/{entry.name}" if rel else entry.name, folder, depth, subdirs)
            if len(out.files) + len(out.dirs) + len(subdirs) > MAX_FILES or self.total > MAX_BYTES:
                raise SubmissionError(
                    f"the submission holds more than {MAX_FILES} files and folders or {MAX_BYTES // 1_000_000} MB "
                    "(after leaving out .git, caches and virtual environments); nothing of it could be graded"
                )
        return subdirs

    def entry(self, entry: os.DirEntry, path: str, folder: str, depth: int, subdirs: list[str]) -> None:
        """Sort one entry of ``folder``: a file or link to copy, a sub-folder to walk
        (appended to ``subdirs``), or a note of what is left out and why."""
        out = self.out
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as err:
            out.left_out.append(f"{_shown(path)}: unreadable ({err.strerror})")
            return
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(entry.path)
            if not (target + os.sep).startswith(str(out.root) + os.sep) or target == str(out.root):
                out.left_out.append(f"{_shown(path)}: a symbolic link to outside the submission, left out")
            elif not os.path.exists(target):
                out.left_out.append(f"{_shown(path)}: a symbolic link to nothing, left out")
            else:
                out.links.append((path, os.path.relpath(target, os.path.realpath(folder))))
        elif stat.S_ISDIR(st.st_mode):
            if left_out_by_name(entry.name) or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):  # a venv
                return
            if os.path.realpath(entry.path) in self.outside:
                out.left_out.append(f"{_shown(path)}: the grader's temporary folder (TMPDIR), left out")
                return
            if depth + 1 > MAX_DEPTH:
                out.left_out.append(f"{_shown(path)}: folders nested more than {MAX_DEPTH} deep, left out")
                return
            subdirs.append(path)
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > MAX_FILE_BYTES:
                out.left_out.append(f"{_shown(path)}: {st.st_size:,} bytes, more than {MAX_FILE_BYTES:,}, left out")
            elif st.st_nlink > 1 and self.only is None:
                self.inodes.setdefault((st.st_dev, st.st_ino), []).append((path, st.st_nlink, st.st_size))
            else:
                self.total += st.st_size
                out.files.append((path, st.st_size))
        else:
            out.left_out.append(f"{_shown(path)}: not a regular file, left out")

    def add_hard_links(self) -> None:
        """Files with several names: copied when every name is inside the submission."""
        for links in self.inodes.values():
            _, nlink, size = links[0]
            if len(links) < nlink:  # another name of this file lives outside the submission
                self.out.left_out += [f"{_shown(p)}: a hard link to a file outside the submission, left out" for p, _, _ in links]
                continue
            for path, _, _ in links:
                self.total += size
                self.out.files.append((path, size))


def graded_names(root: Path | str, impl: str) -> tuple[str, ...] | None:
    """The top-level names of ``root`` that are the code graded with package ``impl``. For the
    harness's own checkout (the in-repo ``student/``, or ``reference/``): the package in use
    and ``adapters.py``; the rest (its tests, grader, harness) is not the submission's, so an
    isolated worker gets only these and their imports alone are read in-process. None for a
    submission: all of it."""
    return (impl, "adapters.py") if Path(root).resolve() == ROOT else None


def imported_packages(root: Path | str, most_bytes: int = 20_000_000, only: tuple[str, ...] | None = None) -> set[str]:
    """The top-level packages the Python files of the submission in ``root`` import
    (``import a.b``, ``from a import b``; anywhere in a file, links not followed), read
    from its own source: what a worker may claim it lacks. Files over 1 MB, or past
    ``most_bytes`` read in all, are not read; ``only``: as :func:`package_imports`."""
    return set(package_imports(root, most_bytes, only))


# handlers that catch an ImportError: an import under them is optional, its fallback expected
IMPORT_ERROR_CATCHERS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def package_imports(root: Path | str, most_bytes: int = 20_000_000, only: tuple[str, ...] | None = None) -> dict[str, bool]:
    """Each top-level package the submission's Python files import (as
    :func:`imported_packages`), mapped to whether code that can run with the graded code
    imports it somewhere unguarded: not in the body of a ``try`` one of whose handlers
    catches ``ImportError`` (bare, ``ImportError``, ``ModuleNotFoundError``, ``Exception``,
    ``BaseException``, alone or in a tuple), and not in a test file of its own (``test_*.py``,
    ``*_test.py``, ``conftest.py``: pytest's, never imported by the adapters). ``only``: the
    top-level names of ``root`` read, the rest left alone (as :func:`scan`'s)."""
    found: dict[str, bool] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not os.path.islink(os.path.join(folder, d))]
        if only is not None and folder == os.fspath(root):
            dirs[:] = [d for d in dirs if d in only]
            files = [f for f in files if f in only]
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or os.path.islink(path):
                continue
            try:
                if os.path.getsize(path) > 1_000_000 or most_bytes <= 0:
                    continue
                with open(path, "rb") as f:
                    source = f.read()
                most_bytes -= len(source)
                tree = ast.parse(source)
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            test_file = name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            for package, guarded in _imports(tree):
                found[package] = found.get(package, False) or not (guarded or test_file)
    return found


def nested_module(root: Path | str, name: str, most_dirs: int = 2_000) -> str | None:
    """The path (relative, ``/``-separated) of a module ``name`` the submission in ``root`` has
    below its root (``pkg/name.py`` or ``pkg/name/__init__.py``; the first found, folders in
    sorted order, links not followed), else None. Imported as a top-level module, it is found
    only where its own folder is on the path, which it is not where the submission's tests run."""
    root = os.fspath(root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not os.path.islink(os.path.join(folder, d)))
        most_dirs -= 1
        if most_dirs < 0:
            return None
        if folder == root:
            continue
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        if name + ".py" in files:
            return f"{rel}/{name}.py"
        if name in dirs and os.path.isfile(os.path.join(folder, name, "__init__.py")):
            return f"{rel}/{name}/__init__.py"
    return None


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is None or (isinstance(k, ast.Name) and k.id in IMPORT_ERROR_CATCHERS)
               or (isinstance(k, ast.Attribute) and k.attr in IMPORT_ERROR_CATCHERS) for k in kinds)


def _imports(tree: ast.AST) -> list[tuple[str, bool]]:
    """(top-level package, guarded) of every absolute import in ``tree``: guarded when it lies
    in the body of a ``try`` whose handlers catch ``ImportError`` (not in its handlers,
    ``else`` or ``finally``)."""
    out: list[tuple[str, bool]] = []
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, guarded = todo.pop()
        out += [(name, guarded) for name in statement_imports(node)]
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            inner = guarded or any(_catches_import_error(h) for h in node.handlers)
            todo += [(child, inner) for child in node.body]
            rest = [*node.handlers, *node.orelse, *node.finalbody]
            todo += [(child, guarded) for child in rest]
        else:
            todo += [(child, guarded) for child in _statements(node)]
    return out


# what may hold an import statement: statements, and the except clauses and match cases whose
# bodies are statements (an expression never holds one)
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and except clauses, match cases) directly inside ``node``."""
    return [child for _, value in ast.iter_fields(node) if type(value) is list
            for child in value if isinstance(child, _HOLDERS)]


def listed(value: object, most: int) -> list[str]:
    """The first ``most`` items of ``value`` as strings if it is a list (a report's), else none."""
    return [str(n) for n in value[:most]] if type(value) is list else []


def missing_packages(claimed: list[str], source: Path | str, only: tuple[str, ...] | None = None) -> list[str]:
    """The package names a worker said it stood in for that can be shown: Python names of at
    most 100 characters that the submission's own source (in ``source``; ``only``: these
    top-level names of it) imports."""
    names = [n for n in claimed if n.isidentifier() and len(n) <= 100]
    if not names:
        return []
    imported = imported_packages(source, only=only)
    return [n for n in dict.fromkeys(names) if n in imported]


def copy_submission(src: Path | str, dest: Path | str, only: tuple[str, ...] | None = None,
                    found: Scan | None = None, outside: tuple[Path | str, ...] = ()) -> Scan:
    """Copy the submission in ``src`` to ``dest`` (created) as :func:`scan` finds it (``only``,
    ``outside``: see there): plain folders (0755) and files (0644) of their own, links kept
    only inside. Returns the scan, whose ``notes`` name what was left out. A file that
    changes into a link meanwhile is not followed (``O_NOFOLLOW``)."""
    found = found or scan(src, only, outside)
    dest = Path(dest)
    dest.mkdir(mode=0o755, parents=True, exist_ok=True)
    for rel in found.dirs:
        try:
            (dest / rel).mkdir(mode=0o755, exist_ok=True)
        except OSError as err:  # a path too long for the sandbox, say
            found.left_out.append(f"{_shown(rel)}: could not be copied ({err.strerror}), left out")
    for rel, _ in found.files:
        try:
            _copy_file(found.root / rel, dest / rel)
        except OSError as err:
            found.left_out.append(f"{_shown(rel)}: could not be copied ({err.strerror}), left out")
    for rel, target in found.links:
        try:
            os.symlink(target, dest / rel)
        except OSError as err:
            found.left_out.append(f"{_shown(rel)}: could not be copied ({err.strerror}), left out")
    return found


def _copy_file(src: Path, dest: Path) -> None:
    """Copy one regular file by content, never through a link (it may have become one since the scan)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f_in:
        if not stat.S_ISREG(os.fstat(f_in.fileno()).st_mode):
            raise OSError(0, "not a regular file")
        with open(dest, "wb") as f_out:
            shutil.copyfileobj(f_in, f_out, 1 << 20)
    os.chmod(dest, 0o644)

