"""Exactness of the GOSDT search's speed-ups (no lower-bound guess), each against
brute force or the plain dynamic programme (`naive.naive_gosdt_dp`, McTavish et al. eq. (5)):

* budget-2 nodes solved exactly whatever the caller's bound (the depth-2 solver starts from
  the leaf, not from ``ub``), so their cached values are optima;
* features equal or complementary on a node searched once (`treebench.search.equiv`): whole
  searches on data full of such columns give the optimum;
* the failed-search bound (the smallest bound met over the root features): on one shared
  search state, random queries with random upper bounds; an answer below ``ub`` is the
  optimum, any other answer lies in [ub, optimum].
"""

from __future__ import annotations

import numpy as np
import pytest

import naive
from treebench.search import gosdt as G
from treebench.search import engine as E
from treebench.algorithms.gosdt import GOSDTClassifier, equivalence_groups
from treebench.search.bitset import pack_classes, pack_columns, pack_rows
from treebench.search.state import bitset_data
from treebench.tree.arrays import check_tree

pytestmark = pytest.mark.kernels


def _twinned(seed, n, d_base, n_classes=2, density=0.5):
    """Random 0/1 data whose columns include copies and complements of earlier columns, with
    labels that depend on a few of them (so that deep trees pay off)."""
    rng = np.random.default_rng(seed)
    X = naive.twinned_columns(rng, n, d_base, density)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + (rng.random(n) < 0.25)) % n_classes
    return X.astype(np.float64), y.astype(np.int64)


def _state_inputs(X, y, nc):
    n = len(y)
    mask, grp, ng = equivalence_groups(X, y)
    return bitset_data(X, y, nc), (pack_rows(mask), grp, ng)


@pytest.mark.parametrize("seed", range(8))
def test_twinned_columns_give_the_optimum(seed):
    """Data where every column has a copy or a complement: the search (equivalent features
    dropped, exact budget-2 nodes, failed-search bounds) reaches the optimum of the plain
    dynamic programme at every depth budget and λ, and the tree it returns costs that much."""
    nc = 2 + seed % 2
    X, y = _twinned(seed, n=40 + 10 * seed, d_base=3 + seed % 2, n_classes=nc)
    classes = np.unique(y)
    Xl, yl = X.astype(int).tolist(), np.searchsorted(classes, y).tolist()
    n = len(y)
    for lam in (0.0, 0.5 / n, 0.01, 0.04):
        for depth in (1, 2, 3):
            est = GOSDTClassifier(regularization=lam, max_depth=depth).fit(X, y)
            want = naive.naive_gosdt_dp(Xl, yl, len(classes), list(range(n)), depth, lam * n)
            si = est.solve_info_
            assert si["objective"] * n == pytest.approx(want, abs=1e-9), (lam, depth)
            pred = est.predict(X)
            r = np.sum(pred != y) / n + lam * est.tree_.n_leaves
            assert si["objective"] == pytest.approx(r, abs=1e-12)
            assert si["optimal"] and est.get_depth() <= depth
            check_tree(est.tree_, X=X, y_index=np.searchsorted(classes, y))


