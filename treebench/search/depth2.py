"""The specialised depth-2 solver of DL8.5/MurTree (Demirović et al., JMLR 2022, §4.3), here
for the Top-k objective ``error * M + nodes``: every depth-2 tree of a node is evaluated from
its class counts per feature (``cnt1``) and per feature pair (``P``, `counts.pair_counts`)
instead of recursing."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.criteria import INF

#: a node as the depth-2 solvers read it: its class counts per feature (``cnt1[j, c]``, rows
#: with x_j = 1) and in total (``tot``), its root features ``order[:ncand]`` in rank order,
#: the partner features ``vs[:nv]`` and their pair counts ``P`` (both triangles,
#: `counts.pair_counts`)
Depth2Node = namedtuple("Depth2Node", ["cnt1", "tot", "order", "ncand", "vs", "nv", "P"])

#: what the stump kernels read and write for one node: its pair counts ``P`` and int32 counts
#: per feature ``cntT`` (`int_counts`), the partner features allowed (``allow``, bool of
#: length d) and the int32 tables ``qs``, ``qm``, ``rm`` that `stump_tables` fills
StumpTables = namedtuple("StumpTables", ["P", "cntT", "allow", "qs", "qm", "rm"])


@njit(cache=True)
def partner_list(valid, vs):
    """The features with ``valid[j]`` into ``vs`` in index order; returns their number (the
    partners whose pair counts a depth-2 node needs)."""
    n = 0
    for j in range(valid.shape[0]):
        if valid[j]:
            vs[n] = j
            n += 1
    return n


@njit(cache=True)
def depth2_may_improve(cnt1, tot, order, ncand, M, nu, ub):
    """False when no root feature can give a depth-2 tree below ``ub``, by the bound
    nu + lb(child 0) + lb(child 1), lb = the leaf objective of a pure child, else 3 nu."""
    nc = tot.shape[0]
    for a in range(ncand):
        i = order[a]
        o = nu
        for side in range(2):
            s = 0.0
            m = 0.0
            npos = 0
            for c in range(nc):
                v = cnt1[i, c] if side == 1 else tot[c] - cnt1[i, c]
                s += v
                if v > m:
                    m = v
                if v > 0.0:
                    npos += 1
            o += (s - m) * M + nu if npos <= 1 else 3.0 * nu
        if o < ub:
            return True
    return False


@njit(cache=True)
def int_counts(cnt1, vs=None):
    """The node's counts per feature ``cnt1[j, c]`` as int32, one contiguous row per class
    (``cntT[c, b]``: 8 lanes of AVX2 min/max in `stump_tables`), for every feature, or for the
    features ``vs`` (``cntT[c, b] = cnt1[vs[b], c]``, read in place: no copy of the rows)."""
    nc = cnt1.shape[1]
    n = cnt1.shape[0] if vs is None else vs.shape[0]
    cntT = np.empty((nc, n), dtype=np.int32)
    for b in range(n):
        j = b if vs is None else vs[b]
        for c in range(nc):
            cntT[c, b] = np.int32(cnt1[j, c])
    return cntT


@njit(cache=True)
def partner_mask(vs, nv, d):
    """Boolean mask of the features ``vs[:nv]`` among ``d``."""
    allow = np.zeros(d, dtype=np.bool_)
    for b in range(nv):
        allow[vs[b]] = True
    return allow


@njit(cache=True)
def stump_scratch(d):
    """The int32 buffers (qs, qm, rm) of `stump_tables` for ``d`` features."""
    return np.empty(d, dtype=np.int32), np.empty(d, dtype=np.int32), np.empty(d, dtype=np.int32)


@njit(cache=True, inline="always")
def stump_tables(P, cntT, ch, i, side, qs, qm, rm):
    """Per partner feature ``j`` of the child ``x_i = side`` (integer class counts ``ch``):
    ``qs[j]`` its rows with x_j = 1, ``qm[j]`` their largest class, ``rm[j]`` the largest class
    of its rows with x_j = 0. From the node's counts per feature (``cntT[c, j]``) and per pair
    (``P``, both triangles, `counts.pair_counts`): on side 1 the leaf ``x_j = 1`` holds
    ``v_c = P[c, i, j]`` rows of class c, on side 0 ``v_c = cntT[c, j] - P[c, i, j]``, and the
    other leaf ``ch_c - v_c`` (inclusion-exclusion; MurTree, JMLR 2022, §4.3). The loops run
    over contiguous rows of all features (unit stride, vectorised); all int32 of length d."""
    nc = ch.shape[0]
    d = qs.shape[0]
    qs[:] = 0
    qm[:] = 0
    rm[:] = 0
    for c in range(nc):
        Pci = P[c, i]
        cc = cntT[c]
        chc = ch[c]
        if side == 1:
            for j in range(d):
                v = Pci[j]
                qs[j] += v
                qm[j] = max(qm[j], v)
                rm[j] = max(rm[j], chc - v)
        else:
            for j in range(d):
                v = cc[j] - Pci[j]
                qs[j] += v
                qm[j] = max(qm[j], v)
                rm[j] = max(rm[j], chc - v)


@njit(cache=True)
def new_stump_tables(P, cntT, vs, nv):
    """The `StumpTables` of a node with pair counts ``P`` and counts ``cntT`` (`int_counts`),
    partners ``vs[:nv]`` allowed."""
    d = cntT.shape[1]
    qs, qm, rm = stump_scratch(d)
    return StumpTables(P, cntT, partner_mask(vs, nv, d), qs, qm, rm)


@njit(cache=True)
def stump_error(T, ch, chtot, i, side, msl):
    """Smallest training error of a depth-1 tree on the child ``x_i = side`` of a node (integer
    class counts ``ch``, total ``chtot``) over the features ``j`` with ``T.allow[j]`` (the
    caller clears ``T.allow[i]``) that leave at least ``msl`` rows on each side; INF when none
    does.

    The error of the stump on ``j`` is ``chtot - qm[j] - rm[j]`` (`stump_tables` of the node's
    `StumpTables` ``T``; ``ch`` is int32 too).
    """
    allow = T.allow
    qs = T.qs
    qm = T.qm
    rm = T.rm
    d = allow.shape[0]
    stump_tables(T.P, T.cntT, ch, i, side, qs, qm, rm)
    big = np.int32(chtot + 1)
    best = big
    for j in range(d):
        e = chtot - qm[j] - rm[j]
        ok = allow[j] & (qs[j] >= msl) & (chtot - qs[j] >= msl)
        best = min(best, e if ok else big)
    if best == big:
        return INF
    return float(best)


@njit(cache=True)
def side_counts(cntT, tot, i, side, ch):
    """Integer class counts of the child ``x_i = side`` into ``ch``; (total, largest,
    classes present)."""
    chtot = np.int32(0)
    chmax = np.int32(0)
    npos = 0
    for c in range(tot.shape[0]):
        v = cntT[c, i] if side == 1 else np.int32(tot[c]) - cntT[c, i]
        ch[c] = v
        chtot += v
        if v > chmax:
            chmax = v
        if v > 0.0:
            npos += 1
    return chtot, chmax, npos


@njit(cache=True)
def depth2_search(node, msl, regularized, M, nu, lam, ub, floor):
    """The depth-2 solver, one kernel for both objectives, on the counts of ``node`` (a
    `Depth2Node`): for each root feature ``order[a]`` (a < ncand) in rank order, each child
    costs

    * ``regularized=False`` (Top-k, Figure 1 tree space, objective ``error * M + nodes * nu``):
      its leaf when pure, else its best stump (``error * M + 3 nu``; the leaf if none splits);
    * ``regularized=True`` (GOSDT, ``errors + lam * leaves``): min(leaf, best stump), the stump
      tried only when the leaf errs more than ``lam``;

    plus ``nu`` for the root. The first root with the smallest total below ``ub`` wins; returns
    (objective, root feature), or (ub, -1) when none is below ``ub``. Stops as soon as a root
    reaches ``floor`` (a lower bound of the node)."""
    tot = node.tot
    order = node.order
    nc = tot.shape[0]
    cntT = int_counts(node.cnt1)
    T = new_stump_tables(node.P, cntT, node.vs, node.nv)
    allow = T.allow
    chi = np.empty(nc, dtype=np.int32)
    best = ub
    best_f = -1
    root = 0.0 if regularized else nu
    for a in range(node.ncand):
        i = order[a]
        o_i = root
        was = allow[i]
        allow[i] = False
        for side in range(2):
            chtot, chmax, npos = side_counts(cntT, tot, i, side, chi)
            e_leaf = float(chtot - chmax)
            if regularized:
                cost = e_leaf + lam
                if e_leaf > lam:  # else the leaf is optimal on this side
                    e = stump_error(T, chi, chtot, i, side, msl)
                    if e + 2.0 * lam < cost:
                        cost = e + 2.0 * lam
            else:
                cost = e_leaf * M + nu
                if npos > 1:
                    e = stump_error(T, chi, chtot, i, side, msl)
                    if e < INF:
                        cost = e * M + 3.0 * nu
            o_i += cost
            if o_i >= best:
                break
        allow[i] = was
        if o_i < best:
            best = o_i
            best_f = i
            if best <= floor:
                break
    return best, best_f


@njit(cache=True)
def compact_tables(node):
    """The `StumpTables` of ``node`` whose pair table is compact over its features
    ``vs[:nv]`` (``P[c, a, b]`` the pair ``vs[a]``, ``vs[b]``, `counts.pair_counts_at`), the
    partners allowed being its roots ``order[:ncand]`` (all among ``vs[:nv]``); and the
    position in ``vs`` of each feature (-1 elsewhere). Stump tables then run over ``nv``
    features instead of all of them."""
    nv = node.nv
    nc = node.tot.shape[0]
    pos = np.full(node.cnt1.shape[0], -1, dtype=np.int64)
    cntT = np.empty((nc, nv), dtype=np.int32)
    for b in range(nv):
        pos[node.vs[b]] = b
        for c in range(nc):
            cntT[c, b] = np.int32(node.cnt1[node.vs[b], c])
    allow = np.zeros(nv, dtype=np.bool_)
    for a in range(node.ncand):
        allow[pos[node.order[a]]] = True
    qs, qm, rm = stump_scratch(nv)
    return StumpTables(node.P, cntT, allow, qs, qm, rm), pos


@njit(cache=True)
def depth2_root_values(node, msl, M, nu, vals, leaves):
    """The Top-k objective of the best depth-2 tree under each root feature ``order[a]``
    (a < ncand) of ``node`` into ``vals[a]``, the partners being the roots themselves, on a
    compact pair table (`compact_tables`); returns the smallest. The tree space is that of
    `depth2_best` (an impure child splits) or, with ``leaves`` (min_improvement 0), a child
    stays a leaf unless its best stump has fewer errors. Ties are kept: a root is cut short
    only when its partial sum already exceeds the smallest total so far, and then gets that
    partial sum (above the smallest), so the roots of the optimum are exactly those with
    ``vals[a]`` equal to the returned value."""
    tot = node.tot
    T, pos = compact_tables(node)
    allow = T.allow
    chi = np.empty(tot.shape[0], dtype=np.int32)
    best = INF
    for a in range(node.ncand):
        i = pos[node.order[a]]
        o_i = nu
        allow[i] = False
        for side in range(2):
            chtot, chmax, npos = side_counts(T.cntT, tot, i, side, chi)
            leaf_err = float(chtot - chmax)
            cost = leaf_err * M + nu
            if npos > 1:
                e = stump_error(T, chi, chtot, i, side, msl)
                if e < INF and not (leaves and e >= leaf_err):
                    cost = e * M + 3.0 * nu
            o_i += cost
            if o_i > best:
                break
        allow[i] = True
        vals[a] = o_i
        if o_i < best:
            best = o_i
    return best


@njit(cache=True)
def depth2_best(node, msl, M, nu, ub, floor):
    """Best depth-2 Top-k tree from pairwise counts (the specialised depth-2 solver of
    DL8.5/MurTree, here for the Figure-1 tree space: impure children always split): the
    ``regularized=False`` case of `depth2_search` (partners ``node.vs[:node.nv]``). Returns
    (objective, root feature) of the first root feature in rank order with the smallest
    objective, or (ub, -1) when none is below ``ub``. Same result as the recursion."""
    return depth2_search(node, msl, False, M, nu, 0.0, ub, floor)


@njit(cache=True)
def depth2_regularized(node, lam, best, floor):
    """Best tree of depth <= 2 for the regularised objective ``errors + lam * leaves`` (GOSDT)
    from the node's counts per feature and per feature pair (a `Depth2Node`): for each root
    feature in rank order, each side costs min(leaf, best stump on that side); the first root
    with the smallest total below ``best`` wins. Returns (objective, root feature) or
    (best, -1) when no split is below ``best`` (the caller's leaf or bound stands). The
    ``regularized=True`` case of `depth2_search`."""
    return depth2_search(node, 0.0, True, 1.0, 0.0, lam, best, floor)
