"""A folder of submissions handed in, made ready to grade: one entry per student, zips
extracted safely (no absolute paths, ``..``, links or devices, a cap on size and file count),
folders copied as grading copies them, a single wrapping folder unwrapped."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness import submission as S
from harness.printable import printable

MAX_BYTES = 50_000_000  # uncompressed size of one submission
MAX_FILES = 2_000


class Rejected(Exception):
    """A submission that cannot be graded at all (the message says why)."""


@dataclass
class Submission:
    student: str
    source: Path  # the folder or .zip as handed in

    def mtime(self) -> float:
        if self.source.is_file():
            return self.source.stat().st_mtime
        times = [self.source.lstat().st_mtime]
        for dirpath, dirnames, filenames in os.walk(self.source):
            times += [os.lstat(os.path.join(dirpath, n)).st_mtime for n in dirnames + filenames]
        return max(times)


# Latin letters that Unicode does not decompose into an ASCII letter and a mark
LATIN = str.maketrans({"Æ": "AE", "æ": "ae", "Ø": "O", "ø": "o", "Ł": "L", "ł": "l", "ß": "ss", "Đ": "D", "đ": "d",
                       "Þ": "Th", "þ": "th", "Œ": "OE", "œ": "oe", "ı": "i", "Ð": "D", "ð": "d"})


def ascii_name(raw: str) -> str:
    """``raw`` with accented letters as their ASCII letter where Unicode says how (NFKD:
    ``"Müller"`` -> ``"Muller"``, ``"ﬁ"`` -> ``"fi"``; and ``"Ø"`` -> ``"O"``, ``"ß"`` -> ``"ss"``
    ...); other characters are kept."""
    decomposed = unicodedata.normalize("NFKD", raw.translate(LATIN))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def student_name(raw: str) -> str:
    """A name safe for files and CSV rows: transliterated to ASCII where possible
    (:func:`ascii_name`), then letters, digits and ``._@+-`` only, starting and ending with a
    letter or digit, at most 80 characters (``"José Ruiz (2)"`` -> ``"Jose_Ruiz_2"``)."""
    name = re.sub(r"[^A-Za-z0-9._@+-]+", "_", ascii_name(raw))[:80]
    name = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", name)
    return name or "submission"


def discover(folder: Path, own: Path | None = None) -> tuple[list[Submission], list[str]]:
    """Submissions in ``folder`` sorted by student name, and notes on entries ignored or
    renamed; ``own``: the folder batch writes to, which is no one's submission (an entry
    holding it, or it, is left out with a note). Every submission gets a distinct safe name (:func:`student_name`; a second
    ``alice`` -- say ``alice/`` and ``alice.zip`` -- becomes ``alice-2``, ignoring case). An
    entry named exactly its safe name keeps it: ``alice/`` stays ``alice`` beside ``!alice/`` or
    ``alice!.zip`` (``alice-2``), whose row would otherwise carry the real alice's name."""
    entries, notes = [], []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        is_zip = not entry.is_symlink() and entry.is_file() and entry.suffix.lower() == ".zip"
        if own is not None and not entry.is_symlink() and entry.is_dir() and _holds(entry, own):
            notes.append(f"{entry.name!r}: holds batch's output folder (--out), not graded")
        elif entry.is_symlink():
            notes.append(f"{entry.name!r}: a symbolic link, ignored")
        elif not (entry.is_dir() or is_zip):
            notes.append(f"{entry.name!r}: neither a folder nor a .zip, ignored")
        else:
            entries.append((entry, entry.stem if is_zip else entry.name))
    subs: list[Submission] = []
    taken: set[str] = set()
    for entry, raw in sorted(entries, key=lambda e: student_name(e[1]) != e[1]):  # stable: by name within each
        name = base = student_name(raw)
        k = 2
        while name.lower() in taken:
            name = f"{base}-{k}"
            k += 1
        taken.add(name.lower())
        if name != raw:
            notes.append(f"{entry.name!r}: graded as {name}")
        subs.append(Submission(name, entry))
    return sorted(subs, key=lambda s: s.student), notes


def _holds(entry: Path, own: Path) -> bool:
    """Whether folder ``entry`` is ``own`` or holds it."""
    entry, own = entry.resolve(), own.resolve()
    return entry == own or entry in own.parents


