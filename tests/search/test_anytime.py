"""The anytime schedule of Top-k's exact search (`treebench.search.anytime`): its primal
heuristic (the widened search, ``k_top``) against its naive twin, the root bound that must not
change the exact search's tree, and the estimator's answers with and without a deadline."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from tests import naive
from treebench.algorithms.topk import TopKClassifier
from treebench.search import anytime as A
from treebench.search import topk as K
from treebench.search.engine import fit_topk
from treebench.search.state import S_TIMED_OUT, bitset_data

pytestmark = pytest.mark.kernels


def _data(seed, n=60, d=7, n_classes=2):
    """Random 0/1 data with a few twinned and complementary columns (so that the widened
    search's dropping of equivalent features matters), rows grouped by class."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, size=(n, d))
    X = np.concatenate([base, base[:, :2], 1 - base[:, 2:3]], axis=1).astype(np.uint8)
    y = (base[:, 0] ^ (base[:, 1] & base[:, 3]) ^ (rng.random(n) < 0.2)).astype(np.int64)
    if n_classes == 3:
        y = np.where(base[:, 4] & base[:, 5], 2, y)
    order = np.argsort(y, kind="stable")
    return X[order], y[order]


def _fit(X, y, nc, depth, k_top=0, ub=np.inf, **kw):
    p = K.topk_problem(bitset_data(X, y, nc), depth, 0, K.ENTROPY, **kw)
    return fit_topk(K.anytime_problem(p, k_top=k_top, ub=ub))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("w", [1, 2, 3])
def test_widened_search_matches_its_naive_twin(seed, w):
    """The search with ``k_top`` = w: the same error, node count and tree as the naive twin
    (lower error, then fewer nodes, then first explored), at depths 3 and 4."""
    nc = 2 + seed % 2
    X, y = _data(seed, n_classes=nc)
    for depth in (3, 4):
        err, nodes, ref = naive.naive_topk_widened(X.tolist(), y.tolist(), nc, w, depth)
        obj, M, feat, left, right, counts, _ = _fit(X, y, nc, depth, k_top=w)
        assert obj == err * M + nodes
        assert A.tree_value(feat, counts, M, 1.0) == obj
        assert naive.naive_topk_tree_tuple(_tree(feat, left, right)) == ref


def _tree(feat, left, right):
    """The search's pre-order arrays as the object `naive_topk_tree_tuple` reads."""
    return SimpleNamespace(feature=feat, left=left, right=right)


@pytest.mark.parametrize("seed", range(5))
def test_widened_values_fall_with_w_to_the_optimum(seed):
    """More candidates never give a worse tree (each width's trees include the last's), none
    beats the optimum, and a width of every feature is the exact search."""
    X, y = _data(seed + 20)
    d = X.shape[1]
    opt = _fit(X, y, 2, 4)[0]
    last = np.inf
    for w in range(1, d + 1):
        v = _fit(X, y, 2, 4, k_top=w)[0]
        assert opt <= v <= last
        last = v
    assert last == opt


@pytest.mark.parametrize("smaller", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_a_root_bound_above_the_optimum_keeps_the_tree(seed, smaller):
    """The schedule's bound (an incumbent's value plus one half, down to the optimum itself
    plus one half) returns the same value and the same tree as no bound."""
    nc = 2 + seed % 2
    X, y = _data(seed + 40, n=80, d=8, n_classes=nc)
    for depth in (3, 4):
        free = _fit(X, y, nc, depth, smaller_trees=smaller)
        heur = _fit(X, y, nc, depth, smaller_trees=smaller, k_top=1)[0]
        for ub in (heur + 0.5, free[0] + 0.5):
            got = _fit(X, y, nc, depth, smaller_trees=smaller, ub=ub)
            assert got[0] == free[0]
            for a, b in zip(got[2:6], free[2:6]):
                np.testing.assert_array_equal(a, b)


def test_widths_grow_by_about_half():
    ws = [1]
    while ws[-1] < 300:
        ws.append(int(A.next_width(ws[-1])))
    assert ws[:7] == [1, 2, 3, 5, 8, 12, 18]
    assert all(b > a for a, b in zip(ws, ws[1:]))


@pytest.mark.parametrize("tie_break", ["smaller", "first"])
@pytest.mark.parametrize("seed", range(4))
def test_a_fit_that_finishes_is_the_same_with_a_time_limit(seed, tie_break):
    """Under a time limit it never reaches, the schedule returns the tree of the fit without a
    limit, proven optimal, with a monotone trace that ends on the proof."""
    X, y = _data(seed + 60, n=90, d=9)
    plain = TopKClassifier(k="all", max_depth=4, tie_break=tie_break).fit(X, y)
    timed = TopKClassifier(k="all", max_depth=4, tie_break=tie_break, time_limit=600).fit(X, y)
    for name in ("feature", "left", "right"):
        np.testing.assert_array_equal(getattr(timed.tree_, name), getattr(plain.tree_, name))
    assert timed.solve_info_["optimal"] and not timed.solve_info_["timed_out"]
    assert timed.solve_info_["objective"] == plain.solve_info_["objective"]
    tr = np.array(timed.trace_)
    assert np.all(np.diff(tr[:, 0]) >= 0) and np.all(np.diff(tr[:, 1]) <= 0)
    assert np.all(np.diff(tr[:, 2]) >= 0) and np.all(tr[:, 2] <= tr[:, 1])
    assert tr[-1, 1] == tr[-1, 2] == timed.solve_info_["objective"]


def test_a_deadline_returns_the_best_incumbent_it_found():
    """A search stopped by its deadline (the widened searches' first tree in hand) returns a
    tree whose reported objective is its own training error, no better than the optimum, not
    claimed optimal, with every incumbent of its trace a tree it held."""
    rng = np.random.default_rng(3)
    n, d = 400, 40
    X = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(n) < 0.25)).astype(np.int64)
    m = TopKClassifier(k="all", max_depth=5, time_limit=0.05).fit(X, y)
    info = m.solve_info_
    assert info["timed_out"] and not info["optimal"]
    wrong = float(np.sum(m.predict(X) != y))
    assert info["objective"] == info["training_error"] == wrong
    tr = np.array(m.trace_)
    assert tr[-1, 1] == info["objective"]
    assert np.all(np.diff(tr[:, 1]) <= 0) and np.all(tr[:, 2] <= tr[:, 1])
    # the greedy-with-optimal-depth-2 tree came first, well before the deadline
    assert tr[0, 0] < 0.05


