"""The fast paths of the Rashomon enumeration against their references: the leaf label in Python
integers against `majority_label`, the cached leaf (cost, label) against a fresh computation,
and the set's levels and count against the root's histogram cut at the bound."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.search.rashomon import (SetSpec, enumerate_set, leaf_label, make_problem,
                                       tie_order)
from treebench.tree.labels import majority_label


@pytest.mark.parametrize("seed", range(300))
def test_leaf_label_is_majority_label(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    # few distinct values, so that ties between classes are common
    weights = rng.integers(0, 4, size=k) * int(rng.choice([1, 3, 2**40]))
    totals = rng.integers(0, 3, size=k).astype(float)
    for prior in (None, tie_order(totals, "prior"), tie_order(totals, "last")):
        want = majority_label(weights.astype(np.float64), prior)
        got = leaf_label([int(w) for w in weights],
                         None if prior is None else [float(v) for v in prior])
        assert got == want, (weights, prior)


@pytest.mark.parametrize("leaf_ties", ["prior", "last"])
def test_cached_leaf_equals_a_fresh_computation(leaf_ties):
    rng = np.random.default_rng(7)
    n, d = 40, 5
    X = rng.integers(0, 2, size=(n, d)).astype(bool)
    y = rng.integers(0, 3, size=n)
    counts = rng.integers(1, 4, size=n)
    prob = make_problem(X, np.arange(d), y, counts, 3, 0.03, leaf_ties)
    prior = tie_order(np.bincount(y, weights=counts, minlength=3), leaf_ties)
    for _ in range(200):
        mask = rng.random(n) < 0.5
        rows = sum(1 << i for i in np.flatnonzero(mask))
        w = np.bincount(y[mask], weights=counts[mask], minlength=3)
        cost = int(w.sum() - w.max()) * prob.A + prob.P
        label = majority_label(w, prior)
        assert prob.leaf(rows) == (cost, label)
        assert prob.leaf(rows) == (cost, label)  # the second answer comes from the cache
        assert prob.leaf_cost(rows) == cost and prob.label(rows) == label


@pytest.mark.parametrize("seed", range(20))
def test_levels_and_count_cut_the_root_histogram_at_the_bound(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 30))
    X = rng.integers(0, 2, size=(n, 4)).astype(float)
    y = rng.integers(0, 2, size=n)
    rset = enumerate_set(X, y, np.ones(n), 2, SetSpec(2, 0.02, epsilon=float(rng.random())))
    pairs = [(v, k) for v, k in zip(rset.root.levels, rset.root.counts) if v <= rset.bound]
    levels, counts = rset.levels()
    assert list(zip(levels, counts)) == pairs
    assert rset.count == sum(k for _, k in pairs)
    # the bound may cut the root's histogram (the search's bound is that of the first tree)
    assert all(v > rset.bound for v in rset.root.levels[len(levels):])
