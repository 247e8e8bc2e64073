"""Class counts of a row set: totals, per feature (rows with x_j = 1) and per feature pair.

Unweighted data (the common case) counts with popcounts of ``rows & C[c] & F[:, j]``; weighted
data walks the set bits and sums ``sw`` per class (``Xd`` is the dense 0/1 matrix used only
then)."""

from __future__ import annotations

import numpy as np
from numba import njit

from treebench.search.bitset import ctz, popcount
from treebench.search.state import S_EXPANDED, S_SCORED


@njit(cache=True)
def node_totals(rows, C, y, sw, weighted, tot, nzw):
    """Class totals of ``rows`` into ``tot``; list of its non-zero words into ``nzw``.
    Returns (number of non-zero words, number of rows)."""
    W = rows.shape[0]
    nnz = 0
    nrows = 0
    for w in range(W):
        if rows[w] != 0:
            nzw[nnz] = w
            nnz += 1
            nrows += popcount(rows[w])
    nc = tot.shape[0]
    for c in range(nc):
        tot[c] = 0.0
    if not weighted:
        for c in range(nc):
            s = 0
            for t in range(nnz):
                w = nzw[t]
                s += popcount(rows[w] & C[c, w])
            tot[c] = s
    else:
        for t in range(nnz):
            w = nzw[t]
            x = rows[w]
            while x != 0:
                b = ctz(x)
                i = w * 64 + b
                tot[y[i]] += sw[i]
                x &= x - np.uint64(1)
    return nnz, nrows


@njit(cache=True)
def node_summary(D, rows, tot, nzw):
    """`node_totals` of ``rows`` (data record ``D``) into ``tot`` / ``nzw``; returns (non-zero
    words, rows, total weight, leaf error, classes present)."""
    nnz, nrows = node_totals(rows, D.C, D.y, D.sw, D.weighted, tot, nzw)
    total = 0.0
    mx = 0.0
    npos = 0
    for c in range(tot.shape[0]):
        total += tot[c]
        if tot[c] > mx:
            mx = tot[c]
        if tot[c] > 0.0:
            npos += 1
    return nnz, nrows, total, total - mx, npos


@njit(cache=True)
def feature_counts(D, rows, nzw, nnz, cnt1, rc1, acc):
    """cnt1[j, c] = (weighted) count of class c among ``rows`` with x_j = 1; rc1[j] = #rows
    x_j = 1, on the data record ``D`` (`state.Data`; ``nzw[:nnz]`` the non-zero words of
    ``rows``). ``acc`` is an int64 (n_classes, d) scratch buffer."""
    F = D.F
    C = D.C
    d = F.shape[1]
    nc = cnt1.shape[1]
    cnt1[:, :] = 0.0
    rc1[:] = 0.0
    if not D.weighted:
        acc[:, :] = 0
        for t in range(nnz):
            w = nzw[t]
            r = rows[w]
            Fw = F[w]
            for c in range(nc):
                rc = r & C[c, w]
                if rc == 0:
                    continue
                a = acc[c]
                for j in range(d):
                    a[j] += popcount(rc & Fw[j])
        for c in range(nc):
            for j in range(d):
                cnt1[j, c] = acc[c, j]
                rc1[j] += acc[c, j]
    else:
        for t in range(nnz):
            w = nzw[t]
            x = rows[w]
            while x != 0:
                b = ctz(x)
                i = w * 64 + b
                yi = D.y[i]
                wi = D.sw[i]
                xi = D.Xd[i]
                for j in range(d):
                    if xi[j] != 0:
                        cnt1[j, yi] += wi
                        rc1[j] += 1.0
                x &= x - np.uint64(1)


@njit(cache=True)
def count_node(D, scr, stats, rows, h, nnz):
    """`feature_counts` of a node being expanded at level ``h`` of the scratch ``scr`` (data
    record ``D``) into ``scr.cnt[h]`` / ``scr.rc[h]``, counted in the statistics slots (one
    node expanded, d features scored)."""
    stats[S_EXPANDED] += 1
    stats[S_SCORED] += D.F.shape[1]
    feature_counts(D, rows, scr.nzw[h], nnz, scr.cnt[h], scr.rc[h], scr.acc)


