"""Compiled kernels of the optimal solver on numeric features (`treebench.search.numeric`).

The search is a depth-first dynamic program with branch-and-bound over (node rows, depth
budget), in the spirit of ConTree (Brița, van der Linden, Demirović, AAAI 2025):

* a node at recursion level ``lev`` keeps, for every feature, its rows sorted by that feature
  (``ord[lev, f, :m]``), obtained from the parent's orders by filtering;
* the candidate splits of a feature are the boundaries between consecutive distinct values in
  the node (``bpos``: the number of rows left of the boundary, ``bw``: their weight);
* with two tests left, a root candidate's two children are solved by one pass per feature
  that finds the best single test of both sides at once (`scan_feature`, the two sides'
  running state indexed by the side, without a branch on it). A side skips the boundaries
  that cannot beat its best: after moving weight ``a`` of rows, a boundary scores at most
  ``L_j + R_k + a`` with ``j != k`` the majority classes of its two parts (``j = k`` never
  beats the leaf), so nothing is evaluated before the best can be passed; a side looks only
  for costs below the split's allowance minus the other side's lower bound (as ConTree's
  depth-two solver, which caps both sides at the bound; the allowance widened by the weight
  to the far end of the interval being searched, so that a failing side bounds out the whole
  interval), and a side that finds none returns a lower bound instead of its cost; a side
  stops when its best reaches its lower bound;
* deeper, the candidates of a feature are searched by bisection with interval pruning: the
  left child's cost never decreases and the right child's never increases as the threshold
  moves right, so an interval between two evaluated thresholds ``i < j`` costs at least
  ``left(i) + right(j)`` (and ``left(j) + right(i)`` minus the weight between them), and a
  threshold that moves weight ``w`` of rows away from an evaluated one of total ``t`` costs at
  least ``t - w``; each side of a split is bounded by both evaluated neighbours (`side_bounds`:
  the neighbour that gives it a subset of its rows, and the other minus the weight between);
* a node first evaluates the best Gini split of some features (`seed_count`: every feature
  at the root of a depth-2 search and at nodes with three tests left, else only the feature
  of the best Gini score), then searches the features in full: from the lowest cost found
  there, then the others by their Gini score;
* children are solved under upper bounds passed down; a child that cannot reach its bound
  returns a lower bound instead of a tree. A child is also given the lower bound of its cost
  from the evaluated neighbours (`side_bounds`): a tree that reaches it ends its search;
* the class bound (`class_floor`): a tree of at most L leaves misclassifies at least the
  weight of all but the L heaviest classes of its node; with more classes than leaves it
  raises a depth-1 side's bound on its splits and the two sides' lower bounds in
  `start_sides`, and the lower bounds of a deeper candidate's children (`deep_prepare`);
* a candidate's child keeps records of its evaluated splits (feature, rank of the left value,
  left / right cost or lower bound); the same side's child of a neighbouring candidate of the
  same feature has a subset or a superset of its rows, and each of its splits is bounded by
  those records less the weight of the rows the neighbour's child has and it lacks
  (`memo_bounds`): a split or an interval of them that the bounds exclude is not evaluated;
* from depth 4 on, the nodes with two tests left solved for their cost alone are kept in a
  table by row set (`cache_slot`; a hash of the rows, then their bitsets compared): a node
  met again with the same rows (the same two tests in the other order, or the children of
  neighbouring candidates that the rows between them do not reach) takes its cost and tree,
  or its lower bound, from there. The table has a byte cap (`CACHE_BYTES`); when it is
  full, new nodes are not stored (slower, never wrong).

Ties (documented in ``docs/optimal-numeric.md``): at every node a leaf is kept unless a split
is strictly better; among splits of equal cost the lowest feature index wins, then the lowest
threshold; children follow the same rule. Costs are compared with the tolerance ``eps``
(0.5 when every cost is an integer, i.e. integer weights and no leaf penalty). The rule costs
little search: ties are explored only at the node whose tree is being chosen (``canon``) and
only where they could win (a lower feature, or lower thresholds of the incumbent's feature);
candidate splits' children are solved for their cost alone, and the chosen split's children
are solved again for their canonical tree under their known cost (``known``: a leaf of that
cost is the answer, else the features are searched in index order for the first split of
that cost, and no later feature or threshold is searched).

Trees are written in heap layout (node ``k`` has children ``2k + 1`` and ``2k + 2``;
feature -1 marks a leaf), one buffer per recursion level.

Reference counts: a kernel receiving the search record ``st`` may make numba take a reference
(an atomic increment, later a decrement) on each of the record's 30 arrays per call, which
costs more than a depth-2 evaluation's bookkeeping. numba prunes these pairs unless the kernel
takes and releases a view of an array (``st.ord[lev, f]``: index ``st.ord[lev, f, i]``
instead), reduces or copies a slice, allocates, or calls another kernel under a condition or
uses the record after such a call; helpers called there take the few arrays they read
(`allowed`, `improves`, `hopeless`, `memo_bounds`, `gini_scan`) instead of the record.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.clock import check_time, now_seconds, timed_out  # noqa: F401
from treebench.search.state import N_STATS, S_CAP_HIT, S_ENTRIES, S_EXPANDED, S_HITS, S_SCORED
from treebench.search.trace import new_clock, record

# parameter slots (float64 vector ``par``)
P_EPS, P_PEN, P_INT, P_UNIT, P_WIDTH = range(5)
N_PAR = 5

NumState = namedtuple(
    "NumState",
    [
        "X",  # (n, d) float64 feature values (thresholds are midpoints of them)
        "y",  # (n,) int64 class index
        "w",  # (n,) float64 sample weight
        "ord",  # (L, d, n) int64 the node's rows at each level sorted by each feature, packed
        #         as rank << 32 | row (`row_of`, `rank_of`): one sequential read gives both
        "m",  # (L,) int64 node size per level
        "side",  # (L, n) uint16 side s (0 left, 1 right) and class c of a row as s * nc + c
        "lpos",  # (L, 2) int64 feature and position the sides were set at (-1: not by a split)
        "ltot",  # (L, 2 nc) float64 class weights of the two sides
        "bpos",  # (L, n) int64 boundary positions of the feature being searched
        "bw",  # (L, n) float64 weight left of each boundary
        "rec",  # (L, 2, n) float64 left / right cost (or lower bound) at evaluated boundaries
        "queue",  # (L, 2n + 4, 4) int64 intervals to search: lo, hi, left / right evaluated
        "prek",  # (L, d) int64 each feature's first boundary evaluated (its best Gini split)
        "prer",  # (L, 2, d) float64 left / right cost (or lower bound) found there
        "forder",  # (L, d) int64 the order in which features are searched in full
        "inc",  # (L, N_INC) float64 the node's incumbent (slots I_*)
        "tot",  # (L, nc) float64 class weights of the node
        "tf",  # (L, 3, S) int64 trees in heap layout: best, candidate left, candidate right
        "tt",  # (L, 3, S) float64 their thresholds
        "cur",  # (2 nc,) float64 running class weights of the two sides of a depth-1 scan
        "icur",  # (2 nc,) int64 the same, counted as integers with unit weights
        "stot",  # (2 nc,) float64 class totals of the two sides (side s at s * nc)
        "sbest",  # (2, 7) float64 per side: best cost, feature, threshold, done, done here,
        #           a lower bound of its cost (known from a neighbouring split), and a cap:
        #           only costs below ``cap - eps`` are worth finding
        "sfloat",  # (1, 2) float64 per side of a depth-1 scan: weight to skip
        "sint",  # (2, 2) int64 per side of a depth-1 scan: the rank of its last row; with
        #          unit weights, the rows to skip (the floor of the weight to skip)
        "par",  # (N_PAR,) float64 eps, leaf penalty, integer-costs flag, unit weights flag,
        #         width of a widened search (0: the exact search; `solve_node`)
        "stats",  # (N_STATS,) int64 counters and the timeout flag
        "clock",  # (1,) float64 absolute deadline (<= 0: none)
        # records of the candidates' children (`memo_bounds`), one pool per level: a record is
        # a split evaluated in a child (feature << 32 | rank of its left value) with its left
        # and right cost or lower bound
        # (few arrays: every array of the record widens every kernel call, which costs time)
        "mkey",  # (L, MEMO_POOL) int64 feature << 32 | rank (a pool of 1 below depth 3)
        "mval",  # (L, MEMO_POOL + 3, 2) float64 left / right cost (or lower bound); the last
        #          three rows: the node's two sources of bounds (`memo_sources`), first record,
        #          count, weight of the rows the source has and the node lacks
        "mkid",  # (L, 2, 2, n + 1) int64 (last axis of 1 below depth 3) [l, s, 0, k]: the
        #          records of side s's child of boundary k of the feature being searched at
        #          level l (first << 32 | count), valid when [l, s, 1, k] equals the level's
        #          epoch; in the last column, [l, 0, 0]: records in use at level l (emptied
        #          when a node at l - 1 opens), [l, 0, 1]: the epoch (new for every feature
        #          searched), [l, 1, 0]: 1 when the node at l keeps records of its splits
        # results of the nodes with two tests left solved for their cost alone, by row set
        # (`cache_slot`; a table without entries below depth 4): a hash table of C slots over E
        # entries stored in the order they come (so that memory grows with their number)
        "ckey",  # (C, 2) int64 per slot: hash of a stored node's rows (0: empty), its entry
        "cval",  # (E, 8) float64 per entry: the node's cost (or a lower bound), 1.0 if that
        #          is its cost, and its tree when it is: feature, threshold of heap nodes 0-2
        "crow",  # (E + 1, W) uint64 per entry: its rows as a bitset (row E: the node being
        #          opened)
        "rkey",  # (n,) int64 a random key per row: a node's hash is the xor of its rows' keys
    ],
)

# incumbent slots: cost, is a leaf, feature, boundary, its position, left / right cost
I_COST, I_LEAF, I_FEAT, I_K, I_POS, I_LEFT, I_RIGHT = range(7)
N_INC = 7

#: a count of rows to skip that no scan reaches (a side stopped on a feature)
NEVER = 1 << 62

#: the records of candidates' children kept per level (a pool that is full keeps no more)
MEMO_POOL = 1 << 15

#: the most bytes the table of nodes' results (`cache_slot`) may take: its number of slots is
#: the largest power of two that fits with entries for 7/8 of them (the entries' memory is
#: taken as they are stored); a full table stores no more
CACHE_BYTES = 16 << 20

#: how many features a node evaluates at their best Gini split before any full search (those
#: of the best Gini scores), except where every feature's is (`seed_count`); the others are
#: searched in full only, after the seeded ones, in the order of their Gini scores
SEEDS = 1

# sbest columns
# (done: the side cannot be improved at all; done here: not on the feature being scanned)
B_COST, B_FEAT, B_THR, B_DONE, B_HERE, B_LB, B_CAP = range(7)


def sorted_rows(X):
    """(d, n) int64: every feature's rows in increasing order of value, packed as
    rank << 32 | row with the dense rank of the value among the feature's distinct values.
    (The order of rows of equal value does not matter: the search only splits between
    distinct values; numpy's default sort is several times faster than its stable one.)"""
    XT = np.ascontiguousarray(X.T)
    return pack_ranks(XT, np.argsort(XT, axis=1))


@njit(cache=True)
def pack_ranks(XT, order):
    """Rows in ``order`` (each feature's argsort of ``XT``) packed with their dense ranks, in
    one pass (numpy's gather, compare and cumulative sum took as long as the sort)."""
    d, n = order.shape
    out = np.empty((d, n), dtype=np.int64)
    for f in range(d):
        rank = 0
        prev = XT[f, order[f, 0]]
        for i in range(n):
            r = order[f, i]
            v = XT[f, r]
            if v != prev:
                rank += 1
                prev = v
            out[f, i] = (rank << 32) | r
    return out


def level_orders(X, max_depth):
    """``(L, S, order, m)`` of a search of depth ``max_depth``: its number of recursion
    levels, the size of a heap tree, every level's rows in each feature's order (level 0:
    every row) and every level's row count."""
    n, d = X.shape
    L = max_depth + 1
    order = np.empty((L, d, n), dtype=np.int64)
    order[0] = sorted_rows(X)
    m = np.zeros(L, dtype=np.int64)
    m[0] = n
    return L, 2 ** (max_depth + 1) - 1, order, m


def new_state(X, y, w, n_classes, max_depth, eps, pen, integer, deadline):
    """Allocate every buffer of a search of depth ``max_depth`` (plain numpy, outside the
    compiled code)."""
    n, d = X.shape
    L, S, order, m = level_orders(X, max_depth)
    par = np.zeros(N_PAR)
    par[P_EPS], par[P_PEN], par[P_INT] = eps, pen, 1.0 if integer else 0.0
    par[P_UNIT] = 1.0 if np.all(w == 1.0) else 0.0
    # the records of candidates' children are kept from depth 3 on (children searched with
    # two tests left); written before they are read, so left uninitialised (a first fit
    # would otherwise fault in and clear their pages)
    deep = max_depth >= 3
    pool = MEMO_POOL if deep else 1
    mval = np.empty((L, pool + 3, 2))
    mval[:, pool:, :] = 0.0
    # the table of nodes' results, from depth 4 on (where nodes with two tests left are met
    # again with the same rows); left uninitialised but for its keys (written before read)
    words = (n + 63) // 64
    slots = 2
    while max_depth >= 4 and 2 * slots * (8 * words + 80) + 8 * words <= CACHE_BYTES:
        slots *= 2
    entries = slots - 1 - slots // 8 if max_depth >= 4 else 0  # (a free slot ends a probe)
    return NumState(
        X, y, w, order, m,
        np.zeros((L, n), dtype=np.uint16),
        np.full((L, 2), -1, dtype=np.int64),
        np.zeros((L, 2 * n_classes)),
        np.zeros((L, n), dtype=np.int64),
        np.zeros((L, n)),
        np.zeros((L, 2, n)),
        np.zeros((L, 2 * n + 4, 4), dtype=np.int64),
        np.full((L, d), -1, dtype=np.int64),
        np.zeros((L, 2, d)),
        np.zeros((L, d), dtype=np.int64),
        np.zeros((L, N_INC)),
        np.zeros((L, n_classes)),
        np.full((L, 3, S), -1, dtype=np.int64),
        np.zeros((L, 3, S)),
        np.zeros(2 * n_classes),
        np.zeros(2 * n_classes, dtype=np.int64),
        np.zeros(2 * n_classes),
        np.zeros((2, 7)),
        np.zeros((1, 2)),
        np.zeros((2, 2), dtype=np.int64),
        par,
        np.zeros(N_STATS, dtype=np.int64),
        new_clock(deadline if deadline is not None else -1.0),
        np.empty((L, pool), dtype=np.int64),
        mval,
        np.zeros((L, 2, 2, n + 1 if deep else 1), dtype=np.int64),
        np.zeros((slots, 2), dtype=np.int64),
        np.empty((entries, 8)),
        np.empty((entries + 1, words), dtype=np.uint64),
        np.random.default_rng(0).integers(1, 1 << 62, size=n if entries > 0 else 1),
    )


@njit(cache=True)
def row_of(p):
    return p & 0xFFFFFFFF


@njit(cache=True)
def rank_of(p):
    return p >> 32


@njit(cache=True)
def midpoint(a, b):
    """Threshold between two consecutive distinct values ``a < b``: their midpoint
    ``a/2 + b/2`` (which cannot overflow), or ``a`` when rounding puts it on ``b`` (so that
    ``b`` still goes right). DPDT's generators use this function too, so the numeric search
    and DPDT's exhaustive generator propose the same thresholds."""
    t = a / 2.0 + b / 2.0
    if t >= b or not np.isfinite(t):
        t = a
    return t


@njit(cache=True)
def copy_sub(src_f, src_t, dst_f, dst_t, at, depth):
    """Copy the heap tree ``src`` (at most ``depth`` levels below its root) under node ``at``
    of the heap tree ``dst``."""
    width = 1
    for t in range(depth + 1):
        first = width - 1
        base = (at + 1) * width - 1
        for o in range(width):
            dst_f[base + o] = src_f[first + o]
            dst_t[base + o] = src_t[first + o]
        width *= 2


@njit(cache=True)
def node_totals(st, lev):
    """Class weights of the node at ``lev`` into ``tot[lev]``; returns its total weight."""
    nc = st.tot.shape[1]
    for c in range(nc):
        st.tot[lev, c] = 0.0
    for i in range(st.m[lev]):
        r = row_of(st.ord[lev, 0, i])
        st.tot[lev, st.y[r]] += st.w[r]
    W = 0.0
    for c in range(nc):
        W += st.tot[lev, c]
    return W


@njit(cache=True)
def boundaries(st, lev, f):
    """Boundaries between distinct values of feature ``f`` in the node: their positions into
    ``bpos[lev]`` and the weight left of them into ``bw[lev]``; returns their number."""
    rows = st.ord[lev, f]
    unit = st.par[P_UNIT] != 0.0
    k = 0
    acc = 0.0
    prev = rank_of(rows[0])
    for i in range(st.m[lev]):
        p = rows[i]
        v = rank_of(p)
        if v != prev:
            st.bpos[lev, k] = i
            st.bw[lev, k] = acc
            k += 1
            prev = v
        acc += 1.0 if unit else st.w[row_of(p)]
    return k


@njit(cache=True)
def set_side(st, lev, f, pos):
    """Mark the first ``pos`` rows of the node in feature ``f``'s order left (0), the others
    right (1); class weights of the two sides into ``stot``. When the sides were last set on
    the same feature (and weights are 1, so that sums stay exact), only the rows between the
    two positions change side. (No views of the record's arrays: a kernel whose views are
    released in its body keeps a reference on every array of the record, numba's pruning of
    reference counts fails there.)"""
    nc = st.tot.shape[1]
    p0 = st.lpos[lev, 1]
    if st.lpos[lev, 0] == f and st.par[P_UNIT] != 0.0:
        step = -nc if pos > p0 else nc  # the code change of the rows that move
        for i in range(min(p0, pos), max(p0, pos)):
            r = row_of(st.ord[lev, f, i])
            code = int(st.side[lev, r])
            st.side[lev, r] = code + step
            st.ltot[lev, code] -= 1.0
            st.ltot[lev, code + step] += 1.0
    else:
        for c in range(2 * nc):
            st.ltot[lev, c] = 0.0
        for i in range(st.m[lev]):
            r = row_of(st.ord[lev, f, i])
            code = st.y[r] + (0 if i < pos else nc)
            st.side[lev, r] = code
            st.ltot[lev, code] += st.w[r]
    st.lpos[lev, 0], st.lpos[lev, 1] = f, pos
    for c in range(2 * nc):
        st.stot[c] = st.ltot[lev, c]


@njit(cache=True)
def start_sides(st, lb0, lb1, allow):
    """Reset the two sides of a depth-1 scan: best = the leaf; ``lb0``, ``lb1``: lower bounds
    of the two sides' costs (a side whose best reaches its bound is done); ``allow``: the
    largest sum of the two costs worth finding, so a side looks only for a cost below
    ``allow`` minus the other side's lower bound (inf: no cap). A side's bound on its splits
    is raised by the class bound (a split's two leaves classify at most two classes right);
    the lower bound of its cost is then `side_low`."""
    pen = st.par[P_PEN]
    eps = st.par[P_EPS]
    nc = st.tot.shape[1]
    stot = st.stot
    sb = st.sbest
    for s in range(2):
        # (loops, not reductions of a slice: those may raise, and a kernel that may raise
        # keeps a reference on every array of the record)
        W, top, second = 0.0, 0.0, 0.0
        for c in range(s * nc, (s + 1) * nc):
            W += stot[c]
            if stot[c] > top:
                second, top = top, stot[c]
            elif stot[c] > second:
                second = stot[c]
        sb[s, B_COST] = W - top + pen
        sb[s, B_FEAT] = -1.0
        sb[s, B_THR] = 0.0
        # a split's two leaves classify at most two classes right (the class bound, more
        # than 2 pen with three classes or more in the side)
        sb[s, B_LB] = max(W - top - second + 2.0 * pen, lb0 if s == 0 else lb1)
        # a side with no weight, or a pure one, or one at its bound cannot be improved
        sb[s, B_DONE] = 1.0 if (W - top <= 0.0 or sb[s, B_COST] <= sb[s, B_LB] + eps) else 0.0
    low0, low1 = side_low(sb, 0, lb0), side_low(sb, 1, lb1)
    for s in range(2):
        sb[s, B_CAP] = allow - (low1 if s == 0 else low0) + eps
        # nor can one whose splits all cost at least its cap
        if sb[s, B_CAP] <= sb[s, B_LB] + eps:
            sb[s, B_DONE] = 1.0


@njit(inline="always")
def side_low(sb, s, lb):
    """The lower bound of side ``s``'s cost right after `start_sides` (its leaf or its bound
    on splits, whichever is lower, and at least the caller's ``lb``)."""
    return max(lb, min(sb[s, B_COST], sb[s, B_LB]))


@njit(cache=True)
def scan_feature(st, lev, f):
    """One pass over the node's rows in feature ``f``'s order: update both sides' best
    single test (each side's rows are a subsequence; a boundary of a side lies between two
    of its consecutive rows of different values). The two sides share one code path, their
    running state indexed by the side (no branch on a row's side). The boundary's evaluation
    is written out in the loop: a helper taking the arrays costs a reference count update
    per array and call, as much as the evaluation. A row stores only what the next boundary
    needs (the weight left to skip, the side's last rank, the class weights); a side that
    stops has an infinite skip, and the row left of a new best boundary is looked up when
    it is found (`previous_row`), not remembered at every row. (No views of the record's
    arrays, as in `set_side`.)"""
    w = st.w
    X = st.X
    sb = st.sbest
    cur = st.cur
    tot = st.stot
    nc = st.tot.shape[1]
    unit = st.par[P_UNIT] != 0.0
    eps, pen = st.par[P_EPS], st.par[P_PEN]
    icur = st.icur
    for c in range(2 * nc):
        cur[c] = 0.0
        icur[c] = 0
    # skip: the weight of the side's rows still to move before a boundary is evaluated (0
    # at the start: none before the side's first row; inf once the side is done here)
    # (with unit weights an integer count of rows, a shorter chain of dependent updates)
    skip, prev = st.sfloat, st.sint  # (row 0 of each; rows to skip: prev[1])
    active = 0
    for s in range(2):
        sb[s, B_HERE] = sb[s, B_DONE]
        active += 1 if sb[s, B_HERE] == 0.0 else 0
        skip[0, s] = 0.0 if sb[s, B_HERE] == 0.0 else np.inf
        prev[1, s] = 0 if sb[s, B_HERE] == 0.0 else NEVER
        prev[0, s] = -1
    if active == 0:
        return
    for i in range(st.m[lev]):
        p = st.ord[lev, f, i]
        r = row_of(p)
        code = st.side[lev, r]
        s = 1 if code >= nc else 0
        wr = 1.0 if unit else w[r]
        v = rank_of(p)
        due = prev[1, s] < 0 if unit else skip[0, s] < 0.0
        if due and v != prev[0, s]:
            # side s split between its previous row and this one: the largest and second
            # largest class weight of each part, their classes, the side's weight and the
            # weight still to the right
            l1, l2, r1, r2, jl, jr, W, rest = -1.0, -1.0, -1.0, -1.0, -1, -1, 0.0, 0.0
            for c in range(nc):
                lc = float(icur[s * nc + c]) if unit else cur[s * nc + c]
                rc = tot[s * nc + c] - lc
                W += tot[s * nc + c]
                rest += rc
                if lc > l1:
                    l2, l1, jl = l1, lc, c
                elif lc > l2:
                    l2 = lc
                if rc > r1:
                    r2, r1, jr = r1, rc, c
                elif rc > r2:
                    r2 = rc
            cost = W - l1 - r1 + 2.0 * pen
            best = min(sb[s, B_COST], sb[s, B_CAP])
            if cost < best - eps:  # strictly better: keep it
                sb[s, B_COST], sb[s, B_FEAT] = cost, f
                sb[s, B_THR] = midpoint(X[previous_row(st, lev, f, s, i), f], X[r, f])
                if cost <= sb[s, B_LB] + eps:  # no split can be strictly better
                    sb[s, B_DONE], sb[s, B_HERE] = 1.0, 1.0
                skip[0, s] = -1.0
            else:
                skip[0, s] = boundary_skip(W, best, pen, eps, l1, l2, r1, r2, jl != jr)
                if rest - r1 <= 0.0 or skip[0, s] >= rest:  # the rest is pure, or too light
                    sb[s, B_HERE] = 1.0
            if sb[s, B_HERE] != 0.0:
                skip[0, s] = np.inf
                active -= 1
                if active == 0:
                    return
            # the rows to skip: a row count k passes the weight iff k > skip
            prev[1, s] = int(np.floor(skip[0, s])) if skip[0, s] < NEVER else NEVER
        if unit:
            prev[1, s] -= 1
            icur[code] += 1
        else:
            skip[0, s] -= wr
            cur[code] += wr
        prev[0, s] = v


@njit(cache=True)
def previous_row(st, lev, f, s, i):
    """The row of side ``s`` before position ``i`` in feature ``f``'s order of the node at
    ``lev`` (there is one)."""
    nc = st.tot.shape[1]
    j = i - 1
    while (st.side[lev, row_of(st.ord[lev, f, j])] >= nc) != (s == 1):
        j -= 1
    return row_of(st.ord[lev, f, j])


@njit(inline="always")
def boundary_skip(W, best, pen, eps, l1, l2, r1, r2, apart):
    """The weight of rows of a side that can move past a boundary that is not better than
    ``best`` before a later boundary can be strictly better. A later boundary scores
    max_j (L_j + a_j) + max_k (R_k - a_k) after moving a_c of each class; with j = k that is
    at most the side's largest class total (never better than the best, which starts at the
    leaf), and with j != k at most L_j + R_k plus the weight moved. (``l1``, ``l2``: the
    largest and second largest class weights left, ``r1``, ``r2`` right; ``apart``: their
    largest classes differ.)"""
    cross = l1 + r1 if apart else max(l1 + r2, l2 + r1)
    return (W - best + 2.0 * pen) + eps - cross


@njit(cache=True)
def solve_depth2_split(st, lev, f, pos, lb0, lb1, allow):
    """Both children of the split of the node at ``lev`` on feature ``f`` at boundary position
    ``pos``, each the best tree of depth <= 1 (``lb0``, ``lb1``: lower bounds of their costs),
    if the two together can cost at most ``allow``. Returns (left, right, exact): with
    ``exact`` their costs (their tests in ``sbest``), else lower bounds of them (a side that
    cannot come under ``allow`` minus the other's lower bound is searched no further)."""
    set_side(st, lev, f, pos)
    start_sides(st, lb0, lb1, allow)
    # (read back, not returned: with `start_sides` returning the two bounds as a tuple, this
    # kernel, compiled into `solve_node`, ran 10-15 % slower with the same work in one timing
    # harness; within the noise in another)
    lb0, lb1 = side_low(st.sbest, 0, lb0), side_low(st.sbest, 1, lb1)
    st.stats[S_SCORED] += 1
    # (no call under a condition, nor a loop left early: either makes numba keep a
    # reference on every array of the record for the call's duration)
    for g in range(st.ord.shape[1]):
        scan_feature(st, lev, g)  # (returns at once once both sides are done)
    a, b = st.sbest[0, B_COST], st.sbest[1, B_COST]
    eps = st.par[P_EPS]
    integer = st.par[P_INT] != 0.0
    t0, t1 = st.sbest[0, B_CAP] - eps, st.sbest[1, B_CAP] - eps
    exact = a < t0 and b < t1
    if not a < t0:
        # a cost known not to be below t0: at least the next integer from it (integer costs)
        a = max(lb0, np.ceil(t0 - 1e-9) if integer else t0)
    if not b < t1:
        b = max(lb1, np.ceil(t1 - 1e-9) if integer else t1)
    return a, b, exact


@njit(cache=True)
def write_depth1(st, tf, tt, at, s):
    """The best single test of side ``s`` (or a leaf) at heap node ``at``."""
    tf[at] = int(st.sbest[s, B_FEAT])
    tt[at] = st.sbest[s, B_THR]
    tf[2 * at + 1] = -1
    tf[2 * at + 2] = -1


@njit(cache=True)
def split_child(st, lev, want):
    """The rows of ``side == want`` of the node at ``lev`` become the node at ``lev + 1``
    (every feature's order filtered stably); returns its size."""
    side = st.side[lev]
    d = st.ord.shape[1]
    nc = st.tot.shape[1]
    k = 0
    for g in range(d):
        src = st.ord[lev, g]
        dst = st.ord[lev + 1, g]
        k = 0
        for i in range(st.m[lev]):
            p = src[i]
            if (side[row_of(p)] >= nc) == (want == 1):
                dst[k] = p
                k += 1
    st.m[lev + 1] = k
    return k


@njit(cache=True)
def allowed(inc, eps, f, lo, ub, canon):
    """The largest cost worth finding on the boundaries ``>= lo`` of feature ``f`` given the
    node's incumbent ``inc`` (``st.inc[lev]``) and the caller's bound ``ub``. With ``canon``
    (the node's tree must be the canonical one) a tie with the incumbent counts for a lower
    feature index, or on the same feature for a lower threshold; without, only a strictly
    better cost counts. (It takes the incumbent, not the search record: a kernel that
    receives the record may take a reference on each of its arrays.)"""
    c = inc[I_COST]
    out = c - eps
    if c > ub:
        out = ub
    elif canon and inc[I_LEAF] == 0.0 and (f < inc[I_FEAT] or (f == inc[I_FEAT]
                                                                 and lo <= inc[I_K])):
        out = c + eps
    return out


@njit(cache=True)
def improves(inc, eps, f, k, t, allow, ub, canon):
    """Whether the evaluated split (feature ``f``, boundary ``k``, exact cost ``t``) becomes
    the node's incumbent ``inc``: it is strictly better, or (with ``canon``) it ties and
    comes first under the tie rule."""
    if t > allow:
        return False
    c = inc[I_COST]
    better = t < c - eps or inc[I_LEAF] != 0.0 or c > ub
    first = canon and (f < inc[I_FEAT] or (f == inc[I_FEAT] and k < inc[I_K]))
    return better or first


@njit(cache=True)
def adopt(st, lev, h, f, k, a, b):
    """Make the evaluated split (feature ``f``, boundary ``k``, exact children costs ``a``,
    ``b``) the node's incumbent and its tree."""
    inc = st.inc[lev]
    _take(st, lev, h, f, k)
    inc[I_COST], inc[I_LEAF], inc[I_FEAT], inc[I_K] = a + b, 0.0, f, k
    inc[I_POS], inc[I_LEFT], inc[I_RIGHT] = st.bpos[lev, k], a, b


@njit(cache=True)
def lower_bound_above(st, ub):
    """A lower bound (> ub) of a subproblem with no tree of cost <= ``ub``."""
    if st.par[P_INT] != 0.0:
        return np.floor(ub + 1e-9) + 1.0
    return np.nextafter(ub, np.inf)


@njit(cache=True)
def first_at_least(bw, lo, hi, target):
    """Smallest k in [lo, hi] with bw[k] >= target (hi + 1 if none)."""
    a, b = lo, hi + 1
    while a < b:
        mid = (a + b) // 2
        if bw[mid] >= target:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True)
