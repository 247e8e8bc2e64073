"""`topk`: the Top-k decision-tree learner of Blanc, Lange, Pabbaraju, Sullivan, Tan and Tiwari,
"The Power of Choices in Decision Tree Learning" (NeurIPS 2023).

Figure 1: at a node with depth budget h, return a leaf when h = 0, the rows are pure, or no
feature splits them; otherwise score every splitting feature with an impurity-based heuristic
(Definition 2, §3.1), keep the k best, build the best subtree below each of them with budget
h - 1 and return the most accurate. By Lemma 3.2 the result is the most accurate tree of the
Top-k search space (Definition 3); k = 1 is the greedy learner (ID3/C4.5 with entropy) and
k = all (``k=None`` or ``"all"``) searches every feature, i.e. returns an optimal tree of depth
<= h (the paper's k = d, DL8.5).

Exact tie rules (so that runs are reproducible and k = 1 equals `greedy`):

* feature order: decreasing score; scores within ``1e-12 * max(1, |s|)`` are equal, then the
  lower feature index first; the k best are a prefix of this order;
* between candidate subtrees: lower training error, then fewer nodes, then the first explored
  (``tie_break="first"`` drops the node count);
* leaf labels: majority class, ties to the class more frequent in the whole training set, then
  the lower class index.

Claim 3.1 bounds the plain recursion by (2k)^h node scorings; the compiled search
(`search.topk`, on the search layer `treebench.search`) returns exactly the same tree faster
through memoisation by (depth, row set) and branch-and-bound (see that module).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.search import topk as K
from treebench.search.engine import fit_topk
from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.objectives import Solves, leaf_size
from treebench.algorithms.traces import TRACE_KEY, fit_trace
from treebench.search.bitset import warmup_problem
from treebench.search.cache import entries_for_mb
from treebench.search.readback import to_tree
from treebench.search.state import bitset_data
from treebench.search.trace import read_trace
from treebench.registry import ALGORITHMS
from treebench.search.exactness import EXACT_SUM, warn_unproven, whole_weights

CRITERIA = {
    "entropy": K.ENTROPY,
    "gini": K.GINI,
    "kearns-mansour": K.KEARNS_MANSOUR,
    "error": K.ERROR,
}

_WARM = False


def _parse_k(k, d: int) -> int:
    """0 means "all features"."""
    if k is None or (isinstance(k, str) and k == "all"):
        return 0
    return int(k) if int(k) < d else 0


class TopKClassifier(TreeClassifierBase):
    """Top-k (Blanc et al. 2023): the most accurate tree among those splitting on one of the
    k best-scored features at every node; k=1 is greedy, k="all" is optimal (DL8.5).

    Parameters
    ----------
    k : int >= 1, None or "all"
        Number of best-scored features explored at every node; None/"all" explores all.
    max_depth : int >= 0
        Depth budget h (number of tests on any path).
    criterion : {"entropy", "gini", "kearns-mansour", "error"}
        Feature scoring function (§3.1): information gain (log2, the paper's choice), Gini
        gain, Kearns–Mansour gain 2 sqrt(p(1-p)) (binary labels) or training-error reduction.
    min_samples_leaf : int >= 1
        A feature splits a node only if each child keeps this many rows.
    min_improvement : float >= 0 or None
        If set, a split is kept only when it reduces the node's training error (weighted) by
        more than this amount, else the node is a leaf. None (default) splits every impure
        node, as in Figure 1.
    time_limit : float > 0 or None
        Seconds; on timeout the best complete tree found so far is returned and
        ``solve_info_["timed_out"]`` is True. With k = all and ``max_depth`` >= 3 the exact
        search then runs beside a primal heuristic (`treebench.search.anytime`: Top-k searches
        widened step by step, the best tree as the exact search's bound), so that a good tree
        is held from the first milliseconds; a fit that finishes returns the same tree as
        without a limit.
    cache_limit_mb : float > 0
        Memory cap of the (depth, row set) memo; when full, new entries are not stored (slower,
        never wrong).
    tie_break : {"smaller", "first"}
        Between candidate subtrees of equal training error: "smaller" (default) keeps the first
        explored unless a later one has fewer nodes; "first" keeps the first explored. Training
        error is the same; "first" lets branch-and-bound stop at the first tree reaching a
        bound, which is much faster when many trees fit the data perfectly (e.g. mushroom,
        depth >= 4, k = all), at the price of possibly larger trees.
    random_state : ignored
        Top-k is deterministic; kept for a uniform interface.

    Notes
    -----
    With k = all, ``solve_info_["optimal"]`` is a proof only when the search's values (errors
    times a power of two above any node count, plus nodes) are exact: sample weights that a
    power of two turns into whole numbers, within `_exact_limit`. Other weights give
    ``optimal`` False, the reason in ``solve_info_["unproven"]`` and an
    `UnprovenOptimalityWarning`.
    """

    binary_features_only = True

    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left"), StrOptions({"all"}), None],
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "criterion": [StrOptions(set(CRITERIA))],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_improvement": [Interval(Real, 0, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "cache_limit_mb": [Interval(Real, 0, None, closed="neither")],
        "tie_break": [StrOptions({"smaller", "first"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        k=1,
        max_depth=3,
        criterion="entropy",
        min_samples_leaf=1,
        min_improvement=None,
        time_limit=None,
        cache_limit_mb=2048,
        tie_break="smaller",
        random_state=None,
    ):
        self.k = k
        self.max_depth = max_depth
        self.criterion = criterion
        self.min_samples_leaf = min_samples_leaf
        self.min_improvement = min_improvement
        self.time_limit = time_limit
        self.cache_limit_mb = cache_limit_mb
        self.tie_break = tie_break
        self.random_state = random_state

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        t_start = time.perf_counter()
        n_classes = len(self.classes_)
        if self.criterion == "kearns-mansour" and n_classes > 2:
            raise ValueError(
                "criterion='kearns-mansour' is defined for binary labels only, but y has "
                f"{n_classes} classes; use 'entropy' or 'gini'."
            )
        compile_s = warmup()
        sw = np.asarray(sample_weight, dtype=np.float64)  # non-negative (checked by the base)
        prior = np.bincount(y_index, weights=sw, minlength=n_classes)
        keep = sw > 0  # zero-weight rows influence nothing: drop them
        Xk, yk, swk = X[keep], y_index[keep], sw[keep]
        # rows grouped by class: every tree's counts are unchanged (the search reads only
        # counts), but most bitset words then hold one class, which halves the popcount work
        # of the per-class counting kernels (`search.counts`)
        perm = _row_order(Xk, yk)
        Xk, yk, swk = Xk[perm], yk[perm], swk[perm]
        n, d = Xk.shape  # n >= 1: the base refuses weights that are all zero
        kk = _parse_k(self.k, d)
        swk, unit, weighted, unproven = _search_weights(swk, n, int(self.max_depth))
        min_imp = -1.0 if self.min_improvement is None else float(self.min_improvement) / unit
        data = bitset_data(Xk, yk, n_classes, swk if weighted else None)
        max_entries = entries_for_mb(self.cache_limit_mb, data.F.shape[0])
        t0 = time.perf_counter()
        # the clock starts after compilation (if any happened here) and data packing
        deadline = -1.0 if self.time_limit is None else t0 + float(self.time_limit)
        # k = all under a time limit: the exact search with a primal heuristic beside it
        scheduled = kk == 0 and deadline > 0 and unproven is None and int(self.max_depth) >= 3
        clock: list = []
        problem = K.topk_problem(
            data, self.max_depth, kk, CRITERIA[self.criterion], self.min_samples_leaf, min_imp,
            max_entries, deadline, self.tie_break == "smaller")
        if scheduled:
            problem = K.anytime_problem(problem, time_limit=self.time_limit)
        _, M, feat, left, right, value, stats = fit_topk(problem, clock)
        search_s = time.perf_counter() - t0
        tree, err = to_tree(feat, left, right, value, unit, prior)
        timed_out = bool(stats[K.S_TIMED_OUT])
        info = {
            "objective": err,
            "objective_kind": "errors",
            "training_error": err,
            "training_accuracy": 1.0 - err / float(sw.sum()),
            "operations": int(stats[K.S_SCORED]),
            "features_scored": int(stats[K.S_SCORED]),
            "nodes_expanded": int(stats[K.S_EXPANDED]),
            "cache_entries": int(stats[K.S_ENTRIES]),
            "cache_peak_bytes": int(stats[K.S_PEAK_BYTES]),
            "cache_full": bool(stats[K.S_CAP_HIT] > 0),
            "search_seconds": search_s,
            "seconds": time.perf_counter() - t_start - compile_s,
            "timed_out": timed_out,
            "optimal": bool(kk == 0 and not timed_out and unproven is None),
            "compile_seconds": compile_s,
            "k_effective": d if kk == 0 else kk,
        }
        if kk == 0 and not timed_out and unproven is not None:
            info["unproven"] = unproven
            warn_unproven("topk", unproven)
        rows = _trace_errors(read_trace(clock[0], t_start + compile_s), M, unit,
                             exact=unproven is None)
        info[TRACE_KEY] = fit_trace(rows, info)
        return tree, info


def _trace_errors(rows, M: float, unit: float, exact: bool):
    """A Top-k trace's values ``errors * M + nu * nodes`` (nodes < M) as errors in the weights'
    unit: ``floor(v / M)`` for whole-number errors, exact for incumbents and a lower bound for
    bounds; otherwise ``v / M`` (at most the tree's nodes / M above) and ``v / M - 1``."""
    rows = rows.copy()
    if exact:
        rows[:, 1:] = np.floor(rows[:, 1:] / M) * unit
    else:
        rows[:, 1] = rows[:, 1] / M * unit
        rows[:, 2] = np.maximum(rows[:, 2] / M - 1.0, 0.0) * unit
    return rows


def _search_weights(sw, n: int, depth: int):
    """The row weights the search counts with: ``(weights, unit, weighted, unproven)``.
    Constant weights are counted as rows (popcounts) in the unit of that weight; others are
    multiplied by the power of two that makes them whole numbers (`whole_weights`, exact).
    With whole-number errors the search's values ``errors * M + nodes`` (``M = 2^(depth+2)``,
    above any node count) order trees by errors first when `_exact_limit` bounds the total.
    Weights without such a unit are used as given, and ``unproven`` says why the tree is then
    not proven optimal."""
    limit = _exact_limit(n, depth)
    scale = float(sw[0])
    if np.all(sw == scale) and n <= limit:
        return sw, scale, False, None
    whole = whole_weights(sw, limit)
    if whole is None:
        return sw, 1.0, True, (
            f"the sample weights have no power-of-two unit in which they are whole numbers "
            f"totalling at most {limit:.4g}, so sums of weights round and a lower error may "
            f"not outweigh a node count")
    return whole[0], whole[1], True, None


def _exact_limit(n: int, depth: int) -> float:
    """The largest total of whole-number weights (``n`` rows) for which the search's values
    ``errors * M + nodes`` rank trees by errors exactly: either every value is an exact sum
    (``total * M`` plus at most ``2n`` nodes within 2^53), or the rounding of the sums (at most
    ``2n`` additions, each off by half a unit in the last place of values below
    ``2 total M``: ``4 n total M 2^-53`` in all) stays below ``M / 2``, the room that ``M``
    leaves above any node count, which holds while ``n total < 2^50`` (the limit keeps a
    factor of 8 to spare)."""
    return max((EXACT_SUM - 2.0 * n) / 2.0 ** (depth + 2), 2.0**47 / n)


def _row_order(X, y_index):
    """Order of the training rows in the bitsets: by class (stable). Any order gives the same
    tree; grouping the classes makes the bitset words single-class."""
    return np.argsort(y_index, kind="stable")


def warmup() -> float:
    """Compile (or load from numba's cache) every kernel on tiny data; returns the seconds spent
    when this call did the work, else 0. The runner calls it before timing a fit."""
    global _WARM
    if _WARM:
        return 0.0
    t = time.perf_counter()
    X, y, _, _, weights = warmup_problem()
    for sw in (None, weights[1]):
        data = bitset_data(X, y, 3, sw)
        for crit in range(4):
            fit_topk(K.topk_problem(data, 2, 2, crit))
    fit_topk(K.topk_problem(bitset_data(X, y, 3), 2, 0, min_imp=0.0, max_entries=1000,
                              deadline=time.perf_counter() + 100.0, smaller_trees=False))
    K.now_seconds()  # the clock's first call (object mode, off Linux) costs ~40 ms: pay it here
    _WARM = True
    return time.perf_counter() - t


def problem(p) -> str:
    """The problem Top-k solves with the parameters ``p`` (docs/objectives.md)."""
    if p.get("k", 1) not in (None, "all"):
        return "topk-search-space"
    if p.get("min_improvement") is None:
        return "min-errors" if p.get("tie_break") == "first" else "topk-figure1"
    if p.get("min_improvement") == 0:
        return "min-errors" if p.get("tie_break") == "first" else "min-errors-then-nodes"
    return "greedy"  # a positive minimum improvement prunes by a local rule


ALGORITHMS.register(
    "topk", tags=("topk", "greedy-generalisation", "optimal"),
    solves=Solves(leaf_size(problem, "min_samples_leaf"), {
        "min-errors": {"k": "all", "tie_break": "first", "min_improvement": None},
        "min-errors-then-nodes": {"k": "all", "tie_break": "smaller", "min_improvement": 0.0},
    }, {}, unrestricted={"k": "all", "min_samples_leaf": 1}),
    warmup=warmup, precompile={"0/1-search": warmup},
)(TopKClassifier)
