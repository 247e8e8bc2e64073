"""The one tie rule and the one recount (treebench.tree.labels), against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.tree.arrays import BINARY_THRESHOLD, TreeBuilder, binary_thresholds, check_tree
from treebench.tree.labels import class_prior, majority_label, majority_labels, recount


def _naive_label(counts, prior):
    """Sort classes by (count desc, prior desc, index asc) and take the first."""
    k = len(counts)
    p = np.zeros(k) if prior is None else prior
    return sorted(range(k), key=lambda c: (-counts[c], -p[c], c))[0]


@pytest.mark.parametrize("seed", range(30))
def test_majority_labels_equal_the_rule(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    value = rng.integers(0, 3, (20, k)).astype(float)  # many ties
    prior = rng.integers(0, 3, k).astype(float)
    for pr in (None, prior):
        want = [_naive_label(v, pr) for v in value]
        assert majority_labels(value, pr).tolist() == want
        assert [majority_label(v, pr) for v in value] == want


def test_tie_goes_to_the_prior_then_lower_index():
    assert majority_label(np.array([2.0, 2.0, 1.0]), np.array([1.0, 5.0, 9.0])) == 1
    assert majority_label(np.array([2.0, 2.0]), np.array([3.0, 3.0])) == 0
    assert majority_label(np.array([2.0, 2.0])) == 0


def test_binary_thresholds():
    assert binary_thresholds(np.array([3, -1, -1])).tolist() == [BINARY_THRESHOLD, -2.0, -2.0]


def test_recount_fills_counts_and_relabels():
    b = TreeBuilder(n_classes=2)
    root = b.add_split(0, 0.5, [0, 0], label=0)
    b.set_children(root, b.add_leaf([0, 0], label=1), b.add_leaf([0, 0], label=1))
    tree = b.build()
    X = np.array([[0], [0], [1], [1], [1]], dtype=float)
    y = np.array([0, 1, 1, 1, 0])
    w = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    keep = b.build()
    recount(keep, X, y, w, keep_leaf_labels=True)
    assert keep.label.tolist() == [1, 1, 1]
    recount(tree, X, y, w)
    check_tree(tree, X=X, y_index=y, sample_weight=w)
    # left leaf ties 1:1 -> the class more frequent overall (class 1: 3 of 5)
    assert tree.value.tolist() == [[2, 3], [1, 1], [1, 2]] and tree.label.tolist() == [1, 1, 1]
    assert class_prior(y, 2, w).tolist() == [2.0, 3.0]