def last_at_most(bw, lo, hi, target):
    """Largest k in [lo, hi] with bw[k] <= target (lo - 1 if none)."""
    a, b = lo, hi + 1
    while a < b:
        mid = (a + b) // 2
        if bw[mid] <= target:
            a = mid + 1
        else:
            b = mid
    return a - 1


@njit(cache=True)
def shrink(st, lev, lo, hi, kl, kr, allow):
    """Narrow the interval [lo, hi] with the evaluated boundaries ``kl`` < lo and ``kr`` > hi
    (-1: none). Returns the new (lo, hi); lo > hi when nothing is left."""
    bw = st.bw[lev]
    rec = st.rec[lev]
    a1 = rec[0, kl] if kl >= 0 else 0.0
    b2 = rec[1, kr] if kr >= 0 else 0.0
    if a1 + b2 > allow:
        return 1, 0
    # left(k) >= left(kr) - (weight between k and kr), right(k) >= right(kl) - (weight
    # between kl and k): together at least left(kr) + right(kl) - (weight between kl and kr)
    if kl >= 0 and kr >= 0 and rec[0, kr] + rec[1, kl] - (bw[kr] - bw[kl]) > allow:
        return 1, 0
    if kl >= 0:
        need = rec[0, kl] + rec[1, kl] - allow
        if need > 0.0:
            lo = first_at_least(bw, lo, hi, bw[kl] + need)
    if kr >= 0 and lo <= hi:
        need = rec[0, kr] + rec[1, kr] - allow
        if need > 0.0:
            hi = last_at_most(bw, lo, hi, bw[kr] - need)
    return lo, hi