@pytest.mark.parametrize("seed", range(4))
def test_twinned_columns_brute_force_depth2(seed):
    """Every tree of depth <= 2 enumerated (6-8 columns, half of them twins)."""
    X, y = _twinned(50 + seed, n=36, d_base=3 + seed % 2)
    costs = naive.naive_gosdt_costs(X, y, 2, 2)
    for lam in (0.0, 0.01, 0.05):
        est = GOSDTClassifier(regularization=lam, max_depth=2).fit(X, y)
        assert est.solve_info_["objective"] == pytest.approx(
            naive.naive_gosdt(X, y, 2, lam, 2, costs=costs), abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_solve_contract_on_a_shared_state(seed):
    """Random (row set, budget, ub) queries on one search state: an answer below ``ub`` equals
    the optimum; any other is >= ``ub`` and <= the optimum (a valid lower bound, including the
    failed-search bound and what similar support derives from it); at budget 2 every answer
    is the optimum (exact depth-2 solve)."""
    rng = np.random.default_rng(2000 + seed)
    nc = 2 + seed % 2
    twins = seed % 2 == 0
    if twins:
        X, y = _twinned(3000 + seed, n=int(rng.integers(40, 90)), d_base=3, n_classes=nc)
    else:
        n0, d0 = int(rng.integers(40, 90)), int(rng.integers(4, 7))
        X = rng.integers(0, 2, size=(n0, d0)).astype(np.float64)
        y = ((X[:, 0] + X[:, 1] * X[:, 2] + (rng.random(n0) < 0.3)) % nc).astype(np.int64)
    y = np.searchsorted(np.unique(y), y)
    nc = int(y.max()) + 1
    n = len(y)
    Xl, yl = X.astype(int).tolist(), y.tolist()
    data, eq = _state_inputs(X, y, nc)
    H = 3
    for lam in (0.0, 0.7, 2.0, 0.01 * n):
        sets, levs, ubs, opts = [], [], [], []
        base = [np.flatnonzero(rng.random(n) < 0.7) for _ in range(4)]
        for q in range(40):
            # similar sets (a base set with a few rows changed) exercise similar support
            rows = base[q % 4].copy()
            flip = rng.integers(0, n, size=int(rng.integers(0, 4)))
            m = np.zeros(n, bool)
            m[rows] = True
            m[flip] = ~m[flip]
            if not m.any():
                m[0] = True
            lev = int(rng.integers(1, H + 1))
            opt = naive.naive_gosdt_dp(Xl, yl, nc, np.flatnonzero(m).tolist(), lev, lam)
            ub = float(rng.choice([np.inf, opt, opt + 1.0, opt * rng.uniform(0.3, 1.0),
                                   opt - 0.5, opt * rng.uniform(1.0, 1.5)]))
            sets.append(pack_rows(m))
            levs.append(lev)
            ubs.append(ub)
            opts.append(opt)
        got = E.solve_queries(G.gosdt_problem(data, H, lam, groups=eq), np.array(sets),
                              np.array(levs, np.int64), np.array(ubs))
        for g, ub, opt, lev in zip(got, ubs, opts, levs):
            # a budget-2 node is solved exactly whatever ub, unless ub makes a smaller budget
            # enough (`_budget_for`), when it answers ub like any other bounded search
            if g < ub or (lev == 2 and G._budget_for(2, ub, lam) == 2):
                assert g == pytest.approx(opt, abs=1e-9), (lam, lev, ub)
            else:
                assert g >= ub - 1e-12 and g <= opt + 1e-9, (lam, lev, ub, g, opt)


@pytest.mark.parametrize("seed", range(4))
def test_exact_budget2_equals_recursion(seed):
    """The search with the depth-2 solver (exact budget-2 nodes) and without it (the recursion
    values budget-2 nodes under the caller's bound): the same optimum, on twinned data."""
    X, y = _twinned(70 + seed, n=120, d_base=4)
    data, eq = _state_inputs(X, y, 2)
    n = len(y)
    for lam in (0.4, 1.5, 0.01 * n):
        for depth in (2, 3, 4):
            a = E.fit_gosdt(G.gosdt_problem(data, depth, lam, max_entries=10**6, groups=eq))
            b = E.fit_gosdt(G.gosdt_problem(data, depth, lam, max_entries=10**6, groups=eq,
                                            shortcut=False))
            assert a[0] == pytest.approx(b[0], abs=1e-9)
            feat, value = a[2], a[5]
            leaves = feat < 0
            cost = np.sum(value[leaves].sum(1) - value[leaves].max(1)) + lam * leaves.sum()
            assert a[0] == pytest.approx(cost, abs=1e-9)


def test_budget_for_is_the_depth_of_the_largest_tree_below_ub():
    """`_budget_for(lev, ub, lam)` = min(lev, L - 1) (at least 0), L the largest number of
    leaves with L * lam < ub + margin (margin 1e-9 max(1, ub), for the search's rounding):
    checked with exact fractions on random and boundary bounds, and never below the count
    without the margin (a budget too small would lose trees)."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    cases = [(lev, float(k) * lam, lam) for lev in range(6) for lam in (0.5, 2.0, 81.24, 1 / 3)
             for k in range(0, 9)]  # ub exactly on a multiple of lam
    cases += [(int(rng.integers(0, 7)), float(rng.uniform(0, 30)), float(rng.uniform(0.1, 5)))
              for _ in range(500)]
    for lev, ub, lam in cases:
        top = Fraction(ub) + Fraction(1e-9 * max(1.0, ub))
        L = 0
        while Fraction(L + 1) * Fraction(lam) < top:
            L += 1
        L_exact = 0
        while Fraction(L_exact + 1) * Fraction(lam) < Fraction(ub):
            L_exact += 1
        got = G._budget_for(lev, ub, lam)
        assert got == min(lev, max(L - 1, 0)), (lev, ub, lam)
        assert got >= min(lev, max(L_exact - 1, 0))
