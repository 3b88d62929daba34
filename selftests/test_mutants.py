"""Grading validity: every catalogued student bug (mutant) fails at least one graded test.

The catalogue runs once per session (``mutants.meta.run_catalogue``: a pytest subprocess per
mutant on its group's public tests, then its hidden tests if it survived, two at a time);
each mutant is one test here, and the kill-rate table is printed to the CI log.
"""

from __future__ import annotations

import pytest

from grader.config import load_config
from mutants.build import mutated_sources
from mutants.catalogue import CATALOGUE, EXTRA, GROUPS
from mutants.meta import ROOT, kill_rates, run_catalogue, table

PUBLIC_KILL_RATE_MIN = 0.8
# The whole catalogue runs in the first test's setup: about 1.5 min of CPU on 2 cores, far
# more on a loaded machine; the suite's default per-test limit (120 s) must not cut it.
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def policy():
    return load_config(ROOT / "grading.yaml")


@pytest.fixture(scope="module")
def outcomes(policy):
    results = run_catalogue(CATALOGUE, jobs=2, config=policy)
    report = table(results)
    return {o.mutant.name: o for o in results}, report


def test_catalogue_covers_every_part():
    assert len(CATALOGUE) >= 30
    missing = set(GROUPS) - {"speed"} - {m.group for m in CATALOGUE}
    assert not missing, f"no mutant for group(s) {sorted(missing)}"


@pytest.mark.parametrize("mutant", CATALOGUE + EXTRA, ids=[m.name for m in CATALOGUE + EXTRA])
def test_every_mutant_still_applies_to_the_reference(mutant):
    # Fails (loudly) when a reference refactor moved a snippet a mutant replaces.
    assert mutated_sources(mutant)


def test_first_files_are_test_files_of_the_mutants_group(policy):
    from mutants.meta import group_files

    for mutant in CATALOGUE + EXTRA:
        public, hidden, _ = group_files(mutant.group, policy)
        stray = [f for f in mutant.first if f not in public + hidden]
        assert not stray, f"mutant {mutant.name}: first={stray} are not test files of group {mutant.group}"


@pytest.mark.parametrize("mutant", CATALOGUE, ids=[m.name for m in CATALOGUE])
def test_mutant_is_killed(outcomes, mutant):
    by_name, report = outcomes
    o = by_name[mutant.name]
    assert o.killed, (
        f"mutant {mutant.name} ({mutant.group}) survived every graded test of its group: {mutant.description}"
        + (f"\n  run problem: {o.error}" if o.error else "")
        + "\nAdd a test that catches this bug (see mutants/catalogue/)."
    )


def test_public_tests_alone_kill_most_mutants(outcomes, capsys):
    by_name, report = outcomes
    total, public = kill_rates(list(by_name.values()))
    with capsys.disabled():  # the table goes to the CI log, -s or not
        print("\n\nMutant kill-rate table (mutants/catalogue/):\n" + report, flush=True)
    assert public >= PUBLIC_KILL_RATE_MIN, f"public kill rate {public:.0%} < {PUBLIC_KILL_RATE_MIN:.0%}\n{report}"


def test_building_every_mutant_leaves_reference_untouched(tmp_path):
    import hashlib

    from mutants.build import REFERENCE, build

    def digest() -> str:
        return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(REFERENCE.glob("*.py")))).hexdigest()

    before = digest()
    for mutant in CATALOGUE:
        build(mutant, tmp_path / mutant.name)
    assert digest() == before
