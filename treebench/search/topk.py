"""Compiled search of the Top-k learner (Blanc et al., NeurIPS 2023, Figure 1), built on the
search layer (`treebench.search`: bitsets, counts, criteria, the capped cache, bounds, the
depth-2 solver, the clock).

The search is the recursion of Figure 1 with four exactness-preserving additions:

* memoisation by (remaining depth, row set) in the capped cache (when full, new entries are
  simply not stored: slower, never wrong);
* branch-and-bound on the objective ``error * M + n_nodes`` (``M`` = a power of two larger than
  any tree's node count), which orders trees by training error, then by size: a candidate is
  kept only when strictly better, so among equally accurate trees the first explored (higher
  score) wins unless a later one is smaller. A subproblem called with an upper bound ``ub``
  either returns its exact optimum (< ub) or a lower bound >= ub, which is cached and reused;
* each split searches first the child more likely to have no tree below the bound (the larger
  lower bound, then the larger leaf error), so that its failure spares the sibling's search;
  when the split's tree is below the bound both children are exact in either order, so the
  answer and the tree do not depend on it;
* on timeout (the clock's deadline) the search turns greedy (k = 1, no new lower bounds) and
  every open frame returns the best complete tree it has (anytime behaviour).

At k = all on unweighted data two techniques of the optimal-tree literature (DL8.5, MurTree)
prune further without changing the answer: the similarity lower bound (an optimal tree for rows
S errs at least err(S') - |S' minus S| times, for a set S' solved before at the same depth; it
does not hold for k < all, whose search space depends on the rows), and the specialised depth-2
solver (`treebench.search.depth2`). Both hold in Figure 1's tree space (an impure node splits:
a set with errors costs at least 3 nodes) and with min_improvement 0, where a node stays a leaf
unless a split lowers its error, so that the value of a node is the smallest
``error * M + nu * nodes`` over all its trees, the lexicographic optimum (a set with errors
costs at least 1 node; the depth-2 solver's children keep their leaf unless a stump has fewer
errors). A positive min_improvement makes the value of a node depend on its leaf's error, and
neither applies. At depth 1 with every feature a candidate, only equal-error features are
scored. At k = all also (`docs/search-speed.md`):

* depth-2 nodes are solved exactly, without the caller's bound, so no row set is solved twice
  at depth 2 and its exact value bounds parents and similar sets; their roots are evaluated
  unranked, one per class of equivalent features, on a compact pair table, and the features
  ranked only in the rare case where the first optimal root in rank order is not certain
  from the optimal roots' own scores (`_depth2`, `_first_optimal`): ranking every feature
  (a score with logarithms each, a sort) cost more than the depth-2 solve itself;
* features equal or complementary on a node's rows are searched once
  (`treebench.search.equiv.drop_equivalent`): they give the same children, so every tree has
  an equally good twin, and the one kept is the one "first explored wins" would return;
* a search that finds no tree below ``ub`` caches the larger of ``ub`` and the smallest bound
  met over the root features (the bound of both children plus the root; MurTree's
  lower-bound update after a failed search; with min_improvement 0, at most the leaf's
  value).

The recursion is the search engine's (`search.engine.solve`, one driver for every optimal
search on 0/1 features); this module is Top-k's objective plug-in: `begin` opens a node
(`counts.node_summary`, `bounds.cache_lookup`, `_score`, `_depth1_all`, `_depth2`,
`_branch_leaves`, the ranked candidates), `static_bounds` and `refine_bounds` bound a
candidate's children, `second_first` orders their searches and `end` closes the node
(`_finish`). The problem is one record (`TopkProblem`, built by `topk_problem` for fits, tests
and the warm-up alike).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.bitset import row_hash
from treebench.search.bounds import (
    cache_lookup, cached_bound, remember_similar, similarity_bound,
)
from treebench.search.cache import ANYTIME, EXACT, LOWER, cache_put
from treebench.search.clock import check_time, now_seconds  # noqa: F401  (now_seconds: warm-up)
from treebench.search.counts import count_node, node_summary, pair_counts_upper
from treebench.search.criteria import (  # noqa: F401  (criterion codes re-exported)
    ENTROPY, ERROR, GINI, INF, KEARNS_MANSOUR, TIE_RTOL, child_impurity, rank_features,
    split_stats,
)
from treebench.search.depth2 import Depth2Node, depth2_root_values, partner_list
from treebench.search.equiv import drop_equivalent
from treebench.search.state import (  # noqa: F401  (stats slots re-exported)
    S_CAP_HIT, S_ENTRIES, S_EXPANDED, S_PEAK_BYTES, S_SCORED, S_TIMED_OUT, S_WIDTH, Node,
    closed_node,
)

#: the engine's traits of the Top-k objective (`treebench.search.engine`, "The objective
#: plug-in"): a split is valued ``(first + second) + nu`` and decided on its children's bounds
#: (no exact-float rule); the child more likely to fail is searched first (`second_first`);
#: the root has no incumbent before a split is found (its node opens with the bound its
#: splits must beat)
EXACT_FLOATS, ORDERS_CHILDREN, ROOT_LEAF_INCUMBENT = False, True, False

#: the inputs of a search (`topk_problem` builds it with fixed field types)
TopkProblem = namedtuple(
    "TopkProblem",
    ["data", "depth", "k", "crit", "msl", "min_imp", "max_entries", "deadline", "smaller_trees",
     "k_top", "ub", "time_limit"],
)

#: what a node's search proved, for `_finish`: the caller's bound ``ub``, the node's lower
#: bound ``lbk``, the bound its splits had to beat (``split_ub``: below ``ub`` when
#: min_improvement makes the leaf compete) and the leaf's objective
NodeBounds = namedtuple("NodeBounds", ["ub", "lbk", "split_ub", "leaf_obj"])


@njit(cache=True, inline="always")
def _score(s, rows, h, nnz, nrows):
    """Per-feature class counts and validity (min_samples_leaf); returns the valid count."""
    scr = s.scr
    d = s.data.F.shape[1]
    count_node(s.data, scr, s.stats, rows, h, nnz)
    rc1 = scr.rc[h]
    valid = scr.valid[h]
    nvalid = 0
    for j in range(d):
        r1 = rc1[j]
        valid[j] = r1 >= s.msl and nrows - r1 >= s.msl
        if valid[j]:
            nvalid += 1
    return nvalid


@njit(cache=True, inline="always")
def _depth1_all(s, rows, h, hv, total, leaf_err, leaf_obj):
    """h = 1 with every splitting feature a candidate: the smallest error wins; only the
    equal-error features need their scores (for the tie rule). Exact, cached."""
    scr = s.scr
    d = s.data.F.shape[1]
    cnt1 = scr.cnt[h]
    tot = scr.tot[h]
    valid = scr.valid[h]
    gains = scr.gain[h]
    tmp = scr.tmp[h]
    min_err = INF
    for j in range(d):
        if not valid[j]:
            continue
        s1, m1, m0, _, _ = split_stats(cnt1[j], tot)
        err = (s1 - m1) + (total - s1 - m0)
        gains[j] = err
        if err < min_err:
            min_err = err
    best_s = INF
    for j in range(d):
        if valid[j] and gains[j] == min_err:
            sj = child_impurity(tot, cnt1[j], tmp, total, s.crit)
            if sj < best_s:
                best_s = sj
    best_f = -1
    for j in range(d):
        if valid[j] and gains[j] == min_err:
            sj = child_impurity(tot, cnt1[j], tmp, total, s.crit)
            if sj <= best_s + TIE_RTOL * max(1.0, abs(best_s)):
                best_f = j
                break
    val = min_err * s.M + 3.0 * s.nu
    vf = best_f
    if s.min_imp >= 0.0 and val >= (leaf_err - s.min_imp) * s.M:
        val = leaf_obj  # no split improves enough
        vf = -1
    cache_put(s.cache, rows, h, hv, val, vf, EXACT)
    scr.feat[h] = vf
    return val  # exact; the caller treats val >= ub as "no tree below ub"


@njit(cache=True, inline="always")
def _rank(s, h, total):
    """Score the valid features (Definition 2) and rank them; returns the candidate count."""
    scr = s.scr
    d = s.data.F.shape[1]
    gains = scr.gain[h]
    valid = scr.valid[h]
    for j in range(d):
        if valid[j]:
            gains[j] = child_impurity(scr.tot[h], scr.cnt[h][j], scr.tmp[h], total, s.crit)
        else:
            gains[j] = INF
    return rank_features(gains, valid, scr.order[h])


@njit(cache=True)
def _same(a, b):
    for w in range(a.shape[0]):
        if a[w] != b[w]:
            return False
    return True


@njit(cache=True)
def _is_union(a, b, c):
    """a == b | c."""
    for w in range(a.shape[0]):
        if a[w] != (b[w] | c[w]):
            return False
    return True


@njit(cache=True)
def _subset(m, sup):
    for j in range(m.shape[0]):
        if m[j] and not sup[j]:
            return False
    return True


@njit(cache=True, inline="always")
def _count_pairs(s, rows, nzw, nnz, vs, nv, P):
    """Compact pair counts of ``rows`` over the features ``vs[:nv]`` into ``P`` (`counts.
    pair_counts_upper`: ``P[c, a, b]`` the pair ``vs[a]``, ``vs[b]``, ``a < b``), counted in the
    statistics."""
    pair_counts_upper(rows, nzw, nnz, s.data.F, s.data.C, vs, nv, P, s.scr.pbuf)
    s.stats[S_SCORED] += nv * (nv - 1) // 2


@njit(cache=True, inline="always")
def _pairs(s, rows, h, nnz):
    """Pair counts of the h = 2 node ``rows`` as (table, features, count): ``P[c, a, b]`` holds
    the pair ``vs[a]``, ``vs[b]`` for a < b < nv (the upper triangle, all the depth-2 solver
    reads), a compact table over a list of features that holds every feature valid at the node.

    Sibling derivation (incremental counting, after MurTree's idea of reusing the counts of a
    similar set): when ``rows`` is child 1 of the split the parent frame is exploring and the
    pairs of child 0 are known, P(child 1) = P(parent) - P(child 0), a subtraction instead of
    popcounts; the parent's pairs are counted once per parent, at its second chance (so a
    parent whose two children are both solved only once pays nothing extra). Child 0 and the
    parent are counted over the parent's valid features (a superset of the children's), the
    list both tables and the derived one are indexed by. Every reuse is checked on the row
    sets and feature masks."""
    scr = s.scr
    valid = scr.valid[h]
    if h + 1 < scr.valid.shape[0]:
        c0 = scr.child[h + 1, 0]
        c1 = scr.child[h + 1, 1]
        pf = scr.pflag
        if pf[0] != 0 and _same(rows, c1) and _same(scr.prow[0], c0) \
                and _subset(valid, scr.pmask[0]):
            have_par = pf[1] != 0 and _is_union(scr.prow[1], c0, c1) \
                and _same(scr.pmask[1], scr.pmask[0])
            if not have_par:
                if _is_union(scr.prow[2], c0, c1):
                    pf[2] += 1
                else:
                    for w in range(c0.shape[0]):
                        scr.prow[2, w] = c0[w] | c1[w]
                    pf[2] = 1
                if pf[2] >= 2:  # count the parent once, then derive
                    par = scr.prow[1]
                    pn = 0
                    for w in range(c0.shape[0]):
                        par[w] = c0[w] | c1[w]
                        if par[w] != 0:
                            scr.pnzw[pn] = w
                            pn += 1
                    np_ = partner_list(scr.pmask[0], scr.plist)
                    _count_pairs(s, par, scr.pnzw, pn, scr.plist, np_, scr.p_par)
                    scr.pmask[1, :] = scr.pmask[0]
                    pf[1] = 1
                    have_par = True
            if have_par:
                np_ = partner_list(scr.pmask[0], scr.plist)
                P = scr.pair
                for c in range(P.shape[0]):
                    for i in range(np_):  # the upper triangles (slices: unit stride)
                        Pi = P[c, i, i + 1:np_]
                        Ppi = scr.p_par[c, i, i + 1:np_]
                        Pli = scr.p_last[c, i, i + 1:np_]
                        for t in range(np_ - i - 1):
                            Pi[t] = Ppi[t] - Pli[t]
                return P, scr.plist, np_
        if _same(rows, c0) and _subset(valid, scr.valid[h + 1]):
            m = scr.valid[h + 1]
            np_ = partner_list(m, scr.plist)
            _count_pairs(s, rows, scr.nzw[h], nnz, scr.plist, np_, scr.p_last)
            scr.pmask[0, :] = m
            scr.prow[0, :] = rows
            pf[0] = 1
            return scr.p_last, scr.plist, np_
    vsl = scr.order[0]
    nv = partner_list(valid, vsl)
    _count_pairs(s, rows, scr.nzw[h], nnz, vsl, nv, scr.pair)
    return scr.pair, vsl, nv


@njit(cache=True, inline="always")
def _parent_first(s, h):
    """The node's valid features into ``order[h][:n]``: those valid at the parent's level
    first (the frame whose child this node usually is), then the others, each group in index
    order. `drop_equivalent` then keeps, of each class, a feature the parent's pair counts
    hold, so that the sibling derivation of `_pairs` applies more often (any order is exact)."""
    scr = s.scr
    valid = scr.valid[h]
    order = scr.order[h]
    up = h + 1 < scr.valid.shape[0]
    m = 0
    for g in range(2):
        for j in range(valid.shape[0]):
            if valid[j] and (up and scr.valid[h + 1, j]) == (g == 0):
                order[m] = j
                m += 1
    return m


@njit(cache=True)
def _optimal_members(s, h, total, n, ncand, vals, best, rep):
    """Mark the features whose class (`drop_equivalent`: kept ones ``order[h][:ncand]`` with
    values ``vals``, dropped ones ``order[h][ncand:n]``, each with its kept one ``rep``)
    reaches the optimum ``best``, and put their split scores into ``gain[h]``: once per class,
    since equivalent features score the same (equal columns have equal counts; a complement
    swaps the two terms of `child_impurity`'s sum)."""
    scr = s.scr
    order = scr.order[h]
    gains = scr.gain[h]
    opt = np.zeros(s.data.F.shape[1], dtype=np.bool_)
    for a in range(ncand):
        if vals[a] == best:
            j = order[a]
            opt[j] = True
            gains[j] = child_impurity(scr.tot[h], scr.cnt[h][j], scr.tmp[h], total, s.crit)
    for a in range(ncand, n):
        if vals[rep[a]] == best:
            j = order[a]
            opt[j] = True
            gains[j] = gains[order[rep[a]]]
    return opt


@njit(cache=True, inline="always")
def _first_optimal(s, h, total, n, ncand, vals, best, rep):
    """The root feature the ranked search returns: the first in rank order (`_rank`) among the
    optimal features (`_optimal_members`), found from their scores alone when it is certain.

    `rank_features` sorts by score (stable: lower index first among equal scores), then swaps
    neighbours ``(a, b)`` when ``b`` has the lower index and a score within the tie tolerance
    of ``a``'s. So the optimal feature ``a`` of smallest (score, index) comes first among the
    optimal ones unless some other optimal ``b`` could be swapped ahead of it (lower index,
    score within the tolerance): only then are all features ranked."""
    scr = s.scr
    order = scr.order[h]
    r = -1
    nopt = 0
    for a in range(ncand):
        if vals[a] == best:
            r = a
            nopt += 1
    if nopt == 1:
        # one optimal class: equivalent features score the same, so its lowest index comes
        # first
        f = order[r]
        for a in range(ncand, n):
            if rep[a] == r and order[a] < f:
                f = order[a]
        return f
    opt = _optimal_members(s, h, total, n, ncand, vals, best, rep)
    gains = scr.gain[h]
    first = -1
    s_first = INF
    for j in range(opt.shape[0]):
        if opt[j] and gains[j] < s_first:
            first = j
            s_first = gains[j]
    tol = TIE_RTOL * max(1.0, abs(s_first))
    certain = True
    for j in range(first):
        if opt[j] and abs(s_first - gains[j]) <= tol:
            certain = False
    if certain:
        return first
    for a in range(ncand, n):
        scr.valid[h, order[a]] = True  # rank every valid feature
    n = _rank(s, h, total)
    for t in range(n):
        if opt[order[t]]:
            return order[t]
    return -1


@njit(cache=True, inline="always")
def _depth2(s, rows, h, nnz, total):
    """h = 2, k = all, unweighted: the specialised depth-2 solver, exact (no bound);
    (objective, root feature), the root being the first optimal one in rank order, as the
    ranked search would return. The roots are evaluated unranked, one per class of
    equivalent features, each value exact (`depth2_root_values`); the features are ranked only
    when optimal roots of two classes tie (`_first_optimal`): ranking (a score with logarithms
    per feature, a sort) cost more than the whole depth-2 solve. A dropped feature's class is
    its kept one's (``rep``, `drop_equivalent`), so no column is compared again here."""
    scr = s.scr
    n = _parent_first(s, h)
    rep = np.empty(n, dtype=np.int64)
    ncand = drop_equivalent(rows, scr.nzw[h], nnz, s.data.F, scr.order[h], n, scr.valid[h], rep)
    P, vs, nv = _pairs(s, rows, h, nnz)
    node = Depth2Node(scr.cnt[h], scr.tot[h], scr.order[h], ncand, vs, nv, P)
    vals = np.empty(ncand)
    best = depth2_root_values(node, s.msl, s.M, s.nu, vals, s.min_imp == 0.0)
    return best, _first_optimal(s, h, total, n, ncand, vals, best, rep)


@njit(cache=True, inline="always")
def _branch_leaves(s, h, kk, total, best, floor):
    """h = 1 (k < all or after the deadline): the k best features, children are leaves."""
    cnt1 = s.scr.cnt[h]
    tot = s.scr.tot[h]
    order = s.scr.order[h]
    best_f = -1
    for t in range(kk):
        j = order[t]
        s1, m1, m0, _, _ = split_stats(cnt1[j], tot)
        err = (s1 - m1) + (total - s1 - m0)
        o = err * s.M + 3.0 * s.nu
        if o < best:
            best = o
            best_f = j
            if best <= floor:
                break
    return best, best_f


@njit(cache=True, inline="always")
def _child_bounds(s, h, j, total):
    """Static lower bounds of the two children of splitting on ``j``: the exact leaf objective
    of a pure child, else 3 nodes (1 when min_improvement lets children be leaves); and
    whether each child is impure."""
    M = s.M
    nu = s.nu
    s1, m1, m0, p1, p0 = split_stats(s.scr.cnt[h][j], s.scr.tot[h])
    lb0 = (total - s1 - m0) * M + nu if p0 <= 1 else 3.0 * nu
    lb1 = (s1 - m1) * M + nu if p1 <= 1 else 3.0 * nu
    if s.min_imp >= 0.0:  # an impure child may be a leaf: its leaf, or a split tree
        if p0 > 1:
            lb0 = min(lb0, (total - s1 - m0) * M + nu)
        if p1 > 1:
            lb1 = min(lb1, (s1 - m1) * M + nu)
    return lb0, lb1, p0 > 1, p1 > 1


@njit(cache=True, inline="always")
def _sim_nodes(s):
    """The nodes the similarity bound adds to a set's error bound: an impure node splits in
    Figure 1 (3 nodes); with min_improvement 0 it may stay a leaf (1)."""
    return s.nu if s.min_imp == 0.0 else 3.0 * s.nu


@njit(cache=True, inline="always")
def _key(s, h):
    """The cache key of a node with depth budget ``h``: ``h`` itself, except at the levels a
    widened search of width ``w`` restricts (``h`` > 2), whose values hold for its subset of
    trees only: ``h + w * 2^32``, apart from every exact entry and from other widths' (a
    depth budget is far below 2^32, and the widths below 2^31 keep the key in an int64).
    Below them the widened and the exact searches share their (exact) entries."""
    width = s.stats[S_WIDTH]
    if width > 0 and h > 2:
        return h + (width << 32)
    return h


@njit(cache=True, inline="always")
def _child_lb(s, rows, h, lb, sim):
    """Tighter child bound from the cache and (k = all) the similarity bound."""
    lb, exact = cached_bound(s.cache, rows, _key(s, h), lb)
    if exact:
        return lb
    if sim:
        lb = similarity_bound(rows, h, lb, s.M, _sim_nodes(s), s.scr.sim_rows, s.scr.sim_val)
    return lb


@njit(cache=True, inline="always")
def _finish(s, rows, h, key, hv, nb, best, best_f, sim):
    """Remember the set for the similarity bound, cache (under ``key``, `_key`) and return the
    node's answer (best split ``best_f`` of objective ``best``, or -1; the node's `NodeBounds`
    ``nb``)."""
    ub = nb.ub
    lbk = nb.lbk
    leaf_obj = nb.leaf_obj
    timed_out = s.stats[S_TIMED_OUT] != 0
    leaf = best_f < 0 and s.min_imp >= 0.0 and nb.split_ub < ub  # the leaf, exact
    if sim and not timed_out:
        # a lower bound on this set's optimal error, for the similarity bound
        vb = best if best_f >= 0 else (leaf_obj if leaf else (ub if ub > lbk else lbk))
        remember_similar(rows, h, np.floor(vb / s.M), s.scr.sim_rows, s.scr.sim_val)
    if best_f >= 0:
        st = ANYTIME if timed_out else EXACT
        cache_put(s.cache, rows, key, hv, best, best_f, st)
        s.scr.feat[h] = best_f
        return best
    if leaf:
        # no split improves enough: the leaf is this node's exact answer
        if not timed_out:
            cache_put(s.cache, rows, key, hv, leaf_obj, -1, EXACT)
        s.scr.feat[h] = -1
        return leaf_obj
    lb = ub if ub > lbk else lbk
    if not timed_out:
        cache_put(s.cache, rows, key, hv, lb, -1, LOWER)
    return lb


@njit(cache=True, inline="always")
def second_first(s, h, j, total, lb0, lb1):
    """Whether the split on ``j`` solves its child 1 first: the child more likely to have no
    tree below the bound goes first (the larger lower bound, then the larger leaf error), so
    that its failure spares the other child's search. Either order gives the same answer."""
    if lb1 != lb0:
        return lb1 > lb0
    s1, m1, m0, _, _ = split_stats(s.scr.cnt[h][j], s.scr.tot[h])
    return s1 - m1 > total - s1 - m0


@njit(cache=True, inline="always")
def begin(s, rows, h, ub):
    """Open a node of the Top-k search (the engine's step 1, `search.engine.solve`):
    (answered, value, `Node`). Answered: a leaf (depth 0, a pure node, no valid feature), a
    cache hit, a lower bound >= ub, the exact depth-1 and depth-2 solvers, depth 1 with k
    features. Otherwise the ranked candidates ``order[h][:kk]`` (k = all: one per class of
    equivalent features), the splits competing against ``split_ub`` (below ``ub`` when
    min_improvement makes the leaf compete) and the floor ``max(3 nu, lbk)`` of any split tree.
    Values are ``error * M + nu * nodes``, a split costs ``nu``."""
    M = s.M
    nu = s.nu
    nnz, nrows, total, leaf_err, npos = node_summary(s.data, rows, s.scr.tot[h], s.scr.nzw[h])
    leaf_obj = leaf_err * M + nu
    s.scr.feat[h] = -1
    if h == 0 or npos <= 1:
        return True, leaf_obj, closed_node()
    timed_out = s.stats[S_TIMED_OUT] != 0
    key = _key(s, h)
    hv = row_hash(rows, key)
    hit, val, lbk = cache_lookup(s.cache, rows, key, hv, ub, timed_out, s.scr.feat, h)
    if hit:
        return True, val, closed_node()
    check_time(s.stats, s.clock)
    timed_out = s.stats[S_TIMED_OUT] != 0
    # a widened search's levels (`treebench.search.anytime`) search a subset of the trees: their
    # values are no optima, so they neither use nor feed the similarity bound, and they are
    # cached under keys of their own (`_key`)
    width = s.stats[S_WIDTH]
    narrow = width > 0 and h > 2
    # similarity lower bound (k = all, unweighted; Figure 1 or min_improvement 0)
    sim = s.sim and not timed_out and not narrow
    if sim:
        lbk = similarity_bound(rows, h, lbk, M, _sim_nodes(s), s.scr.sim_rows, s.scr.sim_val)
        if lbk >= ub:
            cache_put(s.cache, rows, key, hv, lbk, -1, LOWER)
            return True, lbk, closed_node()
    nvalid = _score(s, rows, h, nnz, nrows)
    if nvalid == 0:
        return True, leaf_obj, closed_node()
    if h == 2 and s.k <= 0 and not s.data.weighted and not timed_out and s.min_imp <= 0.0 \
            and s.scr.pair.shape[1] == s.data.F.shape[1]:
        # solved exactly (no upper bound): a set is never solved twice at depth 2, and the
        # exact value bounds its parents and similar sets better than "no tree below ub"
        best, best_f = _depth2(s, rows, h, nnz, total)
        nb = NodeBounds(ub, lbk, ub, leaf_obj)
        if s.min_imp == 0.0 and best >= leaf_err * M:
            # no split lowers the error: the leaf is the exact answer, whatever ``ub``
            nb = NodeBounds(INF, lbk, leaf_err * M, leaf_obj)
            best_f = -1
        return True, _finish(s, rows, h, key, hv, nb, best, best_f, sim), closed_node()
    if h == 1 and (s.k <= 0 or s.k >= nvalid):
        # exact even after the deadline (one pass over the features, as the greedy step): the
        # depth-2 solver caches no entries for its children, so a tree read back after the
        # deadline finds its stumps here, and they must be the ones its value counted
        return True, _depth1_all(s, rows, h, hv, total, leaf_err, leaf_obj), closed_node()
    ncand = _rank(s, h, total)
    if ncand == 0:
        return True, leaf_obj, closed_node()
    if s.k <= 0 and h >= 2 and not timed_out:
        # k = all: one feature per class of equal/complementary columns on this node
        ncand = drop_equivalent(rows, s.scr.nzw[h], nnz, s.data.F, s.scr.order[h], ncand,
                                s.scr.valid[h])
    kk = ncand if s.k <= 0 or s.k > ncand else s.k
    if narrow and width < kk:
        kk = width
    if timed_out:
        kk = 1
    # the leaf competes only when min_improvement is active
    split_ub = ub
    if s.min_imp >= 0.0:
        thr = (leaf_err - s.min_imp) * M
        if thr < split_ub:
            split_ub = thr
    # absolute lower bound of any split tree here: error 0, 3 nodes (or cached bound)
    floor = 3.0 * nu
    if lbk > floor:
        floor = lbk
    if h == 1:
        best, best_f = _branch_leaves(s, h, kk, total, split_ub, floor)
        return True, _finish(s, rows, h, key, hv, NodeBounds(ub, lbk, split_ub, leaf_obj), best,
                             best_f, sim), closed_node()
    return False, 0.0, Node(
        np.int64(h), np.int64(h), np.int64(key), hv, ub, lbk, floor, split_ub, leaf_obj, total,
        np.int64(kk), np.int64(ncand), timed_out, -1.0, nu, split_ub, np.int64(-1), False, sim,
        False)


@njit(cache=True, inline="always")
def static_bounds(s, nd, j):
    """The children's bounds before the split (`_child_bounds`): a pure child's is its leaf's
    value, exact."""
    lb0, lb1, imp0, imp1 = _child_bounds(s, nd.h, j, nd.total)
    return lb0, lb1, not imp0, not imp1


@njit(cache=True, inline="always")
def refine_bounds(s, nd, r0, r1, lb0, lb1, x0, x1):
    """The impure children's bounds raised by the cache and (k = all) similar support."""
    if not x0:
        lb0 = _child_lb(s, r0, nd.h - 1, lb0, nd.sim)
    if not x1:
        lb1 = _child_lb(s, r1, nd.h - 1, lb1, nd.sim)
    return lb0, lb1, x0, x1, -1.0, -1.0


@njit(cache=True, inline="always")
def end(s, rows, nd, best, best_f, lbmin, stopped, timed_out):
    """Close a node (the engine's step 3): a failed search (no tree below ub) learns more than
    "optimum >= ub": every tree here has some root feature, so it costs at least the smallest
    of the bounds met over them (MurTree's lower-bound update), when every candidate was
    searched, before the deadline, without a positive min_improvement (with 0, at most the
    leaf's value); then `_finish`."""
    lbk = nd.lbk
    if best_f < 0 and not stopped and not timed_out and nd.kk == nd.ncand \
            and s.min_imp <= 0.0:
        if s.min_imp == 0.0:  # the leaf competes: the optimum is at most the leaf's value
            lbmin = min(lbmin, nd.leaf)
        if lbmin > lbk:
            lbk = lbmin
    return _finish(s, rows, nd.h, nd.key, nd.hv, NodeBounds(nd.ub, lbk, nd.split_ub, nd.leaf),
                   best,
                   best_f, nd.sim)


@njit(cache=True)
def big_m(H):
    """The smallest power of two above 2^(H+1), more than the nodes of any depth-H tree:
    objectives ``error * M + nu * nodes`` then order by error first, nodes second."""
    M = 1.0
    while M <= 2.0 ** (H + 1):
        M *= 2.0
    return M


def topk_problem(data, depth, k=0, crit=ENTROPY, msl=1, min_imp=-1.0, max_entries=1 << 20,
                 deadline=-1.0, smaller_trees=True):
    """The search's inputs as one record (`TopkProblem`), with the field types every fit and
    the warm-up share: ``data`` a `treebench.search.state.Data` (`bitset_data`), ``k`` = 0 for
    all features, ``min_imp`` < 0 for none, ``deadline`` an absolute ``perf_counter`` time
    (<= 0: none); no anytime schedule (`anytime_problem` sets it)."""
    return TopkProblem(data, int(depth), int(k), int(crit), int(msl), float(min_imp),
                       int(max_entries), float(deadline), bool(smaller_trees), 0, INF, 0.0)


def anytime_problem(p, k_top=0, ub=INF, time_limit=0.0):
    """The problem ``p`` with the anytime schedule's fields (`treebench.search.anytime`):
    ``k_top`` > 0 (with k = all) searches only the first ``k_top`` ranked candidates at nodes
    with a depth budget of 3 or more, every feature below (a widened search); ``ub`` is the
    root's upper bound (the root returns its optimum when that is below ``ub``, else a lower
    bound ``>= ub``); ``time_limit`` > 0 (seconds, with k = all, whole-number values and the
    deadline that limit sets) runs the schedule."""
    return p._replace(k_top=int(k_top), ub=float(ub), time_limit=float(time_limit))
