"""The child-process environment filter (harness.childenv): one rule for every caller."""

from __future__ import annotations

import pytest

from harness.childenv import LEAKY, child_env

BASE = {"PATH": "/bin", "BPE_IMPL": "reference", "BPE_SEED": "3", "PYTEST_ADDOPTS": "-x", "PYTEST_XDIST": "1",
        "PYTHONPATH": "/checkout", "HOME": "/h"}


def test_by_default_the_leaky_variables_go_and_the_rest_stays():
    env = child_env(base=BASE)
    assert env == {k: v for k, v in BASE.items() if k not in LEAKY}


@pytest.mark.parametrize("keep", [("PYTHONPATH",), ("BPE_IMPL", "PYTEST_ADDOPTS"), LEAKY])
def test_kept_variables_stay_and_the_other_leaky_ones_go(keep):
    env = child_env(keep=keep, base=BASE)
    assert {k for k in LEAKY if k in env} == set(keep)


def test_a_trailing_star_drops_every_variable_with_that_prefix():
    env = child_env(drop=("BPE_*", "PYTEST*"), keep=("PYTHONPATH",), base=BASE)
    assert env == {"PATH": "/bin", "PYTHONPATH": "/checkout", "HOME": "/h"}


def test_values_are_set_last_even_over_a_dropped_variable():
    env = child_env(base=BASE, PYTHONPATH="/elsewhere", TMPDIR="/t")
    assert env["PYTHONPATH"] == "/elsewhere" and env["TMPDIR"] == "/t" and "BPE_IMPL" not in env


def test_the_base_is_not_changed(monkeypatch):
    monkeypatch.setenv("BPE_IMPL", "student")
    base = dict(BASE)
    child_env(base=base, drop=("HOME",), X="1")
    assert base == BASE and child_env().get("BPE_IMPL") is None
