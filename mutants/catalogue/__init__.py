"""The catalogue of known student bugs: each mutant is the reference with ONE realistic bug.

A mutant is a list of edits on files of ``reference/``:

* :class:`Replace` swaps an exact snippet of a reference file for another one. The snippet
  must occur exactly once (``mutants.build`` fails loudly otherwise), so a refactor of the
  reference can never silently turn a mutant back into the reference. Used on the files
  that are stable (warm-up, primitives, pre-tokenization).
* :class:`Append` adds code at the end of a module that redefines one of its top-level
  names (``train_bpe``, ``Tokenizer``). It survives any refactor of the module's insides:
  the training and tokenizer bugs are written against small self-contained templates
  (``TRAINER``, ``TOKENIZER``) that behave exactly like the reference, each mutant
  changing one snippet of its template (again exactly once, checked at import time).
  ``CONTROLS`` are the untouched templates: the meta-test can check that they pass, so a
  mutant is killed by its bug, not by its template.

The catalogue is split by part: :mod:`.basics` (parts 1 to 3), :mod:`.training` (part 4),
:mod:`.tokenizing` (part 5), :mod:`.extra` (bugs an older test already kills), over
:mod:`.model` (what a mutant is) and :mod:`.templates` (the templates and their controls).
"""

from __future__ import annotations

from .basics import BASICS
from .extra import EXTRA
from .model import GROUPS, Append, Mutant, Replace
from .templates import CONTROLS
from .tokenizing import TOKENIZING
from .training import TRAINING

CATALOGUE: tuple[Mutant, ...] = (*BASICS, *TRAINING, *TOKENIZING)

__all__ = ["CATALOGUE", "CONTROLS", "EXTRA", "GROUPS", "Append", "Mutant", "Replace", "by_name"]


def by_name(name: str) -> Mutant:
    for m in (*CATALOGUE, *EXTRA, *CONTROLS):
        if m.name == name:
            return m
    raise KeyError(f"no mutant named {name!r}")


_names = [m.name for m in (*CATALOGUE, *EXTRA, *CONTROLS)]
if len(set(_names)) != len(_names):  # pragma: no cover - a catalogue typo
    raise ValueError("mutant names must be unique")