@njit(cache=True)
def push_halves(st, lev, qt, lo, hi, mid, kl, kr, allow_l, allow_r):
    """Queue the two halves of [lo, hi] around the evaluated ``mid``, without the boundaries
    whose cost ``mid`` already bounds above the half's allowance (``allow_l`` left of ``mid``,
    ``allow_r`` right of it). Returns the new queue tail."""
    bw = st.bw[lev]
    rec = st.rec[lev]
    q = st.queue[lev]
    t = rec[0, mid] + rec[1, mid]
    r_lo, l_hi = mid + 1, mid - 1
    if t - allow_r > 0.0:
        r_lo = first_at_least(bw, mid + 1, hi, bw[mid] + t - allow_r)
    if t - allow_l > 0.0:
        l_hi = last_at_most(bw, lo, mid - 1, bw[mid] - (t - allow_l))
    if r_lo <= hi:
        q[qt, 0], q[qt, 1], q[qt, 2], q[qt, 3] = r_lo, hi, mid, kr
        qt += 1
    if lo <= l_hi:
        q[qt, 0], q[qt, 1], q[qt, 2], q[qt, 3] = lo, l_hi, kl, mid
        qt += 1
    return qt


@njit(cache=True)
def side_bounds(st, lev, k, kl, kr):
    """Lower bounds of the two sides' costs at boundary ``k`` from the evaluated neighbours
    ``kl < k < kr`` (-1: none): a side costs at least the same side of a split that gives it
    a subset of its rows, and at least that of a split that gives it more rows minus their
    weight."""
    rec = st.rec[lev]
    bw = st.bw[lev]
    lb0, lb1 = 0.0, 0.0
    if kl >= 0:
        lb0 = rec[0, kl]
        lb1 = rec[1, kl] - (bw[k] - bw[kl])
    if kr >= 0:
        lb0 = max(lb0, rec[0, kr] - (bw[kr] - bw[k]))
        lb1 = max(lb1, rec[1, kr])
    return max(lb0, 0.0), max(lb1, 0.0)


