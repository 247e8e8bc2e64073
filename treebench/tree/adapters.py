"""Translators from external solvers' trees to `TreeArrays`: every solver with
other conventions is translated once, here (`docs/conventions.md`).

Each adapter documents the other solver's conventions (which side is "true", whether the root
counts as depth 1) and is covered by a test comparing predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treebench.tree.arrays import LEAF_THRESHOLD, TreeArrays, binary_thresholds
from treebench.tree.labels import majority_labels, recount


def from_sklearn_tree(
    sk_tree: Any, n_classes: int, classes: np.ndarray | None = None, prior: np.ndarray | None = None,
    with_missing: bool = False,
) -> TreeArrays:
    """Convert a fitted scikit-learn ``Tree`` (``estimator.tree_``).

    scikit-learn: left is ``x <= threshold`` (as ours), ids in pre-order, leaves have feature -2
    and children -1, ``value`` holds class *fractions* per node (scikit-learn ≥ 1.4) and
    ``weighted_n_node_samples`` the weighted row count. ``classes`` are the class indices the
    scikit-learn estimator saw (a subset of ``range(n_classes)``), placed into their columns.
    Node labels follow the one tie rule (`treebench.tree.labels`) with ``prior`` (the training
    class totals); without it ties go to the lower index, as scikit-learn's ``predict`` does.
    ``with_missing`` (the training rows had missing values) keeps scikit-learn's routing of
    missing values (``missing_left``); otherwise they go right, as in every `TreeArrays`.
    """
    feature = np.where(sk_tree.feature >= 0, sk_tree.feature, -1).astype(np.int64)
    threshold = np.where(feature >= 0, sk_tree.threshold, LEAF_THRESHOLD)
    frac = np.asarray(sk_tree.value)[:, 0, :]
    rowsum = frac.sum(axis=1, keepdims=True)
    if np.all(np.abs(rowsum - 1.0) < 1e-6):  # fractions (new scikit-learn)
        counts_sub = frac * np.asarray(sk_tree.weighted_n_node_samples)[:, None]
    else:  # counts (scikit-learn < 1.4)
        counts_sub = frac
    value = np.zeros((feature.shape[0], n_classes))
    cols = np.arange(counts_sub.shape[1]) if classes is None else np.asarray(classes, dtype=int)
    value[:, cols] = counts_sub
    label = majority_labels(value, prior)
    return TreeArrays(
        feature, threshold, sk_tree.children_left, sk_tree.children_right, value, label,
        missing_left=sklearn_missing_left(sk_tree, feature) if with_missing else None,
    )


def sklearn_missing_left(sk_tree: Any, feature: np.ndarray) -> np.ndarray:
    """scikit-learn's per-node ``missing_go_to_left`` (false at leaves): where a tree fitted on
    data with missing values sends them."""
    return (np.asarray(sk_tree.missing_go_to_left, dtype=bool)) & (feature >= 0)


def from_sklearn_regressor(
    sk_tree: Any, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None,
    with_missing: bool = False,
) -> TreeArrays:
    """Convert a fitted scikit-learn regression ``Tree`` (``DecisionTreeRegressor.tree_``) to a
    regression `TreeArrays` (``task="regression"``).

    The structure maps as in `from_sklearn_tree` (left is ``x <= threshold``, pre-order ids,
    leaf markers -2/-1). scikit-learn keeps only node means, so the value rows
    ``[Σw, Σw·y, Σw·y²]`` are counted again from the training data ``(X, y, sample_weight)``
    at the leaves and summed upwards (exact sums, children before parents). ``with_missing`` as
    in `from_sklearn_tree`."""
    feature = np.where(sk_tree.feature >= 0, sk_tree.feature, -1).astype(np.int64)
    threshold = np.where(feature >= 0, sk_tree.threshold, LEAF_THRESHOLD)
    n = feature.shape[0]
    tree = TreeArrays(
        feature, threshold, sk_tree.children_left, sk_tree.children_right,
        np.zeros((n, 3)), np.zeros(n, dtype=np.int64), task="regression",
        missing_left=sklearn_missing_left(sk_tree, feature) if with_missing else None,
    )
    yv = np.asarray(y, dtype=np.float64)
    w = np.ones_like(yv) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    leaves = tree.apply(np.asarray(X))
    value = np.zeros((n, 3))
    for j, col in enumerate((w, w * yv, w * yv * yv)):
        np.add.at(value[:, j], leaves, col)
    for i in range(n - 1, -1, -1):  # children have larger ids than parents
        if feature[i] >= 0:
            value[i] = value[tree.left[i]] + value[tree.right[i]]
    tree.value = value
    return tree


# ----------------------------------------------------------------------------- nested solvers
# Each describer maps one node of a solver's own tree to
#   ("leaf", class_index)  or  ("split", feature, child_when_0, child_when_1),
# so that `from_nested` can lay the tree out in our pre-order arrays with threshold 0.5.


def describe_dl85(node: dict[str, Any]):
    """pydl8.5 (``DL85Classifier.tree_``): ``{"feat", "left", "right"}`` / ``{"value", "error"}``.
    pydl8.5 sends rows with the feature **equal to 1 to "left"** (its predictor tests
    ``instance[feat] == 1``), the opposite of our convention."""
    if "feat" in node:
        return ("split", int(node["feat"]), node["right"], node["left"])
    return ("leaf", int(node["value"]))


def describe_streed(node: Any):
    """pystreed (``get_tree()``): ``left_child`` holds the rows with the feature equal to 0, as
    ours; ``label`` is the class as passed to ``fit`` (we pass class indices)."""
    if node.is_leaf_node():
        return ("leaf", int(node.label))
    return ("split", int(node.feature), node.left_child, node.right_child)


def describe_gosdt(node: Any):
    """gosdt 1.0.4 (``trees_[0].tree``): "Left is TRUE, Right is FALSE" (its ``_tree.py``), so
    ``left_child`` holds the rows with the feature equal to 1; leaves carry ``prediction``, an
    index into the classifier's ``classes_`` (we pass class indices, so the same index)."""
    if hasattr(node, "prediction"):
        return ("leaf", int(node.prediction))
    return ("split", int(node.feature), node.right_child, node.left_child)


