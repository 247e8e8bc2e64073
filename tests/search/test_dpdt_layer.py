"""DPDT's exhaustive generator on the search layer (`treebench.search.dpdt_layer`, issue
#13): the layer path returns the DP's tree and bit-identical objective (Kohler, Akrour &
Preux, KDD 2025, Algorithm 1 with the exhaustive generator of §5.2), its depth-2 kernel equals
a brute force over every depth-<= 2 tree, its ``solve`` keeps the contract (exact below
``ub``, a lower bound >= ``ub`` otherwise), the dispatch, the deadline."""

from __future__ import annotations

import numpy as np
import pytest
from treecompare import assert_same_tree

import naive
from treebench.search import dpdt_layer as L
from treebench.search import engine as E
from treebench.algorithms.dpdt import DPDTClassifier, DPDTRegressor
from treebench.search.bitset import pack_classes, pack_columns, pack_rows
from treebench.search.counts import pair_counts
from treebench.search.state import bitset_data
from treebench.tree.arrays import check_tree

INF = float("inf")
ALPHAS = [0.0, 0.01, 0.1, 1 / 3, 1.0, 7.0]


def _binary_data(seed, n_classes, n=None):
    """Random 0/1 data with a duplicate, a complementary and a constant column; every other
    seed tie-heavy (few distinct rows, repeated with different labels)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 70)) if n is None else n
    p = int(rng.integers(3, 7))
    if seed % 2:
        base = rng.integers(0, 2, size=(int(rng.integers(2, 7)), p))
        X = base[rng.integers(0, len(base), size=n)]
    else:
        X = rng.integers(0, 2, size=(n, p))
    j = int(rng.integers(0, p))
    X = np.column_stack([X, X[:, j], 1 - X[:, (j + 1) % p], np.full(n, seed % 3 == 0)])
    X = X[:, rng.permutation(X.shape[1])].astype(float)
    y = rng.integers(0, n_classes, size=n)
    return X, y


def _fit_both(X, y, depth, alpha, msl, **kw):
    kw = dict(max_depth=depth, candidates="exhaustive", alpha=alpha, min_samples_leaf=msl, **kw)
    dp = DPDTClassifier(search="dp", **kw).fit(X, y)
    layer = DPDTClassifier(search="layer", **kw).fit(X, y)
    return dp, layer


# ------------------------------------------------------------------ layer == DP
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
@pytest.mark.parametrize("msl", [1, 3])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_layer_equals_dp(seed, depth, msl, n_classes):
    """Same tree arrays and bit-identical objective as the backward induction, for every α."""
    X, y = _binary_data(1000 * depth + 10 * seed + n_classes + msl, n_classes)
    for alpha in ALPHAS:
        dp, layer = _fit_both(X, y, depth, alpha, msl)
        assert layer.solve_info_["search"] == "layer" and dp.solve_info_["search"] == "dp"
        assert_same_tree(dp, layer)
        assert layer.solve_info_["objective"] == dp.solve_info_["objective"]  # bit-identical
        assert layer.solve_info_["training_error"] == pytest.approx(
            dp.solve_info_["training_error"], abs=1e-9)
        assert layer.solve_info_["optimal"] and not layer.solve_info_["timed_out"]


@pytest.mark.parametrize("seed", range(30))
def test_layer_equals_dp_many_seeds(seed):
    """A wider sweep: random depth, α, min_samples_leaf, 2-3 classes."""
    rng = np.random.default_rng(seed)
    X, y = _binary_data(seed, int(rng.integers(2, 4)))
    depth = int(rng.integers(1, 5))
    alpha = ALPHAS[seed % len(ALPHAS)]
    msl = [1, 2, 3][seed % 3]
    dp, layer = _fit_both(X, y, depth, alpha, msl)
    assert_same_tree(dp, layer)
    assert layer.solve_info_["objective"] == dp.solve_info_["objective"]


def test_layer_equals_naive_and_tree_objective():
    """The objective is E + α·L of the returned tree (independently measured) and equals the
    plain backward induction of tests/naive.py."""
    for seed in range(6):
        X, y = _binary_data(seed, 2 + seed % 2)
        nc = len(np.unique(y))
        yi = np.searchsorted(np.unique(y), y)
        for alpha in (0.0, 0.1, 1.0):
            est = DPDTClassifier(max_depth=3, candidates="exhaustive", alpha=alpha).fit(X, y)
            t = est.tree_
            Lmass = float(np.sum(t.node_depths()[t.apply(X)]))
            err = t.training_error(X, yi, np.ones(len(y)))
            assert err + alpha * Lmass == pytest.approx(est.solve_info_["objective"], abs=1e-9)
            opt = naive.naive_dpdt13_value(X.astype(int).tolist(), yi.tolist(), nc,
                                           list(range(len(y))), 3, alpha, 1)
            assert est.solve_info_["objective"] == opt
            check_tree(t, max_depth=3, X=X, y_index=yi)


# ------------------------------------------------------------------ depth-2 kernel
def _kernel_inputs(X, y, nc, rows):
    d = X.shape[1]
    r, cnt1, tot = naive.node_class_counts(X, y, nc, rows)
    rc1 = cnt1.sum(axis=1)
    vs = np.array([j for j in range(d) if 0 < rc1[j] < r.sum()] + [0] * d, np.int64)
    nv = int(sum(1 for j in range(d) if 0 < rc1[j] < r.sum()))
    F = pack_columns(X)
    C = pack_classes(y, nc)
    rb = pack_rows(r)
    nzw = np.flatnonzero(rb).astype(np.int64)
    P = np.zeros((nc, d, d), np.int32)
    pair_counts(rb, nzw, len(nzw), F, C, vs, nv, P)
    return cnt1, rc1, tot, P, vs, nv


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(40))
def test_depth2_kernel_equals_brute_force(seed):
    """`depth2_dpdt` (pair counts, one pass) against every depth-<= 2 tree tried in plain
    Python with the same rules (naive twin), on a random subset of the rows."""
    rng = np.random.default_rng(seed)
    nc = 2 + seed % 2
    X, y = _binary_data(seed, nc)
    yi = np.searchsorted(np.unique(y), y)
    nc = int(yi.max()) + 1
    rows = sorted(rng.choice(len(y), size=int(rng.integers(1, len(y) + 1)), replace=False))
    Xl = X.astype(int).tolist()
    for alpha in ALPHAS:
        for msl in (1, 2, 3):
            cnt1, rc1, tot, P, vs, nv = _kernel_inputs(X, yi, nc, rows)
            v, f, _ = L.depth2_dpdt(cnt1, rc1, tot, P, vs, nv, alpha, msl)
            nv_, nf = naive.naive_dpdt13_best(Xl, yi.tolist(), nc, rows, 2, alpha, msl)
            assert (v, f) == (nv_, nf), (alpha, msl)


# ------------------------------------------------------------------ solve contract
def _queries(seed, n_q=60):
    rng = np.random.default_rng(seed)
    X, y = _binary_data(seed, 2 + seed % 2, n=int(rng.integers(20, 60)))
    yi = np.searchsorted(np.unique(y), y)
    nc = int(yi.max()) + 1
    n = len(y)
    depth = 4
    sets, levs, ubs, rowlists = [], [], [], []
    for _ in range(n_q):
        # row sets: random subsets and paths of the tree (sets the search meets itself)
        if rng.random() < 0.5:
            r = rng.random(n) < rng.uniform(0.2, 1.0)
        else:
            r = np.ones(n, bool)
            for _ in range(int(rng.integers(0, 3))):
                j = int(rng.integers(0, X.shape[1]))
                r &= X[:, j] == rng.integers(0, 2)
        rowlists.append(list(np.flatnonzero(r)))
        sets.append(pack_rows(r))
        levs.append(int(rng.integers(1, depth + 1)))
    return X, yi, nc, depth, np.array(sets), np.array(levs, np.int64), rowlists, rng


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("pairs", [True, False])
def test_solve_contract(seed, pairs):
    """On one shared search state (cache filled by the earlier queries): a value below ub is
    exactly the DP's value (bit-identical to the naive backward induction); any other value v
    satisfies ub <= v <= the DP's value."""
    X, yi, nc, depth, sets, levs, rowlists, rng = _queries(seed)
    alpha = ALPHAS[seed % len(ALPHAS)]
    msl = 1 + seed % 2
    Xl, yl = X.astype(int).tolist(), yi.tolist()
    opts = [naive.naive_dpdt13_value(Xl, yl, nc, r, int(h), alpha, msl)
            for r, h in zip(rowlists, levs)]
    ubs = np.array([o * rng.choice([0.5, 0.9, 1.0, 1.0 + 1e-12, 1.1, 2.0]) + rng.choice([0, 0.3])
                    if rng.random() < 0.8 else INF for o in opts])
    out = E.solve_queries(L.layer_problem(bitset_data(X, yi, nc), depth, alpha, msl, pairs=pairs),
                          sets, levs, ubs)
    for v, ub, opt in zip(out, ubs, opts):
        if v < ub:
            assert v == opt
        else:
            assert ub <= v <= opt


