"""The Rashomon enumeration against brute force (`tests.naive.naive_rashomon_trees`): the same
count, the same trees, every tree within the bound; limits; counting without materialising."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from naive import naive_rashomon_trees
from treebench.search.rashomon import SetSpec, count_units, enumerate_set


def as_tuple(tree, i=0):
    """A `TreeArrays` as the nested tuples of the brute force."""
    if tree.feature[i] < 0:
        return ("leaf",)
    return (int(tree.feature[i]), float(tree.threshold[i]), as_tuple(tree, tree.left[i]),
            as_tuple(tree, tree.right[i]))


def random_problem(rng, depth=None):
    """A random problem of depth 0-2, or of ``depth`` on at most 8 rows and 2 features (so
    that brute force stays small)."""
    n = int(rng.integers(1, 11) if depth is None else rng.integers(3, 9))
    d = int(rng.integers(1, 4) if depth is None else rng.integers(1, 3))
    binary = bool(rng.integers(0, 2))
    X = rng.integers(0, 2 if binary else 4, size=(n, d)).astype(float)
    y = rng.integers(0, int(rng.integers(2, 4)), size=n)
    counts = (np.ones(n, dtype=np.int64) if rng.random() < 0.6
              else rng.integers(1, 4, size=n))
    depth = int(rng.integers(0, 3)) if depth is None else depth
    lam = float(rng.choice([0.0, 0.01, 0.05, 0.1, 0.25, 1.0 / n]))
    eps = float(rng.choice([0.0, 0.05, 0.2, 0.5, 1.0, 3.0]))
    keep = bool(rng.integers(0, 2))
    return X, y, counts, binary, depth, lam, eps, keep


def check_against_brute_force(seed: int, full: bool, depth=None) -> None:
    rng = np.random.default_rng(seed)
    X, y, counts, binary, depth, lam, eps, keep = random_problem(rng, depth)
    nc = int(y.max()) + 1
    rset = enumerate_set(X, y, counts.astype(float), nc,
                         SetSpec(depth, lam, epsilon=eps, binary=binary, keep_redundant=keep))
    prob = rset.enum.prob
    units = count_units(counts.astype(float))[0]  # the whole weights the search counts in
    every = naive_rashomon_trees(X, y, units, nc, depth, prob.A, prob.P, binary, keep)
    opt = min(c for c, _ in every)
    bound = math.floor(opt * (1 + Fraction(repr(eps))))  # epsilon as the decimal it prints as
    inside = sorted(((c, t) for c, t in every if c <= bound), key=repr)
    assert rset.optimum == opt
    assert rset.count == len(inside), (seed, rset.count, len(inside))
    if full:
        got = []
        for i in range(rset.count):
            tree = rset.tree(i)
            cost = round(tree.training_error(X, y, units)) * prob.A + tree.n_leaves * prob.P
            assert cost <= bound
            got.append((cost, as_tuple(tree)))
        assert [c for c, _ in got] == sorted(c for c, _ in got), "trees come in cost order"
        assert sorted(got, key=repr) == inside, seed


@pytest.mark.parametrize("block", range(6))
def test_counts_and_trees_equal_brute_force(block):
    for seed in range(block * 50, block * 50 + 50):
        check_against_brute_force(seed, full=seed % 5 == 0)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(20))
def test_counts_equal_brute_force_on_2000_problems(block):
    for seed in range(10_000 + block * 100, 10_000 + block * 100 + 100):
        check_against_brute_force(seed, full=seed % 10 == 0)


def test_counts_and_trees_equal_brute_force_at_depth_3():
    # nodes of depth 1 below the root's children, which the search takes whole once instead of
    # budgeted again per caller
    for seed in range(50_000, 50_200):
        check_against_brute_force(seed, full=seed % 5 == 0, depth=3)


def test_an_absolute_bound_counts_every_tree_below_it():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(9, 3)).astype(float)
    y = rng.integers(0, 2, size=9)
    rset = enumerate_set(X, y, np.ones(9), 2, SetSpec(2, 0.05, bound=0.5))
    prob = rset.enum.prob
    every = naive_rashomon_trees(X, y, np.ones(9, int), 2, 2, prob.A, prob.P)
    limit = math.floor(Fraction(0.5) * prob.A * prob.total)
    assert rset.count == sum(c <= limit for c, _ in every)


def test_a_set_of_billions_is_counted_without_materialising():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(512, 24)).astype(float)
    y = rng.integers(0, 2, size=512)
    rset = enumerate_set(X, y, np.ones(512), 2, SetSpec(3, 0.0, bound=1.0, keep_redundant=True))
    assert rset.count > 10**9  # every tree of depth <= 3 (the bound admits all of them)
    assert len(rset.enum.memo) < 10**5
    last = rset.tree(rset.count - 1)
    assert last.depth <= 3


def test_the_node_limit_stops_with_an_incomplete_set_of_valid_trees():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(40, 6)).astype(float)
    y = rng.integers(0, 2, size=40)
    full = enumerate_set(X, y, np.ones(40), 2, SetSpec(3, 0.01, epsilon=0.3))
    part = enumerate_set(X, y, np.ones(40), 2, SetSpec(3, 0.01, epsilon=0.3, max_nodes=30))
    assert full.complete and not part.complete and part.stop_reason == "memory"
    assert part.count < full.count
    for i in range(part.count):
        tree = part.tree(i)
        prob = part.enum.prob
        cost = round(tree.training_error(X, y)) * prob.A + tree.n_leaves * prob.P
        assert cost <= part.bound


def test_samples_are_distinct_indices_and_reproducible():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, size=(30, 5)).astype(float)
    y = rng.integers(0, 2, size=30)
    rset = enumerate_set(X, y, np.ones(30), 2, SetSpec(2, 0.0, bound=1.0))
    s = rset.sample(20, seed=4)
    assert s == rset.sample(20, seed=4) and len(set(s)) == 20
    assert all(0 <= i < rset.count for i in s)
    assert rset.sample(rset.count + 5) == list(range(rset.count))
    with pytest.raises(IndexError, match="outside the set"):
        rset.tree(rset.count)
