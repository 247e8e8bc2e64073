"""Features that split a node the same way.

Two binary features are *equivalent on a node* when their columns, restricted to the node's
rows, are equal or complementary: both send the same rows to the same (or the swapped) child,
so every tree rooted at one has a twin of the same training error and size rooted at the other,
and as a split below the root they cut every descendant the same way. An exhaustive search
(k = all) therefore needs only one feature of each class: `drop_equivalent` keeps the first of
each class in the node's rank order (the one the tie rule "first explored wins" would return
anyway) and drops the rest. Deep nodes have few rows, and many of their features coincide:
at depth budget 2 in anneal's depth-4 search about half the candidate features are dropped,
which quarters the pair-count work of the depth-2 solver (`treebench.search.depth2`).

MurTree (Demirović et al., JMLR 2022) and DL8.5 remove features that are constant on a node;
removing equal and complementary ones is the same idea one step further (a feature is
constant on a node exactly when it is equivalent to "no split").
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def canonical_hash(rows, nzw, nnz, F, j, w0, bit0):
    """64-bit hash of feature ``j``'s column on ``rows`` (words ``nzw[:nnz]``), complemented
    when the node's first row (bit ``bit0`` of word ``w0``) has x_j = 1, so that a column and
    its complement hash alike."""
    flip = np.uint64(0)
    if (F[w0, j] & bit0) != 0:
        flip = ~np.uint64(0)
    x = np.uint64(0x9E3779B97F4A7C15)
    for t in range(nnz):
        w = nzw[t]
        v = (F[w, j] ^ flip) & rows[w]
        x = (x ^ v) * np.uint64(0x100000001B3)
        x ^= x >> np.uint64(29)
    return x


@njit(cache=True)
def equivalent(rows, nzw, nnz, F, i, j):
    """True when features ``i`` and ``j`` are equal or complementary on ``rows``."""
    same = True
    comp = True
    for t in range(nnz):
        w = nzw[t]
        r = rows[w]
        a = F[w, i] & r
        b = F[w, j] & r
        if a != b:
            same = False
        if a != (~b & r):
            comp = False
        if not (same or comp):
            return False
    return True


@njit(cache=True)
def drop_equivalent(rows, nzw, nnz, F, order, n, valid, rep=None):
    """Keep, of every class of features equivalent on ``rows`` among ``order[:n]``, the first in
    that order; clear ``valid`` of the others and compact ``order[:n]`` in place (rank order
    kept). Returns the new count ``m``. With ``rep`` (an int64 array of length >= n), each
    dropped feature's kept one: ``order[rep[a]]`` (``rep[a] < m``) for ``m <= a < n``.
    ``nzw[:nnz]`` lists the non-empty words of ``rows`` (the set must not be empty).

    The features are walked in order; each is looked up by its `canonical_hash` in an
    open-addressing table of the kept ones (linear probing, at most half full), and dropped
    when it is equivalent to a kept one of the same hash: equivalent columns hash alike, and
    every drop is verified column by column, so a hash collision costs time, never a wrong
    result."""
    if n <= 1 or nnz == 0:
        return n
    w0 = nzw[0]
    r0 = rows[w0]
    bit0 = r0 & (~r0 + np.uint64(1))  # lowest row of the node
    size = 16
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    slot = np.full(size, -1, dtype=np.int64)  # position in ``order`` of a kept feature
    skey = np.empty(size, dtype=np.uint64)
    # of[a]: the position of feature a's kept one (itself when kept), then its new position
    of = np.empty(n, dtype=np.int64)
    for a in range(n):
        j = order[a]
        key = canonical_hash(rows, nzw, nnz, F, j, w0, bit0)
        p = np.int64((key ^ (key >> np.uint64(32))) & mask)
        of[a] = a
        while slot[p] >= 0:
            if skey[p] == key and equivalent(rows, nzw, nnz, F, order[slot[p]], j):
                of[a] = slot[p]
                break
            p = (p + 1) & (size - 1)
        if of[a] == a:
            slot[p] = a
            skey[p] = key
    dropped = np.empty(n, dtype=np.int64)
    m = 0
    nd = 0
    for a in range(n):
        j = order[a]
        if of[a] != a:
            valid[j] = False
            dropped[nd] = j
            if rep is not None:
                rep[nd] = of[of[a]]  # its kept one's new position (set below: kept ones first)
            nd += 1
        else:
            order[m] = j
            of[a] = m
            m += 1
    # the dropped features follow the kept ones (``order`` stays a permutation)
    for a in range(nd - 1, -1, -1):
        order[m + a] = dropped[a]
        if rep is not None:
            rep[m + a] = rep[a]
    return m
