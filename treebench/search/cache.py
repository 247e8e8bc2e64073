"""The bounded state cache: solved subproblems keyed by (depth budget, row set).

An open-hashing table over growable arrays (doubling up to the cap): ``tab`` holds the first
entry of each bucket, ``meta[e]`` = (next entry in bucket, hash, depth, feature, state),
``obj[e]`` the value and ``pool[e*W:(e+1)*W]`` the row set. The policy shared by every search:
entries are never evicted; once ``max_entries`` is reached new entries are simply not stored
(``S_CAP_HIT`` counts the refusals), so a search becomes slower, never wrong, and its memory
stays under the cap (`entries_for_mb`).

Entry states: ``EXACT`` (the optimum of the subproblem), ``LOWER`` (a lower bound on it),
``ANYTIME`` (the best tree found after the deadline: neither exact nor a bound).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.state import S_BYTES, S_CAP_HIT, S_ENTRIES, S_PEAK_BYTES

EXACT, LOWER, ANYTIME = 1, 2, 3

# the growable arrays sit in one-element lists so that growing replaces them in place
Cache = namedtuple("Cache", ["tab_h", "meta_h", "obj_h", "pool_h", "stats", "max_entries"])


def entry_bytes(W: int) -> int:
    """Bytes per entry: meta + value + key words + worst-case share of the bucket table (at most
    4 buckets of 8 bytes per entry: the table doubles when half full)."""
    return 5 * 8 + 8 + 8 * W + 32


def entries_for_mb(cache_limit_mb: float, W: int) -> int:
    """Number of entries that fit in ``cache_limit_mb`` megabytes (at least 1)."""
    return max(1, int(cache_limit_mb * 2**20 / entry_bytes(W)))


@njit(cache=True)
def new_cache(W, max_entries, stats):
    cap0 = 1024
    if cap0 > max_entries:
        cap0 = max(1, max_entries)
    nb = 2
    while nb < 2 * cap0:
        nb *= 2
    return Cache(
        [np.full(nb, -1, dtype=np.int64)],
        [np.zeros((cap0, 5), dtype=np.int64)],
        [np.zeros(cap0)],
        [np.zeros(cap0 * W, dtype=np.uint64)],
        stats,
        max_entries,
    )


@njit(cache=True)
def cache_find(cache, rows, h, hv):
    """Entry index of (h, rows) with hash ``hv``, or -1."""
    tab = cache.tab_h[0]
    meta = cache.meta_h[0]
    pool = cache.pool_h[0]
    W = rows.shape[0]
    mask = np.uint64(tab.shape[0] - 1)
    e = tab[np.int64(hv & mask)]
    while e >= 0:
        if meta[e, 1] == np.int64(hv) and meta[e, 2] == h:
            base = e * W
            same = True
            for w in range(W):
                if pool[base + w] != rows[w]:
                    same = False
                    break
            if same:
                return e
        e = meta[e, 0]
    return -1


@njit(cache=True)
def cache_state(cache, e):
    return cache.meta_h[0][e, 4]


@njit(cache=True)
def cache_value(cache, e):
    return cache.obj_h[0][e]


@njit(cache=True)
def cache_feature(cache, e):
    return cache.meta_h[0][e, 3]


@njit(cache=True)
def cache_put(cache, rows, h, hv, obj, feat, state):
    """Insert or update; returns False when the cache is full (entry not stored)."""
    stats = cache.stats
    e = cache_find(cache, rows, h, hv)
    if e >= 0:
        meta = cache.meta_h[0]
        meta[e, 3] = feat
        meta[e, 4] = state
        cache.obj_h[0][e] = obj
        return True
    n = stats[S_ENTRIES]
    max_entries = cache.max_entries
    if n >= max_entries:
        stats[S_CAP_HIT] += 1
        return False
    W = rows.shape[0]
    meta = cache.meta_h[0]
    if n >= meta.shape[0]:  # grow entry storage (doubling, capped)
        cap = min(max_entries, 2 * meta.shape[0])
        m2 = np.empty((cap, 5), dtype=np.int64)
        m2[:n] = meta[:n]
        o2 = np.empty(cap)
        o2[:n] = cache.obj_h[0][:n]
        p2 = np.empty(cap * W, dtype=np.uint64)
        p2[: n * W] = cache.pool_h[0][: n * W]
        cache.meta_h[0] = m2
        cache.obj_h[0] = o2
        cache.pool_h[0] = p2
        meta = m2
    tab = cache.tab_h[0]
    if 2 * (n + 1) > tab.shape[0]:  # grow buckets, rehash from stored hashes
        nb = tab.shape[0] * 2
        t2 = np.full(nb, -1, dtype=np.int64)
        mk = np.uint64(nb - 1)
        for i in range(n):
            b = np.int64(np.uint64(meta[i, 1]) & mk)
            meta[i, 0] = t2[b]
            t2[b] = i
        cache.tab_h[0] = t2
        tab = t2
    pool = cache.pool_h[0]
    base = n * W
    for w in range(W):
        pool[base + w] = rows[w]
    b = np.int64(hv & np.uint64(tab.shape[0] - 1))
    meta[n, 0] = tab[b]
    meta[n, 1] = np.int64(hv)
    meta[n, 2] = h
    meta[n, 3] = feat
    meta[n, 4] = state
    cache.obj_h[0][n] = obj
    tab[b] = n
    stats[S_ENTRIES] = n + 1
    nbytes = meta.shape[0] * (5 * 8 + 8 + W * 8) + tab.shape[0] * 8
    stats[S_BYTES] = nbytes
    if nbytes > stats[S_PEAK_BYTES]:
        stats[S_PEAK_BYTES] = nbytes
    return True