# ------------------------------------------------------------------ dispatch
def test_auto_dispatch():
    X, y = _binary_data(3, 2)
    w = np.ones(len(y))
    auto = DPDTClassifier(max_depth=2, candidates="exhaustive")
    assert auto.fit(X, y).solve_info_["search"] == "layer"
    assert np.isnan(auto.solve_info_["operations"])
    assert auto.solve_info_["operations_distinct"] > 0
    assert auto.fit(X, y, sample_weight=w).solve_info_["search"] == "layer"
    cases = [  # (settings, X, weights, why not the layer, what "auto" runs instead)
        (dict(), X + 0.5, None, "0/1", "numeric"),  # continuous
        (dict(), X, w * 2.0, "sample weight", "numeric"),
        (dict(alpha=0.1), X, w * 2.0, "sample weight", "numeric"),
        (dict(alpha_path=True), X, None, "α path", "dp"),
        (dict(max_features=2), X, None, "max_features", "dp"),
        (dict(candidates="cart"), X, None, "exhaustive generator only", "dp"),
    ]
    for kw, Xc, sw, why, instead in cases:
        kw = {"max_depth": 2, "candidates": "exhaustive", **kw}
        est = DPDTClassifier(**kw).fit(Xc, y, sample_weight=sw)
        assert est.solve_info_["search"] == instead
        with pytest.raises(ValueError, match="search='layer' cannot fit") as exc:
            DPDTClassifier(search="layer", **kw).fit(Xc, y, sample_weight=sw)
        assert why in str(exc.value)
    yr = np.arange(len(y), dtype=float)
    reg = DPDTRegressor(max_depth=2, candidates="exhaustive").fit(X, yr)
    assert reg.solve_info_["search"] == "dp"
    with pytest.raises(ValueError, match="classification only"):
        DPDTRegressor(max_depth=2, candidates="exhaustive", search="layer").fit(X, yr)
    with pytest.raises(ValueError):
        DPDTClassifier(search="fast").fit(X, y)


