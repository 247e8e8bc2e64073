"""Peer solvers on continuous features (optional extra ``peers``), for the DPDT comparisons
(Kohler, Akrour & Preux, KDD 2025, Table 1):

* ``contree``: ConTree (Brița, van der Linden, Demirović et al.) through ``pycontree``: optimal
  depth-D classification trees directly on numeric features (the "Opt" column of Table 1),
  minimising misclassifications (+ ``complexity_cost`` per branching node);
* ``licketysplit``: LicketySPLIT through ``licketysplit``: near-optimal lookahead trees
  minimising error + ``lambda_leaf`` · leaves, on 0/1 features only.

Their trees are translated once in `treebench.tree.adapters` (conventions checked by tests);
predictions use our own tree.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.objectives import Solves, by_cost
from treebench.algorithms.peers import lexicographic_cost, replicate
from treebench.registry import ALGORITHMS
from treebench.tree import adapters
from treebench.tree.arrays import TreeArrays


@ALGORITHMS.register("contree", requires=("pycontree",), tags=("optimal", "peer"),
                     inputs=("binary", "numeric", "multiclass"),
                     solves=Solves(by_cost("complexity_cost"), {
                         "min-errors": {"complexity_cost": 0.0, "lexicographic": False},
                         "min-errors-then-nodes": {"complexity_cost": 0.0,
                                                   "lexicographic": True},
                         "errors+lambda*leaves": {"lexicographic": False},
                     }, {"errors+lambda*leaves": "complexity_cost"}))
class ConTreePeerClassifier(TreeClassifierBase):
    """ConTree optimal depth-limited tree on numeric features (pycontree)."""

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, 20, closed="both")],
        "complexity_cost": [Interval(Real, 0, 1, closed="both")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "lexicographic": ["boolean"],
    }

    def __init__(self, max_depth=3, complexity_cost=0.0, time_limit=None, lexicographic=False):
        self.max_depth = max_depth
        self.complexity_cost = complexity_cost
        self.lexicographic = lexicographic
        self.time_limit = time_limit

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        from pycontree import ConTree

        merged = float32_merges(X)
        Xr, yr = replicate(X, y_index, sample_weight, "contree")
        n_classes = len(self.classes_)
        if len(np.unique(yr)) < 2 or Xr.shape[0] < 2:
            counts = np.bincount(y_index, weights=sample_weight, minlength=n_classes)
            return TreeArrays.leaf(counts), {"optimal": True, "timed_out": False,
                                             "objective": float(counts.sum() - counts.max()),
                                             "objective_kind": "errors"}
        limit = ctx.seconds_left()
        limit = self.time_limit if limit is None else min(limit, self.time_limit or limit)
        cost = self.complexity_cost
        if self.lexicographic:  # fewest errors, then fewest branching nodes
            cost = lexicographic_cost(len(yr), self.max_depth)
        est = ConTree(max_depth=self.max_depth, complexity_cost=cost,
                      time_limit=float(limit if limit is not None else 1e9))
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(Xr, yr.astype(np.intc))
        secs = time.perf_counter() - t0
        timed_out = any("time limit" in str(w.message) for w in caught)
        tree = adapters.from_threshold_nested(est.tree_, _describe_float32(X), n_classes,
                                              X, y_index, sample_weight)
        err = float(tree.training_error(X, y_index, sample_weight))
        if merged:
            warnings.warn(f"contree reads features as 32-bit floats and takes values less than "
                          f"1e-7 apart as one, which merges distinct values of {merged} "
                          f"feature(s): its tree is optimal for the merged values only, so the "
                          f"fit is not marked optimal.", stacklevel=3)
        return tree, {"optimal": not timed_out and not merged, "timed_out": timed_out,
                      "objective": err, "objective_kind": "errors", "solver_seconds": secs,
                      "float32_merged_features": merged}


#: pycontree gives two neighbouring values of a feature (sorted, as 32-bit floats) one index,
#: so one side of every split, when they are less than its EPSILON apart: ``1e-7`` written as a
#: 32-bit float, compared in double precision
CONTREE_EPSILON = float(np.float32(1e-7))


def float32_merges(X: np.ndarray) -> int:
    """How many features of ``X`` have distinct values that pycontree takes as one: it solves
    on ``float32`` copies of the features, and two neighbouring rounded values less than
    `CONTREE_EPSILON` apart share one index, so its optimum is over the merged values. A
    ValueError for a value beyond the ``float32`` range (it becomes inf there, and the
    solver's thresholds NaN)."""
    with np.errstate(over="ignore"):
        X32 = X.astype(np.float32)
    bad = np.flatnonzero(np.isinf(X32).any(axis=0))
    if bad.size:
        raise ValueError(
            f"contree reads features as 32-bit floats, and feature {int(bad[0])} has values "
            f"beyond their range (±{float(np.finfo(np.float32).max):.3g}); rescale it.")
    merged = 0
    for j in range(X.shape[1]):
        u32 = np.unique(X32[:, j]).astype(np.float64)
        if len(np.unique(X[:, j])) != len(u32) or bool((np.diff(u32) < CONTREE_EPSILON).any()):
            merged += 1
    return merged


def _describe_float32(X: np.ndarray):
    """`adapters.describe_contree` with each threshold moved, where needed, so that the
    training rows go to the side pycontree solved them on: it compares the ``float32``
    rounding of a value with the threshold (and its own prediction the value itself), so a
    value just above a threshold can round onto it. Such a threshold becomes the midpoint
    between the largest training value solved left and the smallest solved right."""
    def describe(node):
        out = adapters.describe_contree(node)
        if out[0] == "leaf":
            return out
        _, f, t, left, right = out
        return ("split", f, _solved_side_threshold(X[:, f], t), left, right)
    return describe


def _solved_side_threshold(col: np.ndarray, t: float) -> float:
    """``t``, or a threshold that puts the rows of ``col`` on the sides ``float32(x) <= t``
    puts them (see `_describe_float32`)."""
    solved_left = col.astype(np.float32) <= np.float32(t)
    if np.array_equal(col <= t, solved_left) or solved_left.all() or not solved_left.any():
        return t
    lo, hi = float(col[solved_left].max()), float(col[~solved_left].min())
    mid = lo / 2.0 + hi / 2.0
    return lo if mid >= hi else mid


@ALGORITHMS.register("licketysplit", requires=("licketysplit",), tags=("peer", "lookahead"),
                     inputs=("binary", "weights", "multiclass"), solves="lookahead")
class LicketySplitPeerClassifier(TreeClassifierBase):
    """LicketySPLIT near-optimal lookahead tree (licketysplit), on 0/1 features."""

    binary_features_only = True
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "lambda_leaf": [Interval(Real, 0, None, closed="left")],
        "lookahead_k": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, max_depth=3, lambda_leaf=0.01, lookahead_k=1):
        self.max_depth = max_depth
        self.lambda_leaf = lambda_leaf
        self.lookahead_k = lookahead_k

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        from licketysplit import LicketySPLITClassifier

        n_classes = len(self.classes_)
        # depth_budget = d allows d tests on a path (checked by a test), as our max_depth
        est = LicketySPLITClassifier(depth_budget=self.max_depth, lambda_leaf=self.lambda_leaf,
                                     lookahead_k=self.lookahead_k)
        t0 = time.perf_counter()
        est.fit(X.astype(np.uint8), y_index.astype(np.int32), sample_weight=sample_weight)
        secs = time.perf_counter() - t0
        paths, actions = est.get_tree_paths()
        root = adapters.licketysplit_nested(paths, actions)
        tree = adapters.from_nested(root, adapters.describe_licketysplit, n_classes, X, y_index,
                                    sample_weight)
        return tree, {"objective": float(est.objective_), "objective_kind": "solver",
                      "optimal": None, "solver_seconds": secs}