@njit(cache=True)
def interval_reach(st, lev, k, lo, hi):
    """The weight between boundary ``k`` and the farther end of its interval [lo, hi]."""
    bw = st.bw[lev]
    return max(bw[k] - bw[lo], bw[hi] - bw[k])


@njit(cache=True)
def deep_prepare(st, lev, h, f, k, lo, hi):
    """Sides of boundary ``k`` of feature ``f`` before its children (``h - 1`` tests left)
    are solved; returns the side solved first (the heavier), the slack added to the second
    child's bound (the weight between ``k`` and the far end of its interval, so that the
    second child's bound is informative enough to prune that neighbourhood; ConTree's
    device) and the class bounds of the two children's costs (`class_floor`)."""
    set_side(st, lev, f, st.bpos[lev, k])
    nc = st.tot.shape[1]
    w0, w1 = 0.0, 0.0
    for c in range(nc):
        w0 += st.stot[c]
        w1 += st.stot[nc + c]
    first = 0 if w0 >= w1 else 1
    leaves, pen = 1 << (h - 1), st.par[P_PEN]
    return (first, interval_reach(st, lev, k, lo, hi),
            class_floor(st.stot, 0, nc, leaves, pen), class_floor(st.stot, nc, nc, leaves, pen))


@njit(inline="always")
def class_floor(t, off, nc, leaves, pen):
    """A lower bound of the cost of every tree of at most ``leaves`` leaves on a node of class
    weights ``t[off:off + nc]``: each leaf classifies one class right, so the weight of all
    but the ``leaves`` heaviest classes is misclassified, plus the price of one leaf (the
    class bound; above ``pen`` only when the node has more classes than leaves)."""
    if leaves >= nc:
        return pen
    rest = 0.0
    for c in range(nc):
        above = 0  # classes heavier than c (ties: the lower index first)
        for e in range(nc):
            if t[off + e] > t[off + c] or (t[off + e] == t[off + c] and e < c):
                above += 1
        rest += t[off + c] if above >= leaves else 0.0
    return rest + pen


