"""The bounded state cache: solved subproblems keyed by (depth budget, row set).

An open-hashing table over growable arrays (doubling up to the cap): ``tab`` holds the first
entry of each bucket, ``meta[e]`` = (next entry in bucket, hash, depth, feature, state, key)
and ``obj[e]`` the value. The policy shared by every search: entries are never evicted; once
``max_entries`` is reached new entries are simply not stored (``S_CAP_HIT`` counts the
refusals), so a search becomes slower, never wrong, and its memory stays under the cap
(`entries_for_mb`).

Keys are compact: an entry does not store its row set (``ceil(n / 64)`` words, 400
bytes for 3,190 rows), only two fingerprints of it, so an entry is 88 bytes whatever ``n``.
``hash`` is `bitset.row_hash` (it also picks the bucket); ``key`` is `row_key`, the row set's
bitset read as a polynomial over the prime field of ``p = 2^61 - 1`` evaluated at a fixed point
``r`` (32-bit chunks as coefficients). Two different row sets give polynomials that differ, of
degree at most ``2W``, so they share a key for at most ``2W`` values of ``r``: for ``r`` drawn
independently of the data, a lookup of a set whose first hash matches a stored different set is
answered wrongly with probability at most ``2W / p`` (below 2^-50 for a million rows). This is
the same kind of fingerprint DPDT's memo uses (a 128-bit Zobrist key). Equal row sets always
match: a cached answer is never missed.

Entry states: ``EXACT`` (the optimum of the subproblem), ``LOWER`` (a lower bound on it),
``ANYTIME`` (the best tree found after the deadline: neither exact nor a bound).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.state import S_BYTES, S_CAP_HIT, S_ENTRIES, S_PEAK_BYTES

EXACT, LOWER, ANYTIME = 1, 2, 3

#: the Mersenne prime 2^61 - 1 of the row-set fingerprint, and its evaluation point
P61 = (1 << 61) - 1
R61 = 0x0B3D5A7C19E2F4D1 % P61

#: meta columns
_NEXT, _HASH, _DEPTH, _FEAT, _STATE, _KEY = range(6)
_NMETA = 6

# the growable arrays sit in one-element lists so that growing replaces them in place
Cache = namedtuple("Cache", ["tab_h", "meta_h", "obj_h", "rpow", "stats", "max_entries"])


def entry_bytes(W: int) -> int:
    """Bytes per entry: meta + value + worst-case share of the bucket table (at most 4 buckets
    of 8 bytes per entry: the table doubles when half full). Independent of ``W`` (compact
    keys); the argument stays for callers that size other per-entry data."""
    return _NMETA * 8 + 8 + 32


def entries_for_mb(cache_limit_mb: float, W: int) -> int:
    """Number of entries that fit in ``cache_limit_mb`` megabytes (at least 1)."""
    return max(1, int(cache_limit_mb * 2**20 / entry_bytes(W)))


@njit(cache=True)
def mulmod61(a, b):
    """``a * b mod (2^61 - 1)`` for ``a, b < 2^61`` in uint64 arithmetic (no 128-bit product):
    the halves' products are folded with ``2^61 = 1``."""
    m32 = np.uint64(0xFFFFFFFF)
    p = np.uint64(P61)
    ahi = a >> np.uint64(32)
    alo = a & m32
    bhi = b >> np.uint64(32)
    blo = b & m32
    hh = ahi * bhi  # < 2^58, weight 2^64 = 8 (mod p)
    mid = ahi * blo + alo * bhi  # < 2^62, weight 2^32
    ll = alo * blo  # < 2^64
    s = (hh << np.uint64(3)) + (mid >> np.uint64(29)) + ((mid & np.uint64(0x1FFFFFFF)) << np.uint64(32))
    s += (ll & p) + (ll >> np.uint64(61))
    s = (s & p) + (s >> np.uint64(61))
    if s >= p:
        s -= p
    return s


@njit(cache=True)
def key_powers(W):
    """``r^1 .. r^(2W)`` mod p: the weights of the row set's 32-bit chunks in `row_key`."""
    out = np.empty(2 * W, dtype=np.uint64)
    x = np.uint64(1)
    r = np.uint64(R61)
    for j in range(2 * W):
        x = mulmod61(x, r)
        out[j] = x
    return out


