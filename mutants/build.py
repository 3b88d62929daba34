"""Materialize a mutant as a submission folder: ``DEST/student/`` (a copy of ``reference/``
with the mutation applied) and ``DEST/adapters.py`` (this repository's).

Every edit is checked: a :class:`Replace` snippet must occur exactly once in the reference
file, and an :class:`Append` must redefine a name the module really defines, so that a
refactor of the reference makes the build fail loudly instead of silently producing a
mutant that is the reference.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .catalogue import Append, Mutant, Replace

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference"


class MutantBuildError(RuntimeError):
    """A mutant's edit no longer applies to the reference: update the catalogue."""


def mutated_sources(mutant: Mutant, reference: Path = REFERENCE) -> dict[str, str]:
    """file name -> mutated source, for the files the mutant changes."""
    sources: dict[str, str] = {}
    for edit in mutant.edits:
        path = reference / edit.file
        if edit.file not in sources:
            if not path.is_file():
                raise MutantBuildError(f"mutant {mutant.name}: reference/{edit.file} does not exist")
            sources[edit.file] = path.read_text(encoding="utf-8")
        text = sources[edit.file]
        if isinstance(edit, Replace):
            n = text.count(edit.old)
            if n != 1:
                raise MutantBuildError(
                    f"mutant {mutant.name}: the snippet {edit.old!r} occurs {n} times in reference/{edit.file}, "
                    "expected exactly once; update mutants/catalogue/"
                )
            text = text.replace(edit.old, edit.new)
        elif isinstance(edit, Append):
            for name in edit.overrides:
                if not re.search(rf"^(def|class) {re.escape(name)}\b|^{re.escape(name)}\s*=", text, re.M):
                    raise MutantBuildError(
                        f"mutant {mutant.name}: reference/{edit.file} no longer defines {name} at top level; "
                        "update mutants/catalogue/"
                    )
            text = text.rstrip("\n") + "\n" + edit.code
        else:  # pragma: no cover
            raise TypeError(edit)
        sources[edit.file] = text
    if not sources:
        raise MutantBuildError(f"mutant {mutant.name} has no edits")
    return sources


def build(mutant: Mutant, dest: Path | str, package: str = "student") -> Path:
    """Write the mutant's submission folder at ``dest`` (replaced if it exists); returns it.

    ``package``: the name of the mutated copy of ``reference/`` (``BPE_IMPL=package`` makes
    adapters.py use it; unique names let several mutants live in one process)."""
    dest = Path(dest)
    sources = mutated_sources(mutant)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copyfile(ROOT / "adapters.py", dest / "adapters.py")
    shutil.copytree(REFERENCE, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name, text in sources.items():
        target = dest / package / name
        if target.read_text(encoding="utf-8") == text:  # pragma: no cover - a no-op edit
            raise MutantBuildError(f"mutant {mutant.name}: the edit of {name} changes nothing")
        target.write_text(text, encoding="utf-8")
    compile_all(dest / package, mutant)
    return dest


def compile_all(package: Path, mutant: Mutant) -> None:
    """A mutant must be a bug, not a syntax error: compile every file of the package."""
    for path in package.glob("*.py"):
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except SyntaxError as err:
            raise MutantBuildError(f"mutant {mutant.name}: {path.name} does not compile: {err}") from None


def build_all(dest_root: Path | str, mutants) -> dict[str, Path]:
    """Build each mutant under ``dest_root/<name>``."""
    return {m.name: build(m, Path(dest_root) / m.name) for m in mutants}
