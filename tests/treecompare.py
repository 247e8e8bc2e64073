"""One comparison of two fitted trees for the tests that check two searches return the same
tree: every array of `TreeArrays` equal, node for node."""

from __future__ import annotations

import numpy as np


def assert_same_tree(a, b) -> None:
    """The fitted estimators ``a`` and ``b`` hold the same tree: features, thresholds,
    children, class counts (or statistics) and labels."""
    ta, tb = a.tree_, b.tree_
    assert np.array_equal(ta.feature, tb.feature), (ta.feature, tb.feature)
    assert np.array_equal(ta.threshold, tb.threshold), (ta.threshold, tb.threshold)
    assert np.array_equal(ta.left, tb.left) and np.array_equal(ta.right, tb.right)
    assert np.array_equal(ta.value, tb.value)
    assert np.array_equal(ta.label, tb.label)
    assert ta == tb
