"""What a submission can import in the worker (in the worker: stdlib only, as it runs from the
worker's private copy): the forbidden modules' files (:func:`forbidden_files`, covered in the
private root by :func:`sandbox.confine.confine`), the import hook refusing their names
(:class:`ForbiddenFinder`) and the clean ``sys.path`` (:func:`clean_import_state`)."""

from __future__ import annotations

import os
import sys

FORBIDDEN_MESSAGE = "your code uses the forbidden module {}: grading does not allow it (grading.yaml forbidden_modules)"


def forbidden_files(names: list[str], dirs: list[str]) -> list[str]:
    """The packages and modules called ``names`` in the directories ``dirs``: ``NAME/``,
    ``NAME.py``, ``NAME*.so`` (covered with empty mounts inside the private root)."""
    found = []
    for d in sorted(set(dirs)):
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        for entry in entries:
            stem = entry.split(".", 1)[0]
            if stem in names and (entry == stem or entry.endswith((".py", ".pyc", ".so", ".pyd"))):
                found.append(os.path.join(os.path.realpath(d), entry))
    return found


class ForbiddenFinder:
    """The import hook that refuses grading.yaml's ``forbidden_modules`` (first on
    ``sys.meta_path``): importing one raises ``ModuleNotFoundError`` naming it."""

    def __init__(self, names: list[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in self.names:
            raise ModuleNotFoundError(FORBIDDEN_MESSAGE.format(top), name=fullname)
        return None


def forbid(names: list[str]) -> None:
    """Refuse ``names`` from now on (and drop any already imported)."""
    if not names:
        return
    for loaded in [m for m in sys.modules if m.partition(".")[0] in names]:
        del sys.modules[loaded]
    sys.meta_path.insert(0, ForbiddenFinder(names))


def clean_import_state(code_dir: str, harness_dir: str, python_path: list[str] | None = None) -> None:
    """Keep only the submission, the grading environment's library path (``python_path``,
    from :func:`sandbox.pyenv.worker_python`: the standard library, site-packages, the user
    site, ``.pth`` additions) and the worker's own harness modules importable."""
    from importlib.machinery import BuiltinImporter, FrozenImporter, PathFinder

    if python_path is None:  # an older caller: what this interpreter found under its prefixes
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        python_path = [
            e for e in sys.path
            if e and any(os.path.realpath(e) == p or os.path.realpath(e).startswith(p.rstrip("/") + "/") for p in prefixes)
        ]
    sys.path[:] = [code_dir, *python_path, harness_dir]
    # editable installs add finders that map the harness's own packages: drop them
    sys.meta_path[:] = [f for f in sys.meta_path if f in (BuiltinImporter, FrozenImporter, PathFinder)]
    sys.path_importer_cache.clear()
