"""The byte tokenizer's compression ratio is 1.0 by definition, so its tests would pass on a
compression_ratio returning 1.0 whatever it is given: they score only once a ratio that is not 1
is right. The reference's warm-up passes every case of them; a constant 1.0 passes none (each
is skipped, without points, naming the call that must work first)."""

from __future__ import annotations

import pytest

from mutants.build import build
from mutants.catalogue import Mutant, Replace
from selftests.support import make_submission, pytest_outcomes

ALWAYS_ONE = Mutant(
    "compression_ratio_always_one", "warmup", "compression_ratio returns 1.0 whatever it is given.",
    (Replace("warmup.py", 'return len(text.encode("utf-8")) / len(ids)', "return 1.0"),),
)
FILES = ["tests/public/test_warmup.py", "tests/hidden/test_warmup_hidden.py", "-k", "ratio"]  # the ratio tests only


def _ratio_one_cases(outcomes: dict[str, str]) -> dict[str, str]:
    """The cases whose expected ratio is 1.0: the byte tokenizer's, and 8 bytes in 8 ids."""
    return {n: o for n, o in outcomes.items() if "test_byte_" in n or n.endswith("utf8_bytes_per_id[emoji]")}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict[str, str]]:
    base = tmp_path_factory.mktemp("ratio")
    subs = {"reference": make_submission(base / "reference", ("warmup.py",)), "always_one": build(ALWAYS_ONE, base / "always_one")}
    return {kind: _ratio_one_cases(pytest_outcomes(sub, False, False, base / f"{kind}.xml", FILES)) for kind, sub in subs.items()}


def test_the_reference_passes_every_byte_ratio_case(outcomes):
    got = outcomes["reference"]
    assert len(got) >= 8 and set(got.values()) == {"passed"}, got


def test_a_compression_ratio_returning_one_for_everything_passes_no_byte_ratio_case(outcomes):
    passed = sorted(n for n, o in outcomes["always_one"].items() if o == "passed")
    assert not passed, f"a constant 1.0 passed: {passed}"
    assert set(outcomes["always_one"]) == set(outcomes["reference"])
