"""The packages a submission declares it needs, as its author's ``uv sync`` / ``pip install``
installs them at home, and which of them the grading environment lacks.

Read, never run: ``pyproject.toml``'s ``[project].dependencies`` and, if present,
``requirements.txt`` (requirement lines only: options such as ``--index-url``, ``-r``, ``-e``,
paths and URLs are ignored, so a submission cannot choose where packages come from), and the
versions its ``uv.lock`` pins (``[[package]]`` entries of a registry; where the lock holds
several versions of one package, none is pinned), with the packages the lock pins that the
submission's source imports. A requirement whose environment marker is
false here (``pywin32; sys_platform == 'win32'``) is not needed here. Names compare as
distribution names do (``Hydra_Core`` = ``hydra-core``). Every problem (no file, invalid TOML,
a line that is no requirement) means "declares nothing there": this is a hint for grading,
never a reason to refuse it.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

# packaging is pytest's own dependency, so it is wherever grading runs; it reads requirement
# strings and environment markers exactly as pip does
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.submission import package_imports

MAX_FILE_BYTES = 2_000_000  # a bigger pyproject.toml, requirements.txt or uv.lock is not read
MAX_REQUIREMENTS = 200  # requirements read from one submission
VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!_-]{0,60}$")  # a version as a lock may pin it
NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")  # a distribution name (PEP 508): never a pip option


def canonical(name: str) -> str:
    """A distribution name as installers compare it (PEP 503): ``Hydra_Core`` -> ``hydra-core``."""
    return canonicalize_name(name)


@dataclass(frozen=True)
class Declared:
    """One requirement the submission declares: its distribution name (canonical), the
    requirement as written (what pip is given without a lock), and where it was read."""

    name: str
    requirement: str
    source: str  # "pyproject.toml", "requirements.txt" or "uv.lock" (imported, pinned, not declared)


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _requirement(text: str, source: str) -> Declared | None:
    """``text`` as a requirement needed here: None for no requirement, a direct URL (pip
    would have to build or fetch it from where the submission says), or a marker false here."""
    try:
        req = Requirement(text.strip())
    except InvalidRequirement:
        return None
    if req.url or (req.marker is not None and not req.marker.evaluate()):
        return None
    return Declared(canonical(req.name), str(req), source)


def declared(root: Path) -> list[Declared]:
    """The requirements ``root`` declares, each name once (pyproject.toml's first), in order;
    then each package its uv.lock pins that its source imports by that name without declaring
    it (``omegaconf``, imported directly, locked as a dependency of the ``hydra-core`` it
    declares), pinned: needed even where what brings it at home cannot be installed."""
    found: list[Declared] = []
    text = _read(root / "pyproject.toml")
    try:
        deps = tomllib.loads(text).get("project", {}).get("dependencies", []) if text is not None else []
    except (tomllib.TOMLDecodeError, AttributeError):
        deps = []
    deps = deps if isinstance(deps, list) else []
    found += [d for d in (_requirement(r, "pyproject.toml") for r in deps if isinstance(r, str)) if d]
    text = _read(root / "requirements.txt")
    for line in (text or "").splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            found += [d for d in [_requirement(line, "requirements.txt")] if d]
    lock, names = locked(root), {d.name for d in found}
    found += [Declared(canonical(m), f"{canonical(m)}=={lock[canonical(m)]}", "uv.lock") for m in sorted(package_imports(root))
              if canonical(m) in lock and canonical(m) not in names]
    unique = {d.name: d for d in reversed(found)}
    return sorted(unique.values(), key=lambda d: found.index(d))[:MAX_REQUIREMENTS]


def locked(root: Path) -> dict[str, str]:
    """``{name: version}`` of the registry packages ``root/uv.lock`` pins, each with a single
    version in the lock; ``{}`` without a readable lock."""
    text = _read(root / "uv.lock")
    try:
        packages = tomllib.loads(text).get("package", []) if text is not None else []
    except (tomllib.TOMLDecodeError, AttributeError):
        return {}
    versions: dict[str, set[str]] = {}
    for p in packages if isinstance(packages, list) else []:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("version"), str):
            continue
        source = p.get("source")
        if isinstance(source, dict) and "registry" in source and NAME.match(p["name"]) and VERSION.match(p["version"]):
            versions.setdefault(canonical(p["name"]), set()).add(p["version"])
    return {name: v.pop() for name, v in versions.items() if len(v) == 1}


def installed_names() -> set[str]:
    """The canonical names of the distributions installed where grading runs."""
    names = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata is not None else None
        if name:
            names.add(canonical(name))
    return names


def not_installed(root: Path) -> list[Declared]:
    """What ``root`` declares that is not installed where grading runs."""
    have = installed_names()
    return [d for d in declared(root) if d.name not in have]


def declared_among(root: Path, modules: list[str]) -> list[str]:
    """Those of the top-level ``modules`` that ``root`` declares (or its uv.lock pins) as a
    distribution of that name (``rich``; ``omegaconf``: a dependency of its ``hydra-core``),
    its files read once."""
    names = {d.name for d in declared(root)}
    return [m for m in modules if canonical(m) in names]