@njit(cache=True)
def keep_child(st, lev, s, exact):
    """Keep the tree just solved at ``lev + 1`` as the candidate's child ``s``."""
    if exact:
        for j in range(st.tf.shape[2]):
            st.tf[lev, 1 + s, j] = st.tf[lev + 1, 0, j]
            st.tt[lev, 1 + s, j] = st.tt[lev + 1, 0, j]


@njit(cache=True)
def solve_depth1(st, lev):
    """The canonical best tree of depth <= 1 of the node at ``lev`` (into ``tf[lev, 0]``);
    returns its cost."""
    nc = st.tot.shape[1]
    for c in range(nc):
        st.stot[c] = st.tot[lev, c]
        st.stot[nc + c] = 0.0
    for i in range(st.m[lev]):
        r = row_of(st.ord[lev, 0, i])
        st.side[lev, r] = st.y[r]
    st.lpos[lev, 0] = -1
    start_sides(st, 0.0, 0.0, np.inf)
    for g in range(st.ord.shape[1]):
        if st.sbest[0, B_DONE] != 0.0:
            break
        scan_feature(st, lev, g)
    write_depth1(st, st.tf[lev, 0], st.tt[lev, 0], 0, 0)
    return st.sbest[0, B_COST]


@njit(inline="always")
def gini_purity(left, tot, wl, W):
    """``sum_c L_c^2 / W_L + sum_c R_c^2 / W_R`` of a boundary whose left part has class
    weights ``left`` and weight ``wl`` (node: ``tot``, ``W``): larger is purer (it is ``W``
    minus the weighted Gini impurity of the two parts); 0 when a part is empty."""
    if wl <= 0.0 or W - wl <= 0.0:
        return 0.0
    sl = 0.0
    sr = 0.0
    for c in range(tot.shape[0]):
        sl += left[c] * left[c]
        rc = tot[c] - left[c]
        sr += rc * rc
    return sl / wl + sr / (W - wl)


@njit(cache=True)
def gini_seed(st, lev, f):
    """The boundary of feature ``f`` with the best Gini split of the node (the first
    candidate evaluated on ``f``, for an early incumbent), found in one pass over the rows
    without listing the boundaries: its index ``k`` among them, with its position and the
    weight left of it stored at ``bpos[lev, k]`` and ``bw[lev, k]``. Returns ``k``, or -1
    when ``f`` has a single value in the node."""
    k, pos, wl, _ = gini_scan(st.ord, st.y, st.w, st.tot, st.cur, st.par[P_UNIT] != 0.0,
                              st.m[lev], lev, f)
    if k >= 0:
        st.bpos[lev, k], st.bw[lev, k] = pos, wl
    return k


@njit(cache=True, error_model="numpy")
def gini_scan(ordr, y, w, tot, left, unit, m, lev, f):
    """`gini_seed`'s pass over the ``m`` rows of the node at ``lev`` in feature ``f``'s
    order (``left``: scratch of at least the classes' size): returns the index of the best
    Gini boundary, its position, the weight left of it and its score (`gini_purity`; -1, 0,
    0.0, -1.0 when there is no boundary). It takes the arrays, not the search record: numba
    may take a reference on every array of a record a kernel receives."""
    nc = tot.shape[1]
    W = 0.0
    for c in range(nc):
        W += tot[lev, c]
        left[c] = 0.0
    best, kbest, pbest, wbest = -1.0, -1, 0, 0.0
    k = 0
    acc = 0.0
    prev = rank_of(ordr[lev, f, 0])
    for i in range(m):
        p = ordr[lev, f, i]
        v = rank_of(p)
        r = row_of(p)
        if v != prev:
            prev = v
            # `gini_purity`, written out
            score = 0.0
            if acc > 0.0 and W - acc > 0.0:
                sl, sr = 0.0, 0.0
                for c in range(nc):
                    sl += left[c] * left[c]
                    rc = tot[lev, c] - left[c]
                    sr += rc * rc
                score = sl / acc + sr / (W - acc)
            if score > best:
                best, kbest, pbest, wbest = score, k, i, acc
            k += 1
        acc += 1.0 if unit else w[r]
        left[y[r]] += w[r]
    return kbest, pbest, wbest, best


@njit(cache=True)
def seed_count(lev, h, d):
    """How many features the node at ``lev`` with ``h`` tests left evaluates at their best
    Gini split first: every one at the root of a depth-2 search (a seed there is one cheap
    depth-2 evaluation, and the seeds prune the root's search) and at nodes with three tests
    left, else `SEEDS` (a seed with four tests left solves two depth-3 subtrees; with two
    tests left below the root the seeds of weaker features cost more evaluations than they
    prune). Measured by depth-2 evaluations on the Quant-BnB files (``docs/search-speed.md``,
    ninth round)."""
    if h == 3 or (h == 2 and lev == 0):
        return d
    return SEEDS


