"""Exact points: shares of a whole in integer hundredths, so rounded parts add up.

Every score the grader writes is a whole number of hundredths of a point ("cents"): a
group's points are split among its entries by largest-remainder rounding, so the entries'
``max_score`` values add up exactly to the group's points and the groups' to ``total:``;
sums of cents cannot drift the way sums of floats do.
"""

from __future__ import annotations

from fractions import Fraction


def to_cents(points: float) -> int:
    """``points`` in hundredths, rounded to the nearest (``grading.yaml`` values have at
    most two decimals; a value with more is rounded here, once)."""
    if points < 0:
        raise ValueError(f"points must not be negative, got {points!r}")
    return int(Fraction(points) * 100 + Fraction(1, 2))


def cents_text(cents: int) -> str:
    """``1234`` -> ``"12.34"``, ``500`` -> ``"5"``: for messages."""
    whole, frac = divmod(cents, 100)
    return f"{whole}" if frac == 0 else f"{whole}.{frac:02d}".rstrip("0")


def largest_remainder(whole: int, weights: list[Fraction]) -> list[int]:
    """Split ``whole`` (cents) in proportion to ``weights``: each part is its exact share
    rounded down, and the cents left over go one each to the parts with the largest
    remainders (ties: the earlier part). The parts always add up to ``whole``; all-zero
    weights give all-zero parts. ``ValueError`` for a negative weight or whole."""
    if whole < 0:
        raise ValueError(f"cannot split a negative amount: {whole}")
    if any(w < 0 for w in weights):
        raise ValueError(f"weights must not be negative, got {min(weights)}")
    total = sum(weights, Fraction(0))
    if not weights or total == 0:
        return [0] * len(weights)
    exact = [Fraction(whole) * Fraction(w) / total for w in weights]
    parts = [int(x) for x in exact]  # floor: the shares are non-negative
    left = whole - sum(parts)
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in by_remainder[:left]:
        parts[i] += 1
    return parts


def proportional_cents(cents: int, passed: Fraction, total: Fraction) -> int:
    """Partial credit: ``cents * passed / total`` rounded down (full credit only when
    everything passed; nothing when ``total`` is 0)."""
    if total <= 0:
        return 0
    if passed >= total:
        return cents
    return int(Fraction(cents) * Fraction(passed) / Fraction(total))


def part_numbers(titles: list[str]) -> list[int]:
    """N of each group's entry numbers ``N.k``: its title's ``Part N`` (groups of one part share
    its count), else the numbers after the last part: ``["Speed", "Part 1: x", "Part 1b: y"]`` -> ``[2, 1, 1]``."""
    parts = [int(m.group(1)) if (m := __import__('re').match(r"\s*Part\s+(\d+)", t or "")) else None for t in titles]
    after = max((p for p in parts if p is not None), default=0)
    out = []
    for p in parts:
        if p is None:
            after += 1
            p = after
        out.append(p)
    return out
