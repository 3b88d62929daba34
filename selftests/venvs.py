"""Virtual environments for the harness's own tests, made offline and in about a second.

``make_venv(dest, project)`` creates ``python -m venv --without-pip dest`` and fills its own
site-packages with the distributions the project depends on, copied file by file from the
environment running the tests (hard links where the file system allows: the copies are the
venv's own files, at the venv's own paths, as ``pip install`` would leave them), then installs
``project`` editable the way older setuptools did: a ``.pth`` file naming the checkout.
Nothing is downloaded, so it works where the package index is unreachable.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_closure(name: str) -> list[md.Distribution]:
    """The installed distributions ``name`` needs at run time (no extras), itself excluded."""
    seen: dict[str, md.Distribution] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        key = _key(current)
        if key in seen:
            continue
        dist = md.distribution(current)
        seen[key] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    seen.pop(_key(name))
    return list(seen.values())


def site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _place(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _place_compiled(src: Path, dst: Path) -> None:
    """The byte code this interpreter compiled from module ``src``, placed beside its copy
    ``dst`` (still valid there: same size and modification time), as pip's compiling at
    install would leave it. Gradings run with ``PYTHONDONTWRITEBYTECODE``, so without it every
    process they start would compile pytest, hypothesis, yaml... from source again."""
    if src.suffix != ".py":
        return
    compiled = src.parent / "__pycache__" / f"{src.stem}.{sys.implementation.cache_tag}.pyc"
    if compiled.is_file():
        _place(compiled, dst.parent / "__pycache__" / compiled.name)


def make_venv(dest: Path, project: Path, *, leave_out: tuple[str, ...] = ()) -> Path:
    """A venv at ``dest`` with ``project`` installed editable and its dependencies copied in
    (except the distributions named in ``leave_out``). Returns the venv's python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    site = site_packages(dest)
    skip = {_key(n) for n in leave_out}
    for dist in dependency_closure("bpe-harness"):
        if _key(dist.metadata["Name"]) in skip:
            continue
        base = Path(dist.locate_file(""))
        for file in dist.files or []:
            src = Path(dist.locate_file(file))
            if not src.is_file() or "__pycache__" in file.parts:
                continue
            rel = src.resolve().relative_to(base.resolve()) if src.resolve().is_relative_to(base.resolve()) else None
            if rel is None or ".." in rel.parts:
                continue  # console scripts under bin/ are not needed
            _place(src, site / rel)
            _place_compiled(src, site / rel)
    (site / "__editable__.bpe_harness.pth").write_text(str(project.resolve()) + "\n")
    return dest / "bin" / "python"
