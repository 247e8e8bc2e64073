"""Compiled kernels of the Top-k learner (Blanc et al., NeurIPS 2023, Figure 1).

Representation (all plain arrays, GUIDE §4):

* a set of training rows is a bitset of ``W = ceil(n / 64)`` uint64 words;
* ``F[w, j]`` holds word ``w`` of feature ``j``'s column (bit set = feature is 1);
* ``C[c, w]`` holds word ``w`` of the rows of class ``c``;
* unweighted data (the common case) counts with popcounts; weighted data walks the set bits and
  sums ``sw`` per class (``Xd`` is the dense 0/1 matrix used only then).

The search (`solve`) is the recursion of Figure 1 with three exactness-preserving additions:

* memoisation by (remaining depth, row set) in a hash cache with a byte cap (when full, new
  entries are simply not stored: slower, never wrong);
* branch-and-bound on the objective ``error * M + n_nodes`` (``M`` = a power of two larger than
  any tree's node count), which orders trees by training error, then by size: a candidate is
  kept only when strictly better, so among equally accurate trees the first explored (higher
  score) wins unless a later one is smaller. A subproblem called with an upper bound ``ub``
  either returns its exact optimum (< ub) or a lower bound >= ub, which is cached and reused;
* on timeout (``fstats[0]`` deadline) the search turns greedy (k = 1, no new lower bounds) and
  every open frame returns the best complete tree it has (anytime behaviour).

At k = all on unweighted data two techniques of the optimal-tree literature (DL8.5, MurTree)
prune further without changing the answer: the similarity lower bound (an optimal tree for rows
S errs at least err(S') - |S' minus S| times, for a set S' solved before at the same depth; it
does not hold for k < all, whose search space depends on the rows), and a specialised depth-2
solver (`depth2_best`) that evaluates every depth-2 tree from pairwise class counts instead of
recursing. At depth 1 with every feature a candidate, only equal-error features are scored.

The result of a search is read back by `build_tree`, which re-asks `solve` for each node with an
infinite bound (a cache hit in the normal case) and records the chosen feature.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba import njit, objmode, types
from numba.core import cgutils
from numba.extending import intrinsic

# criterion codes
ENTROPY, GINI, KEARNS_MANSOUR, ERROR = 0, 1, 2, 3
# cache entry states
EXACT, LOWER, ANYTIME = 1, 2, 3
# stats slots (int64)
S_EXPANDED, S_SCORED, S_ENTRIES, S_PEAK_BYTES, S_TIMED_OUT, S_TICK, S_CAP_HIT, S_BYTES = range(8)
N_STATS = 8
TIE_RTOL = 1e-12
INF = np.inf


@intrinsic
def popcount(typingctx, x):
    """LLVM ctpop on a uint64 (one machine instruction on current CPUs)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return sig, codegen


