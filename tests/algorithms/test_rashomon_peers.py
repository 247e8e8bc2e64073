"""Oracle tests: the Rashomon-set counts of `treefarms` and `arborenum`, translated to
treebench's conventions (`treebench.algorithms.peers_rashomon`), equal brute force's and those
of `rashomon` on small problems without tied leaves."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from naive import random_rashomon_problems, naive_rashomon_trees
from treebench.algorithms.peers_rashomon import arborenum_count, arborenum_price
from treebench.algorithms.peers_rashomon import treefarms_count
from treebench.search.rashomon import SetSpec, enumerate_set

pytestmark = pytest.mark.peers


def tie_free(X, y, depth):
    """No row set a tree of this depth can reach has tied class counts (where the packages'
    tie rules could differ)."""
    n, d = X.shape
    for k in range(depth + 1):
        for feats in itertools.combinations(range(d), k):
            for vals in itertools.product((0, 1), repeat=k):
                m = np.all(X[:, list(feats)] == vals, axis=1) if k else np.ones(n, bool)
                c = np.bincount(y[m], minlength=2)
                if m.any() and c[0] == c[1]:
                    return False
    return True


def problems(seed, wanted):
    return random_rashomon_problems(seed, wanted, [0.02, 0.05, 0.1, 0.15, 0.2], tie_free)


def brute_count(X, y, depth, lam, keep_redundant, mult=None, bound=None):
    rset = enumerate_set(X, y, np.ones(len(y)), 2, SetSpec(depth, lam, epsilon=mult or 0.0))
    prob = rset.enum.prob
    costs = [c for c, _ in naive_rashomon_trees(X, y, np.ones(len(y), int), 2, depth, prob.A,
                                                prob.P, keep_redundant=keep_redundant)]
    # the parameters as the decimals they print as, in exact arithmetic (`decimal`)
    limit = (math.floor(min(costs) * (1 + Fraction(repr(mult)))) if bound is None
             else math.floor(Fraction(repr(bound)) * prob.A * prob.total))
    return sum(c <= limit for c in costs)


def test_treefarms_counts_equal_brute_force_and_ours():
    pytest.importorskip("treefarms")
    for X, y, depth, lam, mult in problems(1, 12):
        ours = enumerate_set(X, y, np.ones(len(y)), 2, SetSpec(depth, lam, epsilon=mult)).count
        assert treefarms_count(X, y, lam, mult, depth) == ours
        assert brute_count(X, y, depth, lam, False, mult=mult) == ours


def test_arborenum_counts_equal_brute_force_and_ours():
    pytest.importorskip("arborenum")
    for X, y, depth, lam, mult in problems(2, 12):
        count, bound = arborenum_count(X, y, lam, mult, depth)
        price = arborenum_price(lam, len(y))
        spec = SetSpec(depth, price, bound=bound, keep_redundant=True)
        ours = enumerate_set(X, y, np.ones(len(y)), 2, spec).count
        assert count == ours
        assert brute_count(X, y, depth, price, True, bound=bound) == ours
