"""Compiled kernels of the numeric search with a per-test price (`treebench.search.numeric`,
``solve_numeric_alpha``): DPDT's objective ``E + alpha * L`` on raw numeric features, in the
DP's own floating-point arithmetic, so that the tree returned is exactly the one backward
induction over every state returns (`treebench.algorithms._dpdt_solver`).

At a node of weight ``W`` with at least one test left the DP values a split as the float
``(aW + v_left) + v_right`` (``aW = alpha * W`` one product, ``v_*`` the children's own such
floats, a leaf's value its misclassified weight), and keeps the first minimum over (leaf,
feature 0's thresholds in increasing order, feature 1's, ...), a split taken only when its
float is strictly below the best so far. This search visits the same candidates in the same
order and takes a split on the same comparison of the same floats; it skips a candidate only
when a float **lower bound** of its value, built with the same expression, is already not
below the best so far:

* a child's value is at least ``min(e, alpha * W_child)`` (``e`` its leaf error): it is its
  leaf or a split, and a split costs at least ``alpha * W_child`` because IEEE addition of
  non-negative numbers never decreases (``fl(x + v) >= x`` for ``v >= 0``);
* IEEE addition is monotone (``a <= a'`` and ``b <= b'`` give ``fl(a + b) <= fl(a' + b')``),
  so ``(aW + lb_left) + lb_right`` bounds the DP's float from below, and so does
  ``(aW + v_left) + lb_right`` once the left child is solved;
* a node whose leaf error is at most ``aW`` is a leaf (no split's float is below ``aW``);
* neighbour bounds along a feature's sweep. In exact arithmetic the optimum ``V(S)`` of a
  child with ``h`` tests left never decreases when rows join ``S`` (the optimal tree of the
  larger set, restricted to ``S``, has no more errors and no longer paths; a test that no
  longer separates rows is dropped, which only lowers the value), and grows by at most
  ``(1 + alpha * h)`` per unit of weight that joins (the optimal tree of ``S`` applied to the
  larger set: each new row adds at most its weight in errors and ``alpha`` times its weight
  per test on its path). As the threshold moves right rows only join the left part and only
  leave the right part, so every value or lower bound found for a part bounds the same part
  at later thresholds: the left one as it is, the right one minus ``(1 + alpha * h)`` times
  the weight moved since. These are bounds on exact values; the DP's floats lie within
  `neighbour_slack` of them (a float evaluation of a tree of ``k`` tests rounds ``3k``
  times, each error at most half an ulp of the largest value), so the bounds are used minus
  twice that slack, and stay lower bounds of the DP's floats.

Children are solved under upper bounds with the contract of the layer search
(`treebench.algorithms._dpdt_layer`): a value below the bound is exact, any other is a lower
bound at or above it; the bounds carry a margin against the rounding of the subtractions that
derive them, and a failed child whose proof does not hold on the monotone expression (a
near-tie) is solved again without a bound, so no decision rests on the margin.

No tolerance is used in any comparison: the running best is the DP's running best at every step (the
same candidates are taken, on the same floats), so the search returns the DP's tree and its
bit-identical value. The sums of weights are exact because the caller admits whole-number
weights only (their sums are integers below 2^53). Candidates are not ordered by promise and
the bisection of the errors-only search is not used: the search is exact first.

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
        "stats",  # (N_STATS,) int64 counters and the timeout flag
        "clock",  # (1,) float64 absolute deadline (<= 0: none)
    ],
)


def neighbour_slack(w, alpha, max_depth):
    """How far the DP's float value of any node may lie from its exact value, with room to
    spare, plus the rounding of the bounds' own running sums: a tree has at most
    ``2^max_depth`` tests, three rounded operations each (half an ulp of a result at most
    ``W * (1 + alpha * max_depth)``, ``W`` the total weight): at most ``3 * 2^16 * 2^-53``,
    about ``2.2e-11``, of that largest value at depth 16, covered several times by
    `RELATIVE_SLACK`; a sweep's running bound is updated at most once a row, each update
    rounding by half an ulp, covered by ``4 * n * 2^-53`` of it."""
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
        np.zeros(N_STATS, dtype=np.int64),
        np.array([deadline if deadline is not None else -1.0]),
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
    its test ``aW``) into ``tf[lev, 0]``; returns its value."""
    tot, lc = st.tot[lev], st.lc[lev]
    tf, tt = st.tf[lev, 0], st.tt[lev, 0]
    best = err
    for f in range(st.ord.shape[1]):
        if best <= aW:  # no split's value is below aW
            break
        rows = st.ord[lev, f]
        lc[:] = 0.0
        prev = rank_of(rows[0])
        for i in range(st.m[lev]):
            p = rows[i]
            if rank_of(p) != prev:
                prev = rank_of(p)
                eL, _, eR, _ = side_errors(tot, lc)
                cost = (aW + eL) + eR
                if cost < best:
                    best = cost
                    tf[0] = f
                    tt[0] = midpoint(st.X[row_of(rows[i - 1]), f], st.X[row_of(p), f])
                    tf[1], tf[2] = -1, -1
            r = row_of(p)
            lc[st.y[r]] += st.w[r]
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
def solve_alpha(st, lev, h, ub):
    """The DP's value and tree (into ``tf[lev, 0]``) of the node at ``lev`` with ``h`` tests
    left, if that value is below ``ub``; otherwise a lower bound of it that is ``>= ub``.
    Only this function calls itself, with non-constant arguments (see
    `_numeric_kernels.solve_node` on numba's cache and literal arguments)."""
    err, aW, searched = open_node(st, lev, h)
    if not searched:
        return err
    if h == 1:
        return solve_depth1(st, lev, aW, err)
    alpha, slack = st.alpha[0], st.alpha[1]
    move = 1.0 + alpha * (h - 1)  # the most one unit of weight adds to a child's value
    tot, lc = st.tot[lev], st.lc[lev]
    # a seed: every feature's best Gini threshold, valued exactly; the least such value U
    # caps the search (a candidate is skipped when its lower bound is above U, never at U)
    # (the node's tree is the seed's until the sweep takes a candidate, which it does unless
    # the deadline passes first: the seed's candidate is one the sweep would take)
    cap, seed = min(err, ub), np.inf
    for f in range(st.ord.shape[1]):
        pos = gini_boundary(st, lev, f)
        if pos < 0 or timed_out(st.stats):
            continue
        split_child(st, lev, f, pos, 0)
        ubL = cap - aW + margin_of(cap)
        vL = solve_alpha(st, lev + 1, h - 1, ubL)
        if vL >= ubL or (aW + vL) >= cap:
            continue
        st.tf[lev, 1, :] = st.tf[lev + 1, 0, :]
        st.tt[lev, 1, :] = st.tt[lev + 1, 0, :]
        split_child(st, lev, f, pos, 1)
        ubR = cap - (aW + vL) + margin_of(cap)
        vR = solve_alpha(st, lev + 1, h - 1, ubR)
        if vR < ubR and (aW + vL) + vR < cap:
            seed = (aW + vL) + vR
            cap = np.nextafter(seed, np.inf)
            take_split(st, lev, h, f, pos)
    best = err
    floor = np.inf  # the smallest lower bound of a candidate excluded by ub alone
    for f in range(st.ord.shape[1]):
        rows = st.ord[lev, f]
        lc[:] = 0.0
        # lower bounds of the two parts' exact values along the sweep (`neighbour bounds`)
        reL, reR, wseen = 0.0, 0.0, 0.0
        prev = rank_of(rows[0])
        for i in range(st.m[lev]):
            p = rows[i]
            if rank_of(p) != prev and not timed_out(st.stats):
                prev = rank_of(p)
                eL, wl, eR, wr = side_errors(tot, lc)
                reR -= (wl - wseen) * move
                wseen = wl
                lbL = max(min(eL, alpha * wl), reL - slack)
                lbR = max(min(eR, alpha * wr), reR - slack)
                bound = min(best, ub, cap)
                lb = (aW + lbL) + lbR
                vL = np.inf
                for attempt in range(2):  # the left child under a bound, then exactly
                    if lb >= bound:
                        break
                    ubL = bound - aW - lbR + margin_of(bound) if attempt == 0 else np.inf
                    split_child(st, lev, f, i, 0)
                    vL = solve_alpha(st, lev + 1, h - 1, ubL)
                    reL = max(reL, vL - slack)
                    lb = (aW + vL) + lbR
                    if vL < ubL:
                        break
                if lb >= bound:  # (no `continue`: row p must still join the left part)
                    floor = min(floor, lb) if lb < best else floor
                else:
                    st.tf[lev, 1, :] = st.tf[lev + 1, 0, :]
                    st.tt[lev, 1, :] = st.tt[lev + 1, 0, :]
                    vR, ubR = np.inf, np.inf
                    for attempt in range(2):  # the right child likewise
                        ubR = bound - (aW + vL) + margin_of(bound) if attempt == 0 else np.inf
                        split_child(st, lev, f, i, 1)
                        vR = solve_alpha(st, lev + 1, h - 1, ubR)
                        reR = max(reR, vR - slack)
                        lb = (aW + vL) + vR
                        if vR < ubR or lb >= bound:
                            break
                    if lb < best and vR < ubR:
                        best = lb
                        take_split(st, lev, h, f, i)
                    elif lb < best:
                        floor = min(floor, lb)
            elif rank_of(p) != prev:
                prev = rank_of(p)
            r = row_of(p)
            lc[st.y[r]] += st.w[r]
    if seed < best:  # (only when the deadline stopped the sweep before it took one)
        best = seed
    return best if best < ub else min(best, floor)
