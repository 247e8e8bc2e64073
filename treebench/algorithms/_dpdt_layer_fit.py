"""DPDT's exhaustive generator on 0/1 features with unit weights, run by the search engine
(`search.engine`, the objective `search.dpdt_layer`): when it applies, the fit, the tree in the
dynamic programme's nested format and its objective recomputed with the programme's floats."""

from __future__ import annotations

import time

import numpy as np

from treebench.search.dpdt_layer import layer_problem
from treebench.search.engine import fit_layer_search
from treebench.search.bitset import warmup_problem
from treebench.search.cache import entries_for_mb
from treebench.search.state import (
    S_CAP_HIT, S_ENTRIES, S_EXPANDED, S_SCORED, S_TIMED_OUT, bitset_data,
)


def eligible(X, sample_weight, regression, candidates, alpha_path, max_features):
    """None when the layer path applies to this fit, else the reason it does not (one clause,
    used in the error message of ``search="layer"``)."""
    if regression:
        return "it solves classification only"
    if candidates != "exhaustive":
        return f"it implements the exhaustive generator only (candidates={candidates!r})"
    if alpha_path:
        return "it does not compute the α path (alpha_path=True)"
    if max_features is not None:
        return "the exhaustive generator uses every feature (max_features must be None)"
    if not np.all(sample_weight == 1.0):
        return "it needs every sample weight to be exactly 1"
    if not np.all((X == 0.0) | (X == 1.0)):
        return "it needs every feature to be 0/1"
    return None


def fit_layer(X, y_index, n_classes, max_depth, alpha, min_samples_leaf, cache_limit_mb,
              deadline, trace=None):
    """Search a 0/1 problem with unit weights; returns (nested-tuple tree in `_dpdt_solver`'s
    format, objective recomputed from that tree, stats dict). A list ``trace`` receives the
    search's clock vector (`treebench.search.engine.fit_topk`)."""
    n, d = X.shape
    data = bitset_data(X, y_index, n_classes)
    D = int(max_depth)
    v, feat, left, right, value, st, hits = fit_layer_search(layer_problem(
        data, D, alpha, min_samples_leaf, entries_for_mb(cache_limit_mb, data.F.shape[0]),
        -1.0 if deadline is None else deadline, D >= 2 and n_classes * d * d <= 2**25),
        trace)
    stats = {
        "cache_hits": int(hits),
        "cache_full": bool(st[S_CAP_HIT] > 0),
        "states": int(st[S_EXPANDED]),
        "operations_distinct": int(st[S_SCORED]),
        "cache_entries": int(st[S_ENTRIES]),
        "timed_out": bool(st[S_TIMED_OUT]),
    }

    def nested(i):
        if feat[i] < 0:
            return (value[i].copy(),)
        return (value[i].copy(), int(feat[i]), 0.5, nested(left[i]), nested(right[i]))

    tree = nested(0)
    obj = tree_objective(tree, float(alpha))
    if not stats["timed_out"] and obj != v:  # pragma: no cover (an internal invariant)
        raise RuntimeError(f"DPDT layer search: the tree read back costs {obj!r}, the search "
                           f"found {v!r}; please report this with the data.")
    return tree, obj, stats


def tree_objective(tree, alpha):
    """``E + α·L`` of a nested-tuple tree with the DP's float expressions (a split:
    ``(α·W + left) + right``; a leaf: its misclassified mass)."""
    if len(tree) == 1:
        st = tree[0]
        return float(st.sum() - st.max())
    st = tree[0]
    aW = alpha * float(st.sum())
    return (aW + tree_objective(tree[3], alpha)) + tree_objective(tree[4], alpha)


def warmup_kernels():
    """Compile (or load) the kernels on the layer's tiny warm-up problem."""
    X, y, _, _, _ = warmup_problem()
    fit_layer(X, y, 3, 3, 0.01, 1, 8, None)
    fit_layer(X, y, 3, 2, 0.0, 2, 8, time.perf_counter() + 100.0)
    fit_layer(X, y, 3, 1, 0.0, 1, 8, None)
