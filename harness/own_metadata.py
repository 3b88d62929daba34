"""The submission's own package metadata, as if it were installed.

CS336's starter package reads its own version at import
(``__version__ = importlib.metadata.version("cs336_basics")``), which works only once the
repository is installed (``uv sync``, ``pip install -e .``). Graded from a folder, nothing
is installed, and every call would fail with ``PackageNotFoundError``. :func:`provide`
puts a metadata finder last on ``sys.meta_path`` that answers ``importlib.metadata`` for
the one distribution named in the submission's ``pyproject.toml`` (``[project]`` name and
version, or ``[tool.poetry]``'s): its ``METADATA`` holds that name and version, nothing
else (no files, no entry points, no requirements). The submission's build never runs. A
distribution that really is installed under that name is found first (the finder is last).
Processes the submission starts with ``multiprocessing``'s ``spawn`` or ``forkserver`` are new
interpreters: they get this process's ``sys.path``, not its ``sys.meta_path``, so the same
``METADATA`` is also written as a ``NAME-VERSION.dist-info`` folder in a folder of this
process's own, last on ``sys.path`` (removed at exit, or by a later process when this one
was killed; in the isolated worker it lies in the worker's private TMPDIR): there they find it as they would installed (a real repository's
trainer, a ``spawn`` pool whose workers import its package, hung without it).
Used by the isolated worker and by in-process runs alike (:func:`harness.dispatch.import_adapters`).
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import shutil
import sys
import tomllib  # not lazily: the worker imports this before dropping privileges (a stdlib under /root is closed after)
from typing import Any

from .proc_folders import made_folder, process_folder

MAX_PYPROJECT_BYTES = 1_000_000  # a bigger pyproject.toml is not read
NO_VERSION = "0.0.0"  # for a name whose version is dynamic (computed by the build) or missing


def normalize(name: str) -> str:
    """A distribution name as ``importlib.metadata`` compares it (``cs336-basics`` = ``cs336_basics``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def project_name_version(root: str) -> tuple[str, str] | None:
    """``(name, version)`` from ``root/pyproject.toml``; None when it has no usable name
    (no file, too big, not valid TOML, no ``[project]``/``[tool.poetry]`` name)."""
    path = os.path.join(root, "pyproject.toml")
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_PYPROJECT_BYTES:
            return None
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError):  # tomllib.TOMLDecodeError is a ValueError
        return None
    for table in (data.get("project"), data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), dict) else None):
        if isinstance(table, dict) and isinstance(table.get("name"), str) and table["name"].strip():
            version = table.get("version")
            return table["name"].strip(), version.strip() if isinstance(version, str) and version.strip() else NO_VERSION
    return None


class _Distribution(md.Distribution):
    """A distribution whose only file is its ``METADATA`` (name and version)."""

    def __init__(self, name: str, version: str, root: str) -> None:
        self._metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        self._root = root

    def read_text(self, filename: str) -> str | None:
        return self._metadata if filename in ("METADATA", "PKG-INFO") else None

    def locate_file(self, path: Any) -> Any:
        return os.path.join(self._root, str(path))


class OwnMetadataFinder(md.DistributionFinder):
    """Finds no modules; finds the submission's own distribution by its (normalized) name."""

    def __init__(self, name: str, version: str, root: str) -> None:
        self.name, self.version = name, version
        self.distribution = _Distribution(name, version, root)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        return None

    def find_distributions(self, context: Any = md.DistributionFinder.Context()):
        wanted = getattr(context, "name", None)
        if wanted is None or normalize(wanted) == normalize(self.name):
            yield self.distribution


PREFIX = "bpe-own-metadata-"


def on_disk_folder() -> str:
    """This process's folder for the submission's ``.dist-info`` (made once per process, a
    forked one too; :func:`harness.proc_folders.process_folder`: removed at exit, or by a later
    process when this one ended without running ``atexit``)."""
    return str(process_folder(PREFIX))


def _installed(name: str) -> bool:
    """A distribution ``name`` that ``importlib.metadata`` finds without this module's help."""
    try:
        md.distribution(name)
    except md.PackageNotFoundError:
        return False
    return True


def _write_on_disk(found: tuple[str, str] | None) -> None:
    """The ``.dist-info`` of ``found`` (name, version) alone in :func:`on_disk_folder`, last on
    ``sys.path``; with None, that folder emptied."""
    folder = on_disk_folder()
    for entry in os.listdir(folder):  # an earlier submission's
        shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)
    if found is None:
        return
    name, version = found
    dist = os.path.join(folder, f"{normalize(name)}-{re.sub(r'[^A-Za-z0-9.+]', '_', version)}.dist-info")
    os.mkdir(dist)
    with open(os.path.join(dist, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_Distribution(name, version, folder)._metadata)
    if folder not in sys.path:
        sys.path.append(folder)


def provide(root: str) -> tuple[str, str] | None:
    """Make the package metadata of the submission in ``root`` available (replacing that of
    a submission provided before in this process), to this process and to the processes it
    starts; ``(name, version)``, or None when its ``pyproject.toml`` names no package."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, OwnMetadataFinder)]
    if made_folder(PREFIX) is not None:
        _write_on_disk(None)  # an earlier submission's
    found = project_name_version(root)
    if found is not None:
        installed = _installed(found[0])  # found first anyway, by this process and the ones it starts
        sys.meta_path.append(OwnMetadataFinder(*found, root))
        if not installed:
            _write_on_disk(found)
    return found
