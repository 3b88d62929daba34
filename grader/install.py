"""Installing the packages a submission declares (:mod:`grader.declared`) for its grading only:
``grade --install-declared`` (policy key ``install_declared``).

:func:`declared_packages` is a context: on the trusted side, before any submission code runs,
pip installs what the submission declares and the grading environment lacks into a folder of
the grading's own, removed when the context ends, whatever happens. Only wheels
(``--only-binary :all:``: nothing is built, so no package code runs at install), at the
versions the submission's ``uv.lock`` pins when it has one (what works at home, and the same
every grading). pip first resolves without installing (``--dry-run --report``); of what it
would install, packages kept as stand-ins by design (:data:`NEVER_INSTALLED`: torch and the
GPU stack, of no use to a tokenizer and gigabytes big), the policy's forbidden modules and
anything already installed here are dropped; the rest is installed ``--no-deps`` at the
resolved versions. Bounded: one deadline for both pip runs (no retries), each file pip writes
and the whole folder capped in size, a cap on the number of packages.

The folder goes on the submission's ``sys.path`` after the environment's own entries, as a
plain entry, never a site directory: no ``.pth`` file in it is processed. Every failure (no
network, no wheel, the deadline) is one line in the results' notes; grading goes on with
stand-ins for what is missing. The notes name what was installed, with versions.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.util
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.childenv import child_env
from harness.printable import printable

if TYPE_CHECKING:
    from .config import Config
    from .declared import Declared
    from .request import GradeRequest
# grader.declared (packaging's requirement parser, importlib.metadata) is imported where a
# submission's declared packages are read: every grading imports this module, most install nothing

# distributions never installed for grading, whatever a submission declares: they keep their
# stand-ins (harness.stand_ins) by design; canonical names, `*` as in fnmatch
NEVER_INSTALLED = ("torch", "torchvision", "torchaudio", "triton", "nvidia-*", "jax", "jaxlib", "tensorflow", "tensorflow-*")
CACHE_ENV = "BPE_PIP_CACHE"  # a batch's pip cache folder, shared by its gradings (pip_cache)
INSTALL_SECONDS = 120.0  # both pip runs together (grade gives at most a fifth of its budget)
MAX_BYTES = 300 << 20  # the installed folder, and each file pip writes
MAX_PACKAGES = 60  # packages installed for one submission (CS336's starter and rich, hydra-core: about 30 without torch)
PIP_OPTIONS = ("--only-binary", ":all:", "--no-input", "--disable-pip-version-check",
               "--retries", "0", "--timeout", "15", "--root-user-action", "ignore", "--quiet")


def installing(req: "GradeRequest", config: "Config") -> bool:
    """Whether a grading installs what the submission declares: ``--install-declared`` /
    ``--no-install-declared``, else the policy's ``install_declared``."""
    return config.install_declared if req.install_declared is None else req.install_declared


def for_grading(req: "GradeRequest", config: "Config", say: Callable[[str], None]) -> contextlib.AbstractContextManager["Installation"]:
    """:func:`declared_packages` for the grading ``req`` when :func:`installing` (``say`` tells
    the user it starts), with the policy's forbidden modules never installed and pip given at
    most a fifth of the time budget; else nothing installed."""
    if not installing(req, config) or req.submission is None:
        return contextlib.nullcontext(Installation())
    seconds = min(INSTALL_SECONDS, (req.max_time or INSTALL_SECONDS * 5) / 5)
    return declared_packages(req.submission, forbidden=config.forbidden_modules, seconds=seconds, say=say)


@dataclass(frozen=True)
class Installation:
    """What :func:`declared_packages` did: the folder the submission gets on its path (None:
    nothing installed), what was installed (name, version) and the notes for the results."""

    path: Path | None = None
    installed: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()  # the top-level modules the folder provides


class InstallFailed(Exception):
    """Why installing failed, in words for the note."""


def never_installed(name: str, forbidden: Iterable[str] = ()) -> str | None:
    """Why distribution ``name`` is never installed for grading (``"a stand-in by design"``,
    ``"forbidden"``), or None."""
    from .declared import canonical

    name = canonical(name)
    if any(fnmatch.fnmatchcase(name, p) for p in NEVER_INSTALLED):
        return "a stand-in by design"
    if name in {canonical(f) for f in forbidden}:
        return "forbidden"
    return None


