"""One branch-and-bound engine for the optimal searches on 0/1 features.

Top-k (Blanc et al., NeurIPS 2023, Figure 1; every k, min_improvement), the GOSDT solver (Lin et
al., ICML 2020; McTavish et al., AAAI 2022, eq. 5, with or without a lower-bound guess, with or
without a depth budget) and DPDT's exhaustive generator (Kohler, Akrour & Preux, KDD 2025,
Algorithm 1) run one driver, `solve`, on one state record (`EngineState`), one cache
(`treebench.search.cache`), one read-back (`treebench.search.readback`) and one clock.

The driver. ``solve(s, rows, h, ub, b)`` returns a value ``< ub`` that is the optimum of the
row set ``rows`` with depth budget ``h`` (its root feature in ``s.scr.feat[h]``, -1 for a leaf),
or a lower bound of that optimum that is ``>= ub``. It is the same recursion for every
objective:

1. open the node (``begin``): class totals, the leaf and the terminal rules, the cache, the
   clock, the node's lower bounds (``floor``), the exact depth-1 and depth-2 solvers, and the
   candidate features in the order the objective's tie rule searches them (``order[h][:kk]``);
2. for each candidate ``j``: the children's static lower bounds; the rows split; their
   refined bounds (cache, similar support, base bounds); a candidate proven no better than
   ``bound = min(best, ub)`` is skipped; otherwise the two children are searched, the first
   under ``bound - cost - lb(second)``, the second under ``bound - cost - value(first)``; the
   split is kept when better than the best so far (the rule of each objective below); the
   search stops when the best tree reaches the floor, or by the deadline rule;
3. close the node (``end``): the failed-search bound (MurTree's: a search that found nothing
   below ``ub`` proved the smallest bound met over the root features), the cache entry
   (EXACT, LOWER, or ANYTIME after the deadline) and the similar-support memory.

The objective plug-in. Everything that depends on the objective sits in the learner's kernel
module (`search.topk`, `search.gosdt`, `search.dpdt_layer`). Each module states

* its four rules: ``begin`` (leaf, terminal rules, cache, floor, depth-1 and depth-2 solvers,
  candidate order), ``static_bounds`` and ``refine_bounds`` (the children's lower bounds before
  and after the rows are split) and ``end`` (cache entry, failed-search bound); the driver
  calls the rules of the module ``s.kind`` names (`_begin`, `_static`, `_refine`, `_end`);
* its traits, constants the state copies (``EXACT_FLOATS``: the dynamic programme's float
  expression and first-argmin rule decide, as below; ``ORDERS_CHILDREN``: the objective picks
  which child to search first; ``ROOT_LEAF_INCUMBENT``: the root's leaf is the first incumbent
  of the anytime trace). The driver reads the traits, never the kind, for everything else.

The rules are chosen by a branch on the kind inlined into the driver rather than passed as
functions: numba compiles a driver per function it is handed (20-30 s each, cold), and a call
through a function value is not inlined (see Speed). The objectives:

============  ==============================  ===============  ================================
kind          value of a tree                 split cost       kept when
============  ==============================  ===============  ================================
``TOPK``      ``error * M + nu * nodes``      ``nu``           below the children's bounds
``GOSDT``     ``error + lam * leaves``        ``0``            below the children's bounds
``LAYER``     ``error + alpha * path mass``   ``alpha * |S|``  ``(cost + left) + right < best``
============  ==============================  ===============  ================================

Top-k and the GOSDT solver add two children's values as ``(first + second) + cost`` and decide on
the children's bounds: the second child searched under ``best - cost - first`` returns a value
below it exactly when the split is better. DPDT keeps its dynamic programme's float expression
``(alpha * |S| + left) + right`` and its first-argmin rule: a child's bound carries a margin
(`search.dpdt_layer.margin`), and a child that fails by less than the margin is searched again without
a bound, so that every decision is taken on the programme's own floats. Under a GOSDT lower-bound
guess the children are searched without bounds (McTavish et al. §4.3: a subproblem's value
depends on its rows and budget only) and a split is kept when the sum is below the best.

After the deadline (`treebench.search.clock`) each objective keeps its anytime rule: Top-k and
the GOSDT solver go on greedily (one feature per new node) until a tree is found, DPDT's new
states become leaves and an open state stops after the candidate it is on.

Speed. A call between compiled functions that passes the state record takes a reference to each
of its arrays (about forty) on entry and drops it on exit (numba's reference counting, atomic
operations). Measured on Top-k, anneal, depth 4 (`docs/search-speed.md`, "One search engine"):
six more arrays in the record cost 4% of the fit, and the driver with its per-node and
per-candidate steps as calls was 19% slower than the three separate recursions. Those steps are
therefore inlined into the driver (numba's ``inline="always"``), the objective-specific arrays
are packed (``masks``, ``groups``) and the cache hits kept in the statistics vector.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search import anytime as AT
from treebench.search import dpdt_layer as DL
from treebench.search import gosdt as GK
from treebench.search import topk as TK
from treebench.search.bitset import split_rows
from treebench.search.cache import new_cache
from treebench.search.criteria import INF
from treebench.search.readback import emit, new_readback, next_node, tree_arrays
from treebench.search.clock import now_seconds
from treebench.search.state import (
    N_STATS, S_HITS, S_TIMED_OUT, S_WIDTH, bitset_data, full_set, new_scratch,
)
from treebench.search.trace import new_clock, record

#: the objectives (``EngineState.kind``)
TOPK, GOSDT, LAYER = 0, 1, 2

#: the search's record: the data, per-level scratch, the cache, statistics and clock, and the
#: objective's parameters (each kind reads its own; the others hold placeholders of the same
#: types, so that the driver is compiled once for every objective)
EngineState = namedtuple(
    "EngineState",
    [
        "data", "scr", "cache", "stats", "clock",
        "kind",  # TOPK, GOSDT or LAYER: whose four rules (begin, bounds, end) the node runs
        # the objective's traits, as its module declares them (EXACT_FLOATS, ORDERS_CHILDREN,
        # ROOT_LEAF_INCUMBENT): what the driver does differently for it
        "exact_floats", "orders_children", "root_leaf_incumbent",
        # Top-k
        "k",  # candidates per node (0: all)
        "crit",  # split criterion code (`treebench.search.criteria`)
        "msl",  # min_samples_leaf (Top-k and DPDT)
        "min_imp",  # min_improvement (< 0: none)
        "M",  # error weight of the objective error * M + nodes
        "nu",  # 1.0 when ties go to fewer nodes, else 0.0
        # GOSDT
        "lam",  # per-leaf penalty in count units (λ · total weight)
        "limited",  # depth budget given (memo key includes the budget)
        "use_ref",  # base bound = reference errors (lower-bound guess) instead of eq. points
        # (2, W) uint64 row sets: [0] the rows the reference misclassifies, [1] the rows whose
        # feature vector is shared with a row of another label
        "masks",
        # (2, n) int64: [0] the equivalence group of each row (of masks[1]), [1] scratch: the
        # groups one call touched
        "groups",
        "grp_cnt",  # (G, nc) float scratch, zero between calls
        # DPDT
        "alpha",  # price of one test per row
        "pairs",  # DPDT: budget-2 states from pair counts; GOSDT: the unguessed depth-2 shortcut
        "sim_slack",  # absolute slack subtracted from the similar-support bound
        # all
        "sim",  # similar-support bound allowed (unweighted data; kind-specific conditions)
    ],
)


@njit(cache=True, inline="always")
def _begin(s, rows, h, ub, b):
    if s.kind == TOPK:
        return TK.begin(s, rows, h, ub)
    if s.kind == GOSDT:
        return GK.begin(s, rows, h, ub, b)
    return DL.begin(s, rows, h, ub)


@njit(cache=True, inline="always")
def _static(s, nd, j):
    """The children's bounds before the rows are split: (lb0, lb1, exact0, exact1)."""
    if s.kind == TOPK:
        return TK.static_bounds(s, nd, j)
    if s.kind == GOSDT:
        return GK.static_bounds(s, nd, j)
    return DL.static_bounds(s, nd, j)