@njit(cache=True)
def rank_seeds(st, lev):
    """Rank the features by the score of their best Gini split in the node (best first, then
    by index; a feature with a single value last): ``prek[lev, f] = -1 - rank`` (negative:
    not evaluated yet), so that the `SEEDS` best are evaluated first (`seed_queue`) and the
    others are searched in full in this order. The scores are kept in ``prer[lev, 0]``,
    which `seed_queue` resets for the seeded features before their evaluation (the others'
    are not read)."""
    d = st.ord.shape[1]
    for f in range(d):
        st.prer[lev, 0, f] = gini_scan(st.ord, st.y, st.w, st.tot, st.cur,
                                       st.par[P_UNIT] != 0.0, st.m[lev], lev, f)[3]
    for f in range(d):
        r = 0
        sf = st.prer[lev, 0, f]
        for g in range(d):
            sg = st.prer[lev, 0, g]
            r += 1 if sg > sf or (sg == sf and g < f) else 0
        st.prek[lev, f] = -1 - r


@njit(cache=True)
def seed_queue(st, lev, f):
    """The queue of feature ``f``'s first phase: its best Gini boundary alone (returns the
    queue's length). The second phase is `full_queue`. (Each kernel calls nothing under a
    condition: such a call makes numba keep a reference on every array of the record.)"""
    k = gini_seed(st, lev, f)
    if k < 0:
        return 0
    st.prek[lev, f] = k
    st.prer[lev, 0, f] = 0.0  # (bounds until it is evaluated: it may be bounded out)
    st.prer[lev, 1, f] = 0.0
    st.queue[lev, 0, 0], st.queue[lev, 0, 1] = k, k
    st.queue[lev, 0, 2], st.queue[lev, 0, 3] = -1, -1
    return 1


@njit(cache=True)
def full_queue(st, lev, f):
    """The queue of feature ``f``'s second phase (returns its length): every boundary of
    ``f``, in the two intervals around its Gini seed when `seed_queue` found one, whose
    costs are put back in the records (`push_halves` around it, with no allowance)."""
    K = boundaries(st, lev, f)
    if K == 0:
        return 0
    k = st.prek[lev, f]
    q = 0
    if k < 0:
        st.queue[lev, 0, 0], st.queue[lev, 0, 1] = 0, K - 1
        st.queue[lev, 0, 2], st.queue[lev, 0, 3] = -1, -1
        return 1
    st.rec[lev, 0, k] = st.prer[lev, 0, f]
    st.rec[lev, 1, k] = st.prer[lev, 1, f]
    if k + 1 <= K - 1:
        st.queue[lev, q, 0], st.queue[lev, q, 1] = k + 1, K - 1
        st.queue[lev, q, 2], st.queue[lev, q, 3] = k, -1
        q += 1
    if k >= 1:
        st.queue[lev, q, 0], st.queue[lev, q, 1] = 0, k - 1
        st.queue[lev, q, 2], st.queue[lev, q, 3] = -1, k
        q += 1
    return q


@njit(cache=True)
def order_features(st, lev):
    """Search features in full by the cost found at their best Gini split (lowest first, then
    by index), then the features not evaluated there by their Gini rank (`rank_seeds`), so
    that the optimum is met early and bounds the search of the others. (An insertion sort in
    place: no new array.)"""
    d = st.ord.shape[1]
    for i in range(d):
        st.forder[lev, i] = i
    for i in range(1, d):
        g = st.forder[lev, i]
        j = i - 1
        while j >= 0 and searched_after(st.prek, st.prer, lev, st.forder[lev, j], g):
            st.forder[lev, j + 1] = st.forder[lev, j]
            j -= 1
        st.forder[lev, j + 1] = g


@njit(cache=True)
def searched_after(prek, prer, lev, a, b):
    """Whether feature ``a`` is searched in full after feature ``b``: a higher cost (or lower
    bound) found at its Gini seed (inf without one), then a later Gini rank
    (``-1 - prek``, 0 for an evaluated seed)."""
    ca = prer[lev, 0, a] + prer[lev, 1, a] if prek[lev, a] >= 0 else np.inf
    cb = prer[lev, 0, b] + prer[lev, 1, b] if prek[lev, b] >= 0 else np.inf
    return ca > cb or (ca == cb and max(-1 - prek[lev, a], 0) > max(-1 - prek[lev, b], 0))


@njit(cache=True)
def open_node(st, lev, h, ub, known, lb):
    """Start the node at ``lev``: its class weights, and the leaf as its tree and incumbent.
    Returns (cost, state): the leaf's cost and 1 when splits are to be searched, 2 when
    the node's tree is its best of depth <= 1 (``h`` is 1: `solve_depth1`, called by the
    caller: a call under a condition makes numba keep a reference on every array of the
    record), else the leaf's final cost and 0. With
    ``known`` (the node's optimal cost is ``ub - eps``), a leaf of that cost is the answer,
    and the incumbent is a virtual split of that cost after every feature, so that every
    feature is searched only for a split that ties with it."""
    st.stats[S_EXPANDED] += 1
    eps, pen = st.par[P_EPS], st.par[P_PEN]
    W = node_totals(st, lev)
    top = 0.0
    for cl in range(st.tot.shape[1]):
        top = max(top, st.tot[lev, cl])
    c = W - top + pen
    st.tf[lev, 0, 0] = -1
    st.lpos[lev, 0] = -1  # new rows at this level
    # a pure node, no test left, no split can fit under ub (a split costs >= 2 pen), the
    # leaf has the known optimal cost, or the leaf reaches the node's lower bound
    if (h == 0 or c <= pen + eps or ub < 2.0 * pen - eps or (known and c <= ub)
            or c <= lb + (eps if st.par[P_INT] != 0.0 else 0.0)):
        return c, 0
    if h == 1:
        return c, 2
    d = st.ord.shape[1]
    st.inc[lev, I_COST], st.inc[lev, I_LEAF] = c, 1.0
    st.inc[lev, I_FEAT], st.inc[lev, I_K] = -1.0, -1.0
    if known:
        st.inc[lev, I_COST], st.inc[lev, I_LEAF], st.inc[lev, I_FEAT] = ub - eps, 0.0, d
    for g in range(d):
        st.prek[lev, g] = -1
        st.forder[lev, g] = g
    return c, 1


@njit(cache=True)
def hopeless(inc, par, f, lo, ub, canon, known, lb):
    """Whether nothing on the boundaries ``>= lo`` of feature ``f`` can become the node's
    tree: the incumbent is a split that reaches the node's lower bound (``lb``, or the
    cost of a split without errors), so only a tie on a lower feature could win, or
    (``known``) the allowance is below the node's known optimal cost. (``inc``: the node's
    incumbent, ``par``: the search's parameters.)"""
    eps = par[P_EPS]
    if known:
        return allowed(inc, eps, f, lo, ub, canon) < ub - 1.5 * eps
    floor = 2.0 * par[P_PEN] + eps
    # how far above a lower bound a tree may be and still be optimal: below one with
    # integer costs, none when they may be fractional
    tol = eps if par[P_INT] != 0.0 else 0.0
    return ((inc[I_COST] <= floor or inc[I_COST] <= lb + tol)
            and (not canon or inc[I_LEAF] != 0.0 or f > inc[I_FEAT]))


@njit(inline="always")
def _src(st, lev):
    """The node's sources of bounds: [c, j] for source j (0: first record, 1: count, 2:
    weight of the rows the source has and the node lacks)."""
    return st.mval[lev, st.mkey.shape[1]:]


@njit(cache=True)
def memo_sources(st, lev, s, k, kl, kr):
    """Before child ``s`` of boundary ``k`` (evaluated neighbours ``kl < k < kr``, -1: none)
    is solved at ``lev + 1``: its sources of bounds are the same side's children of the
    neighbours, whose rows differ from its own by the rows between the two boundaries (a
    subset of its rows: nothing lacking; a superset: lacking the rows between); it keeps
    records of its own splits. Returns where they start."""
    src = _src(st, lev + 1)
    bw = st.bw[lev]
    ep = st.mkid[lev, 0, 1, -1]
    for j in range(2):
        n = kl if j == 0 else kr
        src[1, j] = 0.0
        if n >= 0 and st.mkid[lev, s, 1, n] == ep:
            kid = st.mkid[lev, s, 0, n]
            src[0, j], src[1, j] = kid >> 32, kid & 0xFFFFFFFF
            subset = (j == 0) == (s == 0)
            src[2, j] = 0.0 if subset else abs(bw[k] - bw[n])
    st.mkid[lev + 1, 1, 0, -1] = 1
    return st.mkid[lev + 1, 0, 0, -1]


