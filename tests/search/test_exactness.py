"""The exactness rules behind the searches' ``optimal`` flag (`treebench.search.exactness`)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from treebench.search.exactness import (
    EXACT_INT,
    EXACT_SUM,
    dyadic_shift,
    on_grid,
    price_grid,
    whole_weights,
)

ADVERSARIAL = [
    [1.0, 2.0, 3.0],
    [1e9 + 0.5, 0.5, 0.5, 0.5],
    [2.0**52, 1.0, 3.0, 1.0],
    [2.0**60, 2.0**55, 2.0**57],
    [5e-324, 1.5e-323, 1e-300],
    [0.1, 0.2, 0.3],
    [0.375, 0.125, 0.0, 0.25],
    [1.0 / 3.0, 2.0 / 3.0],
    [1e308, 1e-308],
]


@pytest.mark.parametrize("w", ADVERSARIAL)
def test_dyadic_shift_makes_every_weight_whole_and_one_odd(w):
    """The shift is the exact power of two: every positive weight times 2^s is a whole number
    (checked on rationals), and one of them is odd (no smaller power would do)."""
    s = dyadic_shift(w)
    scaled = [Fraction(v) * Fraction(2) ** s for v in w if v > 0]
    assert all(v.denominator == 1 for v in scaled)
    assert any(v.numerator % 2 == 1 for v in scaled)


def test_whole_weights_respects_the_limit_exactly():
    """Whole weights come back scaled and with their unit; a total over the limit (even by one
    unit, where a float sum would round it back to the limit) is refused."""
    scaled, unit = whole_weights([1e9 + 0.5, 0.5, 0.5, 0.5], 2.0**52)
    assert scaled.tolist() == [2e9 + 1, 1.0, 1.0, 1.0] and unit == 0.5
    assert whole_weights([2.0**52, 1.0, 3.0, 1.0], 2.0**52) is None
    assert whole_weights([2.0**53, 1.0], EXACT_SUM) is None  # 2^53 + 1 rounds to 2^53
    assert whole_weights([2.0**52, 2.0**52], EXACT_SUM) is not None
    assert whole_weights([0.1, 0.2], EXACT_SUM) is None  # unit 2^-55 or less: totals 2^54+
    assert whole_weights([1e308, 1e-308], EXACT_SUM) is None  # the scaled weight overflows


def test_price_grid_keeps_every_cost_exact():
    """The grid is the finest power of two on which the largest cost (total, plus the price
    on every leaf) stays below the limit; the rounded price is within half a step, and the
    largest cost in grid steps is a whole number below 2^52, so its sums are exact."""
    for pen, total, leaves in [(0.3, 20.0, 4), (1.0 / 3.0, 100.0, 8), (123.456, 2.0**40, 64),
                               (0.01 * 7.0, 7.0, 128), (1e-300, 5.0, 2)]:
        grid = price_grid(pen, total, leaves)
        assert grid is not None and math.log2(grid).is_integer() and grid <= 1.0
        top = total + (pen + 0.5) * leaves + 1.0
        assert top / grid <= EXACT_INT < 2.0 * top / grid or grid == 1.0
        price = on_grid(pen, grid)
        assert abs(Fraction(price) - Fraction(pen)) <= Fraction(grid) / 2
        assert (Fraction(price) / Fraction(grid)).denominator == 1
    assert price_grid(0.5, 2.0**52, 4) is None  # even whole units pass 2^52
