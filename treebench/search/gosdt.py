"""Compiled search of the GOSDT objective (Lin et al., ICML 2020; McTavish et al., AAAI 2022),
on the search layer (`treebench.search`).

Objective, in count units (weighted rows): ``R(t) * W_total = errors(t) + lam * leaves(t)``
with ``lam = λ * W_total``, optionally with a depth budget (a lone leaf has depth 0). The search
is the dynamic programme of equation (5) of McTavish et al.: the optimum of a subproblem
(row set, depth budget) is the better of a leaf and, over every feature that splits it, the sum
of the optima of its two children. Branch-and-bound with a memo keyed by (depth budget, row set)
(row set alone without a depth limit), run by the search engine (`search.engine.solve`, one
driver for every optimal search on 0/1 features; a search under ``ub`` returns the exact
optimum when it is < ub, else a lower bound >= ub, cached and reused). This module is the
objective's plug-in: `begin` opens a node, `static_bounds` and `refine_bounds` bound a
candidate's children, `end` closes the node; `root_bound` bounds a timed-out root.

Bounds (count units; each is a lower bound on every tree's cost, so the result stays exact):

* the base bound ``b(S)``: the equivalent-points bound (Lin et al. Theorem 3.6 / Hu et al.):
  rows with identical features and different labels force ``sum over groups (size - majority)``
  errors on any tree; with a lower-bound guess it is replaced by the errors of the reference
  model on S (McTavish et al. eq. 4), which is not a valid bound: the result is then optimal
  relative to the reference (their Theorem 4.3);
* hierarchical bound / one-step look-ahead: a split costs at least ``b(S) + 2 lam``; if the
  leaf costs no more (in particular when its error is <= lam, the incremental-accuracy bound),
  the leaf is the answer without looking at features (the paper's step 1);
* per-feature child bounds: a child costs at least ``min(leaf(S_i), b(S_i) + 2 lam)``, raised
  by the cache (exact values, lower bounds) and by similar support (`treebench.search.bounds`);
* a subproblem stops as soon as a tree reaches its floor ``max(cached lb, b(S) + 2 lam)`` (the
  paper's step 2a).

With a lower-bound guess every subproblem, down to depth budget 1, follows the paper's §4.3
steps with ``lb_guess(S) = ref errors(S) + lam`` (eq. 4): step 1 "leaf when ub(S) <= lb_guess(S)
+ lam" is the look-ahead test ``leaf <= b(S) + 2 lam``; otherwise ``lb_curr = lb_guess(S)``, so
step 2a stops at ``max(b(S) + lam, 2 lam)`` and step 2b omits a feature whose children's
guessed bounds (the same, or the child's leaf when step 1 closes it) reach the best tree so
far (not ``b + 2 lam``: the authors' package starts its subproblems at min(leaf, min_loss +
2λ), one λ tighter than the paper). A subproblem is "identified by (s_a, d)" (§4.3): under the
guess its two children are solved on their own, never under a bound from the caller's best
tree (that bound, minus a guessed sibling bound, cut children whose sibling beats the
reference and lost their split), and guessed values are never read back as bounds (no cache
or similar-support bounds), so a subproblem's value is a function of its rows and depth
budget, whoever asks (`tests/algorithms/test_gosdt_guess_rule.py`). Budget-2 nodes are valued
by `search.depth2.depth2_guessed` from pair counts, which applies the same steps in the node
and its children and returns the recursion's objective and root (the exact depth-2 solver
would skip step 1 in the children, and the tree read back would not be the tree the search
valued).

Without a guess, three exactness-preserving techniques of the optimal-tree literature (as in
Top-k's k = all search, `search.topk`; `docs/search-speed.md`):

* budget-2 nodes are solved exactly by the depth-2 solver from pair counts whatever the
  caller's bound (the leaf is the starting point, not ``ub``): their values are cached as
  optima, so a row set is never solved twice at budget 2, and they bound parents and similar
  sets as tightly as possible;
* features equal or complementary on a node's rows (`treebench.search.equiv`) split it into
  the same two row sets, so they have the same subtrees and cost: one of each class is
  searched, the first in rank order (the one the strict-improvement rule keeps anyway);
* a search that finds no tree below ``ub`` caches min(leaf, smallest bound met over the root
  features) when larger than ``ub`` (MurTree's lower-bound update after a failed search, with
  the leaf as a candidate of this objective), taken only when every root feature was examined.

Features are tried in order of the children's leaf errors (good trees early, tight bounds
sooner). After the deadline (`treebench.search.clock`) every new node tries only its first
feature (greedy) and open frames keep the best tree they have: the anytime tree.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.bitset import ctz, popcount, row_hash, split_rows
from treebench.search.bounds import (
    cache_lookup, cached_bound, remember_similar, similarity_bound,
)
from treebench.search.cache import ANYTIME, EXACT, LOWER, cache_put
from treebench.search.clock import check_time
from treebench.search.counts import count_node, node_summary, pair_counts
from treebench.search.criteria import INF, rank_features, split_stats
from treebench.search.depth2 import (
    Depth2Node, LazyNode, depth2_guessed, depth2_lazy, partner_list, ref_wrong_counts,
)
from treebench.search.equiv import drop_equivalent
from treebench.search.state import S_SCORED, S_TIMED_OUT, Node, closed_node

#: the engine's traits of the GOSDT objective (`treebench.search.engine`, "The objective
#: plug-in"): a split is valued ``(first + second) + 0`` and decided on its children's bounds;
#: children are searched in feature order; the root's leaf is the first incumbent
EXACT_FLOATS, ORDERS_CHILDREN, ROOT_LEAF_INCUMBENT = False, False, True

#: the inputs of a search (`gosdt_problem` builds it with fixed field types)
GosdtProblem = namedtuple(
    "GosdtProblem",
    ["data", "depth", "limited", "lam", "max_entries", "deadline", "use_ref", "ref_wrong",
     "eq_rows", "grp", "n_groups", "shortcut"],
)


@njit(cache=True)
def weight_of(s, rows, mask):
    """(Weighted) number of rows in ``rows & mask``."""
    D = s.data
    if not D.weighted:
        t = 0
        for w in range(rows.shape[0]):
            t += popcount(rows[w] & mask[w])
        return float(t)
    t = 0.0
    for w in range(rows.shape[0]):
        x = rows[w] & mask[w]
        while x != 0:
            t += D.sw[w * 64 + ctz(x)]
            x &= x - np.uint64(1)
    return t


@njit(cache=True)
def equivalent_points(s, rows):
    """Errors every tree makes on ``rows``: for each group of identical feature vectors, its
    (weighted) size minus its largest class."""
    D = s.data
    cnt = s.grp_cnt
    touched = s.groups[1]
    nt = 0
    for w in range(rows.shape[0]):
        x = rows[w] & s.masks[1, w]
        while x != 0:
            i = w * 64 + ctz(x)
            g = s.groups[0, i]
            tot = 0.0
            for c in range(cnt.shape[1]):
                tot += cnt[g, c]
            if tot == 0.0:
                touched[nt] = g
                nt += 1
            cnt[g, D.y[i]] += D.sw[i]
            x &= x - np.uint64(1)
    err = 0.0
    for t in range(nt):
        g = touched[t]
        tot = 0.0
        mx = 0.0
        for c in range(cnt.shape[1]):
            v = cnt[g, c]
            tot += v
            if v > mx:
                mx = v
            cnt[g, c] = 0.0
        err += tot - mx
    return err


@njit(cache=True, inline="always")
def base_bound(s, rows):
    """b(S): reference errors (lower-bound guess) or the equivalent-points bound."""
    if s.use_ref:
        return weight_of(s, rows, s.masks[0])
    return equivalent_points(s, rows)


@njit(cache=True, inline="always")
def _score(s, rows, lev, nnz, nrows, total):
    """Class counts per feature; valid = both children non-empty; rank features by the sum of
    the children's leaf errors (ties: lower index). Returns the number of valid features."""
    scr = s.scr
    d = s.data.F.shape[1]
    count_node(s.data, scr, s.stats, rows, lev, nnz)
    cnt1 = scr.cnt[lev]
    rc1 = scr.rc[lev]
    tot = scr.tot[lev]
    valid = scr.valid[lev]
    gain = scr.gain[lev]
    for j in range(d):
        valid[j] = rc1[j] >= 1.0 and nrows - rc1[j] >= 1.0
        if valid[j]:
            m1 = 0.0
            m0 = 0.0
            s1 = 0.0
            for c in range(tot.shape[0]):
                v1 = cnt1[j, c]
                s1 += v1
                if v1 > m1:
                    m1 = v1
                if tot[c] - v1 > m0:
                    m0 = tot[c] - v1
            gain[j] = (s1 - m1) + (total - s1 - m0)
    return rank_features(gain, valid, scr.order[lev])


