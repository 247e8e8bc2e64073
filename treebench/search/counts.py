"""Class counts of a row set: totals, per feature (rows with x_j = 1) and per feature pair.

Unweighted data (the common case) counts with popcounts of ``rows & C[c] & F[:, j]``; weighted
data walks the set bits and sums ``sw`` per class (``Xd`` is the dense 0/1 matrix used only
then)."""

from __future__ import annotations

import numpy as np
from numba import njit

from treebench.search.bitset import ctz, popcount


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
def feature_counts(rows, nzw, nnz, F, C, Xd, y, sw, weighted, cnt1, rc1, acc):
    """cnt1[j, c] = (weighted) count of class c among rows with x_j = 1; rc1[j] = #rows x_j = 1.
    ``acc`` is an int64 (n_classes, d) scratch buffer."""
    d = F.shape[1]
    nc = cnt1.shape[1]
    cnt1[:, :] = 0.0
    rc1[:] = 0.0
    if not weighted:
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
                yi = y[i]
                wi = sw[i]
                xi = Xd[i]
                for j in range(d):
                    if xi[j] != 0:
                        cnt1[j, yi] += wi
                        rc1[j] += 1.0
                x &= x - np.uint64(1)


@njit(cache=True)
def pair_counts(rows, nzw, nnz, F, C, vs, nv, P):
    """P[c, i, j] (i < j, both in ``vs[:nv]``, ascending) = #rows of class c with x_i = x_j = 1."""
    nc = C.shape[0]
    d = F.shape[1]
    # j runs over the contiguous range i+1..d-1 (entries of invalid j are computed and never
    # read): a unit-stride loop that LLVM vectorises (vpopcntq where the CPU has it)
    for c in range(nc):
        for a in range(nv):
            i = vs[a]
            P[c, i, i + 1:] = 0
    for t in range(nnz):
        w = nzw[t]
        r = rows[w]
        Fw = F[w]
        for c in range(nc):
            rc = r & C[c, w]
            if rc == 0:
                continue
            Pc = P[c]
            for a in range(nv):
                i = vs[a]
                ti = rc & Fw[i]
                if ti == 0:
                    continue
                Pi = Pc[i]
                for j in range(i + 1, d):
                    Pi[j] += popcount(ti & Fw[j])
