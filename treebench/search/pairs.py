"""Pair counts of a depth-budget-2 node for the depth-2 solver (`treebench.search.depth2`),
with the sibling derivation: incremental counting after MurTree's idea of reusing the counts
of a similar set (Demirović et al., JMLR 2022). Shared by every search whose state record
has the fields ``data``, ``scr`` (`treebench.search.state.Scratch`, allocated with pairs) and
``stats`` and which keeps the children of the split it explores at level ``h`` in
``scr.child[h]`` and the features valid there in ``scr.valid[h]`` (Top-k k = all, the GOSDT
solver)."""

from __future__ import annotations

from numba import njit

from treebench.search.counts import pair_counts_buf
from treebench.search.state import S_SCORED


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


@njit(cache=True)
def _mask_list(mask, out):
    n = 0
    for j in range(mask.shape[0]):
        if mask[j]:
            out[n] = j
            n += 1
    return n


@njit(cache=True)
def depth2_pairs(s, rows, h, nnz):
    """Pair counts of the h = 2 node ``rows`` (features valid there); returns the table.

    Sibling derivation (incremental counting, after MurTree's idea of reusing the counts of a
    similar set): when ``rows`` is child 1 of the split the parent frame is exploring and the
    pairs of child 0 are known, P(child 1) = P(parent) - P(child 0), a subtraction instead of
    popcounts; the parent's pairs are counted once per parent, at its second chance (so a
    parent whose two children are both solved only once pays nothing extra). Child 0 is counted
    over the parent's valid features (a superset of its own) so that the difference holds every
    pair the sibling needs. Every reuse is checked on the row sets and feature masks."""
    scr = s.scr
    D = s.data
    valid = scr.valid[h]
    vsl = scr.order[0]
    nv = _mask_list(valid, vsl)
    if h + 1 < scr.valid.shape[0]:
        c0 = scr.child[h + 1, 0]
        c1 = scr.child[h + 1, 1]
        pf = scr.pflag
        if pf[0] != 0 and _same(rows, c1) and _same(scr.prow[0], c0) \
                and _subset(valid, scr.pmask[0]):
            have_par = pf[1] != 0 and _is_union(scr.prow[1], c0, c1) \
                and _subset(valid, scr.pmask[1])
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
                    m = scr.pmask[0]
                    np_ = _mask_list(m, scr.plist)
                    pair_counts_buf(par, scr.pnzw, pn, D.F, D.C, scr.plist, np_, scr.p_par,
                                    scr.pbuf)
                    s.stats[S_SCORED] += np_ * (np_ - 1) // 2
                    scr.pmask[1, :] = m
                    pf[1] = 1
                    have_par = True
            if have_par:
                P = scr.pair
                Pp = scr.p_par
                Pl = scr.p_last
                for c in range(P.shape[0]):
                    for i in range(P.shape[1]):
                        for j in range(P.shape[2]):
                            P[c, i, j] = Pp[c, i, j] - Pl[c, i, j]
                return P
        if _same(rows, c0) and _subset(valid, scr.valid[h + 1]):
            m = scr.valid[h + 1]
            np_ = _mask_list(m, scr.plist)
            pair_counts_buf(rows, scr.nzw[h], nnz, D.F, D.C, scr.plist, np_, scr.p_last,
                            scr.pbuf)
            s.stats[S_SCORED] += np_ * (np_ - 1) // 2
            scr.pmask[0, :] = m
            scr.prow[0, :] = rows
            pf[0] = 1
            return scr.p_last
    pair_counts_buf(rows, scr.nzw[h], nnz, D.F, D.C, vsl, nv, scr.pair, scr.pbuf)
    s.stats[S_SCORED] += nv * (nv - 1) // 2
    return scr.pair