@njit(cache=True, inline="always")
def _leaf_errors(s, lev, j, total):
    """Leaf errors of the two children of splitting on ``j`` and whether each is pure (the
    shared per-side statistics of `treebench.search.criteria.split_stats`)."""
    s1, m1, m0, p1, p0 = split_stats(s.scr.cnt[lev][j], s.scr.tot[lev])
    return (total - s1) - m0, s1 - m1, p0 <= 1, p1 <= 1


@njit(cache=True, inline="always")
def _guess_floor(s, b):
    """Under a lower-bound guess, the bound of a subproblem that step 1 did not close: the
    paper's ``lb_curr = lb_guess(S) = ref errors + lam`` (McTavish et al. §4.3, eq. 4), never
    below the valid ``2 lam`` of any split tree."""
    v = b + s.lam
    if v < 2.0 * s.lam:
        v = 2.0 * s.lam
    return v


@njit(cache=True, inline="always")
def _child_lb(s, rows, lev, leaf, b):
    """Lower bound on a child's optimum (``b`` = its base bound): min(leaf, b + 2 lam), raised
    by the cache and similar support."""
    if lev == 0 or leaf <= 2.0 * s.lam:
        return leaf
    lb = b + 2.0 * s.lam
    if leaf <= lb:
        lb = leaf
    elif s.use_ref:
        # under the guess a child is bounded by its lb_curr = lb_guess only (§4.3 step 2b),
        # never by the cache or similar support, so that a subproblem's value is a function
        # of (rows, depth budget) alone (see `begin`) and the depth-2 shortcut
        # (`search.depth2`) values the same trees
        return _guess_floor(s, b)
    lb, exact = cached_bound(s.cache, rows, lev if s.limited else 0, lb)
    if exact:
        return lb
    if s.sim:
        lb = similarity_bound(rows, lev, lb, 1.0, 0.0, s.scr.sim_rows, s.scr.sim_val)
    return lb


