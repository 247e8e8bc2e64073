"""Optimal depth-limited classification trees on numeric features, without binarization.

`solve_numeric` returns a tree of depth <= ``max_depth`` minimising, over every threshold of
every feature, the weighted training misclassifications (plus ``lam * W`` per leaf, W the
total weight: GOSDT's objective "error rate + lam * leaves" scaled by W), or with
``lexicographic`` the fewest errors, then the fewest leaves. Thresholds are the
midpoints between consecutive distinct values of a feature *among the rows of the node*
(rows of zero weight are ignored). The search (`_numeric_kernels`) is a dynamic program with
branch-and-bound in the manner of ConTree; its tie rule between trees of equal objective is
documented in ``docs/optimal-numeric.md`` and in `_numeric_kernels`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from treebench.search import _numeric_alpha_kernels as KA
from treebench.search import _numeric_kernels as K
from treebench.search import numeric_anytime as A
from treebench.search.exactness import EXACT_INT, on_grid, price_grid, whole_weights
from treebench.search.state import S_EXPANDED, S_SCORED, S_TIMED_OUT
from treebench.search.trace import read_trace
from treebench.tree.arrays import LEAF_THRESHOLD, TreeArrays
from treebench.tree.labels import majority_labels

#: relative tolerance between costs when they are not all integers (weights with no
#: power-of-two unit in which they are whole numbers totalling at most `EXACT_INT`): such a
#: search cannot prove its tree optimal, since two trees closer than this may differ
REL_TOL = 1e-9
#: (`exactness.EXACT_INT`, 2^52) the largest total weight, in the weights' whole unit, for
#: which the search's costs are exact integers: every sum of whole numbers is exact in float64
#: up to 2^53, and the search compares integer costs with a tolerance of half a unit
#: (``c - 0.5``, ``c + 0.5``), exact for costs below 2^52 (from 2^52 on, half-integers are not
#: representable); one limit, 2^52, serves both, and DPDT's exact-float search, whose sums
#: must be exact, uses it too
#: the deepest search this solver runs: it keeps the best subtree of every recursion level in
#: complete-tree (heap) layout, 2^(max_depth + 1) - 1 nodes a level, so depth 16 holds about
#: 110 MB of such trees and every further level doubles it (and optimal search at such
#: depths is out of reach on any but tiny data)
MAX_DEPTH = 16


@dataclass
class NumericSolution:
    tree: TreeArrays
    objective: float  # errors (+ lam * W per leaf), in the caller's weight unit
    errors: float
    optimal: bool
    timed_out: bool
    nodes_expanded: int
    splits_scored: int
    search_seconds: float
    #: why a search that finished cannot prove its tree optimal (one sentence), else None
    unproven: str | None = None
    #: the anytime trace (`treebench.search.trace`): rows of (seconds since ``t_start``,
    #: incumbent, lower bound) in the unit of ``objective``, the final state last
    trace: np.ndarray | None = None


def _unit(sw: np.ndarray) -> tuple[np.ndarray, bool]:
    """Weights in the search's unit and whether their costs are exact integers: constant
    weights become 1; others are multiplied by the power of two that makes them whole numbers
    (`exactness.whole_weights`, exact), which gives integer costs while their total is at most
    `EXACT_INT`; otherwise they stay as they are (costs then compare within `REL_TOL`)."""
    if np.all(sw == sw[0]) and sw.shape[0] <= EXACT_INT:
        return np.ones(sw.shape[0]), True
    whole = whole_weights(sw, EXACT_INT)
    return (sw, False) if whole is None else (whole[0], True)


def whole_exact(sw) -> bool:
    """Whether the weights are whole numbers whose every sum is exact in float64 (a total
    of at most `EXACT_INT`), so that costs built from them are exact integers."""
    sw = np.asarray(sw, dtype=np.float64)
    return bool(np.all(sw == np.round(sw))) and float(np.sum(sw)) <= EXACT_INT


def _inputs(X, y_index, sample_weight, n_classes: int, max_depth: int):
    """Checked arrays of a search: ``(X, y_index, weights, prior)`` with the rows of zero
    weight dropped (``prior``, the class weights of every row, breaks leaf ties); a
    ValueError for a depth over `MAX_DEPTH` or weights that are all zero."""
    if not 0 <= int(max_depth) <= MAX_DEPTH:
        raise ValueError(f"the numeric optimal-tree search runs depths 0 to {MAX_DEPTH}, "
                         f"got max_depth={max_depth}.")
    X = np.asarray(X, dtype=np.float64)
    y_index = np.asarray(y_index, dtype=np.int64)
    sw = (np.ones(X.shape[0]) if sample_weight is None
          else np.asarray(sample_weight, dtype=np.float64))
    prior = np.bincount(y_index, weights=sw, minlength=n_classes)
    keep = sw > 0
    if not np.all(keep):
        X, y_index, sw = X[keep], y_index[keep], sw[keep]
    if X.shape[0] == 0:
        raise ValueError("all sample weights are zero")
    return np.ascontiguousarray(X), y_index, sw, prior


def solve_numeric(X, y_index, sample_weight, n_classes: int, max_depth: int, *,
                  lam: float = 0.0, lexicographic: bool = False,
                  deadline: float | None = None,
                  t_start: float | None = None) -> NumericSolution:
    """The optimal tree (see the module's docstring); ``deadline`` (``time.perf_counter()``
    value) makes the search anytime: it then returns the best tree found. With
    ``lexicographic`` (``lam`` is then not used) the tree with the fewest training errors,
    then the fewest leaves (`lexicographic_scale`). A ValueError for ``max_depth`` over
    `MAX_DEPTH`, and for ``lexicographic`` with weights that no power of two makes whole
    numbers. ``optimal`` is True only when the search finished and its comparisons were exact:
    weights that a power of two makes whole numbers totalling at most `EXACT_INT` (`_unit`),
    and with ``lam`` the price per leaf on the grid of `_price_in_units`; ``unproven`` says why
    not otherwise. The trace's times count from ``t_start`` (a ``time.perf_counter()`` time,
    the fit's start; default: the search's start)."""
    X, y_index, sw, prior = _inputs(X, y_index, sample_weight, n_classes, max_depth)
    w, whole = _unit(sw)
    if lexicographic:
        lam = 0.0
        w, whole = lexicographic_scale(w, max_depth), True
    total = float(w.sum())
    pen = 1.0 if lexicographic else float(lam) * total
    unproven = None
    if whole and not lexicographic and pen > 0.0:
        w, pen, unproven = _price_in_units(w, pen, total, min(2 ** int(max_depth), len(w)))
        whole = unproven is None
    integer = whole  # every cost a whole number: compared with half a unit, exactly
    eps = 0.5 if integer else REL_TOL * max(1.0, total)
    if not whole and unproven is None:
        unproven = (f"the sample weights have no power-of-two unit in which they are whole "
                    f"numbers totalling at most 2**52, so the search compared costs within "
                    f"{eps:.3g} (1e-9 times the total weight) and a better tree may differ "
                    f"by less")
    w = np.ascontiguousarray(w)
    t0 = time.perf_counter()
    heur, expanded, scored = [], 0, 0
    if A.scheduled(max_depth, deadline, integer):  # the anytime schedule (`numeric_anytime`)
        heur, expanded, scored = A.widened(
            X, y_index, w, n_classes, int(max_depth), (eps, pen, integer), deadline,
            lambda hf, ht: tree_cost(hf, ht, X, y_index, w, n_classes, pen))
    st = K.new_state(X, y_index, w, n_classes, int(max_depth), eps, pen, integer, deadline)
    ub = heur[-1][1] + eps if heur else np.inf
    A.seed_trace(st.clock, heur)
    cost = K.solve_node(st, 0, int(max_depth), ub, True, False, 0.0)
    if cost > ub:  # stopped at the deadline with no tree below the incumbent's bound
        st.tf[0, 0, :], st.tt[0, 0, :] = -1, 0.0
        st.tf[0, 0, :heur[-1][2].size], st.tt[0, 0, :heur[-1][3].size] = heur[-1][2:]
        cost = heur[-1][1]
    found = bool(cost < np.inf)
    secs = time.perf_counter() - t0
    tree, errors, timed_out = _result(st, X, y_index, sw, n_classes, prior)
    objective = errors + lam * float(sw.sum()) * tree.n_leaves
    # the search's costs in the caller's unit: scaled weights back (and, lexicographic, the
    # leaves' part dropped: each cost is errors * step + leaves with leaves < step)
    scale = float(sw.sum()) / float(w.sum()) if w.sum() > 0.0 else 1.0
    step = 1.0 / lexicographic_penalty(w, max_depth) if lexicographic else 0.0
    rows = read_trace(st.clock, t0 if t_start is None else t_start)
    rows[:, 1:] = np.floor(rows[:, 1:] / step) * step * scale if step else rows[:, 1:] * scale
    return NumericSolution(
        tree=tree, objective=objective, errors=errors,
        optimal=bool(found) and not timed_out and unproven is None, timed_out=timed_out,
        nodes_expanded=expanded + int(st.stats[S_EXPANDED]),
        splits_scored=scored + int(st.stats[S_SCORED]),
        search_seconds=secs, unproven=unproven, trace=rows,
    )


def _price_in_units(w: np.ndarray, pen: float, total: float, leaves: int):
    """Whole-number weights ``w`` and a price per leaf ``pen`` as integer costs:
    ``(weights, price, unproven)``. The price is rounded to the finest power-of-two grid on
    which every cost stays a whole multiple below `EXACT_INT` (`exactness.price_grid`), and
    weights and price are counted in grid steps (exact: a power of two). When no grid fits
    (the costs pass 2^52 even in whole units) they are returned as they are, with the reason
    the search cannot prove its tree optimal."""
    grid = price_grid(pen, total, leaves, EXACT_INT)
    if grid is None:
        return w, pen, ("with a price per leaf, the costs pass 2**52 in the weights' whole "
                        "unit, where sums of costs with a fractional price round")
    return w / grid, on_grid(pen, grid) / grid, None


def lexicographic_penalty(counts: np.ndarray, max_depth: int | None) -> float:
    """A per-leaf penalty, in the units of the row weights ``counts`` (whole numbers), that
    makes errors + penalty · leaves order trees by errors, then leaves: 2^-(k+1) for the
    smallest power of two 2^k at least the largest possible number of leaves (min(2^depth,
    rows); rows without a depth budget), so penalty · leaves < 1 for every tree. A power of
    two keeps the solver's sums of whole counts and penalties exact in floating point."""
    if not np.all(counts == np.rint(counts)):
        raise ValueError("lexicographic=True needs sample weights that one power of two turns "
                         "into whole numbers, such as whole numbers or halves (errors are then "
                         "whole numbers, and a penalty below one error orders them first).")
    n = max(int(len(counts)), 1)
    leaves = n if max_depth is None else min(2 ** min(int(max_depth), 62), n)
    return 2.0 ** -(int(leaves - 1).bit_length() + 1)