@njit(cache=True)
def memo_keep(st, lev, s, k, first):
    """After child ``s`` of boundary ``k`` was solved: its records, for its neighbours, sorted
    by key, each left value replaced by the largest of its feature's up to it and each right
    value by the largest from it on (the bounds `memo_bounds` takes)."""
    top = st.mkid[lev + 1, 0, 0, -1]
    st.mkid[lev, s, 0, k] = (first << 32) | (top - first)
    st.mkid[lev, s, 1, k] = st.mkid[lev, 0, 1, -1]
    st.mkid[lev + 1, 1, 0, -1] = 0
    if top - first < 2:
        return
    keys = st.mkey[lev + 1, first:top]
    vals = st.mval[lev + 1, first:top]
    o = np.argsort(keys)
    ks, vs = keys[o], vals[o]
    for i in range(1, ks.shape[0]):
        if ks[i] >> 32 == ks[i - 1] >> 32:
            vs[i, 0] = max(vs[i, 0], vs[i - 1, 0])
    for i in range(ks.shape[0] - 2, -1, -1):
        if ks[i] >> 32 == ks[i + 1] >> 32:
            vs[i, 1] = max(vs[i, 1], vs[i + 1, 1])
    keys[:] = ks
    vals[:] = vs


@njit(cache=True)
def memo_bounds(ordr, bpos, keys, mval, lev, f, k, lb0, lb1):
    """``lb0``, ``lb1`` raised by the records of the node's sources (`memo_sources`). A side
    of a split costs at least the same side of the same test in a source node minus the
    weight of the rows the source has and this node lacks (the best tree of this side,
    applied to the source's side, misclassifies at most those rows more); a record at the left
    value of rank ``r`` bounds the left side of boundary ``k`` (left value of rank ``a``)
    when ``r <= a`` and the right side when ``r >= a`` (that side of the record has a
    subset of this side's values). It takes the record's arrays it reads (``st.ord``,
    ``st.bpos``, ``st.mkey``, ``st.mval``), not the record: numba may take a reference on
    every array of a record a kernel receives, which costs more than the search here."""
    sp = keys.shape[1]  # the sources' rows of `mval` (`_src`)
    if mval[lev, sp + 1, 0] == 0.0 and mval[lev, sp + 1, 1] == 0.0:
        return lb0, lb1
    a = rank_of(ordr[lev, f, bpos[lev, k] - 1])
    lo_key, key = (f << 32), (f << 32) | a
    for j in range(2):
        if mval[lev, sp + 1, j] == 0.0:
            continue
        first, gone = int(mval[lev, sp, j]), mval[lev, sp + 2, j]
        end = first + int(mval[lev, sp + 1, j])
        # records sorted by key (`memo_keep`): the last at most ``key``, the first at
        # least it (`last_at_most`, `first_at_least` written out: a call under a condition
        # keeps a reference on every array of the record)
        x, y = first, end
        while x < y:
            mid = (x + y) // 2
            if keys[lev, mid] <= key:
                x = mid + 1
            else:
                y = mid
        i = x - 1
        if i >= first and keys[lev, i] >= lo_key:
            lb0 = max(lb0, mval[lev, i, 0] - gone)
        x, y = first, end
        while x < y:
            mid = (x + y) // 2
            if keys[lev, mid] >= key:
                y = mid
            else:
                x = mid + 1
        if x < end and keys[lev, x] < lo_key + (1 << 32):
            lb1 = max(lb1, mval[lev, x, 1] - gone)
    return lb0, lb1


@njit(cache=True)
def memo_excludes(ordr, bpos, keys, mval, lev, f, lo, hi, allow):
    """Whether the sources' records bound every boundary of [lo, hi] above ``allow``: the
    left side of a boundary there costs at least that of ``lo``'s bound, the right side at
    least that of ``hi``'s."""
    l0, _ = memo_bounds(ordr, bpos, keys, mval, lev, f, lo, 0.0, 0.0)  # (0: no sources)
    _, r1 = memo_bounds(ordr, bpos, keys, mval, lev, f, hi, 0.0, 0.0)
    return l0 + r1 > allow


@njit(cache=True)
def memo_record(st, lev, f, k, a, b):
    """Keep the left / right cost (or lower bound) ``a``, ``b`` of boundary ``k`` of feature
    ``f``, for the children of the neighbouring candidates."""
    if st.mkid[lev, 1, 0, -1] == 0:
        return
    i = st.mkid[lev, 0, 0, -1]
    if i >= st.mkey.shape[1]:
        return
    st.mkey[lev, i] = (f << 32) | rank_of(st.ord[lev, f, st.bpos[lev, k] - 1])
    st.mval[lev, i, 0] = a
    st.mval[lev, i, 1] = b
    st.mkid[lev, 0, 0, -1] = i + 1