@njit(cache=True, inline="always")
def _refine(s, nd, j, r0, r1, lb0, lb1, x0, x1):
    """The children's bounds on their rows: (lb0, lb1, exact0, exact1, base0, base1)."""
    if s.kind == TOPK:
        return TK.refine_bounds(s, nd, r0, r1, lb0, lb1, x0, x1)
    if s.kind == GOSDT:
        return GK.refine_bounds(s, nd, j, r0, r1, lb0, lb1)
    return DL.refine_bounds(s, nd, j, r0, r1)


@njit(cache=True, inline="always")
def _end(s, rows, nd, best, best_f, found, lbmin, early, saw, timed_out):
    if s.kind == TOPK:
        return TK.end(s, rows, nd, best, best_f, lbmin, early or saw, timed_out)
    if s.kind == GOSDT:
        return GK.end(s, rows, nd, best, best_f, found, lbmin, early or saw)
    return DL.end(s, rows, nd, best, best_f, lbmin, saw)


@njit(cache=True, inline="always")
def _combine(s, cost, first, second):
    """A split's value from its children's (the first searched, then the other), in the
    objective's float expression: the cost first under the exact-float rule."""
    if s.exact_floats:
        return (cost + first) + second
    return (first + second) + cost


@njit(cache=True, inline="always")
def _margin(s, bound):
    """The slack of a child's bound under the exact-float rule (`search.dpdt_layer.margin`)."""
    return DL.margin(bound) if s.exact_floats else 0.0


