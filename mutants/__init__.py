"""Known student bugs ("mutants") that the graded suite must catch (course staff only).

``mutants.catalogue`` lists them; ``mutants.build`` turns one into a submission folder;
``python -m mutants`` runs the meta-test (every mutant must fail at least one graded test)
and prints the kill-rate table. This folder is not part of the student handout.
"""

from .catalogue import CATALOGUE, Mutant, by_name

__all__ = ["CATALOGUE", "Mutant", "by_name"]
