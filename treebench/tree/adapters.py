"""Translators from external solvers' trees to `TreeArrays` (GUIDE §3: translated once, here).

Each adapter documents the other solver's conventions (which side is "true", whether the root
counts as depth 1) and is covered by a test comparing predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treebench.tree.arrays import TreeArrays


def from_sklearn_tree(sk_tree: Any, n_classes: int, classes: np.ndarray | None = None) -> TreeArrays:
    """Convert a fitted scikit-learn ``Tree`` (``estimator.tree_``).

    scikit-learn: left is ``x <= threshold`` (as ours), ids in pre-order, leaves have feature -2
    and children -1, ``value`` holds class *fractions* per node (scikit-learn ≥ 1.4) and
    ``weighted_n_node_samples`` the weighted row count. ``classes`` are the class indices the
    scikit-learn estimator saw (a subset of ``range(n_classes)``), placed into their columns.
    """
    feature = np.where(sk_tree.feature >= 0, sk_tree.feature, -1).astype(np.int64)
    threshold = np.where(feature >= 0, sk_tree.threshold, -2.0)
    frac = np.asarray(sk_tree.value)[:, 0, :]
    rowsum = frac.sum(axis=1, keepdims=True)
    if np.all(np.abs(rowsum - 1.0) < 1e-6):  # fractions (new scikit-learn)
        counts_sub = frac * np.asarray(sk_tree.weighted_n_node_samples)[:, None]
    else:  # counts (scikit-learn < 1.4)
        counts_sub = frac
    value = np.zeros((feature.shape[0], n_classes))
    cols = np.arange(counts_sub.shape[1]) if classes is None else np.asarray(classes, dtype=int)
    value[:, cols] = counts_sub
    label = cols[np.argmax(counts_sub, axis=1)]
    return TreeArrays(
        feature, threshold, sk_tree.children_left, sk_tree.children_right, value, label
    )