@njit(cache=True)
def solve(s, rows, h, ub, b):
    """The optimum of ``rows`` with depth budget ``h`` when it is below ``ub`` (root feature in
    ``s.scr.feat[h]``), else a lower bound of it that is ``>= ub``; ``b`` is the node's base
    bound when the caller knows it (the GOSDT solver; else < 0)."""
    top = h == s.scr.feat.shape[0] - 1  # the root (its budget is the search's depth)
    done, v, nd = _begin(s, rows, h, ub, b)
    if done:
        return v
    # the anytime trace: the root's first incumbent (its leaf; Top-k's node opens with the
    # bound its splits must beat, no tree) and bound; a widened search's bounds hold for its
    # subset of trees only, so it records its incumbents alone
    exact_root = top and s.stats[S_WIDTH] == 0
    if top and s.root_leaf_incumbent:
        record(s.clock, nd.best, nd.floor)
    h = nd.h
    hc = h - 1
    r0 = s.scr.child[h, 0]
    r1 = s.scr.child[h, 1]
    order = s.scr.order[h]
    cost = nd.cost
    exact_floats = s.exact_floats  # near-ties re-searched, splits kept on their floats
    best = nd.best
    best_f = nd.best_f
    found = nd.found
    timed_out = nd.timed_out
    lbmin = INF  # smallest proven value over the candidates not kept
    early = False  # the best tree reached the node's floor
    saw = False  # the deadline passed while the candidates were searched
    for t in range(nd.kk):
        j = order[t]
        bound = best if best < nd.ub else nd.ub
        lb0, lb1, x0, x1 = _static(s, nd, j)
        if not exact_floats:
            c = _combine(s, cost, lb0, lb1)
            if c >= bound:
                lbmin = min(lbmin, c)
                continue
        b0 = -1.0
        b1 = -1.0
        if not (x0 and x1):
            split_rows(rows, s.data.F, j, r0, r1)
            if not timed_out:
                lb0, lb1, x0, x1, b0, b1 = _refine(s, nd, j, r0, r1, lb0, lb1, x0, x1)
                c = _combine(s, cost, lb0, lb1)
                if c >= bound:
                    lbmin = min(lbmin, c)
                    continue
        # the order of the two searches (Top-k: the child more likely to fail first)
        sw = s.orders_children and TK.second_first(s, h, j, nd.total, lb0, lb1)
        ra = r1 if sw else r0
        rb = r0 if sw else r1
        va = lb1 if sw else lb0
        vb = lb0 if sw else lb1
        xa = x1 if sw else x0
        xb = x0 if sw else x1
        ba = b1 if sw else b0
        bb = b0 if sw else b1
        unbounded = s.use_ref and not timed_out  # GOSDT under a guess: children on their own
        # the two children written out rather than looped over: a loop choosing each side's
        # rows took a reference on the arrays per pass (measured slower on Top-k)
        kept = True
        if not xa:  # the first child, under the bound the second's lower bound leaves
            ubc = INF if unbounded else (bound - cost - vb) + _margin(s, bound)
            v = solve(s, ra, hc, ubc, ba)
            if exact_floats and s.stats[S_TIMED_OUT] != 0 and v >= ubc:
                saw = True  # DPDT: no value below the bound by the deadline
                break
            if v >= ubc:
                c = _combine(s, cost, v, vb)
                if not exact_floats or c >= bound:
                    lbmin = min(lbmin, c)
                    kept = False
                else:
                    v = solve(s, ra, hc, INF, ba)  # a near-tie: the exact value decides
            va = v
        if kept and not xb:  # the second, under the bound the first's value leaves
            ubc = INF if unbounded else (bound - cost - va) + _margin(s, bound)
            v = solve(s, rb, hc, ubc, bb)
            if exact_floats and s.stats[S_TIMED_OUT] != 0 and v >= ubc:
                saw = True
                break
            if v >= ubc:
                c = _combine(s, cost, va, v)
                if not exact_floats or c >= bound:
                    lbmin = min(lbmin, c)
                    kept = False
                else:
                    v = solve(s, rb, hc, INF, bb)
            vb = v
        if kept:
            c = _combine(s, cost, va, vb)
            lbmin = min(lbmin, c)
            if (not exact_floats and not unbounded) or c < best:
                best = c
                best_f = j
                found = True
                if top and s.stats[S_TIMED_OUT] == 0:  # after the limit, children answer
                    # with bounds: no tree has this value
                    record(s.clock, best, nd.floor if exact_root else 0.0)
        if s.stats[S_TIMED_OUT] != 0:
            saw = True
            if exact_floats or timed_out or found:
                break
            timed_out = True
        if best <= nd.floor:
            early = True
            break
    return _end(s, rows, nd, best, best_f, found, lbmin, early, saw, timed_out)


