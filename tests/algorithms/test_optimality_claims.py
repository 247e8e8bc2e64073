"""No search claims an optimality it has not proven (`treebench.search.exactness`).

Every learner that sets ``solve_info_["optimal"]`` is fitted on tiny problems with adversarial
sample weights (a huge weight beside small ones, whole numbers near 2^52, halves and eighths,
subnormal numbers, decimals) and compared with a brute force in exact rational arithmetic
(`tests.naive.naive_exact_optimum`): whenever a fit says ``optimal``, its objective is the
true optimum exactly. Fits that cannot prove it say why (``solve_info_["unproven"]``) and warn.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from tests.naive import naive_exact_objective, naive_exact_optimum
from treebench.algorithms.dpdt import DPDTClassifier
from treebench.algorithms.gosdt import GOSDTClassifier
from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
from treebench.algorithms.topk import TopKClassifier
from treebench.search.exactness import UnprovenOptimalityWarning

#: weight kinds that a power of two turns into whole numbers with a small total: fits on them
#: prove their trees optimal (Top-k's and a price per leaf's limits are lower for big_whole)
EXACT_KINDS = ("halves", "subnormal", "huge_half", "big_whole")
#: weight kinds whose sums round, or whose unit is too fine: fits may be unproven
HARD_KINDS = ("huge", "past_2_52", "decimal")


def _weights(rng, n, kind):
    if kind == "halves":
        return rng.integers(1, 9, n) / 8.0
    if kind == "subnormal":
        return rng.integers(1, 5, n) * 5e-324
    if kind == "huge_half":  # halves beside one weight of 1e9 + .5, generalised
        w = rng.integers(1, 4, n) * 0.5
        w[rng.integers(n)] = 1e9 + 0.5
        return w
    if kind == "big_whole":  # whole numbers near 2^49: totals just under 2^52
        return rng.integers(2**48, 2**49, n).astype(np.float64)
    if kind == "huge":
        w = rng.integers(1, 4, n).astype(np.float64)
        w[rng.integers(n)] = 2.0 ** int(rng.integers(53, 60))
        return w
    if kind == "past_2_52":  # one weight of 2**52 beside small whole ones, generalised
        w = rng.integers(1, 4, n).astype(np.float64)
        w[rng.integers(n)] = 2.0**52
        return w
    assert kind == "decimal"
    return rng.integers(1, 10, n) / 10.0


def _problems(seed, kinds, count, binary):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = 7
        X = (rng.integers(0, 2, (n, 3)) if binary else rng.integers(0, 4, (n, 2))).astype(float)
        y = rng.integers(0, 2, n)
        for kind in kinds:
            yield X, y, _weights(rng, n, kind), kind


def _fit(est, X, y, w):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, sample_weight=w)
    unproven = [c for c in caught if issubclass(c.category, UnprovenOptimalityWarning)]
    info = est.solve_info_
    # a fit that finished unproven says why, and warns; a proven one does neither
    assert bool(unproven) == ("unproven" in info), info
    if "unproven" in info:
        assert info["optimal"] is False and isinstance(info["unproven"], str)
    return info


def _price(w, lam, leaves=4) -> Fraction:
    """The documented price per leaf of ``lam``: in the unit ``1 / D`` that makes the weights
    whole (``D`` their largest denominator as fractions), ``lam`` times the total weight as a
    float, rounded to the nearest multiple of the finest power of two ``g <= 1`` with
    ``(total + (price + 1/2) * leaves + 1) / g <= 2^52``; back in the weights' unit,
    exactly."""
    unit = Fraction(1, max(Fraction(float(v)).denominator for v in w))
    total = sum(Fraction(float(v)) for v in w) / unit
    price = Fraction(float(lam) * float(total))
    if price == 0:
        return Fraction(0)
    g = Fraction(1)
    while (total + (price + Fraction(1, 2)) * leaves + 1) / (g / 2) <= 2**52:
        g /= 2
    return round(price / g) * g * unit


def _check_claims(make, binary, kinds, depth=2, lam=0.0, count=25, seed=0):
    """Fit ``make()`` on the problems; every ``optimal`` fit has the exact optimum (``errors +
    price * leaves``, `_price` of ``lam``). Returns how many fits claimed optimality, per
    weight kind."""
    claimed = dict.fromkeys(kinds, 0)
    for X, y, w, kind in _problems(seed, kinds, count, binary):
        est = make()
        info = _fit(est, X, y, w)
        if info["optimal"]:
            claimed[kind] += 1
            per_leaf = _price(w, lam)
            got = naive_exact_objective(est.predict(X), y, w, est.tree_.n_leaves,
                                        per_leaf=per_leaf)
            best = naive_exact_optimum(X, y, depth, w, per_leaf=per_leaf)
            assert got == best, (kind, w.tolist(), X.tolist(), y.tolist(), float(got),
                                 float(best))
    return claimed


# --- a huge weight beside halves, and one of 2**52 (optimal-numeric) ---

def test_numeric_half_weights_beside_a_huge_one_find_the_perfect_tree():
    """Weights 1e9 + .5 and .5s: a tolerance of 1e-9 times the total (about one unit) took the
    lone leaf, 1.0 misclassified, as optimal. Halves scale to whole numbers exactly, so the
    search compares exactly and finds the tree with no error."""
    est = OptimalNumericClassifier(max_depth=2)
    info = _fit(est, [[0], [1], [2], [3]], [0, 1, 0, 1], [1e9 + 0.5, 0.5, 0.5, 0.5])
    assert info["training_error"] == 0.0
    assert info["optimal"] is True


def test_numeric_whole_weights_past_2_52_are_not_marked_optimal():
    """Whole weights [2^52, 1, 3, 1] total past 2^52, where the search's integer comparisons
    stop being exact; its tolerance (1e-9 times the total) swallows the small rows, and the fit
    says so instead of claiming optimality."""
    est = OptimalNumericClassifier(max_depth=2)
    with pytest.warns(UnprovenOptimalityWarning, match="not marked optimal"):
        est.fit([[0], [1], [2], [3]], [0, 1, 0, 1], sample_weight=[2**52, 1, 3, 1])
    assert est.solve_info_["optimal"] is False
    assert "2**52" in est.solve_info_["unproven"]


# --- property tests: optimal means the exact optimum ---

def test_numeric_errors_claims_are_exact():
    claimed = _check_claims(lambda: OptimalNumericClassifier(max_depth=2), False,
                            EXACT_KINDS + HARD_KINDS)
    assert all(claimed[k] == 25 for k in EXACT_KINDS), claimed


@pytest.mark.parametrize("lam", [0.01, 0.125, 0.3])
def test_numeric_penalty_claims_are_exact(lam):
    claimed = _check_claims(
        lambda: OptimalNumericClassifier(max_depth=2, objective="error_rate+lambda*leaves",
                                         lam=lam),
        False, EXACT_KINDS + ("huge",), lam=lam, count=15)
    # whole-number weights near 2^49 beside a fractional price leave no room for exact sums
    assert all(claimed[k] == 15 for k in ("halves", "subnormal", "huge_half")), claimed


def test_numeric_lexicographic_takes_halves():
    """Halves are whole numbers in their unit, so min-errors-then-leaves accepts them (it
    refused them before) and its errors are the exact optimum."""
    claimed = _check_claims(lambda: OptimalNumericClassifier(max_depth=2, lexicographic=True),
                            False, ("halves", "huge_half"), count=15)
    assert claimed == {"halves": 15, "huge_half": 15}


def test_topk_fractional_weights_do_not_trade_errors_for_nodes():
    """Top-k's values are errors * M + nodes; with weights in eighths an error of 0.125 times M
    was worth fewer than two nodes, so k=all returned a smaller tree with 0.125 more error as
    optimal. Scaled to whole numbers, errors decide first."""
    X = [[0, 1, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    y = [1, 1, 0, 1, 0, 0]
    w = [0.25, 0.5, 0.25, 0.375, 0.5, 0.125]
    est = TopKClassifier(k="all", max_depth=2)
    info = _fit(est, X, y, w)
    assert info["optimal"] is True and info["training_error"] == 0.0


def test_topk_claims_are_exact():
    claimed = _check_claims(lambda: TopKClassifier(k="all", max_depth=2), True,
                            EXACT_KINDS + HARD_KINDS)
    # (weights near 2^49 times M = 16 pass 2^53: not proven, by the rule)
    assert all(claimed[k] == 25 for k in ("halves", "subnormal", "huge_half")), claimed


@pytest.mark.parametrize("lam", [0.0, 0.01, 0.125, 0.3])
def test_gosdt_claims_are_exact(lam):
    claimed = _check_claims(lambda: GOSDTClassifier(regularization=lam, max_depth=2), True,
                            EXACT_KINDS + HARD_KINDS, lam=lam, count=15)
    assert all(claimed[k] == 15 for k in ("halves", "subnormal", "huge_half")), claimed
    if lam == 0.0:
        assert claimed["big_whole"] == 15 and claimed["past_2_52"] == 15, claimed


def test_gosdt_lexicographic_refuses_totals_past_exact_sums():
    """The lexicographic price per leaf is 2^-(k+1) of an error: whole weights near 2^52 leave
    no room for it in exact sums, so the fit refuses them with one sentence."""
    with pytest.raises(ValueError, match="stop being exact"):
        GOSDTClassifier(lexicographic=True, max_depth=2).fit(
            [[0], [1], [1], [0]], [0, 1, 0, 1], sample_weight=[2.0**52, 1, 3, 1])


def test_dpdt_dp_claims_are_exact():
    claimed = _check_claims(lambda: DPDTClassifier(candidates="exhaustive", max_depth=2), True,
                            EXACT_KINDS + HARD_KINDS)
    assert all(claimed[k] == 25 for k in EXACT_KINDS), claimed