def test_the_schedule_runs_under_a_time_limit_only_where_it_applies(monkeypatch):
    """k < all, no time limit, depth 2 and weights without a whole-number unit run the search
    alone; k = all under a limit at depth >= 3 runs the schedule."""
    limits = []
    real = fit_topk

    def spy(p, trace=None):
        limits.append(p.time_limit)  # 0 unless `anytime_problem` set it
        return real(p, trace)

    monkeypatch.setattr("treebench.algorithms.topk.fit_topk", spy)
    X, y = _data(80)
    TopKClassifier(k=2, max_depth=3, time_limit=10).fit(X, y)
    TopKClassifier(k="all", max_depth=3).fit(X, y)
    TopKClassifier(k="all", max_depth=2, time_limit=10).fit(X, y)
    with pytest.warns(UserWarning):
        TopKClassifier(k="all", max_depth=3, time_limit=10).fit(
            X, y, sample_weight=np.linspace(0.1, 1.0, len(y)) * np.pi)
    assert limits == [0.0] * 4
    TopKClassifier(k="all", max_depth=3, time_limit=10).fit(X, y)
    assert limits[-1] == 10.0


def test_a_widened_search_stops_at_its_deadline():
    """The deadline reaches the widened search like the exact one: it stops, says so, and its
    tree's value (`tree_value`) is the tree's own errors and nodes, counted on the rows."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(600, 60)).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(600) < 0.3)).astype(np.int64)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    p = K.anytime_problem(K.topk_problem(bitset_data(X, y, 2), 6, 0, K.ENTROPY,
                                         deadline=time.perf_counter() + 0.02), k_top=30)
    obj, M, feat, left, right, counts, stats = fit_topk(p)
    assert stats[S_TIMED_OUT]
    wrong = 0
    leaves = {}
    for x, label in zip(X, y):
        node = 0
        while feat[node] >= 0:
            node = right[node] if x[feat[node]] else left[node]
        leaves.setdefault(node, []).append(label)
    for labels in leaves.values():
        wrong += len(labels) - np.bincount(labels).max()
    assert A.tree_value(feat, counts, M, 1.0) == wrong * M + len(feat)


@pytest.mark.parametrize("k_top", [0, 4])
def test_a_tree_read_back_after_the_deadline_has_the_value_the_search_returned(k_top):
    """Stopped by deadlines all along a search (the exact one, a widened one), the tree read
    back has the value the root returned: the depth-2 solver's stumps are found again exactly
    after the deadline, not greedily."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(400, 40)).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(400) < 0.25)).astype(np.int64)
    order = np.argsort(y, kind="stable")
    data = bitset_data(X[order], y[order], 2)
    for limit in np.linspace(0.0005, 0.03, 25):
        p = K.anytime_problem(K.topk_problem(data, 5, 0, K.ENTROPY,
                                             deadline=time.perf_counter() + limit), k_top=k_top)
        obj, M, feat, left, right, counts, _ = fit_topk(p)
        assert A.tree_value(feat, counts, M, 1.0) == obj