@njit(cache=True, inline="always")
def _finish(s, rows, lev, key, hv, ub, node_lb, best, best_f, found):
    """Cache and return the answer: the best tree when one is below ``ub``, else the lower
    bound max(ub, node_lb)."""
    timed_out = s.stats[S_TIMED_OUT] != 0
    sim = s.sim  # (off under a lower-bound guess)
    if found:
        if sim and not timed_out:
            remember_similar(rows, lev, best, s.scr.sim_rows, s.scr.sim_val)
        cache_put(s.cache, rows, key, hv, best, best_f, ANYTIME if timed_out else EXACT)
        s.scr.feat[lev] = best_f
        return best
    lb = ub if ub > node_lb else node_lb
    if not timed_out:
        if sim:
            remember_similar(rows, lev, lb, s.scr.sim_rows, s.scr.sim_val)
        cache_put(s.cache, rows, key, hv, lb, -1, LOWER)
    return lb


@njit(cache=True)
def _budget_for(lev, ub, lam):
    """The depth budget that is enough below ``ub``: a tree costs at least ``lam``
    per leaf, so a tree cheaper than ``ub`` has at most L leaves, L the largest integer with
    ``L * lam < ub``, hence depth at most L - 1. Below ``ub`` the trees of depth <= ``lev``
    and those of depth <= min(lev, L - 1) are the same trees, so both budgets have the same
    optimum when it is below ``ub``, and both optima are >= ``ub`` otherwise."""
    if lam <= 0.0 or ub >= INF:
        return lev
    # the search sums costs in floating point: L is counted against ub plus a margin, so it
    # is never smaller than the exact count (a larger budget is always safe)
    top = ub + 1e-9 * max(1.0, abs(ub))
    q = top / lam
    if q > lev + 2.0:
        return lev
    L = np.int64(q)
    while L > 0 and L * lam >= top:
        L -= 1
    while (L + 1) * lam < top:
        L += 1
    d = L - 1
    if d < 0:
        d = 0
    return d if d < lev else lev