@njit(cache=True, inline="always")
def read_back(s, root, H):
    """The tree of the solved search (`treebench.search.readback`; re-asking `solve`, a cache
    hit in the normal case)."""
    t = new_readback(root, H, s.data)
    h = next_node(t)
    while h >= 0:
        solve(s, t.cur, h, INF, -1.0)
        h = emit(t, s.scr.feat[h], s.data)
    return tree_arrays(t)


# ----------------------------------------------------------------------------- the entry
@njit(cache=True)
def _run(kind, tp, gp, lp, sets, hs, ubs):
    """The one compiled entry of the engine: the search state of the problem of ``kind``
    (``tp``, ``gp`` or ``lp``; the other two are placeholders of the same types, never read),
    then either the queries ``solve(sets[q], hs[q], ubs[q])`` in order (when ``ubs`` is not
    empty), or the search from the root and the tree read back.

    One entry, not one per objective and use: numba optimises every compiled function that
    calls the driver together with the driver's whole code again (about 20-30 s each, cold),
    so each further caller would add that much to the first run's compilation. Returns
    (value of the root search, the objective's extra value: Top-k's ``M``, the GOSDT lower
    bound, 0 for DPDT; feature, left, right, class totals of the tree in pre-order; the
    statistics before and after the read-back; the queries' answers; the search's clock
    vector; per query, the feature the search left at the query's level and the features
    valid there)."""
    if kind == TOPK:
        s = topk_state(tp)
        H = tp.depth
    elif kind == GOSDT:
        s = gosdt_state(gp)
        H = gp.depth
    else:
        s = layer_state(lp)
        H = lp.depth
    nq = ubs.shape[0]
    answers = np.empty(nq)
    feats = np.full(nq, -1, np.int64)
    valid = np.zeros((nq, s.data.F.shape[1]), np.bool_)
    for q in range(nq):
        answers[q] = solve(s, sets[q], hs[q], ubs[q], -1.0)
        feats[q] = s.scr.feat[hs[q]]
        valid[q] = s.scr.valid[hs[q]]
    root = full_set(s.data.n_rows, s.data.F.shape[0])
    if nq > 0:
        H = 0  # no fit: a leaf stands in for the tree
    # the anytime schedule's best widened tree (none: value INF)
    scheduled = kind == TOPK and nq == 0 and tp.time_limit > 0.0
    best = INF
    nc = s.data.C.shape[0]
    bf, bl, br, bv = _empty_tree(nc)
    proven = True
    if scheduled:
        obj, best, bf, bl, br, bv, proven = _anytime(s, tp, root, H)
        if not proven:
            s.stats[S_TIMED_OUT] = 1  # the read-back completes the exact search's tree
    else:
        obj = solve(s, root, H, tp.ub if kind == TOPK and nq == 0 else INF, -1.0)
    searched = s.stats.copy()  # before the read-back (its re-searches are not counted)
    feat, left, right, value = read_back(s, root, H)
    if scheduled and not proven:
        obj = AT.tree_value(feat, value, s.M, s.nu)
        if best <= obj:  # ties to the incumbent found first
            obj = best
            feat, left, right, value = bf, bl, br, bv
    extra = 0.0
    if kind == TOPK:
        extra = s.M
    elif kind == GOSDT:
        extra = obj
        if searched[S_TIMED_OUT] != 0:
            extra = GK.root_bound(s, root, H)
    return obj, extra, feat, left, right, value, searched, s.stats.copy(), answers, s.clock, \
        feats, valid