@njit(cache=True)
def row_key(rows, rpow):
    """The row set's fingerprint: ``sum_j chunk_j * r^(j+1) mod p`` over its 32-bit chunks
    (chunk ``2w`` = low half of word ``w``); zero words are skipped."""
    p = np.uint64(P61)
    m32 = np.uint64(0xFFFFFFFF)
    acc = np.uint64(0)
    for w in range(rows.shape[0]):
        x = rows[w]
        if x == np.uint64(0):
            continue
        acc += mulmod61(x & m32, rpow[2 * w])
        if acc >= p:
            acc -= p
        acc += mulmod61(x >> np.uint64(32), rpow[2 * w + 1])
        if acc >= p:
            acc -= p
    return np.int64(acc)


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
        [np.zeros((cap0, _NMETA), dtype=np.int64)],
        [np.zeros(cap0)],
        key_powers(W),
        stats,
        max_entries,
    )


@njit(cache=True)
def _find(cache, h, hv, key):
    tab = cache.tab_h[0]
    meta = cache.meta_h[0]
    mask = np.uint64(tab.shape[0] - 1)
    e = tab[np.int64(hv & mask)]
    hvi = np.int64(hv)
    while e >= 0:
        if meta[e, _HASH] == hvi and meta[e, _KEY] == key and meta[e, _DEPTH] == h:
            return e
        e = meta[e, _NEXT]
    return -1


@njit(cache=True)
def cache_find(cache, rows, h, hv):
    """Entry index of (h, rows) with hash ``hv``, or -1."""
    return _find(cache, h, hv, row_key(rows, cache.rpow))


@njit(cache=True)
def cache_state(cache, e):
    return cache.meta_h[0][e, _STATE]


@njit(cache=True)
def cache_value(cache, e):
    return cache.obj_h[0][e]


@njit(cache=True)
def cache_feature(cache, e):
    return cache.meta_h[0][e, _FEAT]


@njit(cache=True)
def cache_put(cache, rows, h, hv, obj, feat, state):
    """Insert or update; returns False when the cache is full (entry not stored)."""
    stats = cache.stats
    key = row_key(rows, cache.rpow)
    e = _find(cache, h, hv, key)
    if e >= 0:
        meta = cache.meta_h[0]
        meta[e, _FEAT] = feat
        meta[e, _STATE] = state
        cache.obj_h[0][e] = obj
        return True
    n = stats[S_ENTRIES]
    max_entries = cache.max_entries
    if n >= max_entries:
        stats[S_CAP_HIT] += 1
        return False
    meta = cache.meta_h[0]
    if n >= meta.shape[0]:  # grow entry storage (doubling, capped)
        cap = min(max_entries, 2 * meta.shape[0])
        m2 = np.empty((cap, _NMETA), dtype=np.int64)
        m2[:n] = meta[:n]
        o2 = np.empty(cap)
        o2[:n] = cache.obj_h[0][:n]
        cache.meta_h[0] = m2
        cache.obj_h[0] = o2
        meta = m2
    tab = cache.tab_h[0]
    if 2 * (n + 1) > tab.shape[0]:  # grow buckets, rehash from stored hashes
        nb = tab.shape[0] * 2
        t2 = np.full(nb, -1, dtype=np.int64)
        mk = np.uint64(nb - 1)
        for i in range(n):
            b = np.int64(np.uint64(meta[i, _HASH]) & mk)
            meta[i, _NEXT] = t2[b]
            t2[b] = i
        cache.tab_h[0] = t2
        tab = t2
    b = np.int64(hv & np.uint64(tab.shape[0] - 1))
    meta[n, _NEXT] = tab[b]
    meta[n, _HASH] = np.int64(hv)
    meta[n, _DEPTH] = h
    meta[n, _FEAT] = feat
    meta[n, _STATE] = state
    meta[n, _KEY] = key
    cache.obj_h[0][n] = obj
    tab[b] = n
    stats[S_ENTRIES] = n + 1
    nbytes = meta.shape[0] * (_NMETA * 8 + 8) + tab.shape[0] * 8
    stats[S_BYTES] = nbytes
    if nbytes > stats[S_PEAK_BYTES]:
        stats[S_PEAK_BYTES] = nbytes
    return True