def lexicographic_scale(w: np.ndarray, max_depth: int) -> np.ndarray:
    """Weights ``w`` (whole numbers in the search's unit, `_unit`) scaled so that errors + one
    unit per leaf orders trees by errors, then leaves: multiplied by ``2^(k+1)``, ``2^k`` the
    smallest power of two at least the most leaves a tree can have (``min(2^max_depth,
    rows)``), an error outweighs every tree's leaves. Every cost is then a whole number (the search's exact
    integer comparisons apply) as long as the scaled total is at most `EXACT_INT`. Returns the
    scaled weights; a ValueError for weights that are not whole numbers (their errors would not
    be, and no per-leaf unit below one error would order them first) or whose scaled total is
    over `EXACT_INT`."""
    factor = 1.0 / lexicographic_penalty(w, max_depth)
    scaled = w * factor
    if not whole_exact(scaled):
        raise ValueError(f"the lexicographic objective counts an error as {factor:.0f} leaves, "
                         f"and the training weight times that exceeds 2**52, where the search's "
                         f"integer comparisons stop being exact; use objective 'errors' instead.")
    return scaled


def solve_numeric_alpha(X, y_index, sample_weight, n_classes: int, max_depth: int,
                        alpha: float, *, deadline: float | None = None,
                        t_start: float | None = None) -> NumericSolution:
    """DPDT's exhaustive objective ``E + alpha * L`` (``L`` the weight times the depth of
    every row's leaf): the tree and the float value backward induction over every state
    returns, node for node and bit for bit (`_numeric_alpha_kernels` says why). The weights
    must be whole numbers with a total of at most 2**52 (`EXACT_INT`; the DP's sums are then
    exact); they
    are not rescaled, since the
    DP's floats depend on them. ``objective`` is the DP's float value; with ``deadline`` the
    search stops there and returns the tree found so far. ``t_start``: as in
    `solve_numeric`."""
    if sample_weight is not None and not whole_exact(sample_weight):
        raise ValueError("solve_numeric_alpha needs whole-number sample weights summing to "
                         "at most 2**52 (so that the DP's sums are exact)")
    X, y_index, sw, prior = _inputs(X, y_index, sample_weight, n_classes, max_depth)
    st = KA.new_alpha_state(X, y_index, np.ascontiguousarray(sw), n_classes, int(max_depth),
                            float(alpha), deadline)
    t0 = time.perf_counter()
    value = float(KA.solve_alpha(st, 0, int(max_depth), np.inf))
    secs = time.perf_counter() - t0
    tree, errors, timed_out = _result(st, X, y_index, sw, n_classes, prior)
    return NumericSolution(
        tree=tree, objective=value, errors=errors, optimal=not timed_out,
        timed_out=timed_out, nodes_expanded=int(st.stats[S_EXPANDED]),
        splits_scored=int(st.stats[S_SCORED]), search_seconds=secs,
        trace=read_trace(st.clock, t0 if t_start is None else t_start),
    )