@njit(cache=True, inline="always")
def _empty_tree(nc):
    return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros((0, nc)))


@njit(cache=True, inline="always")
def _keep_better(s, root, H, best, bf, bl, br, bv):
    """The search's tree read back and valued from its rows (`anytime.tree_value`), with its
    value, when it is better than the incumbent ``best`` (``bf``, ``bl``, ``br``, ``bv``);
    else the incumbent."""
    f, lf, rt, val = read_back(s, root, H)
    v = AT.tree_value(f, val, s.M, s.nu)
    if v < best:
        return v, f, lf, rt, val
    return best, bf, bl, br, bv


@njit(cache=True, inline="always")
def _anytime(s, tp, root, H):
    """The anytime schedule of `treebench.search.anytime` on the search state ``s`` (Top-k
    ``tp`` at k = all under its time limit): widened searches and slices of the exact search
    in turn, all on ``s`` (the widened searches' levels under keys of their own, their depth-2
    entries shared), until the exact search finishes or the deadline passes. Returns (the
    exact search's last value, the best incumbent's value, its feature, left, right and class
    totals, whether the exact search finished): the incumbents are the widened searches'
    trees and those an exact slice held when its time ran out. Inlined into the entry, so that
    no second compiled caller of the driver exists."""
    final = tp.deadline
    d = s.data.F.shape[1]
    best = INF
    bf, bl, br, bv = _empty_tree(s.data.C.shape[0])
    w = 1
    exact_s = 0.0
    wide_s = 0.0
    slice_s = AT.SLICE * tp.time_limit
    obj = INF
    while True:
        # widened searches while their share of the time allows (the first always)
        while w < d and (w == 1 or wide_s < AT.SHARE * exact_s) and now_seconds() < final:
            t = now_seconds()
            s.clock[0] = final if w == 1 else min(final, t + AT.SHARE * exact_s - wide_s)
            s.stats[S_TIMED_OUT] = 0
            s.stats[S_WIDTH] = w
            solve(s, root, H, INF, -1.0)
            was = best
            best, bf, bl, br, bv = _keep_better(s, root, H, best, bf, bl, br, bv)
            s.stats[S_WIDTH] = 0
            wide_s += now_seconds() - t
            if best < was:
                record(s.clock, best, 0.0)
            if s.stats[S_TIMED_OUT] != 0:
                break  # cut off by its budget: run again, with the next one
            w = AT.next_width(w)
        t = now_seconds()
        if t >= final:
            return obj, best, bf, bl, br, bv, False
        s.clock[0] = min(final, t + slice_s)
        s.stats[S_TIMED_OUT] = 0
        obj = solve(s, root, H, best + 0.5, -1.0)
        if s.stats[S_TIMED_OUT] == 0:
            return obj, best, bf, bl, br, bv, True
        if obj < best:  # the slice's own tree (a later slice may not find it again in time)
            best, bf, bl, br, bv = _keep_better(s, root, H, best, bf, bl, br, bv)
        exact_s += now_seconds() - t
        slice_s *= 2.0


