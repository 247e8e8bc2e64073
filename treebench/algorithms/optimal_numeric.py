"""`optimal-numeric`: optimal depth-limited classification trees on raw numeric features.

The tree of depth <= ``max_depth`` that minimises, over every threshold of every feature (the
midpoints between consecutive distinct values among a node's rows), either

* ``objective="errors"``: the weighted training misclassifications (ConTree's and Quant-BnB's
  problem; ``objective_kind`` "errors"), or
* ``objective="error_rate+lambda*leaves"``: the misclassified share of the training weight +
  ``lam`` per leaf (GOSDT's objective; ``objective_kind`` of the same name), or
* ``lexicographic=True`` (with ``objective="errors"``): the fewest weighted training errors,
  then the fewest leaves (ConTree's and STreeD's problem with a cost per branching node below
  one error for the whole tree; ``objective_kind`` "errors", the errors being the first key).

The solver (`treebench.search.numeric`) is a dynamic program with branch-and-bound in the
manner of ConTree (Brița, van der Linden, Demirović, AAAI 2025), with a documented tie rule
between trees of equal objective (``docs/optimal-numeric.md``): a leaf unless a split is
strictly better, then the lowest feature index, then the lowest threshold, at every node.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.objectives import Solves
from treebench.algorithms.traces import TRACE_KEY, fit_trace
from treebench.registry import ALGORITHMS
from treebench.search.exactness import warn_unproven
from treebench.search.numeric import MAX_DEPTH, solve_numeric
from treebench.search.numeric import warmup as search_warmup
from treebench.search.numeric import warmup_both

OBJECTIVES = ("errors", "error_rate+lambda*leaves")
#: which of the numeric searches' kernels this process has loaded (`warmup`)
_WARM = {"errors": False, "alpha": False}


class OptimalNumericClassifier(TreeClassifierBase):
    """Optimal depth-limited tree on raw numeric features (weighted errors, or error rate +
    lam * leaves), every midpoint threshold, ConTree-style search.

    Parameters
    ----------
    max_depth : int, 0 to 16
        Tests on any path (a lone leaf has depth 0). At most
        `treebench.search.numeric.MAX_DEPTH` (16): the search keeps complete-tree buffers
        whose size doubles with each level.
    objective : {"errors", "error_rate+lambda*leaves"}
        What the tree minimises on the training data.
    lam : float >= 0
        Cost of a leaf for ``objective="error_rate+lambda*leaves"`` (ignored for "errors").
    lexicographic : bool
        With ``objective="errors"``: among the trees with the fewest errors, one with the
        fewest leaves (hence nodes). An error then counts as ``2^(k+1)`` leaves, ``2^k`` the
        smallest power of two at least the most leaves a tree of the depth can have, so every
        cost stays a whole number. Needs sample weights that one power of two turns into whole
        numbers (whole numbers, halves, ...; or one weight shared by every row); others are
        refused.
    time_limit : float > 0 or None
        Seconds; on timeout the best tree found is returned and ``solve_info_["timed_out"]``
        is True (``optimal`` False). From depth 4 on, with integer costs, a primal heuristic
        (widened Gini searches, `treebench.search.numeric_anytime`) gives the search its first
        incumbents within a small share of the limit; a fit that finishes returns the same
        tree as without a limit.

    ``solve_info_["optimal"]`` is True only when the search's comparisons were exact: sample
    weights that one power of two turns into whole numbers totalling at most 2^52 (unit,
    whole, halves, ...), and with a price per leaf, one that keeps distinct objectives apart
    by more than the search's tolerance. Otherwise the fit warns
    (`UnprovenOptimalityWarning`) and ``solve_info_["unproven"]`` says why.
    """

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, MAX_DEPTH, closed="both")],
        "objective": [StrOptions(set(OBJECTIVES))],
        "lam": [Interval(Real, 0, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "lexicographic": ["boolean"],
    }

    def __init__(self, max_depth=3, objective="errors", lam=0.01, time_limit=None,
                 lexicographic=False):
        self.max_depth = max_depth
        self.objective = objective
        self.lam = lam
        self.time_limit = time_limit
        self.lexicographic = lexicographic

    def _validate_params(self):
        """The parameter constraints, then the one combination they cannot express
        (``lexicographic`` with the other objective): refused here, so that a config asking for
        it fails before any cell runs."""
        super()._validate_params()
        if self.lexicographic and self.objective != "errors":
            raise ValueError(f"lexicographic=True orders trees by errors, then leaves, so it "
                             f"needs objective='errors', got objective={self.objective!r}.")

    def _fit_tree(self, X, y_index, ctx):
        t_start = time.perf_counter()
        compile_s = warmup()
        lam = float(self.lam) if self.objective != "errors" else 0.0
        deadline = ctx.deadline_for(self.time_limit)
        sol = solve_numeric(X, y_index, ctx.sample_weight, len(self.classes_),
                            int(self.max_depth), lam=lam, lexicographic=bool(self.lexicographic),
                            deadline=deadline, t_start=t_start + compile_s)
        total = float(np.sum(ctx.sample_weight))
        objective = sol.errors if lam == 0.0 and self.objective == "errors" else (
            sol.errors / total + lam * sol.tree.n_leaves)
        info = {
            "objective": objective,
            "objective_kind": self.objective,
            "training_error": sol.errors,
            "training_accuracy": 1.0 - sol.errors / total,
            "optimal": sol.optimal,
            "timed_out": sol.timed_out,
            "operations": sol.splits_scored,
            "nodes_expanded": sol.nodes_expanded,
            "search_seconds": sol.search_seconds,
            "seconds": time.perf_counter() - t_start - compile_s,
            "compile_seconds": compile_s,
        }
        if sol.unproven is not None and not sol.timed_out:
            info["unproven"] = sol.unproven
            warn_unproven("optimal-numeric", sol.unproven)
        rows = sol.trace.copy()  # in the unit of sol.objective: errors (+ lam * total / leaf)
        if not (lam == 0.0 and self.objective == "errors"):
            rows[:, 1:] /= total
        info[TRACE_KEY] = fit_trace(rows, info)
        return sol.tree, info


def warmup(alpha: bool = False) -> float:
    """Compile (or load from numba's cache) the solver's kernels once per process, and with
    ``alpha`` those of DPDT's exact-float search too (`search.numeric.warmup`); the seconds
    spent when this call did the work, else 0."""
    secs = 0.0
    for kind in ("errors", "alpha") if alpha else ("errors",):
        if not _WARM[kind]:
            secs += search_warmup(alpha=kind == "alpha")
            _WARM[kind] = True
    return secs


def problem(p) -> str:
    """The problem the numeric search solves with the parameters ``p``."""
    if p.get("lexicographic"):  # (with the other objective the fit is refused)
        return "min-errors-then-nodes" if p.get("objective", "errors") == "errors" else "unstated"
    return {"errors": "min-errors", "error_rate+lambda*leaves": "errors+lambda*leaves"}.get(
        p.get("objective", "errors"), "unstated")


ALGORITHMS.register(
    "optimal-numeric", tags=("optimal",), inputs=("binary", "numeric", "weights", "multiclass"),
    solves=Solves(problem, {
        "min-errors": {"objective": "errors", "lexicographic": False},
        "min-errors-then-nodes": {"objective": "errors", "lexicographic": True},
        "errors+lambda*leaves": {"objective": "error_rate+lambda*leaves",
                                 "lexicographic": False},
    }, {"errors+lambda*leaves": "lam"}),
    warmup=warmup, precompile={"other": warmup_both},
)(OptimalNumericClassifier)