def _lay_out(root: Any, describe, with_threshold: bool):
    """Walk a nested tree in pre-order (a node gets its id before its children) and return
    ``(feature, threshold, left, right, label)`` lists; ``threshold`` is ``None`` for 0/1
    describers (``("split", feature, child_when_0, child_when_1)``), else each split's
    ``x <= t`` threshold (``("split", feature, t, left_child, right_child)``) and ``-2.0`` at
    leaves."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    label: list[int] = []
    stack: list[tuple[Any, int, bool]] = [(root, -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        i = len(feature)
        if parent >= 0:
            (right if is_right else left)[parent] = i
        d = describe(node)
        left.append(-1)
        right.append(-1)
        if d[0] == "leaf":
            feature.append(-1)
            threshold.append(-2.0)
            label.append(d[1])
            continue
        feature.append(d[1])
        label.append(0)
        if with_threshold:
            threshold.append(d[2])
        stack.append((d[-1], i, True))
        stack.append((d[-2], i, False))
    return feature, (threshold if with_threshold else None), left, right, label


def from_nested(
    root: Any,
    describe,
    n_classes: int,
    X: np.ndarray,
    y_index: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> TreeArrays:
    """Lay out a solver's nested tree (see the describers above) as `TreeArrays` on 0/1
    features, with ``value`` counted from the training data and every node labelled by the one
    tie rule (`treebench.tree.labels`): a solver's leaf label is the majority of its leaf, so
    only a tie can change it, and ties then go the same way for every learner."""
    return _nested_tree(root, describe, n_classes, X, y_index, sample_weight, False)


# ----------------------------------------------------------------------------- continuous peers
# (the DPDT paper's "Opt" reference and a lookahead cousin)


def describe_contree(node: Any):
    """pycontree 1.0.8 (``ConTree.tree_``): ``get_left()`` holds the rows with
    ``x[get_split_feature()] <= get_split_threshold()`` (its own ``predict_proba`` splits that
    way), as ours; leaves carry ``get_label()``, the class as passed to ``fit`` (we pass class
    indices). A lone leaf has depth 0, as ours."""
    if node.is_leaf_node():
        return ("leaf", int(node.get_label()))
    return ("split", int(node.get_split_feature()), float(node.get_split_threshold()),
            node.get_left(), node.get_right())


def licketysplit_nested(paths, actions):
    """licketysplit 0.2.1 describes its tree as leaf paths: a path is a list of signed 1-based
    features, ``+(f+1)`` for "feature f is non-zero" and ``-(f+1)`` for "feature f is 0", with
    the leaf's class in ``actions``. Rebuild a nested tree of dicts ``{"f", "zero", "one"}`` /
    ``{"label"}``."""
    root: dict[str, Any] = {}
    for path, act in zip(paths, actions):
        cur = root
        for signed in path:
            f = abs(int(signed)) - 1
            if "f" not in cur:
                cur.update(f=f, zero={}, one={})
            elif cur["f"] != f:
                raise ValueError("licketysplit paths disagree on a node's feature")
            cur = cur["one"] if signed > 0 else cur["zero"]
        cur["label"] = int(act)
    return root


def describe_licketysplit(node: dict[str, Any]):
    """A node of `licketysplit_nested`: "zero" is our left (``x <= 0.5``)."""
    if "f" not in node:
        return ("leaf", int(node.get("label", 0)))
    return ("split", int(node["f"]), node["zero"], node["one"])


def from_threshold_nested(
    root: Any,
    describe,
    n_classes: int,
    X: np.ndarray,
    y_index: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> TreeArrays:
    """Like `from_nested` for solvers with real thresholds: ``describe(node)`` returns
    ``("leaf", class_index)`` or ``("split", feature, threshold, left_child, right_child)`` with
    the left child holding ``x[feature] <= threshold``."""
    return _nested_tree(root, describe, n_classes, X, y_index, sample_weight, True)


def _nested_tree(root, describe, n_classes, X, y_index, sample_weight, with_threshold):
    """`from_nested` (0/1 features) and `from_threshold_nested` (real thresholds): the counts
    recounted from the training rows and every node labelled by the one tie rule, so a leaf
    whose classes tie predicts what every other learner's would (the solver's own label, e.g.
    pycontree's lowest class index, is not kept)."""
    feature, threshold, left, right, label = _lay_out(root, describe, with_threshold)
    f = np.asarray(feature)
    thr = np.asarray(threshold) if with_threshold else binary_thresholds(f)
    tree = TreeArrays(f, thr, left, right, np.zeros((len(f), n_classes)), label)
    recount(tree, X, y_index, sample_weight)
    return tree


def describe_pytrees(node: tuple[Any, np.ndarray, int]):
    """pytrees-rs 2.0.0 (``pytrees.tree.Tree``, scikit-learn's layout): a node is ``(tree,
    classes, i)``, ``classes`` the sorted labels the package was fitted on (its leaves hold an
    index into them). A row goes left when ``x[feature] <= threshold`` (0.5 on 0/1 features:
    0 goes left), as ours; a lone leaf has depth 0, as ours."""
    tree, classes, i = node
    left = int(tree.children_left[i])
    if left < 0:
        return ("leaf", int(classes[int(tree.value[i])]))
    right = int(tree.children_right[i])
    f = int(tree.feature[i])
    if tree.binary_features:
        return ("split", f, (tree, classes, left), (tree, classes, right))
    return ("split", f, float(tree.threshold[i]), (tree, classes, left), (tree, classes, right))
