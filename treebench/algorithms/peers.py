"""Optimal-tree solvers of other projects as baselines (optional extra ``peers``).

* ``dl85``: DL8.5 (Aglin, Nijssen & Schaus 2020) through ``pydl8.5``; optimal accuracy at a
  depth limit. The Top-k paper's k = d setting is ``depth_two_special_algo=False,
  similar_lb=False, similar_for_branching=False, desc=True, repeat_sort=True`` with the hash-cover
  cache; the defaults add a specialised depth-2 solver.
* ``streed``: MurTree/STreeD (Demirović et al. 2022, van der Linden et al. 2023) through
  ``pystreed``, with ``cost_complexity=0`` (pure accuracy at a depth limit) by default.
* ``gosdt``: GOSDT (Lin et al. 2020; McTavish et al. 2022) through ``gosdt``: regularised
  objective, error + λ · leaves, optional depth budget.

Their trees are translated once in `treebench.tree.adapters`; predictions use our own tree, never
the solver's ``predict`` (gosdt 1.0.4's ``predict`` breaks with scikit-learn ≥ 1.8).
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from treebench.algorithms.base import TreeClassifierBase
from treebench.registry import ALGORITHMS
from treebench.tree import adapters


def _replicate(X: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray, solver: str):
    """Integer sample weights as repeated rows (exact for count-based objectives); the solvers
    take no weights, so other weights are refused with a clear error. (Hence their registry
    entries do not declare the ``weights`` input kind: only whole-number weights work.)"""
    if np.all(sample_weight == 1.0):
        return X, y_index
    w = np.rint(sample_weight)
    if not np.allclose(w, sample_weight):
        raise ValueError(f"{solver} takes only whole-number sample weights (used as repeated rows).")
    reps = w.astype(np.int64)
    return np.repeat(X, reps, axis=0), np.repeat(y_index, reps)


@ALGORITHMS.register(
    "dl85", requires=("pydl85",), tags=("optimal", "peer"), inputs=("binary", "multiclass")
)
class DL85PeerClassifier(TreeClassifierBase):
    """DL8.5 optimal depth-limited tree (pydl8.5), on 0/1 features."""

    compact_input = True  # 0/1 uint8 matrices are passed on as they are
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_sup": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="left"), None],
        "paper_search": ["boolean"],
    }

    def __init__(self, max_depth=3, min_sup=1, time_limit=None, paper_search=False):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.paper_search = paper_search

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        from pydl85 import Cache_Type, DL85Classifier

        kw = {}
        if self.paper_search:
            kw = dict(depth_two_special_algo=False, similar_lb=False, similar_for_branching=False,
                      desc=True, repeat_sort=True, cache_type=Cache_Type.Cache_HashCover)
        Xr, yr = _replicate(X, y_index, sample_weight, "dl85")
        est = DL85Classifier(max_depth=self.max_depth, min_sup=self.min_sup,
                             time_limit=int(np.ceil(self.time_limit or 0)), **kw)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(Xr.astype(np.int32), yr)
        secs = time.perf_counter() - t0
        if est.tree_ is None:
            raise RuntimeError("dl85 found no tree (time limit too small?)")
        tree = adapters.from_nested(est.tree_, adapters.describe_dl85, len(self.classes_), X, y_index, sample_weight)
        timed_out = bool(getattr(est, "timeout_", False))
        return tree, {"optimal": not timed_out, "timed_out": timed_out,
                      "objective": float(tree.training_error(X, y_index, sample_weight)), "solver_seconds": secs}


@ALGORITHMS.register(
    "streed", requires=("pystreed",), tags=("optimal", "peer"), inputs=("binary", "multiclass")
)
class STreeDPeerClassifier(TreeClassifierBase):
    """STreeD/MurTree optimal depth-limited tree (pystreed), on 0/1 features."""

    compact_input = True  # 0/1 uint8 matrices are passed on as they are
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "cost_complexity": [Interval(Real, 0, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, max_depth=3, cost_complexity=0.0, min_samples_leaf=1, time_limit=None):
        self.max_depth = max_depth
        self.cost_complexity = cost_complexity
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        from pystreed import STreeDClassifier

        Xr, yr = _replicate(X, y_index, sample_weight, "streed")
        est = STreeDClassifier(max_depth=self.max_depth, cost_complexity=self.cost_complexity,
                               min_leaf_node_size=self.min_samples_leaf,
                               time_limit=float(self.time_limit or 1e9))
        est.fit(Xr.astype(np.int32), yr)
        tree = adapters.from_nested(est.get_tree(), adapters.describe_streed, len(self.classes_), X, y_index, sample_weight)
        optimal = bool(est.fit_result.is_optimal()) if hasattr(est.fit_result, "is_optimal") else None
        return tree, {"optimal": optimal, "timed_out": optimal is False,
                      "objective": float(tree.training_error(X, y_index, sample_weight))}


@ALGORITHMS.register(
    "gosdt", requires=("gosdt",), tags=("optimal", "peer", "regularized"),
    inputs=("binary", "multiclass"),
)
class GOSDTPeerClassifier(TreeClassifierBase):
    """GOSDT regularised optimal tree (gosdt): minimises error/n + regularization · leaves."""

    compact_input = True  # 0/1 uint8 matrices are passed on as they are
    _parameter_constraints = {
        "regularization": [Interval(Real, 0, 1, closed="right")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, regularization=0.01, max_depth=None, time_limit=None):
        self.regularization = regularization
        self.max_depth = max_depth
        self.time_limit = time_limit

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        import pandas as pd
        from gosdt import GOSDTClassifier

        Xr, yr = _replicate(X, y_index, sample_weight, "gosdt")
        # gosdt 1.0.4 counts a lone leaf as depth 0, as we do (checked by a test)
        est = GOSDTClassifier(regularization=self.regularization, allow_small_reg=True,
                              depth_budget=self.max_depth,
                              time_limit=None if self.time_limit is None else int(np.ceil(self.time_limit)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(pd.DataFrame(Xr.astype(np.int8)), yr)
        tree = adapters.from_nested(est.trees_[0].tree, adapters.describe_gosdt, len(self.classes_), X, y_index, sample_weight)
        err = tree.training_error(X, y_index, sample_weight)
        objective = err / sample_weight.sum() + self.regularization * tree.n_leaves
        return tree, {"objective": float(objective), "optimal": None}