def safe_extract(archive: Path, dest: Path, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES) -> None:
    """Extract ``archive`` into ``dest``; ``Rejected`` (one line, nothing kept) if any member
    is an absolute path, climbs out with ``..``, names no file (``.``), is named twice, has a
    name the file system refuses (too long, say), is a link or device, or the total is too big.
    Members inside a folder the copy graded leaves out anyway (``.git``, ``__pycache__``, a
    virtual environment: :data:`harness.submission.SKIP_DIRS`, ``*.egg-info``, a folder holding
    ``pyvenv.cfg``) are not extracted and count for none of this but the path checks: a zipped
    repository with its ``.venv`` (whose ``bin/python`` is a link) is graded as its folder is."""
    try:
        zf = zipfile.ZipFile(archive)
    except Exception as err:  # BadZipFile, OSError, a name flagged UTF-8 that is not (UnicodeDecodeError) ...
        raise Rejected(f"not a readable zip ({printable(str(err), 200)})") from None
    with zf:
        infos = zf.infolist()
        _check_paths(infos)
        infos = _graded_entries(infos)
        if len(infos) > max_files:
            raise Rejected(f"the zip has {len(infos)} entries (at most {max_files})")
        _check_entries(infos, max_bytes)
        try:
            _extract(zf, infos, dest, max_bytes)
        except BaseException as err:
            shutil.rmtree(dest, ignore_errors=True)
            if isinstance(err, OSError):  # what the checks could not foresee: one line, no machine path
                raise Rejected(f"the zip could not be extracted: {err.strerror or type(err).__name__}") from None
            if isinstance(err, Exception) and not isinstance(err, Rejected):  # a broken stream (zlib.error), ...
                raise Rejected(f"the zip could not be extracted: {printable(str(err), 200)}") from None
            raise


def extract_upload(archive: Path, into: Path) -> Path:
    """A .zip handed to ``grade`` extracted (:func:`safe_extract`) into a folder in ``into``
    named as batch names its student (the name per-submission seeds mix in: the same cases as
    batch gives it); that folder. ``Rejected`` when it cannot be graded."""
    folder = into / student_name(archive.stem)
    safe_extract(archive, folder)
    return folder


def _shown(info: zipfile.ZipInfo) -> str:
    return repr(printable(info.filename, 120))


def _check_paths(infos: list[zipfile.ZipInfo]) -> None:
    """``Rejected`` for any member, extracted or not, that names a place outside the submission."""
    for info in infos:
        name = info.filename.replace("\\", "/")
        if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in PurePosixPath(name).parts:
            raise Rejected(f"the zip entry {_shown(info)} points outside the submission")


def _graded_entries(infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    """The members outside the folders grading's copy leaves out (caches, ``.git``, virtual
    environments by name or by their ``pyvenv.cfg``), as :func:`harness.submission.scan` does;
    such a folder's own entry, or a link in its place (``.venv -> ~/envs/x``), goes too."""
    parts = [PurePosixPath(info.filename.replace("\\", "/")).parts for info in infos]
    venvs = {p[:-1] for p in parts if len(p) > 1 and p[-1] == "pyvenv.cfg"}

    def left_out(folder: tuple[str, ...]) -> bool:
        return folder in venvs or S.left_out_by_name(folder[-1])

    def graded(info: zipfile.ZipInfo, path: tuple[str, ...]) -> bool:
        inside = any(left_out(path[:k]) for k in range(1, len(path)))
        itself = bool(path) and (info.is_dir() or stat.S_ISLNK(info.external_attr >> 16)) and left_out(path)
        return not (inside or itself)

    return [info for info, path in zip(infos, parts) if graded(info, path)]


def _check_entries(infos: list[zipfile.ZipInfo], max_bytes: int) -> None:
    total, seen = 0, {}
    for info in infos:
        name = info.filename.replace("\\", "/")
        path = PurePosixPath(name)
        if not path.parts:
            if info.is_dir():
                continue  # "./": the folder itself
            raise Rejected(f"the zip entry {_shown(info)} names no file")
        if any(len(os.fsencode(part)) > 255 for part in path.parts):
            raise Rejected(f"the zip entry {_shown(info)} has a name longer than 255 bytes")
        if info.flag_bits & 0x1:  # zipfile would ask for its password
            raise Rejected(f"the zip entry {_shown(info)} is encrypted: a zip with a password cannot be graded")
        kind = stat.S_IFMT(info.external_attr >> 16)  # 0 when the zip does not say (plain file)
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise Rejected(f"the zip entry {_shown(info)} is a link or special file")
        key = path.parts
        if key in seen and not (info.is_dir() and seen[key]):
            raise Rejected(f"the zip holds {_shown(info)} twice")
        seen[key] = info.is_dir()
        total += info.file_size
        if total > max_bytes:
            raise Rejected(f"the zip holds more than {max_bytes // 1_000_000} MB")


def _extract(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], dest: Path, max_bytes: int) -> None:
    dest.mkdir(parents=True)
    written = 0
    for info in infos:
        target = dest.joinpath(*PurePosixPath(info.filename.replace("\\", "/")).parts)
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, open(target, "xb") as out:  # "x": never over another entry
            while chunk := src.read(1 << 20):  # the declared sizes may lie: count what comes out
                written += len(chunk)
                if written > max_bytes:
                    raise Rejected(f"the zip holds more than {max_bytes // 1_000_000} MB")
                out.write(chunk)


