"""The solvers of pytrees-rs (``pip install pytrees-rs``, optional extra ``peers``) as peers.

* ``pytrees-dl85``: DL8.5 (Aglin, Nijssen & Schaus, AAAI 2020) in Rust, on 0/1 features: the
  fewest training errors at a depth limit. ``search`` picks how it explores: ``"plain"`` (one
  complete pass), ``"lds"`` (limited discrepancy search, Kiossou et al., ECML PKDD 2022),
  ``"restarts"`` (restarts every ``restart_seconds`` with a widened discrepancy budget, as
  CA-DL8.5, Kiossou & Schaus, IDA 2026) or ``"topk"`` (each pass tries the k + 1 best features
  of a node, k growing per pass; the Top-k paper's search space, Blanc et al. 2023, made
  anytime). The budgets grow without limit, so every mode ends with the optimum when it has
  the time.
* ``pytrees-contree``: ConTree (Briţa, van der Linden & Demirović, AAAI 2025) in Rust, on
  numeric features: the fewest training errors at a depth limit over every threshold between
  observed values; ``use_lds`` runs its anytime limited discrepancy search (Kiossou, Schaus &
  Nijssen, ECML PKDD 2026).

Both solve ``min-errors`` (`treebench.algorithms.objectives`); the package takes no sample
weights, so whole-number weights become repeated rows (`treebench.algorithms.peers.replicate`).
Its trees are translated in `treebench.tree.adapters` (`describe_pytrees`); predictions use
our own tree.

Each fit keeps an anytime trace, ``trace_``: ``(seconds since the fit started, incumbent
errors, lower bound)`` at each improvement the package reports (its ``fit_anytime``
callback), then the final state. The package reports no bound while it searches, so the bound
is 0 (every tree has at least 0 errors) until it proves a tree optimal; then it is that tree's
errors. A trace is monotone: incumbents never rise, bounds never fall, bound <= incumbent.

Notes
-----
Conventions of pytrees-rs 2.0.0, each checked by a test in
``tests/algorithms/test_peers_pytrees.py``: ``max_depth`` counts tests on a path (depth 0 is
a lone leaf), as ours; a row goes left when ``x[feature] <= threshold`` (0.5 on 0/1
features), as ours; ``status_`` is ``"optimal"`` only for a proven optimum (``"time_limit"``
when it stopped at ``max_time``). Its callback's own status word is per pass and is not read:
the proof is the final ``status_``. A time limit so small that no tree was found leaves the
package's tree empty; the fit then fails with a sentence saying so.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.objectives import Solves, fixed, leaf_size
from treebench.algorithms.peers import replicate
from treebench.registry import ALGORITHMS
from treebench.tree import adapters
from treebench.tree.arrays import TreeArrays

#: the search modes of ``pytrees-dl85``
DL85_SEARCHES = ("plain", "lds", "restarts", "topk")

#: one problem, whatever the parameters: the fewest errors at the depth limit
_MIN_ERRORS = Solves(leaf_size(fixed("min-errors"), "min_sup"), {"min-errors": {}}, {},
                     unrestricted={"min_sup": 1})


def monotone_trace(points: list[tuple[float, float]], seconds: float, errors: float,
                   optimal: bool) -> list[tuple[float, float, float]]:
    """The anytime trace of a fit from the package's reports ``(seconds, errors)``: each point
    that improves the incumbent, with bound 0, then the final ``(seconds, errors, bound)``
    (bound = errors when ``optimal``, else 0). Times are made non-decreasing."""
    trace: list[tuple[float, float, float]] = []
    best, last_t = float("inf"), 0.0
    for t, err in points:
        last_t = max(last_t, float(t))
        if float(err) < best:
            best = float(err)
            trace.append((last_t, best, 0.0))
    final = min(best, float(errors))
    trace.append((max(last_t, float(seconds)), final, final if optimal else 0.0))
    return trace


def _limit(own: float | None, ctx) -> float:
    """The package's ``max_time``: the earlier of the learner's and the cell's time budget."""
    left = ctx.seconds_left()
    limits = [x for x in (own, left) if x is not None]
    return max(float(min(limits)), 1e-3) if limits else 1e9