@njit(cache=True)
def pair_counts(rows, nzw, nnz, F, C, vs, nv, P):
    """P[c, i, j] = P[c, j, i] (i != j, both in ``vs[:nv]``) = #rows of class c with
    x_i = x_j = 1 (entries of other features are left as they were). Allocates its gather
    buffer; searches call `pair_counts_buf` with a preallocated one."""
    buf = np.empty((max(nv, 1), max(nnz, 1)), dtype=np.uint64)
    pair_counts_buf(rows, nzw, nnz, F, C, vs, nv, P, buf)


@njit(cache=True)
def pair_counts_buf(rows, nzw, nnz, F, C, vs, nv, P, buf):
    """`pair_counts` with a (>= nv, >= nnz) uint64 gather buffer.

    Per class, the node's non-empty words of ``rows & C[c] & F[:, j]`` are first gathered into
    contiguous rows ``buf[a]`` (feature ``vs[a]``); each pair count is then a popcount dot
    product of two short contiguous vectors, computed four partner features at a time so that
    ``buf[a]`` is loaded once per four pairs. Both triangles of ``P`` are written, so solvers
    read a feature's partners along one contiguous row ``P[c, i]``.
    """
    pair_counts_at(rows, nzw, nnz, F, C, vs, nv, P, buf, vs)


@njit(cache=True)
def pair_counts_at(rows, nzw, nnz, F, C, vs, nv, P, buf, at):
    """`pair_counts_buf` writing the count of the pair (``vs[a]``, ``vs[b]``) at
    ``P[c, at[a], at[b]]``: ``at = vs`` indexes by feature, ``at = arange(nv)`` gives a compact
    table over the listed features (rows of length ``nv``)."""
    _pair_counts(rows, nzw, nnz, F, C, vs, nv, P, buf, at)


@njit(cache=True)
def pair_counts_upper(rows, nzw, nnz, F, C, vs, nv, P, buf):
    """The compact table's upper triangle only: the pair (``vs[a]``, ``vs[b]``), ``a < b``, at
    ``P[c, a, b]`` (what the Top-k depth-2 solver reads, `depth2.depth2_root_values`). The
    second triangle's stores go down a column, and cost a third of the counting."""
    _pair_counts(rows, nzw, nnz, F, C, vs, nv, P, buf, None)


@njit(cache=True, inline="always")
def _pair_counts(rows, nzw, nnz, F, C, vs, nv, P, buf, at):
    """The counting of `pair_counts_at` (``at`` an index array: both triangles) and of
    `pair_counts_upper` (``at`` None: compact positions, upper triangle)."""
    nc = C.shape[0]
    for c in range(nc):
        m = 0
        for t in range(nnz):
            w = nzw[t]
            rc = rows[w] & C[c, w]
            if rc == 0:
                continue
            Fw = F[w]
            for a in range(nv):
                buf[a, m] = rc & Fw[vs[a]]
            m += 1
        Pc = P[c]
        for a in range(nv):
            i = a if at is None else at[a]
            bi = buf[a]
            Pi = Pc[i]
            b = a + 1
            while b + 4 <= nv:
                b0 = buf[b]
                b1 = buf[b + 1]
                b2 = buf[b + 2]
                b3 = buf[b + 3]
                s0 = 0
                s1 = 0
                s2 = 0
                s3 = 0
                for t in range(m):
                    x = bi[t]
                    s0 += popcount(x & b0[t])
                    s1 += popcount(x & b1[t])
                    s2 += popcount(x & b2[t])
                    s3 += popcount(x & b3[t])
                if at is None:
                    Pi[b] = s0
                    Pi[b + 1] = s1
                    Pi[b + 2] = s2
                    Pi[b + 3] = s3
                else:
                    j0 = at[b]
                    j1 = at[b + 1]
                    j2 = at[b + 2]
                    j3 = at[b + 3]
                    Pi[j0] = s0
                    Pi[j1] = s1
                    Pi[j2] = s2
                    Pi[j3] = s3
                    Pc[j0, i] = s0
                    Pc[j1, i] = s1
                    Pc[j2, i] = s2
                    Pc[j3, i] = s3
                b += 4
            while b < nv:
                bj = buf[b]
                s0 = 0
                for t in range(m):
                    s0 += popcount(bi[t] & bj[t])
                if at is None:
                    Pi[b] = s0
                else:
                    j0 = at[b]
                    Pi[j0] = s0
                    Pc[j0, i] = s0
                b += 1
