"""`TreeArrays`: a binary decision tree as a struct of arrays (`docs/conventions.md`).

Conventions, shared by every algorithm in treebench:

* node 0 is the root, and every child has a larger id than its parent;
* ``feature[i] == -1`` and ``left[i] == right[i] == -1`` at leaves;
* a sample goes **left when ``x[feature] <= threshold``**; on a 0/1 column the threshold is 0.5,
  so left means "the feature is 0";
* ``value[i]`` holds the (weighted) class counts of the training rows reaching node ``i``, at
  every node, so ``value[i] == value[left[i]] + value[right[i]]``;
* ``label[i]`` is the class index predicted at node ``i``: the majority of ``value[i]`` with
  the one tie rule of `treebench.tree.labels` (ties to the class more frequent in training,
  then the lower index);
* depth counts tests: a lone leaf has depth 0;
* a missing value (NaN) goes **right** (``NaN <= threshold`` is false), except at the nodes
  where the optional ``missing_left`` is true: learners that route missing values themselves
  (scikit-learn's trees, ``missing_go_to_left``) record their choice there
  (docs/missing-values.md).

Regression trees (``task == "regression"``) keep the same arrays; ``value[i]`` then holds the
additive statistics ``[Σw, Σw·y, Σw·y²]`` of the training rows at node ``i`` (so the sum rule
above still holds), the prediction is the weighted mean ``Σw·y / Σw`` (`predict_value`), the
variance follows from the three sums, and ``label`` is unused (zeros).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from treebench.tree.labels import majority_label

#: the split threshold on a 0/1 column: left is ``x <= 0.5``, i.e. "the feature is 0"
BINARY_THRESHOLD = 0.5
#: the threshold stored at leaves (scikit-learn's value; never compared)
LEAF_THRESHOLD = -2.0


def binary_thresholds(feature: np.ndarray) -> np.ndarray:
    """Thresholds of a tree on 0/1 columns: `BINARY_THRESHOLD` at tests, `LEAF_THRESHOLD` at
    leaves (``feature < 0``). The one place learners on binary features get them from."""
    return np.where(np.asarray(feature) >= 0, BINARY_THRESHOLD, LEAF_THRESHOLD)


@dataclass(eq=False)
class TreeArrays:
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    label: np.ndarray
    task: str = "classification"
    #: per node, whether a missing value goes left, for trees of learners that route missing
    #: values (all false is kept: every missing value goes right, and rules say so); None: a
    #: tree fitted without missing values (a missing value still goes right)
    missing_left: np.ndarray | None = None

    # ------------------------------------------------------------------ construction
    def __post_init__(self) -> None:
        self.feature = np.ascontiguousarray(self.feature, dtype=np.int64)
        self.threshold = np.ascontiguousarray(self.threshold, dtype=np.float64)
        self.left = np.ascontiguousarray(self.left, dtype=np.int64)
        self.right = np.ascontiguousarray(self.right, dtype=np.int64)
        self.value = np.ascontiguousarray(np.atleast_2d(self.value), dtype=np.float64)
        self.label = np.ascontiguousarray(self.label, dtype=np.int64)
        if self.missing_left is not None:
            self.missing_left = np.ascontiguousarray(self.missing_left, dtype=np.bool_)
        if self.task not in ("classification", "regression"):
            raise ValueError(f"task must be 'classification' or 'regression', got {self.task!r}")

    @classmethod
    def leaf(cls, value: np.ndarray, label: int | None = None) -> TreeArrays:
        value = np.asarray(value, dtype=np.float64).reshape(1, -1)
        lab = majority_label(value[0]) if label is None else int(label)
        return cls(
            np.array([-1]), np.array([LEAF_THRESHOLD]), np.array([-1]), np.array([-1]), value,
            np.array([lab]),
        )

    @classmethod
    def regression_leaf(cls, y: np.ndarray, sample_weight: np.ndarray | None = None) -> TreeArrays:
        """A lone regression leaf predicting the weighted mean of ``y``."""
        return cls(
            np.array([-1]), np.array([LEAF_THRESHOLD]), np.array([-1]), np.array([-1]),
            regression_stats(y, sample_weight).reshape(1, 3), np.array([0]), task="regression",
        )

    @property
    def is_regression(self) -> bool:
        return self.task == "regression"

    # ------------------------------------------------------------------ shape
    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.value.shape[1])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.feature < 0

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.is_leaf))

    @property
    def leaf_errors(self) -> float:
        """Weighted training errors of a classification tree, read off its leaves' class
        weights (each leaf's weight minus its largest class weight): exact for whole-number
        weights, where an objective minus its other terms would round."""
        v = self.value[self.is_leaf]
        return float(np.sum(v.sum(axis=1) - v.max(axis=1)))

    def node_depths(self) -> np.ndarray:
        """Depth of every node (root 0). Uses that children have larger ids than parents."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):
            if self.feature[i] >= 0:
                depth[self.left[i]] = depth[i] + 1
                depth[self.right[i]] = depth[i] + 1
        return depth

    @property
    def depth(self) -> int:
        return int(self.node_depths().max()) if self.n_nodes else 0

    # ------------------------------------------------------------------ prediction
    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf id reached by every row of ``X`` (vectorised, one pass per tree level)."""
        X = np.asarray(X)
        n = X.shape[0]
        node = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        while active.size:
            cur = node[active]
            f = self.feature[cur]
            internal = f >= 0
            active, cur, f = active[internal], cur[internal], f[internal]
            if not active.size:
                break
            x = X[active, f]
            go_left = x <= self.threshold[cur]
            if self.missing_left is not None and x.dtype.kind == "f":
                go_left |= np.isnan(x) & self.missing_left[cur]
            node[active] = np.where(go_left, self.left[cur], self.right[cur])
        return node

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Predicted class *index* for every row."""
        return self.label[self.apply(X)]

    def node_mean(self) -> np.ndarray:
        """Regression: the weighted mean target of every node."""
        w = self.value[:, 0]
        return np.divide(self.value[:, 1], w, out=np.zeros_like(w), where=w > 0)

    def node_variance(self) -> np.ndarray:
        """Regression: the weighted variance of the target at every node."""
        w = self.value[:, 0]
        m2 = np.divide(self.value[:, 2], w, out=np.zeros_like(w), where=w > 0)
        return np.maximum(m2 - self.node_mean() ** 2, 0.0)

    def predict_value(self, X: np.ndarray) -> np.ndarray:
        """Regression: the mean training target of the leaf each row reaches."""
        return self.node_mean()[self.apply(X)]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class frequencies of the training rows in the leaf each row reaches."""
        v = self.value[self.apply(X)]
        tot = v.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(tot > 0, v / np.where(tot > 0, tot, 1.0), 1.0 / self.n_classes)
        return p

    def squared_error(self, X: np.ndarray, y: np.ndarray, sample_weight=None) -> float:
        """Regression: weighted sum of squared errors of the predictions on ``(X, y)``."""
        r2 = (self.predict_value(X) - np.asarray(y, dtype=np.float64)) ** 2
        return float(np.sum(r2 if sample_weight is None else np.asarray(sample_weight) * r2))

    def training_error(self, X: np.ndarray, y_index: np.ndarray, sample_weight=None) -> float:
        """Weighted count of misclassified rows (``y_index`` are class indices)."""
        wrong = self.predict_index(X) != y_index
        if sample_weight is None:
            return float(np.count_nonzero(wrong))
        return float(np.sum(np.asarray(sample_weight)[wrong]))

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        return {
            "feature": self.feature.tolist(),
            "threshold": self.threshold.tolist(),
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": self.value.tolist(),
            "label": self.label.tolist(),
            "task": self.task,
        } | ({} if self.missing_left is None else {"missing_left": self.missing_left.tolist()})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TreeArrays:
        value = np.asarray(d["value"], dtype=np.float64)
        if value.ndim == 1:
            value = value.reshape(len(d["feature"]), -1)
        return cls(
            d["feature"], d["threshold"], d["left"], d["right"], value, d["label"],
            task=d.get("task", "classification"), missing_left=d.get("missing_left"),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeArrays):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, k), getattr(other, k))
            for k in ("feature", "threshold", "left", "right", "value", "label")
        ) and self.task == other.task and _same_missing(self.missing_left, other.missing_left)


def _same_missing(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


class TreeBuilder:
    """Append nodes in pre-order; ids grow from parent to child by construction.

    >>> b = TreeBuilder(n_classes=2)
    >>> root = b.add_split(feature=0, threshold=0.5, value=[3, 2])
    >>> b.set_children(root, b.add_leaf([3, 0]), b.add_leaf([0, 2]))
    >>> b.build().n_leaves
    2
    """

    def __init__(self, n_classes: int, task: str = "classification"):
        """``n_classes`` columns of ``value``; a regression tree (``task="regression"``) has
        the three columns ``[Σw, Σw·y, Σw·y²]``."""
        self.task = task
        self.n_classes = 3 if task == "regression" else n_classes
        self._f: list[int] = []
        self._t: list[float] = []
        self._l: list[int] = []
        self._r: list[int] = []
        self._v: list[np.ndarray] = []
        self._lab: list[int] = []

    def _add(self, feature: int, threshold: float, value, label: int | None) -> int:
        v = np.asarray(value, dtype=np.float64).reshape(self.n_classes)
        self._f.append(int(feature))
        self._t.append(float(threshold))
        self._l.append(-1)
        self._r.append(-1)
        self._v.append(v)
        if self.task == "regression":
            label = 0
        if label is None:
            label = majority_label(v)
        self._lab.append(int(label))
        return len(self._f) - 1

    def add_leaf(self, value, label: int | None = None) -> int:
        return self._add(-1, LEAF_THRESHOLD, value, label)

    def add_split(self, feature: int, threshold: float, value, label: int | None = None) -> int:
        return self._add(feature, threshold, value, label)

    def set_children(self, node: int, left: int, right: int) -> None:
        self._l[node] = left
        self._r[node] = right

    def build(self) -> TreeArrays:
        value = np.vstack(self._v) if self._v else np.zeros((0, self.n_classes))
        return TreeArrays(
            np.array(self._f), np.array(self._t), np.array(self._l), np.array(self._r), value,
            np.array(self._lab), task=self.task,
        )


def check_tree(
    tree: TreeArrays,
    *,
    n_features: int | None = None,
    max_depth: int | None = None,
    X: np.ndarray | None = None,
    y_index: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    atol: float = 1e-6,
) -> None:
    """Raise AssertionError when ``tree`` breaks an invariant of the module docstring.

    With ``X`` and ``y_index`` (training data), also checks that ``value`` holds exactly the
    weighted class counts of the rows reaching each node.
    """
    n = tree.n_nodes
    assert n >= 1, "a tree has at least one node"
    for name in ("threshold", "left", "right", "label"):
        assert getattr(tree, name).shape == (n,), f"{name} has the wrong shape"
    assert tree.value.shape[0] == n, "value has the wrong number of rows"
    if tree.is_regression:
        assert tree.value.shape[1] == 3, "regression value holds [Σw, Σw·y, Σw·y²]"
    else:
        assert np.all(tree.value >= -atol), "negative class counts"
        assert np.all((tree.label >= 0) & (tree.label < tree.n_classes)), "label out of range"
    seen = np.zeros(n, dtype=np.int64)
    seen[0] += 1
    for i in range(n):
        f, lft, rgt = tree.feature[i], tree.left[i], tree.right[i]
        if f < 0:
            assert lft == -1 and rgt == -1, f"leaf {i} has children"
            continue
        if n_features is not None:
            assert f < n_features, f"node {i} tests feature {f} >= n_features={n_features}"
        assert i < lft < n and i < rgt < n and lft != rgt, f"bad children at node {i}"
        seen[lft] += 1
        seen[rgt] += 1
        assert np.allclose(tree.value[i], tree.value[lft] + tree.value[rgt], atol=atol), (
            f"value at node {i} is not the sum of its children"
        )
    assert np.all(seen == 1), "every node is reached exactly once from the root"
    if max_depth is not None:
        assert tree.depth <= max_depth, f"depth {tree.depth} exceeds max_depth={max_depth}"
    if X is not None and y_index is not None:
        w = np.ones(len(y_index)) if sample_weight is None else np.asarray(sample_weight, float)
        # counts at leaves must match the data; inner nodes then follow from the sum check
        leaves = tree.apply(X)
        counts = np.zeros_like(tree.value)
        if tree.is_regression:
            yv = np.asarray(y_index, dtype=np.float64)
            for j, col in enumerate((w, w * yv, w * yv * yv)):
                np.add.at(counts[:, j], leaves, col)
        else:
            np.add.at(counts, (leaves, np.asarray(y_index)), w)
        lf = tree.is_leaf
        assert np.allclose(counts[lf], tree.value[lf], atol=atol, rtol=1e-9), (
            "leaf counts differ from data"
        )


def regression_stats(y: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """``[Σw, Σw·y, Σw·y²]`` of a regression node (the ``value`` row of regression trees)."""
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return np.array([w.sum(), (w * y).sum(), (w * y * y).sum()])