def copy_folder(src: Path, dest: Path) -> list[str]:
    """Copy a submission folder as grading does (:func:`harness.submission.copy_submission`:
    links kept only inside it, hard links to files outside it left out, caches and virtual
    environments skipped); returns what was left out. ``Rejected`` when it is too big."""
    try:
        return S.copy_submission(src, dest).left_out
    except S.SubmissionError as err:
        raise Rejected(str(err)) from None


def _has_code(tree: Path) -> bool:
    return S.detect_layout(tree) is not None or (tree / "student").is_dir()


def unwrap(tree: Path) -> Path:
    """The folder holding ``adapters.py`` (or ``tests/adapters.py``, or ``student/``): the
    tree itself, or its single top-level folder (zips of a folder)."""
    if _has_code(tree):
        return tree
    inner = [p for p in tree.iterdir() if p.is_dir() and not p.is_symlink() and p.name != "__MACOSX"]
    if len(inner) == 1 and _has_code(inner[0]):
        return inner[0]
    return tree


def unwrap_submission(folder: Path) -> tuple[Path, str | None]:
    """``(folder to grade, name of the one folder it was inside or None)``: a submission with
    everything inside one folder (a zipped repository) is graded from that folder."""
    inner = unwrap(folder) if folder.is_dir() else folder
    return (inner, inner.name) if inner != folder else (folder, None)


# packages of CS336's environment that a tokenizer may use at run time (memory logging, arrays,
# progress bars, typing_extensions' bases, which torch brings): pyproject.toml's optional extra
# `cs336` installs them where grading runs (torch is not among them: it keeps its stand-in, as do
# its other dependencies, of no use to a tokenizer); `regex` is a dependency of the harness already
CS336_EXTRA = ("psutil", "numpy", "tqdm", "einops", "typing_extensions")


def is_upload(given: Path) -> bool:
    """Whether ``given`` is a .zip of a submission (graded from its extraction), not a folder."""
    return given.suffix.lower() == ".zip" and given.is_file()


@contextlib.contextmanager
def extracted(given: Path) -> Iterator[Path]:
    """``given`` itself, or for an upload (:func:`is_upload`) its safe extraction
    (:func:`extract_upload`) into a temporary folder removed afterwards. ``Rejected`` when a
    .zip cannot be graded."""
    if not is_upload(given):
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="bpe-upload-") as tmp:
        yield extract_upload(given, Path(tmp))


def unwrapped_note(req) -> list[str]:
    """The line saying the submission was graded from the one folder it was inside, if it was."""
    # the folder's name is the upload's: one line, escaped and cut, as every name from the submission
    return [f"unwrapped: everything in the submission is inside one folder, {printable(req.unwrapped, 100)}/, graded from there"] if req.unwrapped else []


def python_requirement_note(root: Path, running: tuple[int, ...] | None = None) -> str | None:
    """A line when ``root/pyproject.toml``'s ``requires-python`` excludes the Python grading
    runs (CS336's starter asks for 3.12 or newer): code using a newer Python's syntax or
    library fails here for that reason alone, and the instructor should know before reading
    the points. None when it admits it, or says nothing this reader understands."""
    import sys

    from harness.python_version import excluding_requirement

    running = running or tuple(sys.version_info[:3])
    spec = excluding_requirement(root, running)
    if spec is None:
        return None
    version = ".".join(map(str, running))
    return (f"the submission's pyproject.toml requires Python {printable(spec, 60)}; grading runs Python {version}: "
            "code that needs a newer Python fails here for that reason alone (grade with a Python it accepts)")


