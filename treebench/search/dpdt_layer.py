"""DPDT's exhaustive generator on the search layer (`treebench.search`): a bitset
branch-and-bound that returns exactly the tree and the objective of the backward induction of
`_dpdt_solver` (Kohler, Akrour & Preux, KDD 2025, §4, Algorithm 1; the "exhaustive" generator
of §5.2) on 0/1 features with unit sample weights.

Objective (mass units, as the DP): ``V(S, h) = E + α·L`` minimised over the trees of depth
budget ``h`` on the rows ``S``; a split costs ``α·|S|`` plus its children's values. The DP's
rules, which decide which of several equally good trees it returns, are kept exactly:

* a state is a leaf when ``h = 0``, when it has fewer than ``2·min_samples_leaf`` rows or when
  it is pure;
* the candidates are the features in index order (one threshold, 0.5, per non-constant 0/1
  feature), valid when both children keep ``min_samples_leaf`` rows;
* the value of a state is the FIRST argmin over (leaf, candidate 1, candidate 2, ...): a
  candidate wins only when it is strictly better than the leaf and every earlier candidate;
* a candidate's cost is the float ``(aW + v_left) + v_right`` with ``aW = α * |S|`` one float
  product and ``v_*`` the children's own such floats (left = ``x_f = 0``).

Search (the search engine's ``solve(rows, h, ub)``, `search.engine`, with this module as the
objective's plug-in: `begin` opens a state, `static_bounds` / `refine_bounds` bound a
candidate's children, `end` closes the state): a returned value
``< ub`` is exactly the DP's value of the state (and the cache holds its root feature); any
other returned value ``v`` satisfies ``ub <= v <= V(S, h)`` (a lower bound, cached as LOWER).

Tie rule under pruning. With ``bound = min(best_so_far, ub)`` a candidate whose cost is proven
``>= bound`` is skipped: it is either not strictly better than an earlier one (so the DP does
not take it either) or ``>= ub`` where no exactness is promised. A candidate whose cost is
computed is taken only when ``cost < best_so_far``, the DP's comparison on the DP's float.

Floating point. Every proof of ``cost >= bound`` is made in floats, on the same expression as
the DP's cost: IEEE addition is monotone (``a <= a'`` and ``b <= b'`` give
``fl(a + b) <= fl(a' + b')``), so ``fl(fl(aW + lb_L) + lb_R)`` with lower bounds ``lb_*`` of the
children's float values is a lower bound of the DP's float cost, and comparing it with
``bound`` decides exactly. The children are searched with ``ub_L = bound - aW - lb_R + margin``
and ``ub_R = bound - aW - v_L + margin`` (``margin = 1e-9·max(1, |bound|)``): the subtraction
is rounded, so without the margin a child could return a lower bound just below what the
parent needs; with it, a child that fails (returns ``>= ub_L``) has proven, up to rounding far
below the margin, that the candidate costs more than ``bound``. The parent still checks that
proof in floats with the monotone expression, and in the (near-tie) case where it does not
hold it solves the child again without a bound, so near-ties are always resolved on exact
values and no decision rests on the margin.

Lower bounds (each a lower bound of the float value, by the monotonicity above): a split costs
at least ``aW`` (its children cost >= 0), so a state with ``leaf <= aW`` is a leaf (exact); a
child is bounded by ``min(leaf, α·|child|)``, raised by cached LOWER/EXACT values
(`search.bounds.cached_bound`) and, with ``min_samples_leaf = 1``, by similar support
(`_similar`, proven there for ``E + α·L``); a state stops as soon as its best tree reaches a
lower bound of it.

Budget 2 is valued by `depth2_dpdt` from the node's pair counts (`search.counts`) in one pass
with the same rules and floats, budget 1 from the per-feature counts; budget-2 values are
cached as exact whatever ``ub`` (as in the GOSDT and Top-k searches).

Deadline (`search.clock`): after it, states not yet in the cache become leaves (budget-1 states
are still valued, from counts) and open states keep the best candidate found so far, as the DP
does; the returned tree is then read back from the cache (ANYTIME entries) and its objective
recomputed from the tree.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.bitset import row_hash
from treebench.search.bounds import cached_bound, remember_similar, similarity_bound
from treebench.search.cache import (
    ANYTIME, EXACT, LOWER, cache_feature, cache_find, cache_put, cache_state, cache_value,
)
from treebench.search.clock import check_time
from treebench.search.counts import feature_counts, node_totals, pair_counts_buf
from treebench.search.depth2 import Depth2Node
from treebench.search.state import (
    S_EXPANDED, S_HITS, S_SCORED, S_TIMED_OUT, Node, closed_node,
)

#: relative slack added to the children's bounds (see the module docstring)
MARGIN = 1e-9
#: relative slack of the similar-support bound (see `_similar`)
SIM_SLACK = 1e-9

#: the engine's traits of DPDT's layer objective (`treebench.search.engine`, "The objective
#: plug-in"): the dynamic programme's own floats decide (a split is valued
#: ``(alpha * |S| + first) + second``, a child's bound carries `margin`, a near-tie is searched
#: again without a bound, and no candidate is dropped before its rows are split); children
#: are searched in feature order; the root's leaf is the first incumbent
EXACT_FLOATS, ORDERS_CHILDREN, ROOT_LEAF_INCUMBENT = True, False, True

#: the inputs of a search (`layer_problem` builds it with fixed field types)
LayerProblem = namedtuple(
    "LayerProblem", ["data", "depth", "alpha", "msl", "max_entries", "deadline", "pairs"],
)

@njit(cache=True)
def margin(bound):
    a = abs(bound)
    return MARGIN * (a if a > 1.0 else 1.0)


@njit(cache=True, inline="always")
def _side(cnt1j, tot, side, ch):
    """Class counts of the child ``x_j = side`` (from the node's counts among x_j = 1) into
    ``ch``; returns (rows, leaf error)."""
    s = 0.0
    mx = 0.0
    for c in range(tot.shape[0]):
        v = cnt1j[c] if side == 1 else tot[c] - cnt1j[c]
        ch[c] = v
        s += v
        if v > mx:
            mx = v
    return s, s - mx


@njit(cache=True)
def _stump_value(node, ch, ms, es, i, side, alpha, msl):
    """DP value of the child ``x_i = side`` (class counts ``ch``, ``ms`` rows, leaf error
    ``es``) of a node (`search.depth2.Depth2Node`: counts per feature ``cnt1``, partners
    ``vs[:nv]``, pair counts ``P``, both triangles) with depth budget 1: the first argmin over
    (leaf, split on each partner in order), each split costing ``(α·ms + e_left) + e_right``;
    the counts of the grandchildren come from the pair counts. Returns (value, splits
    scored)."""
    cnt1 = node.cnt1
    P = node.P
    vs = node.vs
    nv = node.nv
    if es == 0.0 or ms < 2 * msl:
        return es, 0
    aW = alpha * ms
    if es <= aW:  # any split costs >= aW: the leaf is the first argmin
        return es, 0
    nc = ch.shape[0]
    best = es
    scored = 0
    for b in range(nv):
        j = vs[b]
        if j == i:
            continue
        n1 = 0.0
        m1 = 0.0
        m0 = 0.0
        for c in range(nc):
            if side == 1:
                v = float(P[c, i, j])
            else:
                v = cnt1[j, c] - float(P[c, i, j])
            n1 += v
            if v > m1:
                m1 = v
            r = ch[c] - v
            if r > m0:
                m0 = r
        n0 = ms - n1
        if n1 < msl or n0 < msl:
            continue
        scored += 1
        cost = (aW + (n0 - m0)) + (n1 - m1)
        if cost < best:
            best = cost
    return best, scored


@njit(cache=True)
def depth2_dpdt(cnt1, rc1, tot, P, vs, nv, alpha, msl):
    """The DP's value of a state with depth budget 2, from its class counts ``tot``, its counts
    among rows with x_j = 1 (``cnt1[j, c]``, ``rc1[j]``) and its pair counts
    (``P[c, i, j]``, both triangles, for the features ``vs[:nv]``, in increasing index order:
    the features not constant on the state). Same terminal rules, candidates, first-argmin tie
    rule and float expressions as `_dpdt_solver` (module docstring). Returns (value, root
    feature or -1 for the leaf, splits scored)."""
    nc = tot.shape[0]
    m = 0.0
    mx = 0.0
    for c in range(nc):
        m += tot[c]
        if tot[c] > mx:
            mx = tot[c]
    err = m - mx
    if err == 0.0 or m < 2 * msl:
        return err, -1, 0
    aW = alpha * m
    if err <= aW:
        return err, -1, 0
    ch = np.empty(nc)
    best = err
    best_f = -1
    scored = 0
    node = Depth2Node(cnt1, tot, vs, nv, vs, nv, P)
    for a in range(nv):
        i = vs[a]
        n1 = rc1[i]
        if n1 < msl or m - n1 < msl:
            continue
        scored += 1
        m0, e0 = _side(cnt1[i], tot, 0, ch)
        v0, k = _stump_value(node, ch, m0, e0, i, 0, alpha, msl)
        scored += k
        lb = aW + v0  # the right child costs >= 0: (aW + v0) + v1 >= aW + v0
        if lb >= best:
            continue
        m1, e1 = _side(cnt1[i], tot, 1, ch)
        v1, k = _stump_value(node, ch, m1, e1, i, 1, alpha, msl)
        scored += k
        cost = (aW + v0) + v1
        if cost < best:
            best = cost
            best_f = i
    return best, best_f, scored


@njit(cache=True, inline="always")
def _budget1(s, h, m, err, aW):
    """Budget-1 state (counts of level ``h`` filled): children are leaves, every candidate is
    exact. Returns (value, feature)."""
    scr = s.scr
    cnt1 = scr.cnt[h]
    rc1 = scr.rc[h]
    tot = scr.tot[h]
    ch = scr.tmp[h]
    best = err
    best_f = -1
    msl = s.msl
    for j in range(cnt1.shape[0]):
        n1 = rc1[j]
        if n1 < msl or m - n1 < msl:
            continue
        s.stats[S_SCORED] += 1
        _, e0 = _side(cnt1[j], tot, 0, ch)
        _, e1 = _side(cnt1[j], tot, 1, ch)
        cost = (aW + e0) + e1
        if cost < best:
            best = cost
            best_f = j
    return best, best_f


@njit(cache=True, inline="always")
def _similar(s, rows, h, lb):
    """Raise ``lb`` by similar support (``min_samples_leaf = 1`` only). For row sets S, S' and
    budget h, ``V(S) >= V(S') - |S' minus S| * (1 + α h)``: the DP's optimal tree T of S, applied
    to S', costs at most ``V(S) + (1 + α h)`` per row of S' not in S (one error and at most h
    tests; rows of S not in S' only lower the cost), and collapsing the splits of T that leave
    a side of S' empty, or that split a pure node, lowers it further, giving a tree the DP of
    S' considers, so ``V(S') <=`` that cost. (With ``min_samples_leaf > 1`` a split too small
    on S' cannot be collapsed without moving rows of S, so the argument fails: off.) The
    remembered values are ``V / (1 + α h)`` (`search.bounds.similarity_bound` subtracts the
    difference before scaling), and a slack of ``1e-9 * (1 + n (1 + α h))`` is subtracted so
    that float rounding of the values never makes the bound exceed the DP's float value."""
    if not s.sim or h < 2:
        return lb
    k = 1.0 + s.alpha * h
    return similarity_bound(rows, h, lb, k, -s.sim_slack, s.scr.sim_rows, s.scr.sim_val)


@njit(cache=True, inline="always")
def _remember(s, rows, h, v):
    """Remember ``rows`` solved at budget ``h`` with value (or lower bound) ``v``."""
    if s.sim and h >= 2:
        remember_similar(rows, h, v / (1.0 + s.alpha * h), s.scr.sim_rows, s.scr.sim_val)


@njit(cache=True, inline="always")
def _child_lb(s, rows, hc, mc, ec):
    """(lower bound of the child's float value, True when it is its exact value)."""
    if hc == 0 or ec == 0.0 or mc < 2 * s.msl:
        return ec, True
    aW = s.alpha * mc
    if ec <= aW:
        return ec, True
    lb, exact = cached_bound(s.cache, rows, hc, aW)  # a split costs >= aW, the leaf ec > aW
    if not exact:
        lb = _similar(s, rows, hc, lb)
    if lb > ec:
        lb = ec
    return lb, exact


@njit(cache=True, inline="always")
def begin(s, rows, h, ub):
    """Open a state of DPDT's search (the engine's step 1, `search.engine.solve`):
    (answered, value, `Node`). Answered: the DP's terminal leaves, a leaf that no split can
    beat (``err <= α·|S|``), budget 1 (valued from counts, also after the deadline), a cache
    hit, a new state after the deadline (a leaf, as in the DP), budget 2 (`depth2_dpdt`), a
    lower bound ``>= ub`` or ``>= err``. Otherwise the candidates ``order[h][:kk]``: the
    features that keep ``min_samples_leaf`` rows on both sides, in index order (the DP's first
    argmin), against the leaf; a split costs ``α·|S|``."""
    D = s.data
    scr = s.scr
    scr.feat[h] = -1
    tot = scr.tot[h]
    nnz, nrows = node_totals(rows, D.C, D.y, D.sw, False, tot, scr.nzw[h])
    m = float(nrows)
    mx = 0.0
    for c in range(tot.shape[0]):
        if tot[c] > mx:
            mx = tot[c]
    err = m - mx
    if h == 0 or err == 0.0 or nrows < 2 * s.msl:
        return True, err, closed_node()
    aW = s.alpha * m
    if err <= aW:  # a split costs >= aW: the leaf is the first argmin
        return True, err, closed_node()
    if h == 1:  # always valued (cheap), also after the deadline
        feature_counts(D, rows, scr.nzw[h], nnz, scr.cnt[h], scr.rc[h], scr.acc)
        s.stats[S_EXPANDED] += 1
        v, f = _budget1(s, h, m, err, aW)
        scr.feat[h] = f
        return True, v, closed_node()
    hv = row_hash(rows, h)
    timed_out = s.stats[S_TIMED_OUT] != 0
    floor = 0.0
    e = cache_find(s.cache, rows, h, hv)
    if e >= 0:
        st = cache_state(s.cache, e)
        ov = cache_value(s.cache, e)
        if st == EXACT or (timed_out and st == ANYTIME):
            scr.feat[h] = cache_feature(s.cache, e)
            s.stats[S_HITS] += 1
            return True, ov, closed_node()
        if st == LOWER:
            if ov >= ub:
                s.stats[S_HITS] += 1
                return True, ov, closed_node()
            floor = ov
    if timed_out:
        return True, err, closed_node()  # past the deadline a new state is a leaf (as in the DP)
    check_time(s.stats, s.clock)
    if s.stats[S_TIMED_OUT] != 0:
        return True, err, closed_node()
    s.stats[S_EXPANDED] += 1
    feature_counts(D, rows, scr.nzw[h], nnz, scr.cnt[h], scr.rc[h], scr.acc)
    if h == 2 and s.pairs:
        return True, _budget2(s, rows, h, hv, m, nnz), closed_node()
    floor = _similar(s, rows, h, floor)
    if floor >= ub:  # a lower bound >= ub: nothing to search
        cache_put(s.cache, rows, h, hv, floor, -1, LOWER)
        return True, floor, closed_node()
    if floor >= err:  # every candidate costs >= V >= leaf: the leaf is the first argmin
        cache_put(s.cache, rows, h, hv, err, -1, EXACT)
        return True, err, closed_node()
    kk = 0
    rc1 = scr.rc[h]
    order = scr.order[h]
    for j in range(rc1.shape[0]):
        if rc1[j] >= s.msl and m - rc1[j] >= s.msl:
            order[kk] = j
            kk += 1
    return False, 0.0, Node(
        np.int64(h), np.int64(h), np.int64(h), hv, ub, floor, floor, ub, err, m, np.int64(kk),
        np.int64(kk), False, -1.0, aW, err, np.int64(-1), True, s.sim, False)


@njit(cache=True, inline="always")
def _budget2(s, rows, h, hv, m, nnz):
    """A budget-2 state from its pair counts (`depth2_dpdt`), cached as exact."""
    scr = s.scr
    D = s.data
    rc1 = scr.rc[h]
    vs = scr.order[h]
    nv = 0
    for j in range(rc1.shape[0]):
        if rc1[j] >= 1.0 and m - rc1[j] >= 1.0:
            vs[nv] = j
            nv += 1
    pair_counts_buf(rows, scr.nzw[h], nnz, D.F, D.C, vs, nv, scr.pair, scr.pbuf)
    v, f, k = depth2_dpdt(scr.cnt[h], rc1, scr.tot[h], scr.pair, vs, nv, s.alpha, s.msl)
    s.stats[S_SCORED] += k
    cache_put(s.cache, rows, h, hv, v, f, EXACT)
    _remember(s, rows, h, v)
    scr.feat[h] = f
    return v


@njit(cache=True, inline="always")
def static_bounds(s, nd, j):
    """Nothing before the split: DPDT bounds its children on their rows (`refine_bounds`).
    Counts the candidate as scored (the statistics' operations)."""
    s.stats[S_SCORED] += 1
    return 0.0, 0.0, False, False


@njit(cache=True, inline="always")
def refine_bounds(s, nd, j, r0, r1):
    """The children's bounds (`_child_lb`: exact for the DP's leaves, else min(leaf, α·|child|)
    raised by the cache and similar support) and whether each is exact."""
    scr = s.scr
    h = nd.h
    ch = scr.tmp[h]
    n1 = scr.rc[h][j]
    n0 = nd.total - n1
    _, e0 = _side(scr.cnt[h][j], scr.tot[h], 0, ch)
    _, e1 = _side(scr.cnt[h][j], scr.tot[h], 1, ch)
    lb0, x0 = _child_lb(s, r0, h - 1, n0, e0)
    lb1, x1 = _child_lb(s, r1, h - 1, n1, e1)
    return lb0, lb1, x0, x1, -1.0, -1.0


@njit(cache=True, inline="always")
def end(s, rows, nd, best, best_f, lbmin, stopped):
    """Close a state (the engine's step 3): after the deadline the best candidate found so far
    (ANYTIME, as the DP keeps it); below ``ub`` the DP's value (EXACT); else the smallest
    proven cost over the leaf and the candidates, a lower bound ``>= ub`` (LOWER)."""
    h = nd.h
    ub = nd.ub
    if stopped or s.stats[S_TIMED_OUT] != 0:
        if best_f >= 0:
            cache_put(s.cache, rows, h, nd.hv, best, best_f, ANYTIME)
        s.scr.feat[h] = best_f
        return best
    if best < ub:
        cache_put(s.cache, rows, h, nd.hv, best, best_f, EXACT)
        _remember(s, rows, h, best)
        s.scr.feat[h] = best_f
        return best
    # every candidate and the leaf cost >= ub: the smallest proven cost is a lower bound
    lb = best if best < lbmin else lbmin
    if lb < ub:  # (cannot happen; kept as a guard of the contract)
        lb = ub
    cache_put(s.cache, rows, h, nd.hv, lb, -1, LOWER)
    _remember(s, rows, h, lb)
    return lb


def layer_problem(data, depth, alpha, msl=1, max_entries=1 << 20, deadline=-1.0, pairs=True):
    """The search's inputs as one record (`LayerProblem`), with the field types every fit and
    the warm-up share: ``data`` an unweighted `treebench.search.state.Data` (`bitset_data`),
    ``deadline`` an absolute ``perf_counter`` time (<= 0: none), ``pairs`` = budget-2 states
    from pair counts (else the recursion values them)."""
    return LayerProblem(data, int(depth), float(alpha), int(msl), int(max_entries),
                        float(deadline), bool(pairs))


@njit(cache=True)
def similar_bound_after(s, known, h, value, rows):
    """Test hook: the similar-support bound (`_similar`) of ``rows`` at budget ``h`` once the
    set ``known`` was remembered at that budget with value ``value`` (a fresh search state
    ``s``, `search.engine.layer_state`)."""
    _remember(s, known, h, value)
    return _similar(s, rows, h, 0.0)