_SPARE = []  # [the placeholder problems of `_run`], made on first use


def _call(kind, p, sets=None, hs=None, ubs=None):
    if not _SPARE:  # threads racing here each store a whole tuple: the list never grows
        data = bitset_data(np.zeros((2, 1), np.uint8), np.array([0, 1]), 2)
        _SPARE[:] = [(TK.topk_problem(data, 1), GK.gosdt_problem(data, 1, 0.0),
                      DL.layer_problem(data, 1, 0.0))]
    problems = list(_SPARE[0])
    problems[kind] = p
    W = p.data.F.shape[0]
    return _run(kind, *problems,
                np.ascontiguousarray(np.zeros((0, W)) if sets is None else sets, np.uint64),
                np.ascontiguousarray(np.zeros(0) if hs is None else hs, np.int64),
                np.ascontiguousarray(np.zeros(0) if ubs is None else ubs, np.float64))


def fit_topk(p, trace=None):
    """Run the Top-k search of the problem ``p`` (`TK.topk_problem`) from the root and read the
    tree back. Returns (objective, M, feature, left, right, value, stats), the tree in
    pre-order. A list ``trace`` receives the search's clock vector, which holds its anytime
    trace (`treebench.search.trace.read_trace`)."""
    obj, M, feat, left, right, value, _, stats, _, clock, _, _ = _call(TOPK, p)
    if trace is not None:
        trace.append(clock)
    return obj, M, feat, left, right, value, stats


def fit_gosdt(p, trace=None):
    """Search the GOSDT problem ``p`` (`GK.gosdt_problem`) from the root and read the tree back.
    Returns (objective, lower bound, feature, left, right, value, stats), counts in weight
    units, the tree in pre-order. ``trace``: as in `fit_topk`."""
    obj, lb, feat, left, right, value, _, stats, _, clock, _, _ = _call(GOSDT, p)
    if trace is not None:
        trace.append(clock)
    return obj, lb, feat, left, right, value, stats


def fit_layer_search(p, trace=None):
    """Search the whole training set of DPDT's layer problem ``p`` (`DL.layer_problem`) and read
    the tree back. Returns (value of the root search, feature, left, right, class counts of
    the tree in pre-order, stats, cache hits): the statistics of the search, except that a
    deadline passed while the tree was read back (a re-search of a state the capped cache did
    not keep) counts as timed out. ``trace``: as in `fit_topk`."""
    v, _, feat, left, right, value, stats, after, _, clock, _, _ = _call(LAYER, p)
    if trace is not None:
        trace.append(clock)
    hits = stats[S_HITS]
    stats[S_TIMED_OUT] = after[S_TIMED_OUT]
    return v, feat, left, right, value, stats, hits


def solve_queries(p, sets, hs, ubs):
    """Answer ``solve(sets[q], hs[q], ubs[q])`` in order on one search state of the problem
    ``p`` (a `TK.TopkProblem`, `GK.GosdtProblem` or `DL.LayerProblem`): the contract of `solve`
    made testable (a value below ``ub`` is the exact optimum, any other value a lower bound of
    it that is ``>= ub``) with the bounds earlier queries left in the cache and the
    similar-support memory. The queries run through the fits' compiled entry (`_run`), so
    they compile nothing more."""
    return query_levels(p, sets, hs, ubs)[0]


def query_levels(p, sets, hs, ubs):
    """`solve_queries`, with what each query left at its level of the search state: returns
    (the answers, the feature the search chose there, the features valid there: one row per
    query). Through the fits' compiled entry as well."""
    kind = TOPK if isinstance(p, TK.TopkProblem) else \
        GOSDT if isinstance(p, GK.GosdtProblem) else LAYER
    out = _call(kind, p, sets, hs, ubs)
    return out[8], out[10], out[11]


