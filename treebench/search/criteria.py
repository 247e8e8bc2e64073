"""Split criteria (Top-k §3.1, Definition 2): impurity functions, the score of a split, the
feature ranking with its exact tie rule, and the per-side statistics of a split."""

from __future__ import annotations

import numpy as np
from numba import njit

# criterion codes
ENTROPY, GINI, KEARNS_MANSOUR, ERROR = 0, 1, 2, 3
TIE_RTOL = 1e-12
INF = np.inf


@njit(cache=True)
def impurity(cnt, total, crit):
    """Impurity of a class-count vector (§3.1, Definition 2; multi-class generalisations).

    entropy: -sum p log2 p; gini: 1 - sum p^2; Kearns-Mansour: 2 sqrt(p (1-p)) with p the
    frequency of class 1 (binary labels); error: 1 - max p.
    """
    if total <= 0.0:
        return 0.0
    nc = cnt.shape[0]
    if crit == ENTROPY:
        s = 0.0
        for c in range(nc):
            if cnt[c] > 0.0:
                p = cnt[c] / total
                s -= p * np.log2(p)
        return s
    elif crit == GINI:
        s = 1.0
        for c in range(nc):
            p = cnt[c] / total
            s -= p * p
        return s
    elif crit == KEARNS_MANSOUR:
        if nc < 2:
            return 0.0
        p = cnt[1] / total
        q = 1.0 - p
        if p <= 0.0 or q <= 0.0:
            return 0.0
        return 2.0 * np.sqrt(p * q)
    else:
        m = 0.0
        for c in range(nc):
            if cnt[c] > m:
                m = cnt[c]
        return 1.0 - m / total


@njit(cache=True)
def child_impurity(parent, cnt1, tmp0, total, crit):
    """Score of a split, lower is better: ``P[x=0] I(child 0) + P[x=1] I(child 1)``.

    The gain of Definition 2 is ``I(parent)`` minus this; the parent term is the same for every
    feature, so ranking by this score is ranking by gain (and matches `greedy` bit for bit).
    """
    t1 = 0.0
    for c in range(parent.shape[0]):
        tmp0[c] = parent[c] - cnt1[c]
        t1 += cnt1[c]
    t0 = total - t1
    return (t0 / total) * impurity(tmp0, t0, crit) + (t1 / total) * impurity(cnt1, t1, crit)


@njit(cache=True)
def rank_features(score, valid, order):
    """Order features by increasing score (decreasing gain); scores within
    ``1e-12 * max(1, |s|)`` count as equal and then the lower feature index comes first.
    Invalid features go last. Returns the number of valid features."""
    d = score.shape[0]
    key = np.empty(d)
    nv = 0
    for j in range(d):
        if valid[j]:
            key[j] = score[j]
            nv += 1
        else:
            key[j] = INF
    o = np.argsort(key, kind="mergesort")
    for i in range(d):
        order[i] = o[i]
    # near-ties: insertion pass moving lower indices forward
    for i in range(1, nv):
        m = i
        while m > 0:
            a = order[m - 1]
            b = order[m]
            sa = score[a]
            if a > b and abs(sa - score[b]) <= TIE_RTOL * max(1.0, abs(sa)):
                order[m - 1] = b
                order[m] = a
                m -= 1
            else:
                break
    return nv


@njit(cache=True)
def split_stats(c1, tot):
    """Per-side statistics of splitting a node (class weights ``tot``) on a feature whose rows
    with value 1 have class weights ``c1``: (weight on side 1, largest class weight on side 1,
    largest class weight on side 0, classes present on side 1, classes present on side 0).
    The two children's leaf errors are ``s1 - m1`` and ``total - s1 - m0``."""
    m1 = 0.0
    m0 = 0.0
    s1 = 0.0
    p1 = 0
    p0 = 0
    for c in range(tot.shape[0]):
        v1 = c1[c]
        v0 = tot[c] - v1
        s1 += v1
        if v1 > m1:
            m1 = v1
        if v0 > m0:
            m0 = v0
        if v1 > 0.0:
            p1 += 1
        if v0 > 0.0:
            p0 += 1
    return s1, m1, m0, p1, p0
