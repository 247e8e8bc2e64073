"""When a search's costs compare exactly, so that its ``optimal`` flag is a proof.

A search that reports ``optimal=True`` has compared the costs of trees and kept the least; the
claim holds only when no comparison is decided by rounding or by a tolerance wider than the
difference between two trees. Sample weights are floats, and every float is a whole number
times a power of two, so one power of two ``2^s`` (`dyadic_shift`) turns all the weights into
whole numbers, exactly (scaling by a power of two only moves the exponent). In that unit every
sum of weights is exact while the total is at most ``2^53``, and the searches' comparisons are
then exact (`whole_weights`, with the limit each search needs). Weights with no such unit
within the limit (a huge weight beside tiny ones, or most decimal fractions such as 0.1, whose
unit is ``2^-55`` or less) leave sums that round, and a tolerance that absorbs the rounding can
swallow whole rows: such fits report ``optimal=False`` with the reason.

With a price per leaf (``errors + pen * leaves``) the errors stay whole numbers but ``pen``
(lambda times the total weight) usually has no short binary expansion, and sums of costs with
it round. The searches therefore round the price once, to the finest power-of-two grid on which
every cost is an exact multiple below 2^52 (`price_grid`, `on_grid`): it moves by at most half
a grid step, at most one unit in the last place of the largest cost, and every sum and
comparison of costs is then exact, so the tree is proven optimal for that price.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

#: sums of whole numbers are exact in float64 up to 2^53
EXACT_SUM = 2.0**53
#: whole numbers up to 2^52 still have their halves exact (a search comparing ``c`` with
#: ``c +- 0.5``, or adding two costs, stays exact below it)
EXACT_INT = 2.0**52


class UnprovenOptimalityWarning(UserWarning):
    """A search finished but cannot prove its tree optimal (the reason is in ``solve_info_``
    under ``unproven``)."""


def dyadic_shift(w) -> int:
    """The exponent ``s`` for which every positive weight times ``2^s`` is a whole number and
    one of them is odd (weights of zero are ignored; 0 when there is no positive weight)."""
    w = np.asarray(w, dtype=np.float64)
    w = w[w > 0]
    if w.shape[0] == 0:
        return 0
    mant, expo = np.frexp(w)  # w = mant * 2^expo, 0.5 <= mant < 1, exact for subnormals too
    whole = np.ldexp(mant, 53).astype(np.int64)  # the 53-bit integer significand
    low = whole & -whole  # its lowest set bit, a power of two
    low_exp = np.frexp(low.astype(np.float64))[1] - 1
    return -int(np.min(expo.astype(np.int64) - 53 + low_exp))


def whole_weights(w, limit: float) -> tuple[np.ndarray, float] | None:
    """``(w * 2^s, 2^-s)`` for the `dyadic_shift` ``s`` of ``w`` when the scaled weights total
    at most ``limit`` (at most `EXACT_SUM`), else None. The scaled weights are whole numbers
    and every sum of them is exact; ``2^-s`` is the unit that turns them back."""
    w = np.asarray(w, dtype=np.float64)
    s = dyadic_shift(w)
    with np.errstate(over="ignore"):
        scaled = np.ldexp(w, s)
    if not np.all(np.isfinite(scaled)):
        return None
    # math.fsum is the correctly rounded total, exact below 2^53; from there on it may round
    # down onto the limit, so the total is then summed in Python integers
    total = math.fsum(scaled)
    if total >= EXACT_SUM:
        total = sum(int(v) for v in scaled)
    if total > limit:
        return None
    return scaled, math.ldexp(1.0, -s)


def price_grid(pen: float, total: float, leaves: int, limit: float = EXACT_INT) -> float | None:
    """For costs ``errors + pen * leaves`` with whole-number errors totalling at most ``total``
    and at most ``leaves`` leaves: the finest power of two ``g <= 1`` such that every such cost
    with the price rounded to a multiple of ``g`` (`on_grid`) is a whole multiple of ``g``
    below ``limit * g``, so that sums and comparisons of costs (and of sums of two) are exact;
    None when even ``g = 1`` leaves the largest cost above ``limit``."""
    # (the price may round up by half a step, at most 1/2, on each leaf)
    top = float(total) + (max(float(pen), 0.0) + 0.5) * max(int(leaves), 1) + 1.0
    if not top <= limit:
        return None
    k = 0
    while top * 2.0 ** (k + 1) <= limit and k < 1074:
        k += 1
    return math.ldexp(1.0, -k)


def on_grid(pen: float, grid: float) -> float:
    """``pen`` rounded to the nearest multiple of ``grid`` (a power of two; exact)."""
    return float(np.rint(pen / grid) * grid)


def warn_unproven(learner: str, reason: str, stacklevel: int = 3) -> None:
    """The warning of a fit that finished without proving its tree optimal."""
    warnings.warn(f"{learner}: the tree is not marked optimal: {reason}",
                  UnprovenOptimalityWarning, stacklevel=stacklevel + 1)
