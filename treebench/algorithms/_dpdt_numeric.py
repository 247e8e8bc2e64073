"""DPDT's exhaustive generator on numeric features, solved by the numeric optimal-tree search.

With ``candidates="exhaustive"`` the MDP of DPDT (Kohler, Akrour & Preux, KDD 2025, §4) holds
every tree of depth <= D whose splits are midpoints between consecutive distinct values of a
feature among a state's rows, and backward induction (Algorithm 1) returns the first argmin
over (leaf, candidates in feature order, then increasing threshold) at every state, a
candidate taken only when strictly better. For ``alpha = 0`` that is the problem and the tie
rule of `treebench.search.numeric.solve_numeric` (fewest weighted errors; a leaf unless a
split is strictly better, then the lowest feature, then the lowest threshold; each child by
the same rule), so
the numeric search returns the DP's tree, in milliseconds where the DP enumerates every state.

For ``alpha > 0`` `treebench.search.numeric.solve_numeric_alpha` reproduces the DP's
floating-point values ``(alpha * W + v_left) + v_right`` and its strict comparisons exactly
(see `treebench.search._numeric_alpha_kernels`), so it returns the DP's tree and objective
bit for bit.

It applies when the fit is: classification, ``max_depth`` at most 16 (the numeric search's
`MAX_DEPTH`), the exhaustive generator, a finite ``alpha``, no α path, ``max_features=None``,
``min_samples_leaf = 1``, and whole-number sample weights summing to at most 2**52 (the DP's
costs are then exact in floating point, so "strictly better" means the same in both
searches; with fractional weights, or larger sums, the DP's sums round, and its ties with
them). Thresholds are computed by one midpoint rule in
both searches (``a/2 + b/2``, or ``a`` when that rounds onto ``b``). Any other fit runs the DP.
"""

from __future__ import annotations

import time

import numpy as np

from treebench.algorithms.optimal_numeric import warmup as numeric_warmup
from treebench.algorithms.traces import TRACE_KEY, fit_trace
from treebench.search.numeric import MAX_DEPTH, solve_numeric, solve_numeric_alpha, whole_exact
from treebench.tree.arrays import TreeArrays


def eligible(sample_weight, regression, candidates, alpha, settings) -> str | None:
    """None when the numeric search returns the DP's tree for this fit, else the reason it
    does not (one clause, for the error message of ``search="numeric"``). ``settings`` holds
    ``max_depth``, ``alpha_path``, ``max_features`` and ``min_samples_leaf``."""
    if settings["max_depth"] > MAX_DEPTH:
        return f"it searches depths up to {MAX_DEPTH} (max_depth={settings['max_depth']})"
    if regression:
        return "it solves classification only"
    if candidates != "exhaustive":
        return f"it implements the exhaustive generator only (candidates={candidates!r})"
    if not np.isfinite(alpha):
        return f"it needs a finite alpha (got {alpha!r})"
    if settings["alpha_path"]:
        return "it does not compute the α path (alpha_path=True)"
    if settings["max_features"] is not None:
        return "the exhaustive generator uses every feature (max_features must be None)"
    if settings["min_samples_leaf"] != 1:
        return "it has no minimum leaf size (min_samples_leaf must be 1)"
    if not whole_exact(sample_weight):
        return "it needs whole-number sample weights summing to at most 2**52"
    return None


def path_mass(tree: TreeArrays) -> float:
    """``L = Σ_i w_i · depth(leaf(x_i))`` of the training rows, from the weighted counts the
    tree holds at its leaves."""
    L = 0.0
    stack = [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if tree.is_leaf[node]:
            L += depth * float(tree.value[node].sum())
        else:
            stack.append((int(tree.left[node]), depth + 1))
            stack.append((int(tree.right[node]), depth + 1))
    return L


def fit_numeric(X, y_index, sample_weight, n_classes: int, max_depth: int, deadline,
                alpha: float = 0.0):
    """Solve the fit with the numeric search: ``(tree, solve_info)`` in the DP's terms
    (objective ``E + α·L``: with α = 0 the weighted training error, found by the errors-only
    search; with α > 0 the DP's own float, found by `solve_numeric_alpha`)."""
    t_start = time.perf_counter()
    alpha = float(alpha)
    compile_s = numeric_warmup(alpha=alpha != 0.0)  # (α > 0 runs the exact-float search)
    if alpha == 0.0:
        sol = solve_numeric(X, y_index, sample_weight, n_classes, int(max_depth),
                            deadline=deadline, t_start=t_start + compile_s)
    else:
        sol = solve_numeric_alpha(X, y_index, sample_weight, n_classes, int(max_depth), alpha,
                                  deadline=deadline, t_start=t_start + compile_s)
    W = float(np.sum(sample_weight))
    L = path_mass(sol.tree)
    errors = float(sol.errors)  # the tree's, summed at its leaves (as every DPDT search)
    info = {
        "objective": float(sol.objective),
        "objective_kind": "errors+alpha*path",
        "training_error": errors,
        "expected_path_length": L / W if W > 0 else 0.0,
        "operations": float("nan"),
        "operations_distinct": sol.splits_scored,
        "states": sol.nodes_expanded,
        "candidate_splits": sol.splits_scored,
        "generator_calls": sol.nodes_expanded,
        "cache_hits": 0,
        "cache_entries": 0,
        "cache_full": False,
        "timed_out": sol.timed_out,
        "optimal": sol.optimal,
        "optimal_for_mdp": sol.optimal,
        "search_seconds": sol.search_seconds,
        "seconds": time.perf_counter() - t_start - compile_s,
        "compile_seconds": compile_s,
        "search": "numeric",
        "training_accuracy": 1.0 - errors / W if W > 0 else 1.0,
    }
    info[TRACE_KEY] = fit_trace(sol.trace, info)
    return sol.tree, info
