"""Every learner labels a tied leaf by the one documented rule (`treebench.tree.labels`): the
class more frequent in the whole training set, then the lower class index."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.registry import ALGORITHMS
from treebench.tree.labels import class_prior, majority_label

NGI_FAMILY = ["ngi", "ec4.5", "ecart", "asr", "ip", "bal", "bal-fixed", "ngi-c4.5", "ngi-cart",
              "cc4.5", "ccart"]


def depth_two_tie():
    """Three classes. x0=0: three rows of class 0 and three of class 1 (identical rows);
    x0=1, x1=0: five of class 2; x0=1, x1=1: four of class 1. The one tree of error 3 splits on
    x0, then x1 under x0=1, and keeps the leaf x0=0 tied between classes 0 and 1 (merging it
    with its sibling costs errors), while class 1 is the more frequent overall (7 to 3)."""
    X = np.array([[0, 0]] * 6 + [[1, 0]] * 5 + [[1, 1]] * 4, dtype=np.uint8)
    y = np.array([0, 1] * 3 + [2] * 5 + [1] * 4)
    return X, y


def object_tie():
    """Four distinct rows (objects), labels 0, 1, 1, 1 (and one row of class 2, so that there
    are three classes as in `depth_two_tie`): NGI with ``min_objects=2`` stops at two objects of
    different labels, a (1, 1) tie, while class 1 is the more frequent (3 to 1)."""
    X = np.array([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=np.uint8)
    return X, np.array([0, 1, 1, 1, 2])


CASES = [(name, {"min_objects": 2}, object_tie) for name in NGI_FAMILY] + [
    ("cart", {"max_depth": 2}, depth_two_tie),
    ("greedy", {"max_depth": 2}, depth_two_tie),
    ("greedy", {"max_depth": 2, "criterion": "error"}, depth_two_tie),
    ("topk", {"max_depth": 2, "k": 1}, depth_two_tie),
    ("topk", {"max_depth": 2, "k": 2}, depth_two_tie),
    ("gosdt", {"regularization": 0.01, "max_depth": 2}, depth_two_tie),
    ("dpdt", {"max_depth": 2}, depth_two_tie),
]


@pytest.mark.parametrize("name, params, data", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("weighted", [False, True])
def test_tied_leaves_go_to_the_more_frequent_training_class(name, params, data, weighted):
    X, y = data()
    sw = np.ones(len(y))
    if weighted:  # doubling every weight keeps the ties and the prior's order
        sw *= 2.0
    est = ALGORITHMS.get(name).obj(**params).fit(X, y, sample_weight=sw)
    tree = est.tree_
    prior = class_prior(y, 3, sw)
    leaves = np.flatnonzero(tree.feature < 0)
    tied = [i for i in leaves if tree.value[i][0] > 0 and tree.value[i][0] == tree.value[i][1]]
    assert tied, f"{name}: no tied leaf in {tree.value[leaves].tolist()}"
    for i in leaves:
        if tree.value[i].sum() > 0:
            assert tree.label[i] == majority_label(tree.value[i], prior), (name, i, tree.value[i])
    assert est.predict(X[[0]])[0] == 1  # the first row lies in the tied leaf