def _result(st, X, y_index, sw, n_classes: int, prior):
    """The searched tree of state ``st`` (level 0's heap tree) as `TreeArrays`, its weighted
    training errors, and whether the search timed out."""
    tree = heap_to_tree(st.tf[0, 0], st.tt[0, 0], X, y_index, sw, n_classes, prior)
    return tree, tree.leaf_errors, bool(st.stats[S_TIMED_OUT])


def heap_to_tree(hf, ht, X, y_index, sw, n_classes: int, prior) -> TreeArrays:
    """A heap-layout tree (node k's children at 2k+1, 2k+2; feature -1 at leaves) as
    `TreeArrays`, with the weighted class counts of the rows reaching every node."""
    feat, thr, left, right, value = [], [], [], [], []
    stack = [(0, np.arange(X.shape[0]), -1, 0)]  # (heap node, rows, parent id, side)
    while stack:
        h, rows, parent, side = stack.pop()
        i = len(feat)
        if parent >= 0:
            (left if side == 0 else right)[parent] = i
        f = int(hf[h]) if h < len(hf) else -1
        value.append(np.bincount(y_index[rows], weights=sw[rows], minlength=n_classes))
        feat.append(f)
        thr.append(float(ht[h]) if f >= 0 else LEAF_THRESHOLD)
        left.append(-1)
        right.append(-1)
        if f >= 0:
            go = X[rows, f] <= ht[h]
            # right first on the stack so that the left child gets the next id
            stack.append((2 * h + 2, rows[~go], i, 1))
            stack.append((2 * h + 1, rows[go], i, 0))
    value = np.array(value, dtype=np.float64).reshape(len(feat), n_classes)
    return TreeArrays(np.array(feat), np.array(thr), np.array(left), np.array(right), value,
                      majority_labels(value, prior))


