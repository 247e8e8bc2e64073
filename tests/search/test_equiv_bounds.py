"""Exactness of the k = all search techniques:

* features equal or complementary on a node are searched once (`treebench.search.equiv`),
  checked against its naive twin and by whole searches on data full of such columns;
* the bounds a search leaves behind (a failed search's minimum over root features, the exact
  depth-2 values, the similarity bound) never exceed the true optimum: random queries with
  random upper bounds on one shared search state, each answer checked against brute force.
"""

from __future__ import annotations

import numpy as np
import pytest

import naive
from treebench.search import engine as E
from treebench.search import topk as K
from treebench.algorithms.topk import TopKClassifier
from treebench.search import bitset, counts, equiv
from treebench.search.state import bitset_data
from treebench.tree.arrays import check_tree

pytestmark = pytest.mark.kernels


def _twinned(seed, n, d_base, n_classes=2, density=0.5):
    """Random 0/1 data whose columns include copies and complements of earlier columns."""
    rng = np.random.default_rng(seed)
    X = naive.twinned_columns(rng, n, d_base, density)
    y = rng.integers(0, n_classes, size=n).astype(np.int64)
    return X, y


@pytest.mark.parametrize("seed", range(8))
def test_drop_equivalent_matches_naive(seed):
    """Kept features (rank order preserved), dropped ones after them, ``valid`` cleared for
    the dropped: equal to the naive walk, on nodes small enough that many columns coincide."""
    rng = np.random.default_rng(100 + seed)
    X, y = _twinned(seed, n=90 + 40 * seed, d_base=6)
    d = X.shape[1]
    F = bitset.pack_columns(X)
    frac = [0.05, 0.1, 0.3, 1.0][seed % 4]
    mask = rng.random(X.shape[0]) < frac
    mask[int(rng.integers(0, X.shape[0]))] = True
    rows = bitset.pack_rows(mask)
    nzw = np.zeros(F.shape[0], dtype=np.int64)
    counts.node_totals(rows, bitset.pack_classes(y, 2), y, np.ones(len(y)), False,
                       np.zeros(2), nzw)
    nnz = int(np.count_nonzero(rows))
    n = int(rng.integers(1, d + 1))
    order = rng.permutation(d).astype(np.int64)
    head = order[:n].tolist()
    valid = np.zeros(d, dtype=np.bool_)
    valid[head] = True
    order0, valid0 = order.copy(), valid.copy()
    m = equiv.drop_equivalent(rows, nzw, nnz, F, order, n, valid)
    kept, dropped = naive.naive_drop_equivalent(X.tolist(), np.flatnonzero(mask).tolist(), head)
    # with ``rep``: the same answer, and each dropped feature's kept one, equivalent to it
    rep = np.full(n, -1, dtype=np.int64)
    assert equiv.drop_equivalent(rows, nzw, nnz, F, order0, n, valid0, rep) == m
    assert np.array_equal(order0, order) and np.array_equal(valid0, valid)
    for a in range(m, n):
        assert 0 <= rep[a] < m
        assert equiv.equivalent(rows, nzw, nnz, F, order[rep[a]], order[a])
    assert order[:m].tolist() == kept
    assert order[m:n].tolist() == dropped
    assert sorted(order.tolist()) == list(range(d))  # still a permutation
    assert np.flatnonzero(valid).tolist() == sorted(kept)
    for j in dropped:  # every dropped feature is equivalent to a kept one
        assert any(equiv.equivalent(rows, nzw, nnz, F, i, j) for i in kept)


@pytest.mark.parametrize("seed", range(6))
def test_k_all_on_twinned_columns_matches_naive(seed):
    """Whole searches on data where most columns have a twin: the same tree as the plain
    Figure-1 recursion (lower error, then fewer nodes, then first explored) and the optimal
    error, at depths 2-4; with tie_break="first" the optimal error."""
    n_classes = 2 if seed % 2 == 0 else 3
    X, y = _twinned(seed, n=40, d_base=4, n_classes=n_classes)
    d = X.shape[1]
    for depth in (2, 3, 4):
        err, nodes, ref_tree = naive.naive_topk(X.tolist(), y.tolist(), n_classes, None, depth)
        m = TopKClassifier(k="all", max_depth=depth).fit(X, y)
        check_tree(m.tree_, n_features=d, max_depth=depth, X=X, y_index=y)
        assert m.solve_info_["training_error"] == err
        assert m.tree_.n_nodes == nodes
        assert naive.naive_topk_tree_tuple(m.tree_) == ref_tree
        if depth <= 3:
            assert err == naive.naive_optimal_error(X.tolist(), y.tolist(), n_classes, depth)
        f = TopKClassifier(k="all", max_depth=depth, tie_break="first").fit(X, y)
        assert f.solve_info_["training_error"] == err