# ----------------------------------------------------------------------------- states
@njit(cache=True)
def topk_state(p):
    """The search state of the Top-k problem ``p`` (`search.topk.topk_problem`). Pairwise
    counts for the depth-2 solver (k = all, unweighted), at most 256 MB."""
    D = p.data
    W, d = D.F.shape
    nc = D.C.shape[0]
    pairs = p.k <= 0 and not D.weighted and p.depth >= 2 and p.min_imp <= 0.0 \
        and nc * d * d <= 2**25
    stats, clock = _stats_clock(p.deadline)
    stats[S_WIDTH] = p.k_top
    return EngineState(
        D, new_scratch(p.depth + 1, W, d, nc, pairs), new_cache(W, p.max_entries, stats), stats,
        clock, TOPK, TK.EXACT_FLOATS, TK.ORDERS_CHILDREN, TK.ROOT_LEAF_INCUMBENT,
        p.k, p.crit, p.msl, p.min_imp, TK.big_m(p.depth),
        1.0 if p.smaller_trees else 0.0,
        0.0, True, False, np.zeros((2, W), np.uint64), np.full((2, 1), -1, np.int64),
        np.zeros((1, nc)), 0.0, False, 0.0,
        p.k <= 0 and not D.weighted and p.min_imp <= 0.0,
    )


@njit(cache=True)
def gosdt_state(p):
    """The search state of the GOSDT problem ``p`` (`search.gosdt.gosdt_problem`): per-level
    scratch for its depth, the bound inputs. The depth-2 shortcut (unweighted data, a depth
    budget): without a guess ``pairs`` (its solver counts the pairs it needs), under a guess
    the pair table of the scratch."""
    D = p.data
    W, d = D.F.shape
    nc = D.C.shape[0]
    pairs = p.shortcut and p.limited and p.depth >= 2 and not D.weighted \
        and nc * d * d <= 2**25
    stats, clock = _stats_clock(p.deadline)
    return EngineState(
        D, new_scratch(p.depth + 1, W, d, nc, pairs and p.use_ref),
        new_cache(W, p.max_entries, stats), stats,
        clock, GOSDT, GK.EXACT_FLOATS, GK.ORDERS_CHILDREN, GK.ROOT_LEAF_INCUMBENT,
        0, 0, 1, -1.0, 1.0, 0.0,
        p.lam, p.limited, p.use_ref, _masks(p.ref_wrong, p.eq_rows), _groups(p.grp, D.n_rows),
        np.zeros((max(p.n_groups, 1), nc)), 0.0, pairs and not p.use_ref, 0.0,
        not D.weighted and not p.use_ref,  # similar support: not from guessed values
    )


@njit(cache=True)
def layer_state(p):
    """The search state of DPDT's layer problem ``p`` (`search.dpdt_layer.layer_problem`)."""
    D = p.data
    W, d = D.F.shape
    nc = D.C.shape[0]
    pairs = p.pairs and p.depth >= 2
    stats, clock = _stats_clock(p.deadline)
    return EngineState(
        D, new_scratch(p.depth + 1, W, d, nc, pairs), new_cache(W, p.max_entries, stats), stats,
        clock, LAYER, DL.EXACT_FLOATS, DL.ORDERS_CHILDREN, DL.ROOT_LEAF_INCUMBENT,
        0, 0, p.msl, -1.0, 1.0, 0.0,
        0.0, True, False, np.zeros((2, W), np.uint64), np.full((2, 1), -1, np.int64),
        np.zeros((1, nc)), p.alpha, pairs,
        DL.SIM_SLACK * (1.0 + D.n_rows * (1.0 + p.alpha * p.depth)),
        p.msl == 1,
    )


@njit(cache=True)
def _masks(ref_wrong, eq_rows):
    out = np.empty((2, ref_wrong.shape[0]), np.uint64)
    out[0] = ref_wrong
    out[1] = eq_rows
    return out


@njit(cache=True)
def _groups(grp, n_rows):
    out = np.zeros((2, max(n_rows, 1)), np.int64)
    out[0, :grp.shape[0]] = grp
    return out


@njit(cache=True)
def _stats_clock(deadline):
    return np.zeros(N_STATS, dtype=np.int64), new_clock(deadline)