def submission_notes(req, loaded: object, installing: bool = False, provided: tuple[str, ...] = ()) -> list[str]:
    """Lines saying which layout was detected, what the copy left out and which packages the
    submission imports that are not installed here (the report's ``layout``): escaped and cut
    (``printable``), a package named only if the submission's own source imports it
    (``missing_packages``), said when the submission declares it (:func:`grader.declared.declares`)
    and, unless this grading tried (``installing``), that ``grade --install-declared`` installs it;
    ``provided``: the modules it installed (never named as missing)."""
    from harness import ROOT
    from harness.submission import detect_layout, graded_names, listed, missing_packages

    notes = []
    if req.submission is not None:
        layout = detect_layout(req.submission)
        notes.append(f"layout: {layout.describe()}" if layout else "layout: none (no adapters.py, nor tests/adapters.py)")
        python = python_requirement_note(req.submission)
        if python:
            notes.append(python)
    loaded = loaded if isinstance(loaded, dict) else {}
    left_out = [printable(n, 300) for n in listed(loaded.get("left_out"), 6)]
    if left_out:
        notes.append("left out of the copy graded: " + "; ".join(left_out))
    shared = [printable(n, 60) for n in listed(loaded.get("not_its_own"), 8)]
    if shared:
        notes.append(f"in-process, the submission's {', '.join(shared)} {'is' if len(shared) == 1 else 'are'} not what its "
                     "imports of that name get: this process had a module of the name first (an isolated grading imports "
                     "the submission's own)")
    graded = req.submission or ROOT
    missing = missing_packages(listed(loaded.get("stand_ins"), 20), graded, graded_names(graded, req.impl))
    if missing:
        starter = [n for n in missing if n in CS336_EXTRA]
        hint = (f"; {', '.join(starter)}: in CS336's environment, installed by `pip install -e .[cs336]` where grading runs"
                if starter else "")
        hint += declared_hint(req.submission, missing, installing) if req.submission is not None else ""
        notes.append(
            f"not installed where grading runs: {', '.join(missing)} (imported by the submission; "
            f"a stand-in takes its place, and code that uses it fails{hint})"
        )
    unmet = unmet_imports(req.submission, [*missing, *provided]) if req.submission is not None else []
    if unmet:
        notes.append(
            f"imported by the submission only inside try/except ImportError or by its test files, and not installed "
            f"where grading runs: {', '.join(unmet[:8])}{' and more' if len(unmet) > 8 else ''} (no stand-in: "
            "there the import raises ImportError, so a fallback for it runs as it would where it is not installed)"
        )
    return notes


def declared_hint(root: Path, missing: list[str], installing: bool) -> str:
    """The part of the missing-packages line naming those the submission declares (its
    ``pyproject.toml``, ``requirements.txt`` or ``uv.lock``): they work at home, so the
    instructor knows the lost points are the environment's, and how to grade with them
    (unless this grading tried, ``installing``); those never installed for grading said apart."""
    from .declared import declared_among
    from .install import never_installed

    mine = declared_among(Path(root), missing)
    kept = [n for n in mine if never_installed(n)]
    can = [n for n in mine if n not in kept]
    out = ""
    if can:
        how = "" if installing else ", `grade --install-declared` installs " + ("it" if len(can) == 1 else "them") + " for the grading"
        out += f"; {', '.join(can)}: declared by the submission (installed where its author runs it){how}"
    if kept:
        out += f"; {', '.join(kept)}: declared, never installed for grading (a stand-in by design)"
    return out


def unmet_imports(root: Path, stood_in: list[str]) -> list[str]:
    """Top-level packages missing here (neither the submission's own, nor installed, nor
    stood in) that the submission's source imports only under a guard catching
    ``ImportError`` or in its own test files (:func:`harness.submission.package_imports`):
    they get no stand-in (:mod:`harness.stand_ins`), so such an import fails as it would
    where the package is not installed, and the submission's fallback runs."""
    from harness.submission import package_imports

    from .config import installed

    root = Path(root)
    own = {p.name for p in root.iterdir() if p.is_dir()} | {p.stem for p in root.glob("*.py")}
    return sorted(n for n, unguarded in package_imports(root).items()
                  if not unguarded and n.isidentifier() and n not in own and n not in stood_in and not installed(n))