@njit(cache=True, inline="always")
def _at_budget(s, rows, lev0, lev, ub, v):
    """The answer of a subproblem solved at the reduced budget ``lev`` (`_budget_for`) for
    budget ``lev0``: below ``ub`` it is the exact optimum of both, and it is cached for
    ``lev0`` too (the tree read-back asks for ``lev0``); otherwise only ``ub`` is a lower
    bound of the budget-``lev0`` optimum (the reduced search bounds the reduced optimum)."""
    if lev == lev0:
        return v
    if v < ub:
        if s.stats[S_TIMED_OUT] == 0:
            cache_put(s.cache, rows, lev0, row_hash(rows, lev0), v, s.scr.feat[lev], EXACT)
        s.scr.feat[lev0] = s.scr.feat[lev]
        return v
    return ub


@njit(cache=True, inline="always")
def _static_lb(s, lev, e, pure):
    """A child with leaf error ``e``: its leaf cost when it cannot usefully split, else
    min(leaf, 2 lam) (a split has two leaves)."""
    leaf = e + s.lam
    if lev > 1 and not pure and e > s.lam and 2.0 * s.lam < leaf:
        return 2.0 * s.lam
    return leaf


@njit(cache=True, inline="always")
def _shortcut2(s):
    """Whether budget-2 nodes go to a depth-2 solver: without a guess `depth2_lazy`, which
    counts its pairs itself (the state's ``pairs``), under a guess `depth2_guessed`, from the
    pair table the state then holds."""
    if s.use_ref:
        return s.scr.pair.shape[1] == s.data.F.shape[1]
    return s.pairs


@njit(cache=True, inline="always")
def _depth2(s, rows, lev, nnz, ncand, best, best_f, found, floor):
    """Depth budget 2 (unweighted): every depth-<= 2 tree from pairwise counts
    (`search.depth2.depth2_lazy`, the answer of `treebench.search.depth2.depth2_regularized`
    with pair counts computed only for the roots whose bound can still win) instead of
    recursing. (Deriving the second child's pair counts as parent minus first child, as Top-k
    does, was measured: no gain here, where the second child is often pruned or cached, so
    the parent's count is wasted.)"""
    scr = s.scr
    node = LazyNode(scr.cnt[lev], scr.tot[lev], scr.order[lev], ncand, scr.valid[lev])
    v, f, n_pairs = depth2_lazy(rows, scr.nzw[lev], nnz, s.data.F, s.data.C, node, s.lam,
                                best, floor)
    s.stats[S_SCORED] += n_pairs
    if f >= 0:
        return v, f, True
    return best, best_f, found


@njit(cache=True)
def _depth2_guess(s, rows, lev, nnz, ncand, best, best_f, found, floor, b):
    """Depth budget 2 (unweighted) under a lower-bound guess: every depth-<= 2 tree valued as
    this recursion values it (`search.depth2.depth2_guessed`), from pair counts."""
    scr = s.scr
    D = s.data
    vs = scr.order[0]  # level-0 scratch (budget-0 nodes are leaves, never scored)
    nv = partner_list(scr.valid[lev], vs)
    pair_counts(rows, scr.nzw[lev], nnz, D.F, D.C, vs, nv, scr.pair)
    rw1 = scr.gain[0]  # level-0 scratch too
    ref_wrong_counts(rows, scr.nzw[lev], nnz, D.F, s.masks[0], rw1)
    s.stats[S_SCORED] += nv * (nv - 1) // 2
    node = Depth2Node(scr.cnt[lev], scr.tot[lev], scr.order[lev], ncand, vs, nv, scr.pair)
    v, f = depth2_guessed(node, rw1, b, s.lam, best, floor)
    if f >= 0:
        return v, f, True
    return best, best_f, found


