"""What a mutant is: edits on files of ``reference/`` (:class:`Replace`, :class:`Append`),
the grading group whose tests must catch it, and the test files to run first."""

from __future__ import annotations

from dataclasses import dataclass, field

GROUPS = ("warmup", "primitives", "pretokenize", "train_bpe", "tokenizer", "encode_iterable", "speed")


@dataclass(frozen=True)
class Replace:
    file: str  # a file of reference/, e.g. "warmup.py"
    old: str
    new: str


@dataclass(frozen=True)
class Append:
    file: str
    code: str
    overrides: tuple[str, ...]  # top-level names the original module must define


@dataclass(frozen=True)
class Mutant:
    name: str
    group: str  # grading.yaml group whose tests must catch it
    description: str  # one sentence, written for a student
    edits: tuple[Replace | Append, ...] = field(default_factory=tuple)
    # Test files of the group that should kill it, run first so the kill is cheap (the
    # meta-test then runs the whole group only if the mutant survives them).
    first: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"mutant {self.name}: unknown group {self.group!r}")


def once(template: str, old: str, new: str, what: str) -> str:
    n = template.count(old)
    if n != 1:
        raise ValueError(f"{what}: snippet {old!r} occurs {n} times in the template, expected exactly once")
    return template.replace(old, new)



# files the catalogue names often
P = "pretokenize.py"
WARMUP = "tests/public/test_warmup.py"
RULES = "tests/public/test_tokenizer_rules.py"  # one test per docstring rule of part 5
