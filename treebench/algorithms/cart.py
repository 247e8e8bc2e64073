"""`cart`: scikit-learn's CART (`DecisionTreeClassifier`) converted to `TreeArrays`.

scikit-learn already sends ``x <= threshold`` left and numbers nodes in pre-order, so the
conversion only maps its leaf markers (-2 features, -1 children). The per-node class counts are
then counted again from the training rows (scikit-learn ≥ 1.4 stores fractions, and fractions
times totals give ``55.00000000000001``), and every leaf is labelled by treebench's tie rule
(majority, ties to the more frequent training class, then the lower index) instead of
scikit-learn's lowest-index rule (`docs/conventions.md`).

Missing values (NaN) in the features are routed natively, as scikit-learn's trees do since 1.3:
at each split, the side that lowers impurity most; the tree keeps that choice per node
(``TreeArrays.missing_left``), so predictions, recounts and printed rules follow it
(docs/missing-values.md). Both learners declare the input kind ``missing``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.algorithms.base import TreeClassifierBase, TreeRegressorBase
from treebench.registry import ALGORITHMS
from treebench.tree.adapters import from_sklearn_regressor, from_sklearn_tree
from treebench.tree.labels import recount
from treebench.tree.arrays import TreeArrays


def _has_nan(X) -> bool:
    """Whether the training matrix has missing values (then scikit-learn's routing of them is
    kept in the tree)."""
    return X.dtype.kind == "f" and bool(np.isnan(X).any())


def warmup() -> None:
    """CART's warm-up: scikit-learn's tree module is imported with this module; nothing else
    to load or compile."""


@ALGORITHMS.register(
    "cart", tags=("greedy", "baseline"),
    inputs=("binary", "numeric", "weights", "multiclass", "missing"), warmup=warmup,
)
class CARTClassifier(TreeClassifierBase):
    """CART (Breiman et al. 1984) through scikit-learn, on raw or binary features."""

    compact_input = True  # scikit-learn converts to float32 itself; no float64 copy first
    float32_input = "always"  # scikit-learn validates X with dtype=np.float32 in fit and predict

    _parameter_constraints = {
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, criterion="gini", max_depth=None, min_samples_leaf=1, ccp_alpha=0.0, random_state=None
    ):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        n_classes = len(self.classes_)
        if self.max_depth == 0:  # scikit-learn refuses max_depth=0; a lone leaf is our depth 0
            counts = np.bincount(y_index, weights=sample_weight, minlength=n_classes)
            return TreeArrays.leaf(counts), {"operations": 0}
        est = DecisionTreeClassifier(
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            ccp_alpha=self.ccp_alpha,
            random_state=self.random_state,
        )
        est.fit(X, y_index, sample_weight=sample_weight)
        tree = from_sklearn_tree(est.tree_, n_classes=n_classes, classes=est.classes_, with_missing=_has_nan(X))
        recount(tree, X, y_index, sample_weight)  # exact counts, the one tie rule
        return tree, {"operations": int(est.tree_.node_count)}


@ALGORITHMS.register(
    "cart-regressor", tags=("greedy", "baseline"),
    inputs=("binary", "numeric", "weights", "regression", "missing"), warmup=warmup,
)
class CARTRegressor(TreeRegressorBase):
    """CART regression trees (Breiman et al. 1984, squared-error criterion) through
    scikit-learn's `DecisionTreeRegressor`, converted to a regression `TreeArrays` whose value
    rows ``[Σw, Σw·y, Σw·y²]`` are recounted from the training data
    (`treebench.tree.adapters.from_sklearn_regressor`). The baseline of the DPDT paper's
    regression comparison (`dpdt-regressor`)."""

    compact_input = True
    float32_input = "always"  # as CARTClassifier

    _parameter_constraints = {
        "criterion": [StrOptions({"squared_error"})],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, criterion="squared_error", max_depth=None, min_samples_leaf=1, ccp_alpha=0.0, random_state=None
    ):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state

    def _fit_tree(self, X, y, ctx):
        sample_weight = ctx.sample_weight
        if self.max_depth == 0:  # scikit-learn refuses max_depth=0; a lone leaf is our depth 0
            return TreeArrays.regression_leaf(y, sample_weight), {"operations": 0}
        est = DecisionTreeRegressor(
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            ccp_alpha=self.ccp_alpha,
            random_state=self.random_state,
        )
        est.fit(X, y, sample_weight=sample_weight)
        tree = from_sklearn_regressor(est.tree_, X, y, sample_weight, with_missing=_has_nan(X))
        return tree, {"operations": int(est.tree_.node_count)}