def tree_cost(hf, ht, X, y_index, w, n_classes: int, pen: float) -> float:
    """The search's cost of a heap-layout tree: its misclassified weight in ``w`` (the
    search's unit) plus ``pen`` per leaf, counted on the rows (`heap_to_tree`)."""
    tree = heap_to_tree(hf, ht, X, y_index, w, n_classes, np.ones(n_classes))
    return tree.leaf_errors + pen * tree.n_leaves


def warmup(alpha: bool = False) -> float:
    """Compile (or load from numba's cache) on a tiny problem the kernels of `solve_numeric`,
    or with ``alpha`` those of `solve_numeric_alpha` (loading them costs about 2 MB, so a
    learner loads only the ones it runs); returns the seconds it took."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(24, 3)).astype(np.float64)
    y = rng.integers(0, 3, size=24)
    if alpha:
        solve_numeric_alpha(X, y, None, 3, 3, 0.1, deadline=time.perf_counter() + 60.0)
    else:
        solve_numeric(X, y, None, 3, 3)
        solve_numeric(X, y, rng.random(24), 3, 2, lam=0.01, deadline=time.perf_counter() + 60.0)
    K.now_seconds()  # the clock's first call (object mode, off Linux) is slow: pay it here
    return time.perf_counter() - t0


def warmup_both() -> float:
    """`warmup` of both searches (the errors search's kernels and the exact-float one's)."""
    return warmup(alpha=False) + warmup(alpha=True)