class _PytreesPeer(TreeClassifierBase):
    """A pytrees-rs estimator: repeated rows for whole-number weights (`replicate`), a fit
    that records the package's improvements, its tree translated by
    `adapters.describe_pytrees`. A subclass builds the package's estimator (`_estimator`),
    says whether to fit through ``fit_anytime`` (`_anytime`) and how its tree reads
    (``_threshold``: real thresholds, else 0/1 features)."""

    _solver_name = ""
    _threshold = False

    def _estimator(self, limit: float):
        raise NotImplementedError

    def _anytime(self) -> bool:
        raise NotImplementedError

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        Xr, yr = replicate(X, y_index, sample_weight, self._solver_name)
        n_classes = len(self.classes_)
        if len(np.unique(yr)) < 2:  # the package needs two classes; one leaf is optimal
            counts = np.bincount(y_index, weights=sample_weight, minlength=n_classes)
            errors = float(counts.sum() - counts.max())
            self.trace_ = [(0.0, errors, errors)]
            return TreeArrays.leaf(counts), {"optimal": True, "timed_out": False,
                                             "objective": errors, "objective_kind": "errors",
                                             "bound": errors, "gap": 0.0}
        est = self._estimator(_limit(self.time_limit, ctx))
        points: list[tuple[float, float]] = []
        t0 = time.perf_counter()
        try:
            if self._anytime():
                est.fit_anytime(Xr, yr, lambda err, secs, status: points.append((secs, err)))
            else:
                est.fit(Xr, yr)
        except IndexError:  # pytrees-rs 2.0.0 reads an empty tree when it found none in time
            est.tree_ = None
        secs = time.perf_counter() - t0
        if getattr(est, "tree_", None) is None or est.tree_.node_count == 0:
            raise RuntimeError(f"{self._solver_name} found no tree within its time limit "
                               f"({est.max_time:g} s); give it more time")
        # the package labels leaves by its encoded classes: indices into np.unique(yr)
        root = (est.tree_, np.unique(yr), 0)
        if self._threshold:
            tree = adapters.from_threshold_nested(root, adapters.describe_pytrees, n_classes,
                                                  X, y_index, sample_weight)
        else:
            tree = adapters.from_nested(root, adapters.describe_pytrees, n_classes, X,
                                        y_index, sample_weight)
        errors = float(tree.training_error(X, y_index, sample_weight))
        optimal = est.status_ == "optimal"
        self.trace_ = monotone_trace(points, secs, errors, optimal)
        return tree, {"optimal": optimal, "timed_out": est.status_ == "time_limit",
                      "status": str(est.status_), "objective": errors,
                      "objective_kind": "errors", "bound": errors if optimal else 0.0,
                      "gap": 0.0 if optimal else errors, "solver_seconds": secs}


@ALGORITHMS.register("pytrees-dl85", requires=("pytrees",), tags=("optimal", "peer", "anytime"),
                     inputs=("binary", "multiclass"), solves=_MIN_ERRORS)
class PytreesDL85PeerClassifier(_PytreesPeer):
    """DL8.5 of pytrees-rs on 0/1 features: fewest training errors at a depth limit, plain or
    anytime (``search``: lds, restarts, topk)."""

    compact_input = True
    binary_features_only = True
    _solver_name = "pytrees-dl85"
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "min_sup": [Interval(Integral, 1, None, closed="left")],
        "search": [StrOptions(set(DL85_SEARCHES))],
        "heuristic": [StrOptions({"none", "gini", "information_gain", "weighted_entropy"}),
                      None],
        "restart_seconds": [Interval(Real, 0, None, closed="neither")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    @staticmethod
    def warmup() -> None:
        """Import pytrees and solve a toy problem (outside the timed fit)."""
        from pytrees import DL85Classifier

        DL85Classifier(max_depth=1).fit(np.array([[0, 1], [1, 0], [1, 1], [0, 0]]),
                                        np.array([0, 1, 1, 0]))

    def __init__(self, max_depth=3, min_sup=1, search="plain", heuristic=None,
                 restart_seconds=1.0, time_limit=None):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.search = search
        self.heuristic = heuristic
        self.restart_seconds = restart_seconds
        self.time_limit = time_limit

    def _anytime(self) -> bool:
        return self.search != "plain"

    def _estimator(self, limit):
        from pytrees import DL85Classifier
        from pytrees.rules import DiscrepancyRule, RestartRule, TopKRule

        rules = {"plain": {}, "lds": {"discrepancy": DiscrepancyRule()},
                 "restarts": {"discrepancy": DiscrepancyRule(),
                              "restart": RestartRule(limit=float(self.restart_seconds))},
                 "topk": {"topk": TopKRule()}}[self.search]
        heuristic = self.heuristic
        if heuristic is None:  # the rules rank features; plain DL8.5 tries them in order
            heuristic = "none" if self.search == "plain" else "information_gain"
        return DL85Classifier(max_depth=self.max_depth, min_sup=self.min_sup, max_time=limit,
                              heuristic=heuristic, **rules)


@ALGORITHMS.register("pytrees-contree", requires=("pytrees",),
                     tags=("optimal", "peer", "anytime"),
                     inputs=("binary", "numeric", "multiclass"), solves=_MIN_ERRORS)
class PytreesConTreePeerClassifier(_PytreesPeer):
    """ConTree of pytrees-rs on numeric features: fewest training errors at a depth limit;
    ``use_lds`` runs its anytime search (through ``fit_anytime``)."""

    _solver_name = "pytrees-contree"
    _threshold = True
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "min_sup": [Interval(Integral, 1, None, closed="left")],
        "use_lds": ["boolean"],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    @staticmethod
    def warmup() -> None:
        """Import pytrees and solve a toy problem (outside the timed fit)."""
        from pytrees import ConTreeClassifier

        ConTreeClassifier(max_depth=1).fit(np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1]))

    def __init__(self, max_depth=3, min_sup=1, use_lds=False, time_limit=None):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.use_lds = use_lds
        self.time_limit = time_limit

    def _anytime(self) -> bool:
        return bool(self.use_lds)

    def _estimator(self, limit):
        from pytrees import ConTreeClassifier

        return ConTreeClassifier(max_depth=self.max_depth, min_sup=self.min_sup,
                                 max_time=limit, use_lds=self.use_lds)
