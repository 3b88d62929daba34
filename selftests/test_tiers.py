"""The README's test command leaves the slow tier out (the marker ``slow``) and the slow tier's
command runs only it: the two split the collected tests, each exactly once, and CI
(``.ci/run``) runs both as the README writes them, so a test moved to the slow tier loses no
check (docs/development.md)."""

from __future__ import annotations

import re
import shlex

from .support import ROOT

CI = ROOT / ".ci" / "run"


def readme_commands() -> list[list[str]]:
    """The pytest commands of the README's code spans, as argument lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [shlex.split(span) for span in re.findall(r"`(python -m pytest [^`]*)`", text)]


def marker_expression(command: list[str]) -> str | None:
    return command[command.index("-m", 3) + 1] if "-m" in command[3:] else None


def test_the_readme_gives_a_test_command_and_a_slow_tier_that_split_the_tests():
    by_marker = {marker_expression(c): c for c in readme_commands()}
    assert set(by_marker) >= {"not slow", "slow"}, by_marker
    fast, slow = by_marker["not slow"], by_marker["slow"]
    # the same paths and options but the marker: `not slow` and `slow` select complementary sets
    without = [[a for i, a in enumerate(c) if i < 3 or (a != "-m" and c[i - 1] != "-m")] for c in (fast, slow)]
    assert without[0] == without[1], (fast, slow)
    assert {"tests", "selftests"} <= set(fast)


def test_ci_runs_both_tiers_as_the_readme_writes_them():
    script = CI.read_text(encoding="utf-8")
    stages = shlex.split(re.search(r"^STAGES=\((.*)\)$", script, re.M).group(1))
    for expression in ("not slow", "slow"):
        (command,) = [c for c in readme_commands() if marker_expression(c) == expression]
        line = shlex.join(command[1:]).replace("'", '"')  # .ci/run quotes with double quotes
        calls = [m for m in re.finditer(r'^(\w+)\(\) \{\n(?:.*\n)*?\s*"\$work/newest/bin/python" (.*)\n', script, re.M)
                 if m.group(2) == line]
        assert calls, f".ci/run never runs `{shlex.join(command)}` as the README writes it"
        assert calls[0].group(1) in stages, f".ci/run's stage {calls[0].group(1)} running it is not in STAGES {stages}"
