"""Preprocessing of binarized training data.

`coalesce` merges identical training rows into one row with the majority label and the total
weight, as the NGI paper does (§6: "All identical objects are coalesced into a single object, and
the sampling probability is set accordingly ... the majority class is assigned to each identical
data point in the training set").
"""

from __future__ import annotations

import numpy as np

from treebench.errors import ParameterError


def coalesce(X_bin, y, sample_weight=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge identical rows of ``X_bin``: one row per distinct row, in order of first occurrence.

    Each merged row gets the total weight of its copies and their weighted majority label. Ties go
    to the label with the larger total weight in the whole training set, then to the smaller label
    (the tie rule of `treebench.algorithms.base.majority_label`). Returns ``(X, y, w)``.
    """
    X = np.asarray(X_bin)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ParameterError(f"coalesce needs a 2-D matrix and one label per row; got {X.shape} and {y.shape}.")
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ParameterError(f"sample_weight has shape {w.shape}; expected ({n},).")
    if n == 0:
        return X.copy(), y.copy(), w.copy()
    rows = np.ascontiguousarray(X)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel() if rows.shape[1] else np.zeros(n, dtype=np.int8)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    # renumber groups by first occurrence so the output keeps the input order
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    group = rank[inverse.ravel()]
    classes, y_idx = np.unique(y, return_inverse=True)
    counts = np.zeros((order.size, classes.size))
    np.add.at(counts, (group, y_idx), w)
    prior = counts.sum(axis=0)
    # lexicographic argmax: count, then prior, then lower class index
    best = np.zeros(order.size, dtype=np.int64)
    for k in range(1, classes.size):
        c, b = counts[:, k], counts[np.arange(order.size), best]
        better = (c > b) | ((c == b) & (prior[k] > prior[best]))
        best = np.where(better, k, best)
    return X[first[order]], classes[best], counts.sum(axis=1)
