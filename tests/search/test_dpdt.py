"""DPDT kernels against their naive twins (tests/naive.py, section `dpdt`), and the compiled
CART generator against scikit-learn's best-first CART (same candidate set on tie-free data)."""

from __future__ import annotations

import numpy as np
import pytest
from naive import (
    naive_dpdt_cart,
    naive_dpdt_leaf_error,
    naive_dpdt_midpoints,
    naive_dpdt_partition,
    naive_dpdt_stats,
    naive_dpdt_topb,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treebench.search import dpdt as K

CRIT = {"gini": K.GINI, "entropy": K.ENTROPY, "mse": K.MSE}
NOQ = np.zeros((1, 1), np.int32)  # no packed ranks (weighted or regression states)


def _partition(S, Xt, f, t, flag):
    """Both children of a state (unpacked), via `partition_side`."""
    return tuple(K.partition_side(S, NOQ, Xt, f, t, flag, left, False)[0] for left in (True, False))


def _data(seed, n=40, p=4, n_classes=3, ties=True, regression=False, weighted=False):
    rng = np.random.default_rng(seed)
    # tie-free data are float32 values (scikit-learn's trees compare in float32)
    X = rng.integers(0, 6, size=(n, p)).astype(float) if ties else (
        rng.random((n, p)).astype(np.float32).astype(float))
    w = rng.integers(1, 4, size=n).astype(float) if weighted else np.ones(n)
    if regression:
        y = rng.integers(-5, 6, size=n).astype(float)  # integer sums: exact in any order
        RS = np.column_stack([w, w * y, w * y * y])
    else:
        y = rng.integers(0, n_classes, size=n)
        RS = np.zeros((n, n_classes))
        RS[np.arange(n), y] = w
    return X, y, w, np.ascontiguousarray(RS)


def _state(X, rows):
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    keep = np.isin(S[0], rows)
    return Xt, np.ascontiguousarray(np.stack([s[np.isin(s, rows)] for s in S]).astype(np.int32)), keep


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("crit", ["gini", "entropy", "mse"])
def test_cart_candidates_match_naive(seed, crit):
    X, y, w, RS = _data(seed, regression=crit == "mse", weighted=seed % 2 == 1)
    rows = np.sort(np.random.default_rng(seed).choice(len(X), 30, replace=False))
    Xt, S, _ = _state(X, rows)
    flag = np.zeros(len(X), np.uint8)
    for B in (2, 3, 8):
        for ml in (1, 3):
            cfg = K.cart_settings(B, CRIT[crit], ml, X.shape[1], 0, K.TIES_INDEX, 0)
            f, t, nodes = K.cart_candidates(Xt, RS, RS.argmax(axis=1), S, NOQ, False, cfg, flag)
            cands, n_nodes = naive_dpdt_cart(X.tolist(), RS.tolist(), rows.tolist(), B, crit, ml)
            assert nodes == n_nodes
            assert [(int(a), float(b)) for a, b in zip(f, t)] == cands
            assert not flag.any()


@pytest.mark.parametrize("seed", range(5))
def test_cart_candidates_equal_sklearn_best_first_on_tie_free_data(seed):
    """Same candidate set as scikit-learn's DecisionTreeClassifier(max_leaf_nodes=B)."""
    X, y, w, RS = _data(seed, n=1000, p=5, ties=False)  # large nodes: no equal proxies
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    flag = np.zeros(len(X), np.uint8)
    for B in (2, 4, 16):
        cfg = K.cart_settings(B, K.GINI, 1, 5, 0, K.TIES_INDEX, 0)
        f, t, nodes = K.cart_candidates(Xt, RS, RS.argmax(axis=1), S, NOQ, False, cfg, flag)
        sk = DecisionTreeClassifier(max_leaf_nodes=B, random_state=seed).fit(X, y).tree_
        internal = sk.feature >= 0
        assert nodes == sk.node_count
        ours = sorted(zip(f.tolist(), np.round(t, 12).tolist()))
        theirs = sorted(zip(sk.feature[internal].tolist(), np.round(sk.threshold[internal], 12).tolist()))
        assert ours == theirs


def test_cart_candidates_regression_equal_sklearn():
    X, y, w, RS = _data(3, n=100, p=4, ties=False, regression=True)
    y = RS[:, 1]
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    cfg = K.cart_settings(8, K.MSE, 1, 4, 0, K.TIES_INDEX, 0)
    f, t, nodes = K.cart_candidates(Xt, RS, RS.argmax(axis=1), S, NOQ, False, cfg,
                                    np.zeros(100, np.uint8))
    sk = DecisionTreeRegressor(max_leaf_nodes=8, random_state=0).fit(X, y).tree_
    internal = sk.feature >= 0
    assert nodes == sk.node_count
    assert sorted(zip(f.tolist(), np.round(t, 12).tolist())) == sorted(
        zip(sk.feature[internal].tolist(), np.round(sk.threshold[internal], 12).tolist()))


@pytest.mark.parametrize("seed", range(5))
def test_topb_and_midpoints_match_naive(seed):
    X, y, w, RS = _data(seed, weighted=True)
    rows = np.arange(0, 40, 2)
    Xt, S, _ = _state(X, rows)
    for B in (1, 2, 4, 9):
        f, t = K.topb_candidates(Xt, RS, RS.argmax(axis=1), S, B, 1, K.GINI)
        assert list(zip(f.tolist(), t.tolist())) == naive_dpdt_topb(X.tolist(), RS.tolist(), rows.tolist(), B)
    for ml in (1, 4):
        f, t = K.midpoint_candidates(Xt, S, ml, 0)
        assert list(zip(f.tolist(), t.tolist())) == naive_dpdt_midpoints(X.tolist(), rows.tolist(), ml)
    f, t = K.midpoint_candidates(Xt, S, 1, 4)  # quantile: a subset of the midpoints
    assert set(zip(f.tolist(), t.tolist())) <= set(naive_dpdt_midpoints(X.tolist(), rows.tolist()))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("regression", [False, True])
def test_child_stats_partition_and_hash_match_naive(seed, regression):
    X, y, w, RS = _data(seed, regression=regression, weighted=True)
    rows = np.sort(np.random.default_rng(seed).choice(40, 25, replace=False))
    Xt, S, _ = _state(X, rows)
    rng = np.random.default_rng(seed)
    Z1 = rng.integers(0, 2**63, size=40, dtype=np.uint64)
    Z2 = rng.integers(0, 2**63, size=40, dtype=np.uint64)
    feats = np.array([0, 1, 2, 3, 0])
    thrs = np.array([2.5, 0.5, 3.0, 5.5, -1.0])
    crit = K.MSE if regression else K.GINI
    tot = RS[rows].sum(axis=0)
    L, cnt, h1, h2, eL, eR, pL, pR = K.child_stats(Xt, RS, RS.argmax(axis=1), S, feats, thrs, Z1, Z2, tot, crit)
    flag = np.zeros(40, np.uint8)
    for c in range(len(feats)):
        left = [r for r in rows.tolist() if X[r, feats[c]] <= thrs[c]]
        right = [r for r in rows.tolist() if X[r, feats[c]] > thrs[c]]
        ls = naive_dpdt_stats(left, RS.tolist())
        rs = naive_dpdt_stats(right, RS.tolist())
        assert np.allclose(L[c], ls) and cnt[c] == len(left)
        assert np.isclose(eL[c], naive_dpdt_leaf_error(ls, regression), atol=1e-9)
        if right:
            assert np.isclose(eR[c], naive_dpdt_leaf_error(rs, regression), atol=1e-9)
        assert int(h1[c]) == sum(int(Z1[r]) for r in left) % 2**64
        assert int(h2[c]) == sum(int(Z2[r]) for r in left) % 2**64
        SL, SR = _partition(S, Xt, int(feats[c]), float(thrs[c]), flag)
        nl, nr = naive_dpdt_partition(X.tolist(), S.tolist(), int(feats[c]), float(thrs[c]))
        assert SL.tolist() == nl and SR.tolist() == nr
        assert not flag.any()
    a, b = K.row_hash(S[0], Z1, Z2)
    assert int(a) == sum(int(Z1[r]) for r in rows) % 2**64


def test_presort_is_stable():
    X = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    S = K.presort(np.ascontiguousarray(X.T))
    assert S.tolist() == [[1, 3, 0, 2], [0, 1, 3, 2]]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("crit", ["gini", "entropy"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_packed_cart_matches_naive(seed, crit, n_classes):
    """Unweighted classification on packed (rank·128 + class) states gives the naive CART."""
    X, y, w, RS = _data(seed, n_classes=n_classes)
    rows = np.sort(np.random.default_rng(seed).choice(len(X), 30, replace=False))
    Xt, S, _ = _state(X, rows)
    Xt_all = np.ascontiguousarray(X.T)
    S_all = K.presort(Xt_all)
    Q_all = K.pack_ranks(Xt_all, S_all, y)
    flag = np.zeros(len(X), np.uint8)
    # the state's packed ranks: the root's, restricted to the rows (a subsequence per feature)
    Q = np.stack([Q_all[g][np.isin(S_all[g], rows)] for g in range(X.shape[1])]).astype(np.int32)
    assert np.array_equal(Q % K.QSHIFT, y[S])
    for B in (2, 3, 8):
        for ml in (1, 3):
            cfg = K.cart_settings(B, CRIT[crit], ml, X.shape[1], 0, K.TIES_INDEX, 0)
            f, t, nodes = K.cart_candidates(Xt, RS, y, S, Q, True, cfg, flag)
            cands, n_nodes = naive_dpdt_cart(X.tolist(), RS.tolist(), rows.tolist(), B, crit, ml)
            assert nodes == n_nodes
            assert [(int(a), float(b)) for a, b in zip(f, t)] == cands
            assert not flag.any()
            # in place on the state's own arrays: the same result, and S, Q restored
            S2, Q2 = S.copy(), Q.copy()
            f2, t2, nodes2 = K.cart_candidates(Xt, RS, y, S2, Q2, True, cfg, flag, True)
            assert nodes2 == nodes and f2.tolist() == f.tolist() and t2.tolist() == t.tolist()
            assert np.array_equal(S2, S) and np.array_equal(Q2, Q) and not flag.any()


def test_packed_ranks_and_partition():
    X, y, w, RS = _data(0)
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    Q = K.pack_ranks(Xt, S, y)
    for g in range(X.shape[1]):
        ranks = np.unique(X[:, g], return_inverse=True)[1]
        assert np.array_equal(Q[g] // K.QSHIFT, ranks[S[g]])
        assert np.array_equal(Q[g] % K.QSHIFT, y[S[g]])
    flag = np.zeros(len(X), np.uint8)
    SL, QL = K.partition_side(S, Q, Xt, 1, 2.5, flag, True, True)
    SR, QR = K.partition_side(S, Q, Xt, 1, 2.5, flag, False, True)
    nl, nr = naive_dpdt_partition(X.tolist(), S.tolist(), 1, 2.5)
    assert SL.tolist() == nl and SR.tolist() == nr
    for left, Sx in ((True, SL), (False, SR)):
        Sz, _ = K.partition_side(S, Q, Xt, 1, 2.5, flag, left, False)
        assert np.array_equal(Sx, Sz) and not flag.any()
    lookup = {(g, int(r)): int(q) for g in range(X.shape[1]) for r, q in zip(S[g], Q[g])}
    assert all(lookup[(g, int(r))] == int(q) for g in range(X.shape[1]) for r, q in zip(SL[g], QL[g]))
    assert all(lookup[(g, int(r))] == int(q) for g in range(X.shape[1]) for r, q in zip(SR[g], QR[g]))


@pytest.mark.parametrize("packed", [True, False])
def test_inplace_partition_then_merge_restores_the_order(packed):
    X, y, w, RS = _data(2, n=50)
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    Q = K.pack_ranks(Xt, S, y)
    flag = np.zeros(50, np.uint8)
    G, T = K.inplace_orders(Xt, S.copy(), Q.copy(), flag)
    GS, GQ, tmp_s, tmp_q = G.work, G.Qw, T.tmp_i, T.tmp_q
    mid = K.partition_inplace(G, 0, 50, 2, 2.5, T, packed)
    SL, SR = _partition(S, Xt, 2, 2.5, flag)
    assert np.array_equal(GS[:, :mid], SL) and np.array_equal(GS[:, mid:], SR)
    # a nested split of the left segment, then both merges (innermost first)
    mid2 = K.partition_inplace(G, 0, mid, 1, 1.5, T, packed)
    SLL, SLR = _partition(SL, Xt, 1, 1.5, flag)
    assert np.array_equal(GS[:, :mid2], SLL) and np.array_equal(GS[:, mid2:mid], SLR)
    K.merge_back(GS, GQ, 0, mid2, mid, 1, Xt, tmp_s, tmp_q, packed)
    assert np.array_equal(GS[:, :mid], SL)
    K.merge_back(GS, GQ, 0, mid, 50, 2, Xt, tmp_s, tmp_q, packed)
    assert np.array_equal(GS, S)
    if packed:
        assert np.array_equal(GQ, Q)


@pytest.mark.parametrize("seed", range(4))
def test_leaf_child_stats_packed_equals_child_stats(seed):
    X, y, w, RS = _data(seed, n_classes=3)
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    Q = K.pack_ranks(Xt, S, y)
    feats = np.array([0, 1, 2, 3, 0, 2])
    thrs = np.array([2.5, 0.5, 3.0, 5.5, -1.0, 9.0])
    tot = RS.sum(axis=0)
    Z = np.ones(len(y), np.uint64)
    L, cnt, _, _, eL, eR, _, _ = K.child_stats(Xt, RS, y, S, feats, thrs, Z, Z, tot, K.GINI)
    L2, cnt2, eL2, eR2 = K.leaf_child_stats_packed(Xt, S, Q, feats, thrs, tot)
    assert np.array_equal(L, L2) and np.array_equal(cnt, cnt2)
    assert np.array_equal(eL, eL2) and np.array_equal(eR, eR2)


# ----------------------------------------------------------------------------- scikit-learn ties
def _tied_data(seed):
    """Few distinct values, duplicated and constant columns: many equal-impurity splits."""
    rng = np.random.default_rng(seed)
    n, p, nc = int(rng.integers(10, 80)), int(rng.integers(1, 7)), int(rng.integers(2, 4))
    X = rng.integers(0, int(rng.integers(2, 5)), size=(n, p)).astype(float)
    if p > 2 and seed % 3 == 0:
        X[:, 1] = X[:, 0]
    if seed % 5 == 0:
        X[:, -1] = 1.0
    return X, rng.integers(0, nc, n), nc, rng


@pytest.mark.parametrize("seed", range(40))
def test_sklearn_tie_rule_gives_sklearns_tree_on_tied_data(seed):
    """With TIES_SKLEARN the compiled generator proposes exactly the splits (same features in
    node-creation order, same thresholds, same node count) of scikit-learn's
    DecisionTreeClassifier(max_leaf_nodes=B, random_state=rs) on data full of ties."""
    X, y, nc, rng = _tied_data(seed)
    n, p = X.shape
    B, rs = int(rng.integers(2, 12)), int(rng.integers(0, 100))
    mf = None if seed % 4 else int(rng.integers(1, p + 1))
    crit = "gini" if seed % 2 == 0 else "entropy"
    sk = DecisionTreeClassifier(max_leaf_nodes=B, random_state=rs, max_features=mf,
                                criterion=crit).fit(X, y).tree_
    internal = sk.feature >= 0
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    RS = np.ascontiguousarray(np.eye(nc)[y])
    sk_seed = np.random.RandomState(rs).randint(0, K.SK_RAND_R_MAX)
    for packed, Q in ((True, K.pack_ranks(Xt, S, y)), (False, NOQ)):
        cfg = K.cart_settings(B, CRIT[crit], 1, mf or p, 0, K.TIES_SKLEARN, sk_seed)
        f, t, nodes = K.cart_candidates(Xt, RS, y, S, Q, packed, cfg, np.zeros(n, np.uint8))
        assert nodes == sk.node_count
        assert f.tolist() == sk.feature[internal].tolist()
        np.testing.assert_allclose(t, sk.threshold[internal], atol=1e-6)


@pytest.mark.parametrize("seed", range(15))
def test_sklearn_tie_rule_gives_sklearns_regression_tree(seed):
    rng = np.random.default_rng(1000 + seed)
    n, p = int(rng.integers(10, 80)), int(rng.integers(1, 6))
    X = rng.integers(0, 4, size=(n, p)).astype(float)
    y = rng.integers(0, 3, n).astype(float)
    B, rs = int(rng.integers(2, 10)), int(rng.integers(0, 100))
    sk = DecisionTreeRegressor(max_leaf_nodes=B, random_state=rs).fit(X, y).tree_
    internal = sk.feature >= 0
    Xt = np.ascontiguousarray(X.T)
    RS = np.column_stack([np.ones(n), y, y * y])
    cfg = K.cart_settings(B, K.MSE, 1, p, 0, K.TIES_SKLEARN,
                          np.random.RandomState(rs).randint(0, K.SK_RAND_R_MAX))
    f, t, nodes = K.cart_candidates(Xt, RS, np.zeros(n, np.int64), K.presort(Xt), NOQ, False, cfg,
                                    np.zeros(n, np.uint8))
    assert nodes == sk.node_count
    assert f.tolist() == sk.feature[internal].tolist()
    np.testing.assert_allclose(t, sk.threshold[internal], atol=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_sk_feature_order_matches_naive(seed):
    from naive import naive_sk_feature_order

    rng = np.random.default_rng(seed)
    p = int(rng.integers(1, 12))
    features = np.arange(p)
    state = np.array([int(rng.integers(0, 2**31 - 1))], np.int64)
    ref_features, ref_state = list(range(p)), [int(state[0])]
    order = np.empty(p, np.int64)
    for _ in range(5):  # the array and the generator carry over from node to node
        const = rng.random(p) < 0.3
        mf = int(rng.integers(1, p + 1))
        nf = K.sk_feature_order(features, state, const, mf, order)
        ref = naive_sk_feature_order(ref_features, ref_state, const.tolist(), mf)
        assert order[:nf].tolist() == ref
        assert features.tolist() == ref_features and int(state[0]) == ref_state[0]
        assert not any(const[g] for g in ref)


def test_frontier_heap_pops_in_priority_order():
    """The best-first frontier heap returns every pushed node once, largest priority first."""
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 6, 50).astype(float)  # many equal priorities
    hk, hi = np.empty(50), np.empty(50, np.int64)
    n = 0
    for j, k in enumerate(keys):
        n = K._heap_push(hk, hi, n, k, j)
    popped = []
    while n:
        j, n = K._heap_pop(hk, hi, n)
        popped.append(j)
    assert sorted(popped) == list(range(50))
    assert all(keys[a] >= keys[b] for a, b in zip(popped, popped[1:]))
