"""The numeric search with a price per test (`solve_numeric_alpha`, DPDT's ``E + alpha * L``)
against the plain backward induction of `tests/naive.py` (`naive_dpdt_numeric`): the same
tree and the same float value, compiled and (``make test-nojit``) without compilation."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from treebench.search.numeric import solve_numeric_alpha
from treebench.tree.arrays import check_tree

from naive import naive_dpdt_numeric, naive_tree_tuple

pytestmark = pytest.mark.kernels


def _data(seed):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(6, 16)), int(rng.integers(1, 4))
    X = rng.integers(0, 3, size=(n, p)).astype(float) * 0.5
    y = rng.integers(0, int(rng.integers(2, 4)), size=n)
    w = rng.integers(0, 3, size=n).astype(float) if seed % 2 else None
    if w is not None:
        w[0] = 1.0
    return X, y, w


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("alpha", [0.01, 1 / 3, 7.0])
def test_solve_numeric_alpha_equals_the_plain_backward_induction(seed, alpha):
    X, y, w = _data(seed)
    for depth in (1, 2, 3):
        sol = solve_numeric_alpha(X, y, w, 3, depth, alpha)
        value, tree = naive_dpdt_numeric(X, y, 3, depth, alpha, w)
        check_tree(sol.tree)
        assert sol.objective == value
        assert naive_tree_tuple(sol.tree) == tree
        assert sol.optimal and not sol.timed_out


def test_solve_numeric_alpha_refuses_fractional_weights():
    X, y, _ = _data(0)
    with pytest.raises(ValueError, match="whole-number"):
        solve_numeric_alpha(X, y, np.full(len(y), 0.5), 3, 2, 0.1)


def test_a_timed_out_search_returns_a_valid_tree():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    sol = solve_numeric_alpha(X, y, None, 2, 3, 0.01, deadline=time.perf_counter() + 0.05)
    check_tree(sol.tree)
    assert sol.timed_out == (not sol.optimal)


def _spread(seed):
    """Many distinct values (so that the neighbour bounds and the seed matter), several
    classes, whole-number weights with zeros."""
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(14, 22))
    X = rng.normal(size=(n, 3)).round(1)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5) * (seed % 3 > 0)) % 3
    y = np.where(rng.random(n) < 0.2, rng.integers(0, 3, size=n), y)
    w = rng.integers(0, 4, size=n).astype(float) if seed % 2 else None
    if w is not None:
        w[0] = 1.0
    return X, y, w


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("alpha", [0.01, 0.1, 0.29, 1.0])
def test_bounds_and_seed_keep_the_backward_inductions_tree(seed, alpha):
    """The neighbour bounds (a part's value carried along the sweep) and the Gini seed only
    skip candidates that cannot be the first minimum: same float value, same tree."""
    X, y, w = _spread(seed)
    for depth in (2, 3):
        sol = solve_numeric_alpha(X, y, w, 3, depth, alpha)
        value, tree = naive_dpdt_numeric(X, y, 3, depth, alpha, w)
        assert sol.objective == value
        assert naive_tree_tuple(sol.tree) == tree


def test_the_neighbour_bounds_skip_most_children():
    """On 400 rows of one informative feature and two noisy ones, almost every candidate of
    the root is proven no better from its neighbours' values: without the bounds each of the
    ~1,200 candidates solves at least its left child (a node expanded)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3)).round(3)
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    sol = solve_numeric_alpha(X, y, None, 2, 2, 0.05)
    assert sol.optimal and sol.nodes_expanded < 300


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1",
                    reason="600 rows at depth 3 take minutes as plain Python")
@pytest.mark.parametrize("seed", range(3))
def test_widened_part_bounds_exclude_the_neighbourhood(seed):
    """At depth 3 a candidate's parts are solved under their bound plus the most their value
    can change over the rest of the candidate's interval: a part that fails then proves
    enough to exclude its neighbours. With the bound alone these problems expand 744-829
    nodes; with the widening 89-107 (and the same tree, checked against the backward
    induction on small data above)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 3)).round(2)
    y = ((X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.normal(size=600)) > 0.3).astype(int)
    sol = solve_numeric_alpha(X, y, None, 2, 3, 0.05)
    assert sol.optimal and sol.nodes_expanded < 300


def _dp_float(tree, alpha, node=0):
    """``E + alpha * L`` of a `TreeArrays` with the DP's float expressions."""
    v = tree.value[node]
    if tree.feature[node] < 0:
        return float(v.sum() - v.max())
    return ((alpha * float(v.sum()) + _dp_float(tree, alpha, tree.left[node]))
            + _dp_float(tree, alpha, tree.right[node]))


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1",
                    reason="3,000 rows (enough nodes for the clock's first look) take ten "
                           "minutes as plain Python; the timed-out path runs there in "
                           "test_a_timed_out_search_returns_a_valid_tree")
