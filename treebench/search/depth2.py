"""The specialised depth-2 solver of DL8.5/MurTree (Demirović et al., JMLR 2022, §4.3), here
for the Top-k objective ``error * M + nodes``: every depth-2 tree of a node is evaluated from
its class counts per feature (``cnt1``) and per feature pair (``P``, `counts.pair_counts`)
instead of recursing.

The GOSDT search (`gosdt.solve`) has its own depth-2 shortcuts, with and without a
lower-bound guess (McTavish et al., AAAI 2022, §4.3).

Without a guess a node with depth budget 2 is solved exactly from its class counts per
feature and per feature pair: `depth2_lazy` gives the answer of
`depth2_regularized`, counting the pairs of a root only when its
children's bounds let it beat the best tree so far. Under a guess the
search is not exact: every subproblem it values follows the paper's steps, so `depth2_guessed`
values every depth-<= 2 tree of a node exactly as the recursion of `gosdt.solve`
does, from the same counts (plus the reference's errors per feature), and returns the same
objective and root feature:

* a child ``S`` (depth budget 1) with leaf cost ``ub(S) = e + lam`` is a leaf when ``e <= lam``
  or ``ub(S) <= lb_guess(S) + lam = b(S) + 2 lam`` (step 1; ``b(S)`` = the reference's errors
  in S, eq. 4); otherwise its guessed bound is ``lb_curr(S) = max(b(S) + lam, 2 lam)`` and its
  value is the search of its stumps in rank order (fewest leaf errors first, ties: lower
  feature index), stopped at the first stump whose cost is <= ``lb_curr(S)`` (step 2a);
* the node's root features are tried in the node's rank order; a root is skipped when the
  children's guessed bounds already reach the best cost so far (step 2b's ``lb_spl``),
  otherwise both children are solved on their own (a subproblem is identified by its rows
  and depth budget, §4.3: its value never depends on the caller's best tree) and their sum
  replaces the best when strictly lower, with the recursion's floating-point expressions; the
  search stops at the first root that reaches the node's floor (step 2a at the node).

The children's values do not depend on what the search saw before (the recursion, under a
guess, bounds a child by its guessed bound only, never by the cache or similar support, and
solves it without a bound from its caller), so the tree the engine's read-back
(`engine.read_back`) reads is the tree valued here.

Both kinds of solver read a node through one set-up (`node_stump_tables`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.bitset import popcount
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
def node_stump_tables(node):
    """The `StumpTables` of a `Depth2Node` over its pair counts ``P``, its counts per feature
    as int32 (`int_counts`) and its partners ``vs[:nv]`` allowed: the set-up of every depth-2
    solver on a full pair table (`depth2_search`, `depth2_guessed`)."""
    return new_stump_tables(node.P, int_counts(node.cnt1), node.vs, node.nv)


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
    T = node_stump_tables(node)
    cntT = T.cntT
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


@njit(cache=True, inline="always")
def _pair_cells(P, cntT, i, lo, nv, tc, cells):
    """For the root position ``i`` and the partner positions ``lo + t`` (``t < nv - lo``) of a
    compact pair table, into the rows of ``cells``: the rows of the cell x_i = x_j = 1 (row 0)
    and the largest class count of each of the four cells (rows 1-4: 11, 10 (x_i = 1,
    x_j = 0), 01, 00), from the pair counts ``P[c, i, j]``, the counts per feature
    ``cntT[c, j]`` and the class totals ``tc`` by inclusion-exclusion (MurTree, JMLR 2022,
    §4.3). The loops run from 0 over slices (unit stride): a loop over ``range(lo, nv)`` was
    not vectorised, and took five times as long."""
    L = nv - lo
    s11 = cells[0]
    m11 = cells[1]
    m10 = cells[2]
    m01 = cells[3]
    m00 = cells[4]
    for t in range(L):
        s11[t] = 0
        m11[t] = 0
        m10[t] = 0
        m01[t] = 0
        m00[t] = 0
    for c in range(tc.shape[0]):
        Pci = P[c, i, lo:nv]
        cc = cntT[c, lo:nv]
        a = cntT[c, i]
        ta = tc[c] - a
        for t in range(L):
            p = Pci[t]
            b = cc[t]
            s11[t] += p
            m11[t] = max(m11[t], p)
            m10[t] = max(m10[t], a - p)
            m01[t] = max(m01[t], b - p)
            m00[t] = max(m00[t], ta - b + p)


@njit(cache=True)
def _pair_stump_errors(P, cntT, tc, root, msl):
    """(e1, e0, big): the smallest stump error of each side of every root (``e1[b]``: the child
    x_b = 1, ``e0[b]``: x_b = 0, of the feature at position ``b`` of a compact pair table with
    counts per feature ``cntT`` and class totals ``tc``), the partners being the other roots
    (``root[b]``) that leave at least ``msl`` rows on each side; ``big`` (above the node's
    rows) for a side with no such partner.

    One pass per unordered pair of roots ``i < j``: the four cells of the two features give the
    four stumps they make, side 1 of root i (cells 11 and 10), its side 0 (01 and 00), side 1
    of root j (11 and 01) and its side 0 (10 and 00), a cell's error being its rows less its
    largest class. A stump on each side of each root in turn counts every cell twice."""
    nc, nv = cntT.shape
    ft = np.zeros(nv, dtype=np.int32)  # rows with x_b = 1
    n = np.int32(0)
    for c in range(nc):
        n += tc[c]
        for b in range(nv):
            ft[b] += cntT[c, b]
    big = np.int32(n + 1)
    e1 = np.full(nv, big, dtype=np.int32)
    e0 = np.full(nv, big, dtype=np.int32)
    cells = np.empty((5, nv), dtype=np.int32)  # `_pair_cells`
    s11 = cells[0]
    m11 = cells[1]
    m10 = cells[2]
    m01 = cells[3]
    m00 = cells[4]
    for i in range(nv - 1):
        if not root[i]:
            continue
        lo = i + 1
        _pair_cells(P, cntT, i, lo, nv, tc, cells)
        fi = ft[i]
        ftj = ft[lo:nv]
        rootj = root[lo:nv]
        e1j = e1[lo:nv]
        e0j = e0[lo:nv]
        r1 = big
        r0 = big
        for t in range(nv - lo):
            n11 = s11[t]
            n10 = fi - n11
            n01 = ftj[t] - n11
            n00 = n - fi - ftj[t] + n11
            q11 = n11 - m11[t]
            q10 = n10 - m10[t]
            q01 = n01 - m01[t]
            q00 = n00 - m00[t]
            k11 = n11 >= msl
            k10 = n10 >= msl
            k01 = n01 >= msl
            k00 = n00 >= msl
            rj = rootj[t]
            r1 = min(r1, q11 + q10 if rj & k11 & k10 else big)
            r0 = min(r0, q01 + q00 if rj & k01 & k00 else big)
            e1j[t] = min(e1j[t], q11 + q01 if k11 & k01 else big)
            e0j[t] = min(e0j[t], q10 + q00 if k10 & k00 else big)
        e1[i] = min(e1[i], r1)
        e0[i] = min(e0[i], r0)
    return e1, e0, big


@njit(cache=True)
def depth2_root_values(node, msl, M, nu, vals, leaves):
    """The Top-k objective of the best depth-2 tree under each root feature ``order[a]``
    (a < ncand) of ``node`` into ``vals[a]``, the partners being the roots themselves, on a
    compact pair table (``P[c, a, b]`` the pair ``vs[a]``, ``vs[b]``, read for ``a < b`` only,
    `counts.pair_counts_upper`; every root is among ``vs[:nv]``); returns the smallest. The tree
    space is that of
    `depth2_best` (an impure child splits) or, with ``leaves`` (min_improvement 0), a child
    stays a leaf unless its best stump has fewer errors. Every value is exact, so the roots of
    the optimum are exactly those with ``vals[a]`` equal to the returned value.

    The stumps of both sides of every root come from one pass over the pairs of roots
    (`_pair_stump_errors`)."""
    tot = node.tot
    nv = node.nv
    nc = tot.shape[0]
    pos = np.full(node.cnt1.shape[0], -1, dtype=np.int64)
    for b in range(nv):
        pos[node.vs[b]] = b
    cntT = int_counts(node.cnt1, node.vs[:nv])
    tc = np.empty(nc, dtype=np.int32)
    for c in range(nc):
        tc[c] = np.int32(tot[c])
    root = np.zeros(nv, dtype=np.bool_)
    for a in range(node.ncand):
        root[pos[node.order[a]]] = True
    e1, e0, big = _pair_stump_errors(node.P, cntT, tc, root, msl)
    ch = np.empty(nc, dtype=np.int32)
    best = INF
    for a in range(node.ncand):
        i = pos[node.order[a]]
        o_i = nu
        for side in range(2):
            chtot, chmax, npos = side_counts(cntT, tot, i, side, ch)
            leaf_err = float(chtot - chmax)
            cost = leaf_err * M + nu
            e = e1[i] if side == 1 else e0[i]
            if npos > 1 and e < big:
                if not (leaves and e >= leaf_err):
                    cost = float(e) * M + 3.0 * nu
            o_i += cost
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


# --- the GOSDT search's depth-2 shortcuts, with and without a lower-bound guess ---

#: a budget-2 node as `depth2_lazy` reads it: its class counts per feature (``cnt1[j, c]``)
#: and in total (``tot``), its root features ``order[:ncand]`` in rank order and the partner
#: features (``valid[j]``)
LazyNode = namedtuple("LazyNode", ["cnt1", "tot", "order", "ncand", "valid"])


@njit(cache=True)
def ref_wrong_counts(rows, nzw, nnz, F, ref_wrong, out):
    """out[j] = number of rows in ``rows`` the reference misclassifies with x_j = 1
    (unweighted data)."""
    d = F.shape[1]
    out[:] = 0.0
    for t in range(nnz):
        w = nzw[t]
        r = rows[w] & ref_wrong[w]
        if r == 0:
            continue
        Fw = F[w]
        for j in range(d):
            out[j] += popcount(r & Fw[j])


@njit(cache=True)
def guessed_child_bound(e, b, lam):
    """(lb_curr of a budget-1 child with leaf error ``e`` and reference errors ``b``, step 1
    makes it a leaf): its leaf cost when step 1 applies, else max(b + lam, 2 lam) (the
    expressions of `gosdt._child_lb`)."""
    leaf = e + lam
    if leaf <= 2.0 * lam:
        return leaf, True
    if leaf <= b + 2.0 * lam:
        return leaf, True
    v = b + lam
    if v < 2.0 * lam:
        v = 2.0 * lam
    return v, False


@njit(cache=True)
def guessed_child_value(T, ch, chtot, e, npos, i, side, b, lam, ub):
    """The recursion's answer for the child ``x_i = side`` of a node with depth budget 1
    (class counts ``ch``, total ``chtot``, leaf error ``e``, ``npos`` classes present,
    reference errors ``b``; the node's pair counts, partners and scratch in the
    `search.depth2.StumpTables` ``T``) under the bound ``ub``: (value, feature), value < ub
    exact (feature -1 = leaf), else a value >= ub.

    The child's features are ranked by the stump's leaf errors (integers), ties by index, so
    only the features with the fewest errors can improve on the best cost (the next class is
    a whole error worse); they are scanned in index order with the recursion's rule (improve
    when strictly cheaper, stop when the best is <= lb_curr)."""
    leaf = e + lam
    if npos <= 1 or e <= lam:
        return leaf, -1
    if leaf <= b + 2.0 * lam:  # step 1
        return leaf, -1
    floor = b + lam
    if floor < 2.0 * lam:
        floor = 2.0 * lam
    found = leaf < ub
    best = leaf if found else ub
    best_f = -1
    if floor < best:
        allow = T.allow
        qs = T.qs
        qm = T.qm
        rm = T.rm
        d = allow.shape[0]
        stump_tables(T.P, T.cntT, ch, i, side, qs, qm, rm)
        e_min = chtot + 1
        c_best = best
        c_f = -1
        done = False
        for j in range(d):
            if not allow[j] or qs[j] < 1 or chtot - qs[j] < 1:
                continue
            e0 = float(chtot - qs[j] - rm[j])  # leaf errors of x_j = 0 in the child
            e1 = float(qs[j] - qm[j])
            ej = chtot - qs[j] - rm[j] + qs[j] - qm[j]
            if ej < e_min:  # a new best error class: its scan starts again
                e_min = ej
                c_best = best
                c_f = -1
                done = False
            elif ej > e_min or done:
                continue
            v = (e0 + lam) + (e1 + lam)
            if v < c_best:
                c_best = v
                c_f = j
                if c_best <= floor:
                    done = True
        if c_f >= 0:
            return c_best, c_f
    if found:
        return best, best_f
    return (ub if ub > floor else floor), -1


@njit(cache=True)
def _side(cntT, tot, i, side, ch):
    """Integer class counts of the child ``x_i = side`` into ``ch``; (total, leaf errors,
    classes present)."""
    chtot, chmax, npos = side_counts(cntT, tot, i, side, ch)
    return chtot, float(chtot - chmax), npos


@njit(cache=True)
def depth2_guessed(node, rw1, b, lam, best, floor):
    """Best tree of depth <= 2 of a node under a lower-bound guess, valued exactly as the
    recursion of `gosdt.solve` values it (module docstring), from the node's counts
    (a `Depth2Node`): root features ``order[:ncand]`` in rank order, partners
    ``vs[:nv]`` (pair counts ``P`` filled for them, both triangles); ``rw1[j]`` the reference's
    errors with x_j = 1, ``b`` the node's, ``best`` the node's leaf or bound to beat, ``floor``
    where the node's search stops. Returns (objective, root feature), or (best, -1) when no
    split is below ``best``."""
    tot = node.tot
    order = node.order
    nc = tot.shape[0]
    T = node_stump_tables(node)
    cntT = T.cntT
    allow = T.allow
    ch0 = np.empty(nc, dtype=np.int32)
    ch1 = np.empty(nc, dtype=np.int32)
    best_f = -1
    if not floor < best:
        return best, best_f
    for a in range(node.ncand):
        i = order[a]
        t0, e0, np0 = _side(cntT, tot, i, 0, ch0)
        t1, e1, np1 = _side(cntT, tot, i, 1, ch1)
        # `gosdt._static_lb` at budget 2: a child that can split costs at least 2 lam (a pure
        # child has e = 0 <= lam: its leaf)
        if _side_lb(e0, lam) + _side_lb(e1, lam) >= best:
            continue
        b0 = b - rw1[i]
        b1 = b - b0
        if b1 < 0.0:
            b1 = 0.0
        lb0, _ = guessed_child_bound(e0, b0, lam)
        lb1, _ = guessed_child_bound(e1, b1, lam)
        if lb0 + lb1 >= best:
            continue
        was = allow[i]
        allow[i] = False
        # both children solved on their own (no bound from this node's incumbent)
        o0, _ = guessed_child_value(T, ch0, t0, e0, np0, i, 0, b0, lam, np.inf)
        o1, _ = guessed_child_value(T, ch1, t1, e1, np1, i, 1, b1, lam, np.inf)
        if o0 + o1 < best:
            best = o0 + o1
            best_f = i
        allow[i] = was
        if best <= floor:
            break
    return best, best_f


@njit(cache=True)
def gather_partners(rows, nzw, nnz, F, C, valid):
    """A node's words, compacted over its partner features ``vs[:nv]`` (those with
    ``valid[j]``, in index order): ``G[t, b] = rows[w] & F[w, vs[b]]`` and ``cw[c, t] =
    C[c, w]`` for its non-zero words ``w = nzw[t]``; ``pos[j]`` the position of ``j`` in
    ``vs`` (-1 elsewhere). Returns (G, cw, vs, nv, pos)."""
    d = valid.shape[0]
    nc = C.shape[0]
    vs = np.empty(d, dtype=np.int64)
    nv = partner_list(valid, vs)
    pos = np.full(d, -1, dtype=np.int64)
    for b in range(nv):
        pos[vs[b]] = b
    G = np.empty((nnz, nv), dtype=np.uint64)
    cw = np.empty((nc, nnz), dtype=np.uint64)
    for t in range(nnz):
        w = nzw[t]
        r = rows[w]
        for b in range(nv):
            G[t, b] = r & F[w, vs[b]]
        for c in range(nc):
            cw[c, t] = C[c, w]
    return G, cw, vs, nv, pos


@njit(cache=True, inline="always")
def partner_row(G, cw, a, out):
    """out[c, b] = number of the node's rows of class c with both partners ``vs[a]`` and
    ``vs[b]`` equal to 1 (one row of the pair counts, `counts.pair_counts`, over the compact
    words of `gather_partners`; ``out`` int32 (n_classes, nv)). The inner loop runs over the
    contiguous ``G[t]``."""
    out[:, :] = 0
    nc = out.shape[0]
    nv = out.shape[1]
    for t in range(G.shape[0]):
        ga = G[t, a]
        if ga == 0:
            continue
        for c in range(nc):
            x = ga & cw[c, t]
            if x == 0:
                continue
            for b in range(nv):
                out[c, b] += popcount(x & G[t, b])


@njit(cache=True, inline="always")
def _row_stump_error(P, cntT, ch, chtot, a, side, tab):
    """Smallest training error of a stump on the child ``x_i = side`` (integer class counts
    ``ch``, total ``chtot``; ``i`` at position ``a`` of the partners) over the other partners
    ``b``, from the pair counts row ``P[c, b]`` of ``i`` (`partner_row`): the leaf
    ``x_b = 1`` holds ``P[c, b]`` (side 1) or ``cntT[c, b] - P[c, b]`` (side 0) rows of class
    c, the other ``ch[c]`` minus that. -1 when there is no other partner. ``tab`` (2, nv)
    int32 scratch."""
    nc = ch.shape[0]
    nv = P.shape[1]
    tab[:, :] = 0
    for c in range(nc):
        chc = ch[c]
        for b in range(nv):
            v = P[c, b] if side == 1 else cntT[c, b] - P[c, b]
            tab[0, b] = max(tab[0, b], v)
            tab[1, b] = max(tab[1, b], chc - v)
    big = np.int32(chtot + 1)
    best = big
    for b in range(nv):
        e = chtot - tab[0, b] - tab[1, b]
        best = min(best, e if b != a else big)
    return -1 if best == big else best


@njit(cache=True, inline="always")
def _side_lb(e, lam):
    """Lower bound on a budget-1 child with leaf error ``e``: its leaf when ``e <= lam`` (its
    exact cost), else min(leaf, 2 lam) (a stump has two leaves and no negative error)."""
    leaf = e + lam
    if e <= lam or leaf <= 2.0 * lam:
        return leaf
    return 2.0 * lam


@njit(cache=True)
def depth2_lazy(rows, nzw, nnz, F, C, node, lam, best, floor):
    """`depth2_regularized` (the objective ``errors + lam * leaves``, each child
    min(leaf, best stump), the first root in rank order with the smallest total below
    ``best`` wins, stop once ``best <= floor``) with the same answer, (objective, root
    feature) or (best, -1), and the number of pair counts it computed.

    It computes pair counts only where a total can still beat the best: a root whose
    children's lower bounds (`_side_lb`) already reach ``best`` is skipped, and so is its
    second child's stump when the first child's cost plus the second's bound reaches it
    (those roots could not be kept: a cost is never below its bound, float sums are
    monotone); a root that needs a stump gets its own row of pair counts over the node's
    partner features only (`gather_partners`, `partner_row`), read by both children."""
    tot = node.tot
    order = node.order
    nc = tot.shape[0]
    G, cw, vs, nv, pos = gather_partners(rows, nzw, nnz, F, C, node.valid)
    cntT = int_counts(node.cnt1, vs[:nv])  # the partners' counts, int32, a row per class
    P = np.empty((nc, nv), dtype=np.int32)
    tab = np.empty((2, nv), dtype=np.int32)
    ch = np.empty(nc, dtype=np.int32)
    best_f = -1
    n_pairs = 0
    for r in range(node.ncand):
        i = order[r]
        a = pos[i]
        t1, m1, _ = side_counts(cntT, tot, a, 1, ch)
        t0, m0, _ = side_counts(cntT, tot, a, 0, ch)
        e0 = float(t0 - m0)
        e1 = float(t1 - m1)
        lb1 = _side_lb(e1, lam)
        if _side_lb(e0, lam) + lb1 >= best:
            continue
        have = False
        o = 0.0
        kept = True
        for side in range(2):
            e_leaf = e1 if side == 1 else e0
            cost = e_leaf + lam
            if e_leaf > lam:
                if not have:
                    partner_row(G, cw, a, P)
                    n_pairs += nv - 1
                    have = True
                chtot, _, _ = side_counts(cntT, tot, a, side, ch)
                e = _row_stump_error(P, cntT, ch, chtot, a, side, tab)
                if e >= 0 and float(e) + 2.0 * lam < cost:
                    cost = float(e) + 2.0 * lam
            o += cost
            if side == 0 and o + lb1 >= best:
                kept = False
                break
        if kept and o < best:
            best = o
            best_f = i
            if best <= floor:
                break
    return best, best_f, n_pairs