@intrinsic
def ctz(typingctx, x):
    """Count trailing zeros of a non-zero uint64."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.cttz.i64")
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen


# ----------------------------------------------------------------------------- packing
def pack_columns(X01: np.ndarray) -> np.ndarray:
    """(n, d) 0/1 matrix -> uint64 (W, d) bitsets; bit ``i % 64`` of word ``i // 64`` is row i."""
    n, d = X01.shape
    W = max(1, (n + 63) // 64)
    bits = np.zeros((W * 64, d), dtype=np.uint8)
    bits[:n] = X01 != 0
    # little-endian bit order inside each byte, bytes little-endian inside the word
    packed = np.packbits(bits.reshape(W, 64, d), axis=1, bitorder="little")  # (W, 8, d)
    return np.ascontiguousarray(packed.transpose(0, 2, 1)).view(np.uint64).reshape(W, d)


def pack_rows(mask: np.ndarray) -> np.ndarray:
    """Boolean (n,) -> uint64 (W,) bitset."""
    return pack_columns(mask.reshape(-1, 1).astype(np.uint8))[:, 0].copy()


# ----------------------------------------------------------------------------- impurity
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


# ----------------------------------------------------------------------------- counting
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


# ----------------------------------------------------------------------------- cache
@njit(cache=True)
def row_hash(rows, h):
    x = np.uint64(h + 1) * np.uint64(0x9E3779B97F4A7C15)
    for w in range(rows.shape[0]):
        x = (x ^ rows[w]) * np.uint64(0x100000001B3)
        x ^= x >> np.uint64(29)
    return x


@njit(cache=True)
def cache_find(rows, h, hv, tab_h, meta_h, pool_h):
    tab = tab_h[0]
    meta = meta_h[0]
    pool = pool_h[0]
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
def cache_put(rows, h, hv, obj, feat, state, tab_h, meta_h, obj_h, pool_h, stats, max_entries):
    """Insert or update; returns False when the cache is full (entry not stored)."""
    e = cache_find(rows, h, hv, tab_h, meta_h, pool_h)
    if e >= 0:
        meta = meta_h[0]
        meta[e, 3] = feat
        meta[e, 4] = state
        obj_h[0][e] = obj
        return True
    n = stats[S_ENTRIES]
    if n >= max_entries:
        stats[S_CAP_HIT] += 1
        return False
    W = rows.shape[0]
    meta = meta_h[0]
    if n >= meta.shape[0]:  # grow entry storage (doubling, capped)
        cap = min(max_entries, 2 * meta.shape[0])
        m2 = np.empty((cap, 5), dtype=np.int64)
        m2[:n] = meta[:n]
        o2 = np.empty(cap)
        o2[:n] = obj_h[0][:n]
        p2 = np.empty(cap * W, dtype=np.uint64)
        p2[: n * W] = pool_h[0][: n * W]
        meta_h[0] = m2
        obj_h[0] = o2
        pool_h[0] = p2
        meta = m2
    tab = tab_h[0]
    if 2 * (n + 1) > tab.shape[0]:  # grow buckets, rehash from stored hashes
        nb = tab.shape[0] * 2
        t2 = np.full(nb, -1, dtype=np.int64)
        mk = np.uint64(nb - 1)
        for i in range(n):
            b = np.int64(np.uint64(meta[i, 1]) & mk)
            meta[i, 0] = t2[b]
            t2[b] = i
        tab_h[0] = t2
        tab = t2
    pool = pool_h[0]
    base = n * W
    for w in range(W):
        pool[base + w] = rows[w]
    b = np.int64(hv & np.uint64(tab.shape[0] - 1))
    meta[n, 0] = tab[b]
    meta[n, 1] = np.int64(hv)
    meta[n, 2] = h
    meta[n, 3] = feat
    meta[n, 4] = state
    obj_h[0][n] = obj
    tab[b] = n
    stats[S_ENTRIES] = n + 1
    nbytes = meta.shape[0] * (5 * 8 + 8 + W * 8) + tab.shape[0] * 8
    stats[S_BYTES] = nbytes
    if nbytes > stats[S_PEAK_BYTES]:
        stats[S_PEAK_BYTES] = nbytes
    return True


# ----------------------------------------------------------------------------- search
@njit(cache=True)
def now_seconds():
    """time.perf_counter() from compiled code (object mode; call sparingly)."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def _check_time(stats, fstats):
    stats[S_TICK] += 1
    if fstats[0] > 0.0 and (stats[S_TICK] & 255) == 0:
        now = now_seconds()
        if now > fstats[0]:
            stats[S_TIMED_OUT] = 1


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
def similarity_bound(rows, h, lb, M, nu, ref_buf, ref_err):
    """Raise ``lb`` by the similarity bound: an optimal tree for rows S misclassifies at least
    err(S') - |S' minus S| rows of each set S' solved before at depth ``h`` (the two kept in
    ``ref_buf``/``ref_err``); a tree that errs at all has at least 3 nodes (cost 3·nu)."""
    W = rows.shape[0]
    for r in range(2):
        e_ref = ref_err[h, r]
        if e_ref <= 0.0:
            continue
        ref = ref_buf[h, r]
        diff = 0
        for w in range(W):
            diff += popcount(ref[w] & ~rows[w])
        lb_e = e_ref - diff
        if lb_e > 0.0 and lb_e * M + 3.0 * nu > lb:
            lb = lb_e * M + 3.0 * nu
    return lb


@njit(cache=True)
def child_lb(rows, h, lb, M, nu, sim, tab_h, meta_h, obj_h, pool_h, ref_buf, ref_err):
    """Best known lower bound on the objective of ``rows`` at depth ``h``: ``lb``, a cached
    exact value or lower bound, and (``sim``) the similarity bound against the sets solved
    last at this depth."""
    hv = row_hash(rows, h)
    e = cache_find(rows, h, hv, tab_h, meta_h, pool_h)
    if e >= 0:
        st = meta_h[0][e, 4]
        if st == EXACT or st == LOWER:
            ov = obj_h[0][e]
            if ov > lb:
                lb = ov
            if st == EXACT:
                return lb
    if sim:
        lb = similarity_bound(rows, h, lb, M, nu, ref_buf, ref_err)
    return lb


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


@njit(cache=True)
def solve(
    rows, h, ub,
    F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
    child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
    tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out, ref_buf, ref_err,
    acc_buf, pair_buf,
):
    """Best objective (error * M + nodes) of a Top-k tree of depth <= h on ``rows``.

    Returns a value < ub (the exact optimum of the Top-k search space, or on timeout the best
    complete tree found) with the root feature in ``feat_out[h]`` (-1 = leaf); or a lower bound
    >= ub when no tree beats ``ub``.
    """
    tot = tot_buf[h]
    nnz, nrows = node_totals(rows, C, y, sw, weighted, tot, nzw_buf[h])
    total = 0.0
    mx = 0.0
    npos = 0
    for c in range(tot.shape[0]):
        total += tot[c]
        if tot[c] > mx:
            mx = tot[c]
        if tot[c] > 0.0:
            npos += 1
    leaf_err = total - mx
    leaf_obj = leaf_err * M + nu
    feat_out[h] = -1
    if h == 0 or npos <= 1:
        return leaf_obj
    timed_out = stats[S_TIMED_OUT] != 0
    hv = row_hash(rows, h)
    lbk = 0.0
    e = cache_find(rows, h, hv, tab_h, meta_h, pool_h)
    if e >= 0:
        st = meta_h[0][e, 4]
        ov = obj_h[0][e]
        if st == EXACT or (timed_out and st == ANYTIME):
            feat_out[h] = meta_h[0][e, 3]
            return ov
        if st == LOWER and not timed_out:
            if ov >= ub:
                return ov
            lbk = ov
    _check_time(stats, fstats)
    timed_out = stats[S_TIMED_OUT] != 0
    # similarity lower bound (k = all, unweighted, Figure-1 leaves only): an optimal tree for
    # rows S misclassifies at least err(S') - |S' minus S| rows of a set S' solved before at
    # the same depth (the rows only in S' cost at most one error each)
    sim = k <= 0 and not weighted and min_imp < 0.0 and not timed_out
    if sim:
        lbk = similarity_bound(rows, h, lbk, M, nu, ref_buf, ref_err)
        if lbk >= ub:
            cache_put(rows, h, hv, lbk, -1, LOWER, tab_h, meta_h, obj_h, pool_h, stats,
                      max_entries)
            return lbk
    stats[S_EXPANDED] += 1
    d = F.shape[1]
    stats[S_SCORED] += d
    cnt1 = cnt_buf[h]
    rc1 = rc_buf[h]
    feature_counts(rows, nzw_buf[h], nnz, F, C, Xd, y, sw, weighted, cnt1, rc1, acc_buf)
    gains = gain_buf[h]
    valid = valid_buf[h]
    tmp = tmp_buf[h]
    nvalid = 0
    for j in range(d):
        r1 = rc1[j]
        valid[j] = r1 >= msl and nrows - r1 >= msl
        if valid[j]:
            nvalid += 1
    if nvalid == 0:
        return leaf_obj
    if h == 1 and not timed_out and (k <= 0 or k >= nvalid):
        # every splitting feature is a candidate and the children are leaves: take the
        # smallest error; only equal-error features need their scores (for the tie rule)
        min_err = INF
        for j in range(d):
            if not valid[j]:
                continue
            s1, m1, m0, _, _ = split_stats(cnt1[j], tot)
            err = (s1 - m1) + (total - s1 - m0)
            gains[j] = err
            if err < min_err:
                min_err = err
        best_s = INF
        for j in range(d):
            if valid[j] and gains[j] == min_err:
                sj = child_impurity(tot, cnt1[j], tmp, total, crit)
                if sj < best_s:
                    best_s = sj
        best_f = -1
        for j in range(d):
            if valid[j] and gains[j] == min_err:
                sj = child_impurity(tot, cnt1[j], tmp, total, crit)
                if sj <= best_s + TIE_RTOL * max(1.0, abs(best_s)):
                    best_f = j
                    break
        val = min_err * M + 3.0 * nu
        vf = best_f
        if min_imp >= 0.0 and val >= (leaf_err - min_imp) * M:
            val = leaf_obj  # no split improves enough
            vf = -1
        cache_put(rows, h, hv, val, vf, EXACT, tab_h, meta_h, obj_h, pool_h, stats, max_entries)
        feat_out[h] = vf
        return val  # exact; the caller treats val >= ub as "no tree below ub"
    for j in range(d):
        if valid[j]:
            gains[j] = child_impurity(tot, cnt1[j], tmp, total, crit)
        else:
            gains[j] = INF
    order = order_buf[h]
    ncand = rank_features(gains, valid, order)
    if ncand == 0:
        return leaf_obj
    kk = ncand if k <= 0 or k > ncand else k
    if timed_out:
        kk = 1
    # the leaf competes only when min_improvement is active
    split_ub = ub
    if min_imp >= 0.0:
        thr = (leaf_err - min_imp) * M
        if thr < split_ub:
            split_ub = thr
    best = split_ub
    best_f = -1
    # absolute lower bound of any split tree here: error 0, 3 nodes (or cached bound)
    floor = 3.0 * nu
    if lbk > floor:
        floor = lbk
    if h == 2 and k <= 0 and not weighted and not timed_out and min_imp < 0.0 \
            and pair_buf.shape[1] == d:
        nv = 0
        for j in range(d):
            if valid[j]:
                order_buf[0, nv] = j
                nv += 1
        vsl = order_buf[0]  # level-0 scratch (h = 0 nodes are leaves, never scored)
        # pair counts only if some root feature can beat the bound (children: exact leaves
        # when pure, else at least 3 nodes)
        if depth2_may_improve(cnt1, tot, order, ncand, M, nu, best):
            pair_counts(rows, nzw_buf[h], nnz, F, C, vsl, nv, pair_buf)
            stats[S_SCORED] += nv * (nv - 1) // 2
            best, best_f = depth2_best(cnt1, tot, order, ncand, vsl, pair_buf, msl, M, nu,
                                       best, floor, tmp_buf[0], tmp_buf[1])
    elif h == 1:
        for t in range(kk):
            j = order[t]
            s1, m1, m0, _, _ = split_stats(cnt1[j], tot)
            err = (s1 - m1) + (total - s1 - m0)
            o = err * M + 3.0 * nu
            if o < best:
                best = o
                best_f = j
                if best <= floor:
                    break
    else:
        r0 = child_buf[h, 0]
        r1b = child_buf[h, 1]
        W = rows.shape[0]
        for t in range(kk):
            j = order[t]
            # exact leaf objective of each child when it cannot split further, else 3
            s1, m1, m0, p1, p0 = split_stats(cnt1[j], tot)
            lb0 = (total - s1 - m0) * M + nu if p0 <= 1 else 3.0 * nu
            lb1 = (s1 - m1) * M + nu if p1 <= 1 else 3.0 * nu
            if min_imp >= 0.0:  # children may be leaves
                if p0 > 1:
                    lb0 = nu
                if p1 > 1:
                    lb1 = nu
            if lb0 + lb1 + nu >= best:
                continue
            Fj = F[:, j]
            for w in range(W):
                fw = Fj[w]
                r1b[w] = rows[w] & fw
                r0[w] = rows[w] & ~fw
            if h >= 2 and not timed_out:
                # tighter child bounds from the cache (exact values or lower bounds) and, at
                # k = all, from the similarity bound
                if p0 > 1:
                    lb0 = child_lb(r0, h - 1, lb0, M, nu, sim, tab_h, meta_h, obj_h, pool_h,
                                   ref_buf, ref_err)
                if p1 > 1:
                    lb1 = child_lb(r1b, h - 1, lb1, M, nu, sim, tab_h, meta_h, obj_h, pool_h,
                                   ref_buf, ref_err)
                if lb0 + lb1 + nu >= best:
                    continue
            o0 = solve(
                r0, h - 1, best - nu - lb1,
                F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
                child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf,
                nzw_buf, tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
                ref_buf, ref_err, acc_buf, pair_buf,
            )
            if o0 < best - nu - lb1:
                o1 = solve(
                    r1b, h - 1, best - nu - o0,
                    F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
                    child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf,
                    nzw_buf, tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
                    ref_buf, ref_err, acc_buf, pair_buf,
                )
                if o1 < best - nu - o0:
                    best = o0 + o1 + nu
                    best_f = j
            if stats[S_TIMED_OUT] != 0:
                if best_f >= 0 or timed_out:
                    break
                timed_out = True
            if best <= floor:
                break
    timed_out = stats[S_TIMED_OUT] != 0
    if sim and not timed_out:
        # remember this set and a lower bound on its optimal error for the similarity bound
        slot = np.int64(ref_err[h, 2])
        ref_err[h, 2] = 1 - slot
        vb = best if best_f >= 0 else (ub if ub > lbk else lbk)
        ref_err[h, slot] = np.floor(vb / M)
        rb = ref_buf[h, slot]
        for w in range(rows.shape[0]):
            rb[w] = rows[w]
    if best_f >= 0:
        st = ANYTIME if timed_out else EXACT
        cache_put(rows, h, hv, best, best_f, st, tab_h, meta_h, obj_h, pool_h, stats, max_entries)
        feat_out[h] = best_f
        return best
    if min_imp >= 0.0 and split_ub < ub:
        # no split improves enough: the leaf is this node's exact answer
        if not timed_out:
            cache_put(rows, h, hv, leaf_obj, -1, EXACT, tab_h, meta_h, obj_h, pool_h, stats,
                      max_entries)
        feat_out[h] = -1
        return leaf_obj
    lb = ub if ub > lbk else lbk
    if not timed_out:
        cache_put(rows, h, hv, lb, -1, LOWER, tab_h, meta_h, obj_h, pool_h, stats, max_entries)
    return lb


@njit(cache=True)
def _build(
    rows, h, F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
    child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
    tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out, ref_buf, ref_err,
    acc_buf, pair_buf,
    rec_buf, out_feat, out_left, out_right, out_value, pos,
):
    node = pos[0]
    pos[0] += 1
    solve(
        rows, h, INF, F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
        child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
        tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
        ref_buf, ref_err, acc_buf, pair_buf,
    )
    f = feat_out[h]
    for c in range(out_value.shape[1]):
        out_value[node, c] = tot_buf[h][c]
    out_feat[node] = f
    out_left[node] = -1
    out_right[node] = -1
    if f < 0:
        return
    W = rows.shape[0]
    r0 = rec_buf[h, 0]
    r1 = rec_buf[h, 1]
    for w in range(W):
        r1[w] = rows[w] & F[w, f]
        r0[w] = rows[w] & ~F[w, f]
    out_left[node] = pos[0]
    _build(
        r0, h - 1, F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
        child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
        tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
        ref_buf, ref_err, acc_buf, pair_buf,
        rec_buf, out_feat, out_left, out_right, out_value, pos,
    )
    out_right[node] = pos[0]
    _build(
        r1, h - 1, F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
        child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
        tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
        ref_buf, ref_err, acc_buf, pair_buf,
        rec_buf, out_feat, out_left, out_right, out_value, pos,
    )


@njit(cache=True)
def fit_topk(
    F, C, Xd, y, sw, weighted, n_rows, depth, k, crit, msl, min_imp, max_entries, deadline,
    smaller_trees,
):
    """Run the search from the root and read the tree back.

    Returns (objective, feature, left, right, value, stats) with the tree in pre-order.
    """
    W = F.shape[0]
    d = F.shape[1]
    nc = C.shape[0]
    H = depth
    M = 1.0
    while M <= 2.0 ** (H + 1):
        M *= 2.0
    nu = 1.0 if smaller_trees else 0.0
    root = np.zeros(W, dtype=np.uint64)
    for i in range(n_rows):
        root[i // 64] |= np.uint64(1) << np.uint64(i % 64)
    L = H + 1
    child_buf = np.zeros((L, 2, W), dtype=np.uint64)
    rec_buf = np.zeros((L, 2, W), dtype=np.uint64)
    cnt_buf = np.zeros((L, d, nc))
    rc_buf = np.zeros((L, d))
    tot_buf = np.zeros((L, nc))
    tmp_buf = np.zeros((L, nc))
    gain_buf = np.zeros((L, d))
    valid_buf = np.zeros((L, d), dtype=np.bool_)
    order_buf = np.zeros((L, d), dtype=np.int64)
    nzw_buf = np.zeros((L, W), dtype=np.int64)
    feat_out = np.full(L, -1, dtype=np.int64)
    ref_buf = np.zeros((L, 2, W), dtype=np.uint64)
    acc_buf = np.zeros((nc, d), dtype=np.int64)
    # pairwise counts for the depth-2 solver (k = all, unweighted), at most 256 MB
    if k <= 0 and not weighted and H >= 2 and min_imp < 0.0 and nc * d * d <= 2**25:
        pair_buf = np.zeros((nc, d, d), dtype=np.int64)
    else:
        pair_buf = np.zeros((1, 1, 1), dtype=np.int64)
    ref_err = np.zeros((L, 3))
    cap0 = 1024
    if cap0 > max_entries:
        cap0 = max(1, max_entries)
    tab_h = [np.full(2048, -1, dtype=np.int64)]
    meta_h = [np.zeros((cap0, 5), dtype=np.int64)]
    obj_h = [np.zeros(cap0)]
    pool_h = [np.zeros(cap0 * W, dtype=np.uint64)]
    stats = np.zeros(N_STATS, dtype=np.int64)
    fstats = np.zeros(2)
    fstats[0] = deadline
    obj = solve(
        root, H, INF, F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
        child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
        tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
        ref_buf, ref_err, acc_buf, pair_buf,
    )
    nmax = 2 ** (H + 1)
    out_feat = np.full(nmax, -1, dtype=np.int64)
    out_left = np.full(nmax, -1, dtype=np.int64)
    out_right = np.full(nmax, -1, dtype=np.int64)
    out_value = np.zeros((nmax, nc))
    pos = np.zeros(1, dtype=np.int64)
    _build(
        root, H, F, C, Xd, y, sw, weighted, k, crit, msl, min_imp, M, nu,
        child_buf, cnt_buf, rc_buf, tot_buf, tmp_buf, gain_buf, valid_buf, order_buf, nzw_buf,
        tab_h, meta_h, obj_h, pool_h, max_entries, stats, fstats, feat_out,
        ref_buf, ref_err, acc_buf, pair_buf,
        rec_buf, out_feat, out_left, out_right, out_value, pos,
    )
    n = pos[0]
    return (obj, M, out_feat[:n].copy(), out_left[:n].copy(), out_right[:n].copy(),
            out_value[:n].copy(), stats)