# Candidate splits are compared by cost alone, so their children are solved without ``canon``
# (ties need not be explored below the node); the children of the chosen split are then
# solved again with ``canon``, under their known cost. Only `solve_node` calls itself, and
# always with non-constant arguments: numba's cache crashed on loading a recursive kernel
# that had also been compiled for a literal argument (a call such as
# ``solve_node(st, 0, ...)`` from another kernel).
@njit(cache=True)
def solve_node(st, lev, h, ub, canon, known, lb):
    """The optimal tree of depth <= ``h`` of the node at ``lev`` if its cost is <= ``ub``:
    returns the cost (<= ub) and the tree in ``tf[lev, 0]``; else a lower bound > ub. With
    ``canon`` the tree is the canonical one; without, it is some optimal tree (only its cost
    is used). With ``known``, ``ub - eps`` is the node's optimal cost: the features are then
    searched in index order for the first split of that cost. ``lb`` is a lower bound of the
    node's cost (from the neighbouring candidates of the parent): a tree that reaches it ends
    the search (the tie rule still explores lower features with ``canon``). The root is
    solved by ``solve_node(st, 0, max_depth, inf, True, False, 0.0)`` (the comment above
    says how candidates' children are solved)."""
    c, state = open_node(st, lev, h, ub, known, lb)
    c = solve_depth1(st, lev) if state == 2 else c
    if state != 1:
        return c if c <= ub else lower_bound_above(st, ub)
    slot, key = cache_slot(st, lev, h, canon or known)
    got = cache_answer(st, lev, slot, ub)
    if got >= 0.0:
        return got
    lb = max(lb, st.cval[slot, 0]) if slot >= 0 else lb
    st.mkid[lev + 1, 0, 0, -1] = 0
    eps, pen = st.par[P_EPS], st.par[P_PEN]
    inc = st.inc[lev]
    rec = st.rec[lev]
    d = st.ord.shape[1]
    cost_only = h < 0  # False, but not a literal (see above)
    if lev == 0:  # the anytime trace: the root's first incumbent (its leaf) and bound
        record(st.clock, inc[I_COST], lb)
    # a widened search (the anytime schedule's primal heuristic, `numeric_anytime`)
    # tries, at nodes with three or more tests left, only the best Gini splits of the
    # ``width`` features of the best Gini scores; nodes with two tests left are solved exactly
    width = int(st.par[P_WIDTH])
    narrow = width > 0 and h >= 3
    seeds = min(width, d) if narrow else seed_count(lev, h, d)
    # first evaluate every feature's best Gini split (an early incumbent, and the order in
    # which features are then searched in full)
    for it in range(2 * d):
        phase, f = it // d, it % d
        if (known and phase == 0) or (narrow and phase == 1):
            continue  # known: the first split of that cost, in index order, no Gini seeds
        if it == 0 and seeds < d:
            rank_seeds(st, lev)
        if phase == 0 and seeds < d and st.prek[lev, f] < -seeds:
            continue  # not among the best Gini scores: searched in full only
        if it == d and not known:
            order_features(st, lev)
        if phase == 1:
            f = st.forder[lev, f]
        if hopeless(inc, st.par, f, 0, ub, canon, known, lb) or timed_out(st.stats):
            continue
        q = st.queue[lev]
        st.mkid[lev, 0, 1, -1] += 1
        qh, qt = 0, (seed_queue(st, lev, f) if phase == 0 else full_queue(st, lev, f))
        while qh < qt:
            check_time(st.stats, st.clock)
            if timed_out(st.stats):
                break
            lo, hi, kl, kr = q[qh, 0], q[qh, 1], q[qh, 2], q[qh, 3]
            qh += 1
            allow = allowed(inc, eps, f, lo, ub, canon)
            if (known or lb > 0.0) and hopeless(inc, st.par, f, lo, ub, canon, known, lb):
                continue
            lo, hi = shrink(st, lev, lo, hi, kl, kr, allow)
            if lo > hi or memo_excludes(st.ord, st.bpos, st.mkey, st.mval, lev, f, lo, hi,
                                        allow):
                continue
            k = (lo + hi) // 2
            lb0, lb1 = side_bounds(st, lev, k, kl, kr)
            lb0, lb1 = memo_bounds(st.ord, st.bpos, st.mkey, st.mval, lev, f, k, lb0, lb1)
            if lb0 + lb1 > allow:  # the neighbours bound it out: nothing to evaluate
                a, b, exact = lb0, lb1, False
            elif h == 2:
                # widened so that a side failing it bounds out the whole interval
                a, b, exact = solve_depth2_split(st, lev, f, st.bpos[lev, k], lb0, lb1,
                                                 allow + interval_reach(st, lev, k, lo, hi))
            else:
                first, slack, floor0, floor1 = deep_prepare(st, lev, h, f, k, lo, hi)
                lbv = np.array([max(lb0, floor0), max(lb1, floor1)])
                val = lbv.copy()
                ex = np.zeros(2, dtype=np.bool_)
                for step in range(2):
                    s = first if step == 0 else 1 - first
                    ub_s = allow - val[1 - s] + (slack if step == 1 else 0.0)
                    if ub_s < lbv[s]:
                        break
                    split_child(st, lev, s)
                    first_rec = memo_sources(st, lev, s, k, kl, kr)
                    v = solve_node(st, lev + 1, h - 1, ub_s, cost_only, cost_only, lbv[s])
                    memo_keep(st, lev, s, k, first_rec)
                    e = v <= ub_s
                    keep_child(st, lev, s, e)
                    val[s], ex[s] = max(v, lbv[s]), e
                a, b, exact = val[0], val[1], ex[0] and ex[1]
            rec[0, k], rec[1, k] = a, b
            memo_record(st, lev, f, k, a, b)
            if phase == 0:
                st.prer[lev, 0, f], st.prer[lev, 1, f] = a, b
            if exact and improves(inc, eps, f, k, a + b, allow, ub, canon):
                adopt(st, lev, h, f, k, a, b)
                if lev == 0:
                    record(st.clock, inc[I_COST], lb)
            if lo < hi:
                qt = push_halves(st, lev, qt, lo, hi, k, kl, kr,
                                 allowed(inc, eps, f, lo, ub, canon),
                                 allowed(inc, eps, f, k + 1, ub, canon))
    c = inc[I_COST]
    if c > ub or inc[I_FEAT] == d:  # (a virtual incumbent: no split of the known cost)
        c = lower_bound_above(st, ub)
        cache_store(st, lev, slot, key, c, ub)
        return c
    cache_store(st, lev, slot, key, c, ub)
    if canon and h > 2 and inc[I_LEAF] == 0.0 and not timed_out(st.stats):
        # the chosen split's children, canonical this time (a child that would not come
        # back under its known cost, which only rounding could cause, stays as found)
        set_side(st, lev, int(inc[I_FEAT]), int(inc[I_POS]))
        _src(st, lev + 1)[1, :] = 0.0
        for s in range(2):
            split_child(st, lev, s)
            ub_s = inc[I_LEFT + s] + eps
            if solve_node(st, lev + 1, h - 1, ub_s, canon, canon, pen) <= ub_s:
                copy_sub(st.tf[lev + 1, 0], st.tt[lev + 1, 0], st.tf[lev, 0], st.tt[lev, 0],
                         1 + s, h - 1)
    return c


@njit(cache=True)
def cache_slot(st, lev, h, canon):
    """The node at ``lev`` in the table of nodes' results, by its rows (its bitset is put in
    ``crow[E]``): returns (entry, hash). The entry is -1 when the node is not kept there
    (only the nodes with two tests left solved for their cost alone are: not ``canon``, not
    the root, and the table has entries), the entry that holds the node's rows, else -2 -
    the free slot where its result would go. Keys are compared, then the bitsets: a hit is
    the same row set, so the same subproblem."""
    C = st.ckey.shape[0]
    E = st.cval.shape[0]
    if h != 2 or lev == 0 or canon or E == 0:
        return -1, 0
    for j in range(st.crow.shape[1]):
        st.crow[E, j] = 0
    key = 0
    for i in range(st.m[lev]):
        r = row_of(st.ord[lev, 0, i])
        key ^= st.rkey[r]
        st.crow[E, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    key = max(key, 1)  # (0 marks an empty slot)
    j = key & (C - 1)
    while st.ckey[j, 0] != 0:
        if st.ckey[j, 0] == key and same_rows(st.crow, st.ckey[j, 1], E):
            st.stats[S_HITS] += 1
            return st.ckey[j, 1], key
        j = (j + 1) & (C - 1)
    return -2 - j, key


@njit(cache=True)
def same_rows(crow, a, b):
    """Whether bitsets ``a`` and ``b`` of ``crow`` are equal."""
    for j in range(crow.shape[1]):
        if crow[a, j] != crow[b, j]:
            return False
    return True


@njit(cache=True)
def cache_answer(st, lev, slot, ub):
    """The answer the table holds for the node at ``lev`` (entry ``slot`` from `cache_slot`)
    under the bound ``ub``: its cost (and its tree into ``tf[lev, 0]``), or a lower bound
    above ``ub``; -1.0 when the node must be searched (no entry, or a lower bound not above
    ``ub``: the search then starts from it)."""
    if slot < 0:
        return -1.0
    v = st.cval[slot, 0]
    if st.cval[slot, 1] != 0.0:
        for j in range(3):
            st.tf[lev, 0, j] = int(st.cval[slot, 2 + 2 * j])
            st.tt[lev, 0, j] = st.cval[slot, 3 + 2 * j]
        for j in range(3, 7):
            st.tf[lev, 0, j] = -1
        return v
    return v if v > ub else -1.0


@njit(cache=True)
def cache_store(st, lev, slot, key, v, ub):
    """Keep the result ``v`` of the node at ``lev`` searched under ``ub`` (its cost and tree
    when ``v <= ub``, else a lower bound) at its entry, or at a new entry for the free slot
    `cache_slot` gave (``slot``); nothing after a timeout, and no new entry once every
    entry is in use (``S_CAP_HIT`` counts those)."""
    if slot == -1 or timed_out(st.stats):
        return
    E = st.cval.shape[0]
    j = slot
    if slot <= -2:
        j = st.stats[S_ENTRIES]
        if j >= E:
            st.stats[S_CAP_HIT] += 1
            return
        st.ckey[-2 - slot, 0], st.ckey[-2 - slot, 1] = key, j
        for i in range(st.crow.shape[1]):
            st.crow[j, i] = st.crow[E, i]
        st.stats[S_ENTRIES] += 1
    st.cval[j, 0] = v
    st.cval[j, 1] = 1.0 if v <= ub else 0.0
    for i in range(3):
        st.cval[j, 2 + 2 * i] = st.tf[lev, 0, i]
        st.cval[j, 3 + 2 * i] = st.tt[lev, 0, i]


@njit(cache=True)
def _take(st, lev, h, f, k):
    """Make the evaluated split (feature ``f``, boundary ``k``) the node's best tree."""
    tf, tt = st.tf[lev, 0], st.tt[lev, 0]
    pos = st.bpos[lev, k]
    rows = st.ord[lev, f]
    tf[0] = f
    tt[0] = midpoint(st.X[row_of(rows[pos - 1]), f], st.X[row_of(rows[pos]), f])
    if h == 2:
        write_depth1(st, tf, tt, 1, 0)
        write_depth1(st, tf, tt, 2, 1)
    else:
        copy_sub(st.tf[lev, 1], st.tt[lev, 1], tf, tt, 1, h - 1)
        copy_sub(st.tf[lev, 2], st.tt[lev, 2], tf, tt, 2, h - 1)
