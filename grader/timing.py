"""Speed limits relative to the reference, measured in the same run on the same inputs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpeedPolicy:
    """A submission may take ``multiple`` times the reference's time plus ``floor`` seconds."""

    multiple: float = 10.0
    floor: float = 1.0

    def limit(self, reference_seconds: float) -> float:
        return reference_seconds * self.multiple + self.floor


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), seconds)`` by wall clock."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def best_time(fn: Callable[[], Any], repeat: int = 3) -> tuple[Any, float]:
    """The result of ``fn`` and its fastest time over ``repeat`` runs."""
    result, best = timed(fn)
    for _ in range(repeat - 1):
        result, seconds = timed(fn)
        best = min(best, seconds)
    return result, best


def speed_report(what: str, seconds: float, reference: float, policy: SpeedPolicy) -> str:
    ratio = seconds / reference if reference > 0 else float("inf")
    return (
        f"{what}: {seconds:.3f} s, reference {reference:.3f} s, {ratio:.1f}x; "
        f"limit {policy.multiple:g}x + {policy.floor:g} s = {policy.limit(reference):.2f} s"
    )
