"""A new learner: the best single split on 0/1 features (a decision stump).

The learner recipe of docs/extending.md. A plug-in package names this module in its
``treebench.algorithms`` entry point; tests/docs/test_extending.py installs it that way and runs
an experiment with it (and fits it through the registry).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from treebench.algorithms.base import TreeClassifierBase
from treebench.columns import Column
from treebench.registry import ALGORITHMS
from treebench.tree.arrays import TreeBuilder
from treebench.tree.labels import majority_label


class StumpClassifier(TreeClassifierBase):
    """The single 0/1 test with the fewest (weighted) training errors; ties to the first column.

    Parameters
    ----------
    criterion : {"error"}
        What the split minimises (only training error here).
    """

    _parameter_constraints = {"criterion": [StrOptions({"error"})]}

    def __init__(self, criterion: str = "error"):
        self.criterion = criterion

    def _fit_tree(self, X, y_index, ctx):
        w = ctx.sample_weight
        n_classes = len(self.classes_)
        root = np.bincount(y_index, weights=w, minlength=n_classes)
        best, best_err, best_counts = -1, root.sum() - root.max(), None
        for j in range(X.shape[1]):
            right = X[:, j] > 0.5                        # left is x <= 0.5: "the feature is 0"
            r = np.bincount(y_index[right], weights=w[right], minlength=n_classes)
            l = root - r
            err = (l.sum() - l.max()) + (r.sum() - r.max())
            if err < best_err - 1e-12:
                best, best_err, best_counts = j, err, (l, r)
        b = TreeBuilder(n_classes)
        if best < 0:                                     # no split helps: one leaf
            b.add_leaf(root, majority_label(root))
            return b.build(), {"objective": float(best_err), "operations": X.shape[1],
                               "stump_feature": -1}
        node = b.add_split(best, 0.5, root, majority_label(root))
        l, r = best_counts
        b.set_children(node, b.add_leaf(l, majority_label(l, root)),
                       b.add_leaf(r, majority_label(r, root)))
        return b.build(), {"objective": float(best_err), "operations": X.shape[1],
                           "stump_feature": best}


def warmup() -> None:
    """Run once per worker before any timed fit, so that no fit time counts loading or
    compiling. A learner with numba kernels compiles them here on a tiny problem; the stump
    has none, so this fits a tiny one."""
    StumpClassifier().fit(np.array([[0.0], [1.0]]), np.array([0, 1]))


#: the whole declaration of the learner: every part of treebench reads it from here
ALGORITHMS.register(
    "stump",
    inputs=("binary", "weights", "multiclass"),  # 0/1 features, sample weights, > 2 classes
    tags=("greedy",),
    columns=(Column("stump_feature", "Int64", "the column the stump tests (-1: none)",
                    "the stump learner (`solve_info_`)", "solver"),),
    solves="greedy",                 # the problem it solves (docs/objectives.md)
    warmup=warmup,                   # before any timed fit, once per worker
    precompile={"other": warmup},    # what `make precompile` runs to fill numba's cache
    requires=(),                     # optional packages it needs: none
)(StumpClassifier)
