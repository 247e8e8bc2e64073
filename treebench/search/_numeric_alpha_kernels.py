"""Compiled kernels of the numeric search with a per-test price (`treebench.search.numeric`,
``solve_numeric_alpha``): DPDT's objective ``E + alpha * L`` on raw numeric features, in the
DP's own floating-point arithmetic, so that the tree returned is exactly the one backward
induction over every state returns (`treebench.algorithms._dpdt_solver`).

At a node of weight ``W`` with at least one test left the DP values a split as the float
``(aW + v_left) + v_right`` (``aW = alpha * W`` one product, ``v_*`` the children's own such
floats, a leaf's value its misclassified weight), and keeps the first minimum over (leaf,
feature 0's thresholds in increasing order, feature 1's, ...), a split taken only when its
float is strictly below the best so far: it returns the least (value, position in that
order). This search computes the same floats and keeps the least (value, key) among the
candidates it values, the key being the position in the DP's order, so it may meet the
candidates in another order: first each feature's best Gini threshold (an early incumbent),
then each feature's thresholds by bisection. It skips a candidate, or an interval of them,
only when a float **lower bound** of its value, built with the same expression, is above the
best so far, or equal to it with a later key:

* a child's value is at least ``min(e, alpha * W_child)`` (``e`` its leaf error): it is its
  leaf or a split, and a split costs at least ``alpha * W_child`` because IEEE addition of
  non-negative numbers never decreases (``fl(x + v) >= x`` for ``v >= 0``);
* IEEE addition is monotone (``a <= a'`` and ``b <= b'`` give ``fl(a + b) <= fl(a' + b')``),
  so ``(aW + lb_left) + lb_right`` bounds the DP's float from below, and so does
  ``(aW + v_left) + lb_right`` once the left child is solved;
* a node whose leaf error is at most ``aW`` is a leaf (no split's float is below ``aW``);
* neighbour bounds between the thresholds met. In exact arithmetic the optimum ``V(S)`` of a
  child with ``h`` tests left never decreases when rows join ``S`` (the optimal tree of the
  larger set, restricted to ``S``, has no more errors and no longer paths; a test that no
  longer separates rows is dropped, which only lowers the value), and grows by at most
  ``(1 + alpha * h)`` per unit of weight that joins (the optimal tree of ``S`` applied to the
  larger set: each new row adds at most its weight in errors and ``alpha`` times its weight
  per test on its path). As the threshold moves right rows only join the left part and only
  leave the right part, so a value or lower bound found for a part at a threshold met bounds
  the same part at thresholds to its right (the left part as it is, the right part minus
  ``(1 + alpha * h)`` times the weight moved) and to its left (the right part as it is, the
  left part minus that); between two thresholds met, every candidate costs at least the left
  part's value at the lower one plus the right part's at the upper one
  (`interval_bound`). These are bounds on exact values; the DP's floats lie within
  `neighbour_slack` of them (a float evaluation of a tree of ``k`` tests rounds ``3k``
  times, each error at most half an ulp of the largest value), so the bounds are used minus
  twice that slack, and stay lower bounds of the DP's floats.

Children are solved under upper bounds with the contract of the layer search
(`treebench.search.dpdt_layer`): a value below the bound is exact, any other is a lower
bound at or above it; the bounds carry a margin against the rounding of the subtractions that
derive them, and a failed child whose proof does not hold on the monotone expression (a
near-tie) is solved again without a bound, so no decision rests on the margin. Each bound
is widened by how much the part's value can change over the rest of the candidate's interval
(`reach_of`): the value found is exact all the same, and a part that fails proves enough to
exclude the candidates it reaches.

With two tests left both children of a candidate are solved exactly, to depth one, in one
pass per feature over the node's rows (`depth2_parts`), with the floats and the first-minimum
rule of a child's own search.

No tolerance is used in any comparison of values: every candidate that could be the DP's
first minimum is valued with the DP's floats, so the search returns the DP's tree and its
bit-identical value. The sums of weights are exact because the caller admits whole-number
weights only (their sums are integers below 2^53).

Trees are in heap layout (node ``k``'s children at ``2k + 1``, ``2k + 2``; feature -1 at a
leaf), one buffer per recursion level, as in `_numeric_kernels`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search._numeric_kernels import (
    copy_sub, gini_purity, level_orders, midpoint, node_totals, rank_of, row_of,
)
from treebench.search.clock import check_time, timed_out
from treebench.search.state import N_STATS, S_EXPANDED, S_SCORED
from treebench.search.trace import new_clock, record

#: the neighbour bounds' slack relative to the largest value a node can have
RELATIVE_SLACK = 1e-9

AlphaState = namedtuple(
    "AlphaState",
    [
        "X",  # (n, d) float64 feature values
        "y",  # (n,) int64 class index
        "w",  # (n,) float64 sample weight (whole numbers)
        "ord",  # (L, d, n) int64 the node's rows at each level in each feature's order, packed
        #         as rank << 32 | row (see `_numeric_kernels.sorted_rows`)
        "m",  # (L,) int64 node size per level
        "flag",  # (L, n) uint8 1 for the rows of the left child of the split being evaluated
        "tot",  # (L, nc) float64 class weights of the node
        "lc",  # (L, nc) float64 class weights left of the boundary being swept
        "tf",  # (L, 2, S) int64 heap trees: the node's best, the candidate's left child
        "tt",  # (L, 2, S) float64 their thresholds
        "alpha",  # (2,) float64 the price of a test per unit of weight, and the slack of
        #           the neighbour bounds (`RELATIVE_SLACK` times the largest value)
        "bpos",  # (L, n) int64 boundaries of the feature being searched: rows left of each
        "bst",  # (L, n, 4) float64 at each boundary: left error, left weight, right error,
        #         right weight
        "rec",  # (L, n, 2) float64 left / right value (or lower bound) at each boundary met
        "queue",  # (L, 2n + 4, 4) int64 intervals of boundaries to search: lo, hi and the
        #           boundaries met next to them (-1: none)
        "nd",  # (L, N_ND) float64 the node's running state (slots N_*)
        "sd",  # (L, 2, 2) float64 per part of a candidate with two tests left: the feature
        #        (-1: a leaf) and threshold of its depth-1 tree (`depth2_parts`)
        "ps",  # (L, 2, 2 nc + 4) float64 per part there: class totals, running class
        #        weights, best value, aW, last rank seen and its row (`depth2_parts`)
        "stats",  # (N_STATS,) int64 counters and the timeout flag
        "clock",  # (1,) float64 absolute deadline (<= 0: none)
    ],
)


# node slots: best value so far, its key (the DP's order: -1 the leaf, f * (n + 1) + k the
# k-th boundary of feature f), the least lower bound of a candidate excluded by ``ub`` alone,
# the node's ``ub``, ``aW``
N_BEST, N_KEY, N_FLOOR, N_UB, N_AW = range(5)
N_ND = 5


def neighbour_slack(w, alpha, max_depth):
    """How far the DP's float value of any node may lie from its exact value, with room to
    spare, plus the rounding of the bounds' own arithmetic: a tree has at most
    ``2^max_depth`` tests, three rounded operations each (half an ulp of a result at most
    ``W * (1 + alpha * max_depth)``, ``W`` the total weight): at most ``3 * 2^16 * 2^-53``,
    about ``2.2e-11``, of that largest value at depth 16, covered several times by
    `RELATIVE_SLACK`; a bound derived from a neighbour's (`neighbour_bounds`) rounds three
    times (a product, two subtractions), by half an ulp each, covered by ``4 * n * 2^-53`` of
    it (each derivation subtracts twice the slack again, so a chain of them stays below)."""
    relative = RELATIVE_SLACK + 4.0 * w.shape[0] * 2.0 ** -53
    return relative * (1.0 + float(np.sum(w)) * (1.0 + float(alpha) * max_depth))


def new_alpha_state(X, y, w, n_classes, max_depth, alpha, deadline):
    """Allocate every buffer of a search of depth ``max_depth``."""
    n = X.shape[0]
    L, S, order, m = level_orders(X, max_depth)
    return AlphaState(
        X, y, w, order, m, np.zeros((L, n), dtype=np.uint8),
        np.zeros((L, n_classes)), np.zeros((L, n_classes)),
        np.full((L, 2, S), -1, dtype=np.int64), np.zeros((L, 2, S)),
        np.array([float(alpha), neighbour_slack(w, alpha, max_depth)]),
        np.zeros((L, n), dtype=np.int64), np.zeros((L, n, 4)), np.zeros((L, n, 2)),
        np.zeros((L, 2 * n + 4, 4), dtype=np.int64), np.zeros((L, N_ND)),
        np.zeros((L, 2, 2)), np.zeros((L, 2, 2 * n_classes + 4)),
        np.zeros(N_STATS, dtype=np.int64),
        new_clock(deadline if deadline is not None else -1.0),
    )


@njit(cache=True)
def side_errors(tot, lc):
    """(left error, left weight, right error, right weight) of the boundary whose left part
    has class weights ``lc``: each part's weight minus its largest class weight, the DP's
    leaf error (exact: whole numbers)."""
    wl, ml, wr, mr = 0.0, 0.0, 0.0, 0.0
    for c in range(tot.shape[0]):
        lv = lc[c]
        rv = tot[c] - lv
        wl += lv
        wr += rv
        ml = max(ml, lv)
        mr = max(mr, rv)
    return wl - ml, wl, wr - mr, wr


@njit(cache=True)
def solve_depth1(st, lev, aW, err):
    """The DP's best tree of depth <= 1 of the node at ``lev`` (leaf error ``err``, price of
    its test ``aW``) into ``tf[lev, 0]``; returns its value. (A root of depth one: with two
    tests left both children are solved by `depth2_parts`.)"""
    best = err
    for f in range(st.ord.shape[1]):
        if best <= aW:  # no split's value is below aW
            break
        for k in range(list_boundaries(st, lev, f)):
            cost = (aW + st.bst[lev, k, 0]) + st.bst[lev, k, 2]
            if cost < best:
                best = cost
                pos = st.bpos[lev, k]
                st.tf[lev, 0, 0] = f
                st.tt[lev, 0, 0] = midpoint(st.X[row_of(st.ord[lev, f, pos - 1]), f],
                                            st.X[row_of(st.ord[lev, f, pos]), f])
                st.tf[lev, 0, 1], st.tf[lev, 0, 2] = -1, -1
    st.stats[S_SCORED] += 1
    return best


@njit(cache=True)
def split_child(st, lev, f, pos, want):
    """The rows of the left (``want`` 0: the first ``pos`` in feature ``f``'s order) or right
    part of the node at ``lev`` become the node at ``lev + 1`` (every order filtered)."""
    flag = st.flag[lev]
    rows = st.ord[lev, f]
    m = st.m[lev]
    for i in range(m):
        flag[row_of(rows[i])] = 1 if i < pos else 0
    keep = 1 if want == 0 else 0
    k = 0
    for g in range(st.ord.shape[1]):
        src = st.ord[lev, g]
        dst = st.ord[lev + 1, g]
        k = 0
        for i in range(m):
            p = src[i]
            if flag[row_of(p)] == keep:
                dst[k] = p
                k += 1
    st.m[lev + 1] = k


@njit(cache=True)
def take_split(st, lev, h, f, pos):
    """Make the split (feature ``f``, first ``pos`` rows left) the node's best tree: its left
    child from ``tf[lev, 1]``, its right child the tree just solved at ``lev + 1``."""
    tf, tt = st.tf[lev, 0], st.tt[lev, 0]
    rows = st.ord[lev, f]
    tf[0] = f
    tt[0] = midpoint(st.X[row_of(rows[pos - 1]), f], st.X[row_of(rows[pos]), f])
    copy_sub(st.tf[lev, 1], st.tt[lev, 1], tf, tt, 1, h - 1)
    copy_sub(st.tf[lev + 1, 0], st.tt[lev + 1, 0], tf, tt, 2, h - 1)


@njit(cache=True)
def open_node(st, lev, h):
    """Start the node at ``lev``: its class weights, the leaf as its tree. Returns (leaf
    error, aW, searched): searched is False when the node is the leaf (no test left, fewer
    than two rows, pure, leaf error at most aW, or past the deadline)."""
    check_time(st.stats, st.clock)
    st.stats[S_EXPANDED] += 1
    node_totals(st, lev)
    tot = st.tot[lev]
    err = tot.sum() - tot.max()
    st.tf[lev, 0, 0] = -1
    aW = st.alpha[0] * tot.sum()
    stop = h == 0 or st.m[lev] < 2 or err <= 0.0 or err <= aW or timed_out(st.stats)
    return err, aW, not stop


@njit(cache=True)
def margin_of(bound):
    """Slack added to a child's upper bound: the subtractions that derive it round, and the
    slack makes a failed child prove far more than any rounding; the parent re-checks the
    proof on the monotone expression and solves the child again when it does not hold."""
    return 1e-9 * max(1.0, abs(bound))


@njit(cache=True)
def gini_boundary(st, lev, f):
    """Position (rows left of it in feature ``f``'s order) of the node's boundary of least
    weighted Gini impurity (the first of equals), or -1 when the feature is constant."""
    tot, lc = st.tot[lev], st.lc[lev]
    rows = st.ord[lev, f]
    lc[:] = 0.0
    best, at = -1.0, -1
    wl, wall = 0.0, tot.sum()
    prev = rank_of(rows[0])
    for i in range(st.m[lev]):
        p = rows[i]
        if rank_of(p) != prev:
            prev = rank_of(p)
            score = gini_purity(lc, tot, wl, wall)
            if score > best:
                best, at = score, i
        r = row_of(p)
        lc[st.y[r]] += st.w[r]
        wl += st.w[r]
    return at


@njit(cache=True)
def list_boundaries(st, lev, f):
    """The boundaries of feature ``f`` in the node at ``lev`` (``bpos``: rows left of each)
    with both parts' leaf errors and weights (``bst``); returns their number."""
    tot, lc = st.tot[lev], st.lc[lev]
    rows = st.ord[lev, f]
    for c in range(lc.shape[0]):
        lc[c] = 0.0
    nb = 0
    prev = rank_of(rows[0])
    for i in range(st.m[lev]):
        p = rows[i]
        if rank_of(p) != prev:
            prev = rank_of(p)
            eL, wl, eR, wr = side_errors(tot, lc)
            st.bpos[lev, nb] = i
            st.bst[lev, nb, 0], st.bst[lev, nb, 1] = eL, wl
            st.bst[lev, nb, 2], st.bst[lev, nb, 3] = eR, wr
            nb += 1
        r = row_of(p)
        lc[st.y[r]] += st.w[r]
    return nb


@njit(cache=True)
def start_feature(st, lev, f, seed):
    """List feature ``f``'s boundaries and queue the interval to search: its best Gini
    boundary alone (``seed``: an early incumbent that bounds the rest) or all of them.
    Returns the queue's length (0: the feature is constant in the node)."""
    nb = list_boundaries(st, lev, f)
    if nb == 0:
        return 0
    lo, hi = 0, nb - 1
    if seed:
        pos = gini_boundary(st, lev, f)
        while st.bpos[lev, lo] != pos:
            lo += 1
        hi = lo
    q = st.queue[lev]
    q[0, 0], q[0, 1], q[0, 2], q[0, 3] = lo, hi, -1, -1
    return 1


@njit(cache=True)
def excluded(nd, lb, key):
    """Whether a candidate (or every candidate of an interval) with lower bound ``lb`` of its
    value and the DP order key ``key`` (the least in the interval) cannot be the node's first
    minimum below ``ub``: ``lb`` is above the best so far, or equal with a later key, or at or
    above ``ub``. The last case keeps ``lb`` in the node's floor when it is below the best (the
    node's lower bound should every candidate fail)."""
    if lb >= nd[N_UB]:
        if lb < nd[N_BEST] and lb < nd[N_FLOOR]:
            nd[N_FLOOR] = lb
        return True
    return lb > nd[N_BEST] or (lb == nd[N_BEST] and key > nd[N_KEY])


@njit(cache=True)
def neighbour_bounds(st, lev, h, k, kl, kr):
    """Lower bounds of the DP floats of the two parts of boundary ``k`` (met neighbours ``kl <
    k < kr``, -1: none): each part is a leaf or a split (at least ``min(e, alpha * W)``); in
    exact arithmetic the left part's value never decreases as the boundary moves right and
    grows by at most ``1 + alpha * (h - 1)`` per unit of weight that joins it (the right part
    the reverse), and the DP's floats lie within the slack of exact values (used twice)."""
    alpha, s2 = st.alpha[0], 2.0 * st.alpha[1]
    move = 1.0 + alpha * (h - 1)
    b = st.bst[lev]
    rec = st.rec[lev]
    lbL = min(b[k, 0], alpha * b[k, 1])
    lbR = min(b[k, 2], alpha * b[k, 3])
    if kl >= 0:
        lbL = max(lbL, rec[kl, 0] - s2)
        lbR = max(lbR, rec[kl, 1] - move * (b[k, 1] - b[kl, 1]) - s2)
    if kr >= 0:
        lbR = max(lbR, rec[kr, 1] - s2)
        lbL = max(lbL, rec[kr, 0] - move * (b[kr, 1] - b[k, 1]) - s2)
    return lbL, lbR


@njit(cache=True)
def interval_bound(st, lev, kl, kr):
    """A lower bound of every candidate strictly between the met boundaries ``kl`` and ``kr``:
    the left part's value at ``kl`` and the right part's at ``kr`` (monotone, less the
    slack), as the DP adds them."""
    s2 = 2.0 * st.alpha[1]
    lbL = max(st.rec[lev, kl, 0] - s2, 0.0) if kl >= 0 else 0.0
    lbR = max(st.rec[lev, kr, 1] - s2, 0.0) if kr >= 0 else 0.0
    return (st.nd[lev, N_AW] + lbL) + lbR


@njit(cache=True)
def reach_of(st, lev, h, a, b):
    """How much a part's value may change between boundaries ``a <= b`` of the node at
    ``lev`` (``h`` tests left): ``1 + alpha * (h - 1)`` per unit of weight moved, as in
    `neighbour_bounds`. A candidate's left part is solved under its bound plus the reach from
    the lower end of the candidate's interval to it, its right part plus the reach from it to
    the upper end: a value found below the widened bound is still exact, and a part that fails
    returns a lower bound high enough to exclude, through `neighbour_bounds`, the boundaries
    of the interval it reaches, which would otherwise each be valued (ConTree's neighbourhood
    device: Brița, van der Linden & Demirović, AAAI 2025)."""
    bst = st.bst[lev]
    move = 1.0 + st.alpha[0] * (h - 1)
    return move * (bst[b, 1] - bst[a, 1])


@njit(cache=True)
def push_halves(st, lev, qt, lo, hi, k, kl, kr):
    """Queue the intervals left and right of boundary ``k`` in [lo, hi]; returns the new
    queue length."""
    q = st.queue[lev]
    if lo < k:
        q[qt, 0], q[qt, 1], q[qt, 2], q[qt, 3] = lo, k - 1, kl, k
        qt += 1
    if k < hi:
        q[qt, 0], q[qt, 1], q[qt, 2], q[qt, 3] = k + 1, hi, k, kr
        qt += 1
    return qt


@njit(cache=True)
def depth2_parts(st, lev, f, pos):
    """The DP's values of both parts of boundary ``pos`` of feature ``f`` (the node at ``lev``
    has two tests left, so each part has one), exact, in one pass over the node's rows per
    feature: each part keeps its own class weights and running best, as `solve_depth1` does
    on the part alone (the first strict minimum over its leaf, then the features in order and
    their thresholds left to right; the same floats). The parts' trees go to ``sd[lev]``.
    (The record's arrays are indexed, never viewed or sliced, and nothing is allocated: each
    of those makes numba reference every array of the record per call.)"""
    m = st.m[lev]
    nc = st.tot.shape[1]
    # st.ps[lev, s]: part s's class totals, running class weights, and in the last four
    # slots its best value, its aW, the last rank seen and that row
    best, aw, last, row = 2 * nc, 2 * nc + 1, 2 * nc + 2, 2 * nc + 3
    for i in range(m):
        st.flag[lev, row_of(st.ord[lev, f, i])] = 0 if i < pos else 1
    for s in range(2):
        for c in range(2 * nc):
            st.ps[lev, s, c] = 0.0
    for i in range(m):
        r = row_of(st.ord[lev, f, i])
        st.ps[lev, st.flag[lev, r], st.y[r]] += st.w[r]
    for s in range(2):
        W, top = 0.0, 0.0
        for c in range(nc):
            W += st.ps[lev, s, c]
            top = max(top, st.ps[lev, s, c])
        st.ps[lev, s, best] = W - top
        st.ps[lev, s, aw] = st.alpha[0] * W
        st.sd[lev, s, 0] = -1.0
    for g in range(st.ord.shape[1]):
        if (st.ps[lev, 0, best] <= st.ps[lev, 0, aw]
                and st.ps[lev, 1, best] <= st.ps[lev, 1, aw]):
            break  # (a part whose best is at most its aW takes no split)
        for s in range(2):
            for c in range(nc, 2 * nc):
                st.ps[lev, s, c] = 0.0
            st.ps[lev, s, last] = -1.0
        for i in range(m):
            p = st.ord[lev, g, i]
            r = row_of(p)
            s = st.flag[lev, r]
            v = float(rank_of(p))
            if (v != st.ps[lev, s, last] and st.ps[lev, s, last] >= 0.0
                    and st.ps[lev, s, best] > st.ps[lev, s, aw]):
                cost = part_cost(st.ps, lev, s, nc)
                if cost < st.ps[lev, s, best]:
                    st.ps[lev, s, best] = cost
                    st.sd[lev, s, 0] = g
                    prev = np.int64(st.ps[lev, s, row])
                    st.sd[lev, s, 1] = midpoint(st.X[prev, g], st.X[r, g])
            st.ps[lev, s, last] = v
            st.ps[lev, s, row] = r
            st.ps[lev, s, nc + st.y[r]] += st.w[r]
    st.stats[S_SCORED] += 1
    return st.ps[lev, 0, best], st.ps[lev, 1, best]


@njit(cache=True, inline="always")
def part_cost(ps, lev, s, nc):
    """The DP's float of a part's split whose left side has the running class weights of
    ``ps[lev, s]`` (as `side_errors`, then ``(aW + e_left) + e_right``)."""
    wl, wr, ml, mr = 0.0, 0.0, 0.0, 0.0
    for c in range(nc):
        lv = ps[lev, s, nc + c]
        rv = ps[lev, s, c] - lv
        wl += lv
        wr += rv
        ml = max(ml, lv)
        mr = max(mr, rv)
    return (ps[lev, s, 2 * nc + 1] + (wl - ml)) + (wr - mr)


@njit(cache=True)
def take_depth2(st, lev, f, pos):
    """Make the split (feature ``f``, first ``pos`` rows left) with the parts' depth-1 trees of
    `depth2_parts` the node's tree."""
    tf, tt = st.tf[lev, 0], st.tt[lev, 0]
    rows = st.ord[lev, f]
    tf[0] = f
    tt[0] = midpoint(st.X[row_of(rows[pos - 1]), f], st.X[row_of(rows[pos]), f])
    for s in range(2):
        tf[1 + s] = np.int64(st.sd[lev, s, 0])
        tt[1 + s] = st.sd[lev, s, 1]
    for j in range(3, 7):
        tf[j] = -1


@njit(cache=True)
def child_bound(nd, fixed):
    """The upper bound a part is solved under when the rest of the candidate costs ``fixed``:
    the best so far (or ``ub``) minus it, plus a margin (equality must come back exact: an
    equal value with an earlier key wins)."""
    bound = min(nd[N_BEST], nd[N_UB])
    return bound - fixed + margin_of(bound)


@njit(cache=True)
def solve_alpha(st, lev, h, ub):
    """The DP's value and tree (into ``tf[lev, 0]``) of the node at ``lev`` with ``h`` tests
    left, if that value is below ``ub``; otherwise a lower bound of it that is ``>= ub``.

    The DP keeps the first minimum in its order (the leaf, then feature 0's boundaries left to
    right, feature 1's, ...), so the node keeps the least (value, key) found, the key being
    that order; candidates may then be met in any order. First every feature's best Gini
    boundary (an early incumbent), then each feature's boundaries by bisection: an interval
    between two met boundaries is skipped when `interval_bound` excludes it, a boundary when
    `neighbour_bounds` do; otherwise its left part is solved under a bound, then its right
    part, each bound widened by the part's reach over the interval (`reach_of`), and each part
    solved again without a bound when it fails by less than the margin, so no decision rests
    on it. Only this function calls itself, with non-constant arguments (see
    `_numeric_kernels.solve_node` on numba's cache and literal arguments)."""
    err, aW, searched = open_node(st, lev, h)
    if not searched:
        return err
    if h == 1:
        return solve_depth1(st, lev, aW, err)
    nd = st.nd[lev]
    nd[N_BEST], nd[N_KEY], nd[N_FLOOR], nd[N_UB], nd[N_AW] = err, -1.0, np.inf, ub, aW
    if lev == 0:  # the anytime trace: the root's first incumbent (its leaf)
        record(st.clock, err, 0.0)
    d = st.ord.shape[1]
    stride = st.ord.shape[2] + 1
    for it in range(2 * d):
        f = it % d
        qh, qt = 0, start_feature(st, lev, f, it < d)
        while qh < qt and not timed_out(st.stats):
            q = st.queue[lev, qh]
            lo, hi, kl, kr = q[0], q[1], q[2], q[3]
            qh += 1
            if excluded(nd, interval_bound(st, lev, kl, kr), f * stride + lo):
                continue
            k = (lo + hi) // 2
            key = f * stride + k
            qt = push_halves(st, lev, qt, lo, hi, k, kl, kr)
            lbL, lbR = neighbour_bounds(st, lev, h, k, kl, kr)
            st.rec[lev, k, 0], st.rec[lev, k, 1] = lbL, lbR
            pos = st.bpos[lev, k]
            vL, vR, ubR = np.inf, np.inf, np.inf
            lb = (aW + lbL) + lbR
            if h == 2:  # both parts exactly, in one pass per feature
                if not excluded(nd, lb, key):
                    vL, vR = depth2_parts(st, lev, f, pos)
                    st.rec[lev, k, 0], st.rec[lev, k, 1] = vL, vR
                    lb = (aW + vL) + vR
                    if not excluded(nd, lb, key) and (lb < nd[N_BEST] or key < nd[N_KEY]):
                        nd[N_BEST], nd[N_KEY] = lb, key
                        take_depth2(st, lev, f, pos)
                        if lev == 0:
                            record(st.clock, lb, 0.0)
                continue
            for attempt in range(2):  # the left part under a widened bound, then exactly
                if excluded(nd, lb, key):
                    break
                ubL = np.inf
                if attempt == 0:
                    ubL = child_bound(nd, aW + lbR) + reach_of(st, lev, h, lo, k)
                split_child(st, lev, f, pos, 0)
                vL = solve_alpha(st, lev + 1, h - 1, ubL)
                st.rec[lev, k, 0] = max(lbL, vL)
                lb = (aW + vL) + lbR
                if vL < ubL:
                    break
            if vL == np.inf or excluded(nd, lb, key):
                continue
            st.tf[lev, 1, :] = st.tf[lev + 1, 0, :]
            st.tt[lev, 1, :] = st.tt[lev + 1, 0, :]
            reach = reach_of(st, lev, h, k, hi)
            for attempt in range(2):  # the right part likewise, under a widened bound
                ubR = child_bound(nd, aW + vL) + reach if attempt == 0 else np.inf
                split_child(st, lev, f, pos, 1)
                vR = solve_alpha(st, lev + 1, h - 1, ubR)
                st.rec[lev, k, 1] = max(lbR, vR)
                lb = (aW + vL) + vR
                if vR < ubR or excluded(nd, lb, key):
                    break
            if vR < ubR and not excluded(nd, lb, key) and (lb < nd[N_BEST] or key < nd[N_KEY]):
                nd[N_BEST], nd[N_KEY] = lb, key
                take_split(st, lev, h, f, pos)
                if lev == 0:
                    record(st.clock, lb, 0.0)
    best, floor = nd[N_BEST], nd[N_FLOOR]
    return best if best < ub else min(best, floor)
