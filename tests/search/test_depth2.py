"""The specialised depth-2 solver of the search layer (`treebench.search.depth2`, MurTree §4.3)
and its pairwise counts (`treebench.search.counts.pair_counts_buf`) against their naive twins
in ``tests/naive.py`` and against brute force over every tree of depth <= 2."""

from __future__ import annotations

import numpy as np
import pytest

import naive
from treebench.search import bitset, counts, depth2, state

pytestmark = pytest.mark.kernels  # also run under NUMBA_DISABLE_JIT=1 (make test-nojit)


def _node(seed, n, d, nc, density=0.5, frac=0.8):
    """Random 0/1 data, a random node (row subset) and its bitset counts."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < density).astype(np.int64)
    y = rng.integers(0, nc, size=n).astype(np.int64)
    mask = rng.random(n) < frac
    F = bitset.pack_columns(X)
    C = bitset.pack_classes(y, nc)
    rows = bitset.pack_rows(mask)
    W = F.shape[0]
    tot = np.zeros(nc)
    nzw = np.zeros(W, dtype=np.int64)
    nnz, nrows = counts.node_totals(rows, C, y, np.ones(n), False, tot, nzw)
    cnt1 = np.zeros((d, nc))
    rc1 = np.zeros(d)
    data = state.Data(F, C, np.zeros((1, d), np.uint8), y, np.ones(n), False, n)
    counts.feature_counts(data, rows, nzw, nnz, cnt1, rc1, np.zeros((nc, d), np.int64))
    return X, y, mask, F, C, rows, nzw, nnz, tot, cnt1, rc1


@pytest.mark.parametrize("seed", range(6))
def test_pair_counts_buf_matches_naive_both_triangles(seed):
    """Every pair of the listed features, both (i, j) and (j, i), equals the naive count; the
    4-way blocking is exercised by lists of 1..13 features (remainders 0..3)."""
    n, d, nc = 70 + 60 * seed, 13, 2 + seed % 3
    X, y, mask, F, C, rows, nzw, nnz, *_ = _node(seed, n, d, nc)
    rng = np.random.default_rng(seed)
    nv = 1 + seed * 2 if seed < 6 else d
    vs = np.zeros(d, dtype=np.int64)
    vs[:nv] = np.sort(rng.choice(d, size=nv, replace=False))
    P = np.full((nc, d, d), -5, dtype=np.int32)
    buf = np.zeros((d, F.shape[0]), dtype=np.uint64)
    counts.pair_counts_buf(rows, nzw, nnz, F, C, vs, nv, P, buf)
    ref = naive.naive_pair_counts(X.tolist(), y.tolist(), np.flatnonzero(mask).tolist(), nc)
    for a in range(nv):
        for b in range(nv):
            i, j = vs[a], vs[b]
            if i != j:
                for c in range(nc):
                    assert P[c, i, j] == ref[c][i][j]
    # the allocating wrapper gives the same table
    P2 = np.full((nc, d, d), -5, dtype=np.int64)
    counts.pair_counts(rows, nzw, nnz, F, C, vs, nv, P2)
    for a in range(nv):
        for b in range(a + 1, nv):
            assert np.array_equal(P2[:, vs[a], vs[b]], P[:, vs[a], vs[b]])



@pytest.mark.parametrize("seed", range(4))
def test_pair_counts_at_compact_table_matches_naive(seed):
    """`pair_counts_at` with ``at = arange(nv)``: the pair (vs[a], vs[b]) at P[c, a, b], both
    triangles, equal to the naive count; nothing outside the nv x nv block is written."""
    n, d, nc = 50 + 30 * seed, 11, 2 + seed % 2
    X, y, mask, F, C, rows, nzw, nnz, *_ = _node(100 + seed, n, d, nc)
    rng = np.random.default_rng(seed)
    nv = 3 + 2 * seed
    vs = np.zeros(d, dtype=np.int64)
    vs[:nv] = rng.choice(d, size=nv, replace=False)
    P = np.full((nc, d, d), -5, dtype=np.int32)
    counts.pair_counts_at(rows, nzw, nnz, F, C, vs, nv, P,
                          np.zeros((d, F.shape[0]), dtype=np.uint64), np.arange(nv))
    ref = naive.naive_pair_counts(X.tolist(), y.tolist(), np.flatnonzero(mask).tolist(), nc)
    for a in range(nv):
        for b in range(nv):
            if a != b:
                for c in range(nc):
                    assert P[c, a, b] == ref[c][vs[a]][vs[b]]
    assert (P[:, nv:, :] == -5).all() and (P[:, :, nv:] == -5).all()
    # the upper triangle alone (the Top-k depth-2 solver's table): the same counts above the
    # diagonal, nothing written on or below it
    U = np.full((nc, d, d), -5, dtype=np.int32)
    counts.pair_counts_upper(rows, nzw, nnz, F, C, vs, nv, U,
                             np.zeros((d, F.shape[0]), dtype=np.uint64))
    upper = np.triu(np.ones((d, d), dtype=bool), 1) & (np.arange(d)[:, None] < nv) \
        & (np.arange(d)[None, :] < nv)
    assert (U[:, upper] == P[:, upper]).all() and (U[:, ~upper] == -5).all()

def _solve_depth2(X, y, nc, msl, regularized, M=8.0, nu=1.0, lam=0.0, ub=np.inf):
    n, d = X.shape
    mask = np.ones(n, dtype=bool)
    F = bitset.pack_columns(X)
    C = bitset.pack_classes(y, nc)
    rows = bitset.pack_rows(mask)
    tot = np.zeros(nc)
    nzw = np.zeros(F.shape[0], dtype=np.int64)
    nnz, nrows = counts.node_totals(rows, C, y, np.ones(n), False, tot, nzw)
    cnt1 = np.zeros((d, nc))
    rc1 = np.zeros(d)
    data = state.Data(F, C, np.zeros((1, d), np.uint8), y, np.ones(n), False, n)
    counts.feature_counts(data, rows, nzw, nnz, cnt1, rc1, np.zeros((nc, d), np.int64))
    valid = [j for j in range(d) if rc1[j] >= max(msl, 1) and n - rc1[j] >= max(msl, 1)]
    order = np.array(valid[::-1] + [j for j in range(d) if j not in valid], dtype=np.int64)
    vs = np.zeros(d, dtype=np.int64)
    vs[: len(valid)] = valid
    P = np.zeros((nc, d, d), dtype=np.int32)
    counts.pair_counts_buf(rows, nzw, nnz, F, C, vs, len(valid), P,
                           np.zeros((d, F.shape[0]), dtype=np.uint64))
    node = depth2.Depth2Node(cnt1, tot, order, len(valid), vs, len(valid), P)
    got = depth2.depth2_search(node, msl if not regularized else 0.0, regularized, M, nu, lam,
                               ub, -1.0)
    ref = naive.naive_depth2_search(X.tolist(), y.tolist(), nc, order[: len(valid)].tolist(),
                                    valid, msl, regularized, M, nu, lam)
    return got, ref


@pytest.mark.parametrize("seed", range(10))
def test_depth2_search_matches_naive_topk_objective(seed):
    """Top-k objective (error * M + nodes): same value and same first-best root as the naive
    twin, several class counts and min_samples_leaf values, sparse and dense data."""
    rng = np.random.default_rng(seed)
    nc = 2 + seed % 3
    n, d = int(rng.integers(20, 90)), int(rng.integers(3, 9))
    X = (rng.random((n, d)) < (0.2 if seed % 2 else 0.5)).astype(np.int64)
    y = ((X[:, 0] + X[:, 1 % d] * 2 + rng.integers(0, 2, n)) % nc).astype(np.int64)
    for msl in (1, 3):
        (v, f), (rv, rf) = _solve_depth2(X, y, nc, msl, False)
        assert v == rv and f == rf


@pytest.mark.parametrize("seed", range(6))
def test_depth2_search_regularized_matches_naive(seed):
    rng = np.random.default_rng(50 + seed)
    nc = 2 + seed % 3
    n, d = int(rng.integers(20, 90)), int(rng.integers(3, 8))
    X = (rng.random((n, d)) < 0.4).astype(np.int64)
    y = ((X[:, 0] * 2 + X[:, 2 % d] + rng.integers(0, 2, n)) % nc).astype(np.int64)
    for lam in (0.0, 0.5, 2.0, 7.0):
        (v, f), (rv, rf) = _solve_depth2(X, y, nc, 0, True, M=1.0, nu=0.0, lam=lam)
        assert v == pytest.approx(rv, abs=1e-9) and f == rf


@pytest.mark.parametrize("seed", range(6))
def test_depth2_optimum_equals_brute_force_over_all_depth2_trees(seed):
    """Binary labels, error only (nu = 0): the solver's optimum is the smallest error among all
    trees of depth <= 2 (`naive_all_depth2_errors`), whenever the node is impure."""
    rng = np.random.default_rng(200 + seed)
    n, d = int(rng.integers(15, 80)), int(rng.integers(2, 7))
    X = (rng.random((n, d)) < 0.5).astype(np.int64)
    y = ((X[:, 0] ^ X[:, 1]) ^ (rng.random(n) < 0.2)).astype(np.int64)
    (v, f), _ = _solve_depth2(X, y, 2, 1, False, M=1.0, nu=0.0)
    best = min(e for e, _ in naive.naive_all_depth2_errors(X, y))
    assert v == best


@pytest.mark.parametrize("seed", range(4))
def test_depth2_search_respects_the_bound(seed):
    """With an upper bound ub the solver returns the optimum when it is below ub, else (ub, -1)."""
    rng = np.random.default_rng(300 + seed)
    n, d, nc = 60, 6, 3
    X = (rng.random((n, d)) < 0.5).astype(np.int64)
    y = rng.integers(0, nc, n).astype(np.int64)
    (v, f), _ = _solve_depth2(X, y, nc, 1, False)
    (v2, f2), _ = _solve_depth2(X, y, nc, 1, False, ub=v + 1.0)
    assert (v2, f2) == (v, f)
    (v3, f3), _ = _solve_depth2(X, y, nc, 1, False, ub=v)
    assert (v3, f3) == (v, -1)


@pytest.mark.parametrize("seed", range(6))
def test_sibling_pair_derivation_keeps_topk_k_all_exact(seed):
    """At depth >= 3 the pair counts of a split's child 1 are derived as P(parent) - P(child 0)
    (`search.topk._pairs`); the trees stay those of the naive Figure-1 recursion, with many
    features (so that parents get several derivation chances), several classes and
    min_samples_leaf values."""
    from treebench.algorithms.topk import TopKClassifier

    rng = np.random.default_rng(400 + seed)
    nc = 2 + seed % 2
    n, d = 90, 9
    X = (rng.random((n, d)) < 0.45).astype(np.float64)
    y = ((X[:, 0] + 2 * X[:, 3] + X[:, 5] + (rng.random(n) < 0.3)) % nc).astype(np.int64)
    msl = 1 + seed % 3
    for tie in ("smaller", "first"):
        est = TopKClassifier(k="all", max_depth=3, min_samples_leaf=msl, tie_break=tie)
        est.fit(X, y)
        err, nodes, tree = naive.naive_topk(X.tolist(), y.tolist(), nc, None, 3,
                                            min_samples_leaf=msl)
        assert est.solve_info_["training_error"] == err
        if tie == "smaller":
            assert est.tree_.n_nodes == nodes
            assert naive.naive_topk_tree_tuple(est.tree_) == tree


def _with_twins(rng, n, d):
    """Random 0/1 columns followed by copies and complements of some of them, so that roots
    of different features (and of one class of equivalent features) tie."""
    base = (rng.random((n, d)) < 0.5).astype(np.int64)
    twins = [base[:, 0], 1 - base[:, 0], base[:, 1], 1 - base[:, 2 % d]]
    return np.column_stack([base] + twins)


@pytest.mark.parametrize("seed", range(12))
def test_depth2_root_values_keep_every_optimal_root(seed):
    """`depth2_root_values`: the smallest value is the optimum of the naive twin, and the roots
    whose value equals it are exactly the roots whose own best tree (the naive twin asked about
    that one root) is optimal; every root's value is its own optimum. A compact pair table (over
    the valid features), the roots (all of them or some) in a scrambled order, duplicated and complemented columns, both
    node-count weights, in both tree spaces (an impure child splits; min_improvement 0: a
    child stays a leaf unless a stump lowers its error), with min_samples_leaf 1 to 3."""
    rng = np.random.default_rng(500 + seed)
    msl = 1 + seed % 3
    nc = 2 + seed % 2
    X = _with_twins(rng, int(rng.integers(12, 60)), int(rng.integers(3, 6)))
    n, d = X.shape
    y = ((X[:, 0] + X[:, 1] + (rng.random(n) < 0.3)) % nc).astype(np.int64)
    F, C, rows = bitset.pack_columns(X), bitset.pack_classes(y, nc), bitset.pack_rows(
        np.ones(n, dtype=bool))
    tot, nzw = np.zeros(nc), np.zeros(F.shape[0], dtype=np.int64)
    nnz, _ = counts.node_totals(rows, C, y, np.ones(n), False, tot, nzw)
    cnt1, rc1 = np.zeros((d, nc)), np.zeros(d)
    data = state.Data(F, C, np.zeros((1, d), np.uint8), y, np.ones(n), False, n)
    counts.feature_counts(data, rows, nzw, nnz, cnt1, rc1, np.zeros((nc, d), np.int64))
    valid = [j for j in range(d) if 1 <= rc1[j] <= n - 1]
    vs = np.zeros(d, dtype=np.int64)
    vs[: len(valid)] = valid
    P = np.full((nc, d, d), -5, dtype=np.int32)  # the upper triangle only is counted, and read
    counts.pair_counts_upper(rows, nzw, nnz, F, C, vs, len(valid), P,
                             np.zeros((d, F.shape[0]), dtype=np.uint64))
    # the roots: every valid feature, or (odd seeds) some of them, the table still holding all
    roots = list(rng.permutation(valid))
    if seed % 2 and len(roots) > 1:
        roots = roots[: int(rng.integers(1, len(roots)))]
    order = np.array(roots + [j for j in range(d) if j not in roots])
    for M, nu, leaves in ((8.0, 1.0, False), (64.0, 0.0, False), (8.0, 1.0, True),
                          (64.0, 0.0, True)):
        node = depth2.Depth2Node(cnt1, tot, order, len(roots), vs, len(valid), P)
        vals = np.full(len(roots), -1.0)
        best = depth2.depth2_root_values(node, msl, M, nu, vals, leaves)
        space = "leaves" if leaves else False
        own = [naive.naive_depth2_search(X.tolist(), y.tolist(), nc, [j], roots, msl, space, M,
                                         nu, 0.0)[0] for j in roots]
        assert best == min(own)
        assert vals.tolist() == own  # every root's value exact, so the ties are exact too


@pytest.mark.parametrize("seed", range(5))
def test_int_counts_of_every_feature_or_of_a_partner_list(seed):
    rng = np.random.default_rng(seed)
    d, nc = int(rng.integers(1, 9)), int(rng.integers(1, 5))
    cnt1 = rng.integers(0, 1000, size=(d, nc)).astype(np.float64)
    full = depth2.int_counts(cnt1)
    assert full.dtype == np.int32 and np.array_equal(full, cnt1.T.astype(np.int32))
    vs = np.full(d + 2, -7, dtype=np.int64)  # a longer buffer: only its first nv entries count
    nv = depth2.partner_list(rng.random(d) < 0.6, vs)
    part = depth2.int_counts(cnt1, vs[:nv])
    assert part.shape == (nc, nv)
    assert np.array_equal(part, cnt1[vs[:nv]].T.astype(np.int32))