@contextlib.contextmanager
def declared_packages(root: Path, *, forbidden: Iterable[str] = (), seconds: float = INSTALL_SECONDS,
                      say: Callable[[str], None] = lambda line: None) -> Iterator[Installation]:
    """Install what the submission in ``root`` declares and grading lacks (see the module's
    docstring) for the time of the context; yields the :class:`Installation`. A declared
    package never installed (torch) is not tried; the line naming missing packages says so
    when the submission imports it (:func:`grader.intake.declared_hint`)."""
    from .declared import locked, not_installed

    wanted = [d for d in not_installed(root) if not never_installed(d.name, forbidden)]
    if not wanted:
        yield Installation()
        return
    say(f"installing what the submission declares and grading lacks: {', '.join(d.name for d in wanted[:8])}"
        f"{' and more' if len(wanted) > 8 else ''} ...")
    with tempfile.TemporaryDirectory(prefix="bpe-grade-packages-") as tmp:
        os.chmod(tmp, 0o755)  # the worker's user id reads site/ (where it has no private root, through this folder)
        try:
            done = _install(wanted, locked(root), Path(tmp), tuple(forbidden), time.monotonic() + seconds)
        except InstallFailed as err:
            done = Installation(notes=(f"the packages the submission declares ({', '.join(d.name for d in wanted)}) could not "
                                       f"be installed: {err}; they have stand-ins",))
        yield done


def _pip(args: list[str], work: Path, deadline: float) -> None:
    """Run ``python -m pip ARGS`` (its temporary files in ``work``) by ``deadline``; ``InstallFailed``
    naming pip's own error line when it fails."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise InstallFailed("no time was left for pip")
    cache = batch_cache()
    env = child_env(drop=("PIP_NO_CACHE_DIR",), TMPDIR=str(work), PIP_CACHE_DIR=cache) if cache else \
        child_env(TMPDIR=str(work), PIP_NO_CACHE_DIR="1")
    try:
        proc = subprocess.run([sys.executable, "-m", "pip", *args], cwd=work, env=env, capture_output=True, text=True,
                              errors="replace", timeout=left, stdin=subprocess.DEVNULL, preexec_fn=_limit_files)
    except subprocess.TimeoutExpired:
        raise InstallFailed(f"pip did not finish within {left:.0f} s") from None
    except OSError as err:
        raise InstallFailed(f"pip could not run ({err.strerror})") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR:")]
        said = (errors or lines[-1:] or [f"exit status {proc.returncode}"])[0]  # pip's first error says why
        raise InstallFailed("pip: " + printable(said.removeprefix("ERROR: "), 240))


def batch_cache() -> str | None:
    """pip's cache folder: none (nothing of a grading stays behind), except within one
    ``batch``, which hands its gradings a cache folder of its own in :data:`CACHE_ENV` (a class
    declaring the same packages downloads each once) and removes it when it ends."""
    cache = os.environ.get(CACHE_ENV, "")
    return cache if cache and os.path.isdir(cache) else None


def _limit_files() -> None:  # in pip's process, before it starts
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_BYTES, MAX_BYTES))


def _pinned(d: Declared, lock: dict[str, str]) -> str:
    """The requirement given to pip: the lock's version when it pins one, else as declared."""
    if d.name not in lock:
        return d.requirement
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    req = Requirement(d.requirement)
    req.specifier, req.marker = SpecifierSet(f"=={lock[d.name]}"), None
    return str(req)