@njit(cache=True, inline="always")
def begin(s, rows, lev, ub, b):
    """Open a node of the GOSDT search (the engine's step 1, `search.engine.solve`):
    (answered, value, `Node`). Answered: a leaf no split can pay for, budget 0, a cache hit,
    the one-step look-ahead (the leaf is optimal). Otherwise the node's floor (any split tree
    costs at least it), the best tree so far (the leaf when below ``ub``), and either the
    depth-2 solvers' answer (budget 2) or the candidates ``order[lev][:kk]``."""
    lam = s.lam
    lev0 = lev
    if s.limited and not s.use_ref:
        lev = _budget_for(lev, ub, lam)
    s.scr.feat[lev] = -1
    nnz, nrows, total, leaf_err, npos = node_summary(s.data, rows, s.scr.tot[lev], s.scr.nzw[lev])
    leaf = leaf_err + lam
    if npos <= 1 or leaf_err <= lam:
        return True, leaf, closed_node()  # no split can pay for its extra leaf
    if lev == 0:
        return True, (leaf if lev0 == 0 or leaf < ub else ub), closed_node()
    key = lev if s.limited else 0
    hv = row_hash(rows, key)
    timed_out = s.stats[S_TIMED_OUT] != 0
    hit, val, lbk = cache_lookup(s.cache, rows, key, hv, ub, timed_out, s.scr.feat, lev)
    if hit:
        return True, _at_budget(s, rows, lev0, lev, ub, val), closed_node()
    check_time(s.stats, s.clock)
    timed_out = s.stats[S_TIMED_OUT] != 0
    if b < 0.0:
        b = base_bound(s, rows)
    floor = b + 2.0 * lam  # any split tree costs at least this (hierarchical bound)
    if leaf <= floor:  # one-step look-ahead: the leaf is optimal
        if not timed_out:
            cache_put(s.cache, rows, key, hv, leaf, -1, EXACT)
        return True, leaf, closed_node()
    if s.use_ref:
        floor = _guess_floor(s, b)  # step 2a stops at lb_curr = lb_guess(S)
    # bounds on the optimum also bound every split tree (optimum = min(leaf, best split))
    if lbk > floor:
        floor = lbk
    if s.sim and not timed_out:  # (off under a lower-bound guess: see `_child_lb`)
        floor = similarity_bound(rows, lev, floor, 1.0, 0.0, s.scr.sim_rows, s.scr.sim_val)
    # Without a guess a budget-2 node is solved exactly, whatever ``ub``: the leaf
    # is the starting point instead of ``ub``, so its value is cached as exact and the row
    # set is never solved twice at budget 2 (as in Top-k's k = all search, same argument: the
    # optimum of a subproblem does not depend on the caller's bound)
    exact2 = lev == 2 and s.limited and not timed_out and not s.use_ref and _shortcut2(s)
    found = leaf < ub or exact2
    best = leaf if found else ub
    best_f = -1
    kk = 0
    complete = False  # every root feature was examined without early stop or timeout
    if floor < best:
        ncand = _score(s, rows, lev, nnz, nrows, total)
        order = s.scr.order[lev]
        if lev >= 2 and not timed_out and not s.use_ref:
            # features equal or complementary on these rows give the same two children, so
            # the same subtrees and cost: one of each class is searched, the first in rank
            # order (the one the strict-improvement rule keeps anyway); `search.equiv`
            ncand = drop_equivalent(rows, s.scr.nzw[lev], nnz, s.data.F, order, ncand,
                                    s.scr.valid[lev])
        kk = 1 if timed_out and ncand > 0 else ncand
        complete = not timed_out and not s.use_ref and lev >= 2
        # Depth budget 2 from pair counts. Under a lower-bound guess the exact solver would
        # skip McTavish et al. §4.3 step 1 in the budget-1 children, and the tree read back
        # applies it (broward d5 fold 0: search value 0.388925, returned tree
        # 0.389683); `search.depth2.depth2_guessed` values the trees as this recursion does.
        if lev == 2 and s.limited and not timed_out and _shortcut2(s):
            if s.use_ref:
                best, best_f, found = _depth2_guess(s, rows, lev, nnz, ncand, best, best_f,
                                                    found, floor, b)
            else:
                best, best_f, found = _depth2(s, rows, lev, nnz, ncand, best, best_f, found,
                                              floor)
            kk = 0
            complete = False
    return False, 0.0, Node(
        np.int64(lev), np.int64(lev0), np.int64(key), hv, ub, lbk, floor, ub, leaf, total,
        np.int64(kk), np.int64(kk), timed_out, b, 0.0, best, np.int64(best_f), found, s.sim,
        complete)


@njit(cache=True, inline="always")
def static_bounds(s, nd, j):
    """The children's bounds before the split (`_static_lb`): exact at budget 1, where the
    children are leaves."""
    e0, e1, pure0, pure1 = _leaf_errors(s, nd.h, j, nd.total)
    leaves = nd.h == 1
    return _static_lb(s, nd.h, e0, pure0), _static_lb(s, nd.h, e1, pure1), leaves, leaves


