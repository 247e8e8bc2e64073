"""The specialised depth-2 solver of DL8.5/MurTree (Demirović et al., JMLR 2022, §4.3), here
for the Top-k objective ``error * M + nodes``: every depth-2 tree of a node is evaluated from
its class counts per feature (``cnt1``) and per feature pair (``P``, `counts.pair_counts`)
instead of recursing."""

from __future__ import annotations

from numba import njit

from treebench.search.criteria import INF


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
def depth2_best(cnt1, tot, order, ncand, vs, P, msl, M, nu, ub, floor, ch, q):
    """Best depth-2 Top-d tree from pairwise counts (the specialised depth-2 solver of
    DL8.5/MurTree, here for the Figure-1 tree space: impure children always split).

    Returns (objective, root feature) of the first root feature in rank order with the
    smallest objective, or (ub, -1) when none is below ``ub``. Same result as the recursion.
    """
    nc = tot.shape[0]
    best = ub
    best_f = -1
    for a in range(ncand):
        i = order[a]
        o_i = nu
        for side in range(2):
            chtot = 0.0
            chmax = 0.0
            npos = 0
            for c in range(nc):
                v = cnt1[i, c] if side == 1 else tot[c] - cnt1[i, c]
                ch[c] = v
                chtot += v
                if v > chmax:
                    chmax = v
                if v > 0.0:
                    npos += 1
            o = (chtot - chmax) * M + nu
            if npos > 1:
                min_err = INF
                for b in range(ncand):
                    j = vs[b]
                    if j == i:
                        continue
                    lo = i if i < j else j
                    hi = j if i < j else i
                    qs = 0.0
                    qm = 0.0
                    rm = 0.0
                    for c in range(nc):
                        pij = P[c, lo, hi]
                        v = pij if side == 1 else cnt1[j, c] - pij
                        qs += v
                        if v > qm:
                            qm = v
                        u = ch[c] - v
                        if u > rm:
                            rm = u
                    if qs < msl or chtot - qs < msl:
                        continue
                    err = (qs - qm) + (chtot - qs - rm)
                    if err < min_err:
                        min_err = err
                if min_err < INF:
                    o = min_err * M + 3.0 * nu
            o_i += o
            if o_i >= best:
                break
        if o_i < best:
            best = o_i
            best_f = i
            if best <= floor:
                break
    return best, best_f


@njit(cache=True)
def depth2_regularized(cnt1, tot, order, ncand, vs, nv, P, lam, best, floor, ch):
    """Best tree of depth <= 2 for the regularised objective ``errors + lam * leaves`` (GOSDT)
    from the node's counts per feature (``cnt1``) and per feature pair (``P``): for each root
    feature in rank order, each side costs min(leaf, best stump on that side); the first root
    with the smallest total below ``best`` wins. Returns (objective, root feature) or
    (best, -1) when no split is below ``best`` (the caller's leaf or bound stands)."""
    nc = tot.shape[0]
    best_f = -1
    for a in range(ncand):
        i = order[a]
        o_i = 0.0
        for side in range(2):
            chtot = 0.0
            chmax = 0.0
            for c in range(nc):
                v = cnt1[i, c] if side == 1 else tot[c] - cnt1[i, c]
                ch[c] = v
                chtot += v
                if v > chmax:
                    chmax = v
            e_leaf = chtot - chmax
            cost = e_leaf + lam
            if e_leaf > lam:  # else the leaf is optimal on this side
                for b in range(nv):
                    j = vs[b]
                    if j == i:
                        continue
                    lo = i if i < j else j
                    hi = j if i < j else i
                    qs = 0.0
                    qm = 0.0
                    rm = 0.0
                    for c in range(nc):
                        pij = P[c, lo, hi]
                        v = pij if side == 1 else cnt1[j, c] - pij
                        qs += v
                        if v > qm:
                            qm = v
                        u = ch[c] - v
                        if u > rm:
                            rm = u
                    o = (qs - qm) + (chtot - qs - rm) + 2.0 * lam
                    if o < cost:
                        cost = o
            o_i += cost
            if o_i >= best:
                break
        if o_i < best:
            best = o_i
            best_f = i
            if best <= floor:
                break
    return best, best_f