def _install(wanted: list[Declared], lock: dict[str, str], tmp: Path, forbidden: tuple[str, ...], deadline: float) -> Installation:
    """Resolve, filter and install into ``tmp/site`` (see the module's docstring)."""
    from .declared import canonical, installed_names

    if importlib.util.find_spec("pip") is None:
        raise InstallFailed("pip is not installed where grading runs")
    work, site = tmp / "work", tmp / "site"
    work.mkdir(mode=0o700)
    constraints = work / "constraints.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(lock.items()) if not never_installed(n, forbidden)))
    resolved, failed = _resolve_each({d.name: _pinned(d, lock) for d in wanted}, constraints, work, deadline)
    have = installed_names()
    chosen = [(n, v) for n, v in resolved if canonical(n) not in have and not never_installed(n, forbidden)]
    kept = sorted({canonical(n) for n, _ in resolved if never_installed(n, forbidden)})
    if len(chosen) > MAX_PACKAGES:
        raise InstallFailed(f"they need {len(chosen)} packages, more than the {MAX_PACKAGES} installed for one submission")
    if chosen:
        site.mkdir()
        _pip(["install", "--no-deps", "--no-compile", "--target", str(site), *PIP_OPTIONS, *[f"{n}=={v}" for n, v in chosen]],
             work, deadline)
        size = _readable(site)
        if size > MAX_BYTES:
            raise InstallFailed(f"they take {size >> 20} MB, more than {MAX_BYTES >> 20} MB")
    shutil.rmtree(work, ignore_errors=True)
    pinned = " (pinned by its uv.lock)" if lock else ""
    notes = [f"installed for this grading, as the submission declares{pinned}: " + ", ".join(f"{n} {v}" for n, v in chosen)] if chosen else []
    if kept:
        notes.append("needed by what it declares and never installed for grading: " + ", ".join(
            f"{n} ({never_installed(n, forbidden)})" for n in kept))
    if failed:
        notes.append(f"of the packages the submission declares, {', '.join(failed)} could not be installed "
                     f"({next(iter(failed.values()))}); they have stand-ins")
    return Installation(site if chosen else None, tuple(chosen), tuple(notes), _modules(site) if chosen else ())


def _modules(site: Path) -> tuple[str, ...]:
    """The top-level modules importable from ``site``: packages (with or without
    ``__init__.py``), modules and extension modules; not metadata, scripts or ``.pth`` files."""
    names = set()
    for entry in site.iterdir():
        stem = entry.name.split(".", 1)[0]
        if (entry.is_dir() and "." not in entry.name) or entry.suffix in (".py", ".so") and stem.isidentifier():
            names.add(stem)
    return tuple(sorted(n for n in names if n.isidentifier() and n not in ("bin", "__pycache__")))


def _resolve_each(reqs: dict[str, str], constraints: Path, work: Path, deadline: float) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """What pip would install for the requirements ``reqs`` (name -> requirement), each package
    once, and why those that cannot be installed cannot: all together, else (a conflict, a
    package without a wheel) one by one, so one missing wheel costs only its own package."""
    from .declared import canonical

    failed: dict[str, str] = {}
    try:
        resolved = _resolve(list(reqs.values()), constraints, work, deadline)
    except InstallFailed:
        if len(reqs) == 1:
            raise
        resolved = []
        for name, req in reqs.items():
            try:
                resolved += _resolve([req], constraints, work, deadline)
            except InstallFailed as err:
                failed[name] = str(err)
        if not resolved:
            raise InstallFailed(next(iter(failed.values()))) from None
    return list({canonical(n): (n, v) for n, v in reversed(resolved)}.values())[::-1], failed


def _resolve(requirements: list[str], constraints: Path, work: Path, deadline: float) -> list[tuple[str, str]]:
    """``(name, version)`` of each package pip would install for ``requirements`` here (the
    environment's own packages count as there), wheels only, nothing installed."""
    report = work / "report.json"
    report.unlink(missing_ok=True)
    _pip(["install", "--dry-run", "--report", str(report), *PIP_OPTIONS, "-c", str(constraints), *requirements], work, deadline)
    try:
        return [(item["metadata"]["name"], item["metadata"]["version"]) for item in json.loads(report.read_text())["install"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise InstallFailed("pip's resolution report could not be read") from None


def _readable(folder: Path) -> int:
    """Make ``folder``'s tree readable by the worker's user id (folders 0755, files 0644, or
    0755 if executable) and return its size in bytes; links are left as they are."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                os.chmod(path, 0o755 if st.st_mode & 0o100 else 0o644)
                total += st.st_size
    return total
