"""Classification metrics computed once per cell, in plain numpy.

They equal scikit-learn's ``accuracy_score``, ``balanced_accuracy_score`` and
``roc_auc_score`` (binary, and one-vs-rest macro average for several classes; tests compare
them) without scikit-learn's per-call validation overhead, which dominated tiny cells.
"""

from __future__ import annotations

import numpy as np


def accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.mean(y == pred))


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean recall over the classes present in ``y``."""
    classes, inv = np.unique(y, return_inverse=True)
    hit = (y == pred).astype(np.float64)
    per_class = np.bincount(inv, weights=hit) / np.bincount(inv)
    return float(per_class.mean())


def _binary_auc(pos: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve by the rank-sum (Mann–Whitney U) identity, ties counted 1/2."""
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    ranks = np.empty(s.size, dtype=np.float64)
    # average ranks over tied scores
    boundaries = np.flatnonzero(np.diff(s)) + 1
    starts = np.concatenate(([0], boundaries))
    ends = np.concatenate((boundaries, [s.size]))
    avg = (starts + ends + 1) / 2.0  # 1-based average rank of each tie group
    ranks[order] = np.repeat(avg, ends - starts)
    u = ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def roc_auc(y: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> float:
    """Binary AUC of the second class's score, or the one-vs-rest macro average over classes.

    NaN when ``y`` lacks one of ``classes`` (the AUC of an absent class is undefined).
    """
    present = np.unique(y)
    if len(present) < 2 or len(present) != len(classes):
        return float("nan")
    if len(classes) == 2:
        return _binary_auc(y == classes[1], proba[:, 1])
    return float(np.mean([_binary_auc(y == c, proba[:, j]) for j, c in enumerate(classes)]))