def test_a_search_stopped_at_once_keeps_the_seeded_tree():
    """Past the deadline a node keeps the best tree its seed found (the sweep that would
    replace it did not run), and the value returned is that tree's."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 3)).round(3)
    y = (X[:, 0] + X[:, 1] * 0.5 + 0.3 * rng.normal(size=3000) > 0).astype(int)
    sol = solve_numeric_alpha(X, y, None, 2, 3, 0.01, deadline=time.perf_counter() + 1e-6)
    check_tree(sol.tree)
    assert sol.timed_out and not sol.optimal
    assert sol.tree.n_leaves > 1
    assert sol.objective == _dp_float(sol.tree, 0.01)


@pytest.mark.parametrize("seed", range(6))
def test_gini_boundary_is_the_first_best_gini_split(seed):
    """The seed's threshold (`gini_boundary`) against a plain computation of every
    boundary's Gini score: the best one, the first of equals (up to the last bits of the two
    computations), -1 for a constant feature."""
    from treebench.search import _numeric_alpha_kernels as KA

    rng = np.random.default_rng(900 + seed)
    n, nc = 30, 2 + seed % 3
    X = rng.integers(0, 8, size=(n, 3)).astype(float)
    X[:, 2] = 4.0
    y = rng.integers(0, nc, size=n)
    w = np.ones(n) if seed % 2 == 0 else rng.integers(1, 4, size=n).astype(float)
    st = KA.new_alpha_state(X, y, w, nc, 2, 0.1, None)
    KA.node_totals(st, 0)
    for f in range(3):
        pos = KA.gini_boundary(st, 0, f)
        order = np.argsort(X[:, f], kind="stable")
        v, yy, ww = X[order, f], y[order], w[order]
        cuts = [i for i in range(1, n) if v[i] != v[i - 1]]
        if not cuts:
            assert pos == -1
            continue
        total = np.bincount(yy, weights=ww, minlength=nc)

        def score(i):
            left = np.bincount(yy[:i], weights=ww[:i], minlength=nc)
            right = total - left
            return (left @ left) / left.sum() + (right @ right) / right.sum()

        best = max(score(i) for i in cuts)
        assert pos in cuts and score(pos) >= best - 1e-12 * best
        assert all(score(i) < best - 1e-12 * best for i in cuts if i < pos)


def _part_rows(X, f, pos, w):
    """The rows of the two parts of the ``pos``-th row boundary of feature ``f`` (rows of zero
    weight dropped, as the search does), in the search's order."""
    keep = np.flatnonzero(w > 0)
    order = keep[np.argsort(X[keep, f], kind="stable")]
    return order[:pos], order[pos:]


@pytest.mark.parametrize("seed", range(10))
def test_depth2_parts_are_each_parts_own_depth1_search(seed):
    """`depth2_parts` (both parts of a candidate solved to depth one in one pass) against the
    plain backward induction run on each part alone: the same float and the same test."""
    from treebench.search import _numeric_alpha_kernels as KA

    X, y, w = _spread(seed)
    w = np.ones(len(y)) if w is None else w
    alpha = (0.01, 0.1, 0.29, 1.0, 1 / 3)[seed % 5]
    st = KA.new_alpha_state(X[w > 0], y[w > 0], w[w > 0], 3, 2, alpha, None)
    KA.node_totals(st, 0)
    for f in range(X.shape[1]):
        nb = KA.list_boundaries(st, 0, f)
        for k in range(nb):
            pos = int(st.bpos[0, k])
            values = KA.depth2_parts(st, 0, f, pos)
            for s, rows in enumerate(_part_rows(X, f, pos, w)):
                value, tree = naive_dpdt_numeric(X[rows], y[rows], 3, 1, alpha, w[rows])
                assert values[s] == value
                got = None if st.sd[0, s, 0] < 0 else (int(st.sd[0, s, 0]), st.sd[0, s, 1])
                assert got == (None if tree is None else tree[:2])


@pytest.mark.parametrize("seed", range(6))
def test_neighbour_and_interval_bounds_are_lower_bounds(seed):
    """Every bound the bisection uses, from any pair of neighbours holding the parts' exact
    values (or lower bounds of them), is at most the part's (or the candidate's) DP float."""
    from treebench.search import _numeric_alpha_kernels as KA

    X, y, w = _spread(40 + seed)
    w = np.ones(len(y)) if w is None else w
    alpha, h = (0.01, 0.1, 0.29)[seed % 3], 3
    st = KA.new_alpha_state(X[w > 0], y[w > 0], w[w > 0], 3, h, alpha, None)
    W = KA.node_totals(st, 0)
    aW = alpha * W
    st.nd[0, KA.N_AW] = aW
    for f in range(X.shape[1]):
        nb = KA.list_boundaries(st, 0, f)
        exact = []
        for k in range(nb):
            left, right = _part_rows(X, f, int(st.bpos[0, k]), w)
            exact.append([naive_dpdt_numeric(X[r], y[r], 3, h - 1, alpha, w[r])[0]
                          for r in (left, right)])
        exact = np.array(exact)
        st.rec[0, :nb, :] = exact * (1.0 - 0.3 * (seed % 2))  # exact, or lower bounds
        for kl in range(-1, nb):
            for kr in [*range(kl + 2, nb), -1]:
                inside = range(kl + 1, kr if kr >= 0 else nb)
                bound = KA.interval_bound(st, 0, kl, kr)
                for k in inside:
                    lbL, lbR = KA.neighbour_bounds(st, 0, h, k, kl, kr)
                    assert lbL <= exact[k, 0] and lbR <= exact[k, 1]
                    assert bound <= (aW + exact[k, 0]) + exact[k, 1]
