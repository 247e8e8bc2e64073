"""Black-box reference lines: scikit-learn's gradient boosting and random forest.

They are registered as they are (scikit-learn estimators); the runner reports their accuracy and
time and leaves the tree metrics empty, because they have no single tree.
"""

from __future__ import annotations

from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from treebench.registry import ALGORITHMS

ALGORITHMS.register(
    "gbdt",
    tags=("blackbox", "baseline"),
    inputs=("binary", "numeric", "weights", "multiclass"),
    solves="ensemble",
    description="Gradient-boosted trees (scikit-learn GradientBoostingClassifier), a black-box reference.",
)(GradientBoostingClassifier)

ALGORITHMS.register(
    "random-forest",
    tags=("blackbox", "baseline"),
    # scikit-learn's forests route missing values natively (docs/missing-values.md)
    inputs=("binary", "numeric", "weights", "multiclass", "missing"),
    solves="ensemble",
    description="Random forest (scikit-learn RandomForestClassifier), a black-box reference.",
)(RandomForestClassifier)