def test_keys_match_the_dp():
    X, y = _binary_data(5, 3)
    dp, layer = _fit_both(X, y, 3, 0.1, 1)
    assert set(dp.solve_info_) == set(layer.solve_info_)


def test_small_cacheassert_same_tree():
    """With the cache capped to a few entries the search stores less, never answers wrong."""
    X, y = _binary_data(8, 2, n=60)
    dp, layer = _fit_both(X, y, 4, 0.01, 1, cache_limit_mb=1e-4)
    assert_same_tree(dp, layer)
    assert layer.solve_info_["cache_full"]


def test_time_limit_returns_valid_tree():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(3000, 60)).astype(float)
    y = rng.integers(0, 3, size=3000)
    est = DPDTClassifier(max_depth=6, candidates="exhaustive", time_limit=0.2).fit(X, y)
    info = est.solve_info_
    assert info["search"] == "layer" and info["timed_out"] and not info["optimal"]
    check_tree(est.tree_, max_depth=6, X=X, y_index=y)
    # the anytime tree's own objective (α = 0: its training errors)
    assert info["objective"] == est.tree_.training_error(X, y, np.ones(len(y)))


def test_results_row_accepts_nan_operations():
    """``operations`` NaN (layer path) is a missing value in the results table's Int64
    column."""
    import pandas as pd

    from treebench.results.schema import conform

    df = conform(pd.DataFrame([{"operations": float("nan")}, {"operations": 12}]))
    assert df["operations"].isna().tolist() == [True, False]


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(8))
def test_solve_contract_similar_sets(seed):
    """The contract on sequences of row sets that differ by a few rows (where the
    similar-support bound of `search.dpdt_layer._similar` is tight), min_samples_leaf = 1."""
    rng = np.random.default_rng(100 + seed)
    n = 80
    X = rng.integers(0, 2, size=(n, 6)).astype(float)
    y = (X[:, 4].astype(int) ^ X[:, 5].astype(int) ^ (rng.random(n) < 0.15)).astype(np.int64)
    alpha = [0.0, 0.01, 0.1, 1 / 3][seed % 4]
    depth = 3
    r = rng.random(n) < 0.8
    sets, levs, rowlists = [], [], []
    for _ in range(40):
        flip = rng.choice(n, size=int(rng.integers(1, 4)), replace=False)
        r = r.copy()
        r[flip] = ~r[flip]
        sets.append(pack_rows(r))
        rowlists.append(list(np.flatnonzero(r)))
        levs.append(int(rng.integers(2, depth + 1)))
    Xl, yl = X.astype(int).tolist(), y.tolist()
    opts = [naive.naive_dpdt13_value(Xl, yl, 2, rl, h, alpha, 1) for rl, h in zip(rowlists, levs)]
    ubs = np.array([o + rng.choice([-1.0, 0.0, 1e-12, 0.5, 2.0, INF]) for o in opts])
    out = E.solve_queries(L.layer_problem(bitset_data(X, y, 2), depth, alpha),
                          np.array(sets), np.array(levs, np.int64), ubs)
    for v, ub, opt in zip(out, ubs, opts):
        if v < ub:
            assert v == opt
        else:
            assert ub <= v <= opt


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(10))
def test_similar_support_bound_is_a_lower_bound(seed):
    """`search.dpdt_layer._similar` (V(S) >= V(S') - |S' minus S| (1 + α h), min_samples_leaf = 1):
    after remembering S' with its exact value, the bound of a set S a few rows away never
    exceeds the DP's value of S (plain backward induction), and it is not vacuous."""
    rng = np.random.default_rng(200 + seed)
    n = 50
    X = rng.integers(0, 2, size=(n, 5)).astype(float)
    y = rng.integers(0, 2, size=n)
    data = bitset_data(X, y, 2)
    Xl, yl = X.astype(int).tolist(), y.tolist()
    positive = 0
    for q in range(12):
        alpha = ALPHAS[q % 4]
        h = int(rng.integers(2, 4))
        known = rng.random(n) < 0.7
        rows = known.copy()
        flip = rng.choice(n, size=int(rng.integers(0, 4)), replace=False)
        rows[flip] = ~rows[flip]
        vk = naive.naive_dpdt13_value(Xl, yl, 2, list(np.flatnonzero(known)), h, alpha, 1)
        v = naive.naive_dpdt13_value(Xl, yl, 2, list(np.flatnonzero(rows)), h, alpha, 1)
        lb = L.similar_bound_after(E.layer_state(L.layer_problem(data, 3, alpha, 1, 16, pairs=False)),
                                   pack_rows(known), h, vk, pack_rows(rows))
        assert lb <= v
        positive += lb > 0
    assert positive >= 6


def test_degenerate_fits():
    """One class, depth 0, a single row, constant features: same answers as the DP."""
    X = np.array([[0, 1], [1, 0], [1, 1.0]])
    for Xc, yc, depth in ((X, ["a", "a", "a"], 2), (X, ["a", "b", "a"], 0),
                          (X, ["a", "b", "c"], 3), (X[:1], ["a"], 2),
                          (np.zeros((4, 2)), [0, 1, 0, 1], 2)):
        dp, layer = _fit_both(Xc, yc, depth, 0.1, 1)
        assert layer.solve_info_["search"] == "layer"
        assert_same_tree(dp, layer)
        assert layer.solve_info_["objective"] == dp.solve_info_["objective"]