@pytest.mark.parametrize("min_imp", [None, 0.0])
@pytest.mark.parametrize("smaller", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_solve_answers_never_exceed_the_optimum(seed, smaller, min_imp):
    """`solve(rows, h, ub)` on random row sets with random upper bounds, all on one search
    state so that later queries reuse the lower bounds, exact depth-2 values and similarity
    memory of earlier ones: an answer below ub equals the brute-force optimum, any other
    answer is at most the optimum (and at least ub). Figure 1's tree space, and min_improvement
    0 (a node stays a leaf unless a split lowers its error), whose bounds count one node less
    per unsplit node."""
    rng = np.random.default_rng(seed)
    n_classes = 2 + seed % 2
    X, y = _twinned(seed + 50, n=34, d_base=4, n_classes=n_classes)
    y = np.sort(y)  # rows grouped by class, as `TopKClassifier` packs them
    n = X.shape[0]
    F = bitset.pack_columns(X)
    C = bitset.pack_classes(y, n_classes)
    H = 3
    nq = 40
    sets = np.zeros((nq, F.shape[0]), dtype=np.uint64)
    hs = np.zeros(nq, dtype=np.int64)
    ubs = np.zeros(nq)
    subsets = []
    # M as the kernel computes it for depth H
    M = 1.0
    while M <= 2.0 ** (H + 1):
        M *= 2.0
    nu = 1.0 if smaller else 0.0
    opts = []
    for q in range(nq):
        if q % 3 == 2 and subsets:  # a set asked before, with another bound
            sub, h = subsets[int(rng.integers(0, len(subsets)))]
        else:
            base = subsets[-1][0] if subsets and q % 3 == 1 else np.ones(n, dtype=bool)
            sub = base & (rng.random(n) < 0.8)  # similar to the previous set
            if not sub.any():
                sub[int(rng.integers(0, n))] = True
            h = int(rng.integers(1, H + 1))
        subsets.append((sub, h))
        idx = np.flatnonzero(sub)
        err, nodes, _ = naive.naive_topk(X[idx].tolist(), y[idx].tolist(), n_classes, None, h,
                                         min_improvement=min_imp)
        opt = err * M + nodes * nu
        opts.append(opt)
        sets[q] = bitset.pack_rows(sub)
        hs[q] = h
        ubs[q] = np.inf if rng.random() < 0.15 else \
            opt + rng.integers(-3, 3) * M + rng.integers(-2, 3) * nu
    problem = K.topk_problem(bitset_data(X, y, n_classes), H, smaller_trees=smaller,
                             min_imp=-1.0 if min_imp is None else min_imp)
    s = E.topk_state(problem)
    vals, M_k = E.solve_queries(problem, sets, hs, ubs), s.M
    assert M_k == M
    for q in range(nq):
        if vals[q] < ubs[q]:
            assert vals[q] == opts[q], q
        else:
            assert vals[q] <= opts[q], q


@pytest.mark.parametrize("smaller", [True, False])
def test_similarity_bound_counts_one_node_when_leaves_compete(smaller):
    """min_improvement 0: a set whose optimum is a leaf (its minority rows share their feature
    vectors with majority rows, so no tree lowers the error) bounds a similar set by its error
    less the rows removed, plus ONE node, not Figure 1's three: the set without one minority
    row, asked under a bound just above its optimum (a leaf), gets that optimum."""
    rng = np.random.default_rng(7)
    groups = rng.permutation(16)[:8]
    X = np.array([[(g >> b) & 1 for b in range(4)] for g in groups for _ in range(3)],
                 dtype=np.float64)
    y = np.array([1 if (i % 3 == 2 and i // 3 < 4) else 0 for i in range(X.shape[0])])
    order = np.argsort(y, kind="stable")  # rows grouped by class, as the learner packs them
    X, y = X[order], y[order]
    full = np.ones(len(y), dtype=bool)
    less = full.copy()
    less[np.flatnonzero(y == 1)[0]] = False
    problem = K.topk_problem(bitset_data(X, y, 2), 2, smaller_trees=smaller, min_imp=0.0)
    s = E.topk_state(problem)
    nu = 1.0 if smaller else 0.0
    want = 3.0 * s.M + nu  # three minority rows left, a leaf
    sets = np.array([bitset.pack_rows(full), bitset.pack_rows(less)])
    vals = E.solve_queries(problem, sets, np.array([2, 2]), np.array([np.inf, want + 1.0]))
    assert vals[0] == 4.0 * s.M + nu
    assert vals[1] == want

