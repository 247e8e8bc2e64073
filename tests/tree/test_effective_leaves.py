"""Effective leaves (`treebench.tree.simplify.effective_leaves`): sibling leaves with one
label merge, recursively, and the count equals its naive twin."""

from __future__ import annotations

import numpy as np
import pytest

from naive import naive_effective_leaves


@pytest.mark.parametrize("seed", range(20))
def test_effective_leaves_match_the_naive_twin(seed):
    from treebench.registry import ALGORITHMS
    from treebench.tree.simplify import effective_leaves

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (60, 5)).astype(float)
    y = rng.integers(0, 3 if seed % 2 else 2, 60)
    t = ALGORITHMS.get("cart").create(max_depth=4, random_state=0).fit(X, y).tree_
    n = effective_leaves(t)
    assert n == naive_effective_leaves(t.feature, t.left, t.right, t.label)
    assert 1 <= n <= t.n_leaves


def test_effective_leaves_merge_recursively():
    from treebench.tree.arrays import TreeArrays
    from treebench.tree.simplify import effective_leaves

    # root -> (split -> leaf 0, leaf 0), leaf 1 : the inner split merges, the root does not
    t = TreeArrays(np.array([0, 1, -1, -1, -1]), np.array([0.5, 0.5, -2, -2, -2]),
                   np.array([1, 2, -1, -1, -1]), np.array([4, 3, -1, -1, -1]),
                   np.array([[3, 1], [2, 0], [1, 0], [1, 0], [1, 1]], dtype=float),
                   np.array([0, 0, 0, 0, 1]))
    assert t.n_leaves == 3 and effective_leaves(t) == 2
    t.label[4] = 0  # now everything predicts 0: one leaf
    assert effective_leaves(t) == 1