@njit(cache=True, inline="always")
def refine_bounds(s, nd, j, r0, r1, lb0, lb1):
    """The children's base bounds (additive over a partition) and their bounds min(leaf,
    b + 2 lam) raised by the cache and similar support (`_child_lb`)."""
    e0, e1, _, _ = _leaf_errors(s, nd.h, j, nd.total)
    b0 = base_bound(s, r0)
    b1 = nd.b - b0  # the base bound is additive over a partition
    if b1 < 0.0:
        b1 = 0.0
    lb0 = _child_lb(s, r0, nd.h - 1, e0 + s.lam, b0)
    lb1 = _child_lb(s, r1, nd.h - 1, e1 + s.lam, b1)
    return lb0, lb1, False, False, b0, b1


@njit(cache=True, inline="always")
def end(s, rows, nd, best, best_f, found, lbmin, stopped):
    """Close a node (the engine's step 3). A failed search (no tree below ub) proved more than
    "optimum >= ub": every split tree has a root feature, so it costs at least the smallest
    bound met over them (MurTree's lower-bound update after a failed search), taken when every
    root feature was examined; the leaf stays a candidate of this objective. Then `_finish`,
    and the answer carried to the caller's budget (`_at_budget`)."""
    node_lb = min(nd.leaf, nd.floor)
    if nd.complete and not stopped and not found and lbmin > nd.floor:
        node_lb = min(nd.leaf, lbmin)
    v = _finish(s, rows, nd.h, nd.key, nd.hv, nd.ub, node_lb, best, best_f, found)
    return _at_budget(s, rows, nd.lev0, nd.h, nd.ub, v)


@njit(cache=True)
def root_bound(s, rows, lev):
    """A lower bound on the root's optimum from what the search proved (used after a
    timeout): min(leaf, max(b + 2 lam, min over features of the children's bounds))."""
    nnz, nrows, total, leaf_err, npos = node_summary(s.data, rows, s.scr.tot[lev], s.scr.nzw[lev])
    leaf = leaf_err + s.lam
    if lev == 0 or npos <= 1 or leaf_err <= s.lam:
        return leaf
    b = base_bound(s, rows)
    floor = b + 2.0 * s.lam
    if leaf <= floor:
        return leaf
    if s.use_ref:
        floor = _guess_floor(s, b)
    ncand = _score(s, rows, lev, nnz, nrows, total)
    split = INF
    r0 = s.scr.child[lev, 0]
    r1 = s.scr.child[lev, 1]
    order = s.scr.order[lev]
    for t in range(ncand):
        j = order[t]
        e0, e1, _, _ = _leaf_errors(s, lev, j, total)
        split_rows(rows, s.data.F, j, r0, r1)
        b0 = base_bound(s, r0)
        v = _child_lb(s, r0, lev - 1, e0 + s.lam, b0) + _child_lb(s, r1, lev - 1, e1 + s.lam,
                                                                 max(b - b0, 0.0))
        if v < split:
            split = v
    if floor > split:
        split = floor
    return leaf if leaf < split else split


def gosdt_problem(data, depth, lam, limited=True, max_entries=1 << 20, deadline=-1.0,
                  ref_wrong=None, groups=None, shortcut=True):
    """The search's inputs as one record (`GosdtProblem`), with the field types every fit and
    the warm-up share: ``data`` a `treebench.search.state.Data` (`bitset_data`), ``lam`` the
    per-leaf penalty in count units, ``deadline`` an absolute ``perf_counter`` time (<= 0:
    none), ``ref_wrong`` the packed rows a reference misclassifies (the lower-bound guess;
    None: no guess), ``groups`` = (packed rows sharing their features with a row of another
    label, group of each row, number of groups) for the equivalent-points bound (None: no
    groups), ``shortcut`` = False turns the depth-2 solvers off (tests)."""
    W = data.F.shape[0]
    use_ref = ref_wrong is not None
    if not use_ref:
        ref_wrong = np.zeros(W, np.uint64)
    if groups is None:
        groups = (np.zeros(W, np.uint64), np.full(data.n_rows, -1, np.int64), 0)
    eq_rows, grp, n_groups = groups
    return GosdtProblem(data, int(depth), bool(limited), float(lam), int(max_entries),
                        float(deadline), use_ref, np.ascontiguousarray(ref_wrong, np.uint64),
                        np.ascontiguousarray(eq_rows, np.uint64),
                        np.ascontiguousarray(grp, np.int64), int(n_groups), bool(shortcut))
