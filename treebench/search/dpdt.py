"""Compiled kernels of DPDT (Kohler, Akrour & Preux, KDD 2025).

Representation (plain arrays, so the kernels compile and cache with numba):

* ``Xt`` is the training matrix transposed (``p x n``, C order) so that one feature's values are
  contiguous; ``X`` the same data row-major for per-row tests;
* ``RS`` (``n x K``) holds each row's additive statistics: ``w`` times the one-hot class vector
  for classification, ``[w, w*y, w*y*y]`` for regression; a node's statistics are their sum;
  ``yc`` holds each row's class index (unused for regression);
* an MDP state's rows are kept as ``S`` (``p x m`` int32): for every feature, the state's rows
  sorted by that feature (stable, ties by row id). A child's ``S`` is a stable partition of its
  parent's (`partition_side`), so no state ever sorts, and no state copies ``X``;
* a row set's identity is a pair of order-free 64-bit Zobrist sums (``Z1``, ``Z2``: one random
  word per row, summed modulo 2^64) plus its size; states are memoised by (depth, size, h1, h2).

Criteria (scikit-learn's definitions of the best split and of best-first priority, §5.2 "Calls to
CART"; the functions and codes live in `treebench.search.criteria`): ``GINI`` (proxy
Σ l_k²/w_l + Σ r_k²/w_r), ``ENTROPY`` (proxy −(w_l H_l + w_r H_r)), ``MSE`` (proxy
(Σw y)_l²/w_l + (Σw y)_r²/w_r). A threshold is the midpoint of two consecutive
distinct values, ``a/2 + b/2`` (``a`` when that rounds up to ``b``), so left is ``x <= t``.
Between equal proxies the lower feature index, then the smaller threshold wins (strict ``>``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search._numeric_kernels import midpoint  # one threshold rule for both searches
from treebench.search.criteria import (  # noqa: F401  (codes and leaf_error re-exported)
    ENTROPY, GINI, MSE, cart_node_term, cart_proxy, leaf_error, sk_gini_proxy, sk_impurity,
    sk_proxy, stat_is_pure, stat_weight,
)



# ----------------------------------------------------------------------------- packed states
# Unweighted classification (the common case): a state also carries ``Q`` (``p x m`` int32),
# ``Q[f, i] = rank(x_f of row S[f, i]) * 128 + class``, where ranks are the dense ranks of each
# feature's distinct values. A CART call then reads only ``Q`` sequentially (comparing ranks is
# comparing values; the class is the low 7 bits) and looks values up in ``Xt`` only to write a
# new best threshold. ``Q`` is partitioned with ``S``.

QSHIFT = 128
QBITS = 7  # QSHIFT == 1 << QBITS


@njit(cache=True)
def pack_ranks(Xt, S, yc, lg=QBITS, with_class=True):
    """``Q`` for the root state (``S`` from `presort`): dense value rank << lg | class (class 0
    unless ``with_class``); also the ranks a generator call computes for an unpacked state."""
    p, m = S.shape
    Q = np.empty((p, m), np.int32)
    for f in range(p):
        rank = 0
        for i in range(m):
            r = S[f, i]
            if i > 0 and Xt[f, r] > Xt[f, S[f, i - 1]]:
                rank += 1
            Q[f, i] = (rank << lg) + (yc[r] if with_class else 0)
    return Q


@njit(cache=True)
def _features_for_node(p, max_features):
    if max_features >= p:
        return np.arange(p)
    perm = np.random.permutation(p)
    return np.sort(perm[:max_features])


# ----------------------------------------------------------------------------- tie rules
# TIES_INDEX: between equal proxies the lower feature index, then the smaller threshold; between
# open nodes of equal priority the one created first (deterministic, seed-free).
# TIES_SKLEARN: scikit-learn's DecisionTreeClassifier(max_leaf_nodes=B, random_state=rs), the
# generator of the authors' code (§5.2 "Calls to CART"), whose ties decide which of several
# equal-Gini splits is proposed:
#   * its splitter draws the features of every node without replacement by Fisher-Yates from a
#     ``features`` array that persists across the nodes of one fit, with its own 32-bit xorshift
#     generator seeded once per fit by ``RandomState(rs).randint(0, 2**31 - 1)``; a feature that
#     is constant on the node (max - min <= 1e-7) is set aside without being scanned; the best
#     split is the first strictly better one in that visit order (then the smallest threshold);
#   * proxies and priorities use its formulas (proxy -w_r I_r - w_l I_l; priority
#     (w / W) (I - w_r/w I_r - w_l/w I_l)), so exact float ties fall as they fall there;
#   * the best-first frontier is a binary max-heap (the C++ standard library's push_heap /
#     pop_heap on the priority), holding leaves (priority 0) as well, and children are split
#     when their parent is popped, left then right.
# Not reproduced: scikit-learn's float32 copy of X (values closer than float32 resolution are
# distinct here) and its summation order for weighted or regression statistics.
TIES_INDEX = 0
TIES_SKLEARN = 1
SK_RAND_R_MAX = 2147483647


@njit(cache=True)
def sk_rand_int(rng, low, high):
    """scikit-learn's ``rand_int(low, high)``: one xorshift32 step of ``rng[0]`` (0 is replaced by
    1), the result reduced modulo 2^31, then into [low, high)."""
    s = rng[0]
    if s == 0:
        s = 1
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    rng[0] = s
    return low + (s % (SK_RAND_R_MAX + 1)) % (high - low)


@njit(cache=True)
def sk_feature_order(features, rng, const, max_features, order):
    """The features scikit-learn's best splitter scans on one node, in its visit order (see the
    tie rules above); ``features`` and ``rng`` carry over to the next node. ``const[f]``: feature
    f is constant on the node. Returns how many entries of ``order`` are set."""
    p = features.shape[0]
    f_i = p
    n_visited = 0
    n_found = 0
    n_out = 0
    while f_i > n_found and (n_visited < max_features or n_visited <= n_found):
        n_visited += 1
        f_j = sk_rand_int(rng, 0, f_i - n_found) + n_found
        g = features[f_j]
        if const[g]:
            features[f_j] = features[n_found]
            features[n_found] = g
            n_found += 1
            continue
        f_i -= 1
        features[f_j] = features[f_i]
        features[f_i] = g
        order[n_out] = g
        n_out += 1
    return n_out


# ----------------------------------------------------------------------------- CART generator
# One best-first builder for every input kind. A call works on row-aligned copies of its state:
# ``work[f, i]`` the i-th row in feature f's order and ``Qw[f, i] = rank * shift + class`` its
# dense value rank and class (class 0 for regression), so the scan compares ranks and reads
# classes sequentially and looks a value up in ``Xt`` only to write a new best threshold;
# ``Wa``/``Ya`` hold the row's weight and w·y (only for weighted data / regression; 1 x 1
# otherwise). Unweighted classification states already carry ``Q`` (packed states, below), so
# their call copies it; other calls rank their rows once.
#
# The arrays and settings travel as records (plain namedtuples, passed by numba as tuples):

#: the row-aligned arrays of a call (or, for `partition_inplace`, the global in-place orders
#: ``work`` = ``GS`` and ``Qw`` = ``GQ``, with 1 x 1 ``Wa``/``Ya``)
CartRows = namedtuple("CartRows", ["Xt", "work", "Qw", "Wa", "Ya"])

#: a call's settings: at most ``max_leaves`` leaves, criterion code, min_samples_leaf,
#: max_features, the ``max_features`` draws' seed, the tie rule and scikit-learn's per-fit
#: seed (`cart_settings` fixes their types)
CartSettings = namedtuple(
    "CartSettings",
    ["max_leaves", "crit", "min_leaf", "max_features", "seed", "ties", "sk_seed"],
)

#: how a call scans a node: criterion code, min_samples_leaf, max_features, whether every
#: weight is 1 (no ``Wa``), the class bits ``lg`` of ``Qw`` and the tie rule
ScanRule = namedtuple("ScanRule", ["crit", "min_leaf", "max_features", "unit", "lg", "ties"])

#: a call's node-scan scratch: class statistics ``left``/``right``, the scan's result ``out``,
#: and scikit-learn's splitter state (``features``, ``rng``, ``const``, visit ``order``)
ScanScratch = namedtuple(
    "ScanScratch", ["left", "right", "out", "features", "rng", "const", "order"],
)

#: the buffers of `_partition_work`: ``flag`` (uint8, length n, zero between calls) and the
#: right rows' temporaries (row ids, packed ranks, weights, w·y; 1-long when not moved)
PartitionTmp = namedtuple("PartitionTmp", ["flag", "tmp_i", "tmp_q", "tmp_w", "tmp_y"])


def cart_settings(max_leaves, crit, min_leaf, max_features, seed, ties, sk_seed):
    """The `CartSettings` of a `cart_candidates` call, every field a Python int (one type per
    field, so the solver and the warm-up compile the same signature)."""
    return CartSettings(int(max_leaves), int(crit), int(min_leaf), int(max_features), int(seed),
                        int(ties), int(sk_seed))


@njit(cache=True)
def _scan(A, s, e, tot, feats, nf, rule, buf):
    """Best split of the node ``[s, e)`` of the call's rows ``A`` (`CartRows`) over
    ``feats[:nf]`` (in that order; strictly better proxies win) under the `ScanRule` ``rule``.
    ``Qw`` packs rank << lg | class. Writes ``buf.out = [proxy, feature, position,
    threshold]``; feature -1 when none.

    Classification keeps Σ l_k² and Σ r_k² up to date (O(1) per position for Gini; exact for
    integer weights); two unit-weight classes keep their counts in registers."""
    Xt, work, Qw, Wa, Ya = A
    crit, min_leaf, _, unit, lg, ties = rule
    left, right, out = buf.left, buf.right, buf.out
    K = tot.shape[0]
    m = e - s
    mask = (1 << lg) - 1
    out[0] = -np.inf
    out[1] = -1.0
    out[2] = -1.0
    out[3] = 0.0
    wtot = stat_weight(tot, crit)
    st2 = 0.0
    for k in range(K):
        st2 += tot[k] * tot[k]
    sk = ties == TIES_SKLEARN
    fast2 = K == 2 and unit and crit == GINI
    t0 = tot[0]
    t1 = tot[1] if K > 1 else 0.0
    for fi in range(nf):
        f = feats[fi]
        for k in range(K):
            left[k] = 0.0
        wl = 0.0
        sl2 = 0.0
        sr2 = st2
        q = Qw[f, s]
        if fast2:
            l1 = 0.0
            for i in range(s, e - 1):
                l1 += q & mask
                qn = Qw[f, i + 1]
                if (qn >> lg) > (q >> lg):
                    nl = i - s + 1
                    if nl >= min_leaf and m - nl >= min_leaf:
                        wl = float(nl)
                        l0 = wl - l1
                        wr = wtot - wl
                        r0 = t0 - l0
                        r1 = t1 - l1
                        if sk:
                            pr = sk_gini_proxy(l0 * l0 + l1 * l1, r0 * r0 + r1 * r1, wl, wr)
                        else:
                            pr = (l0 * l0 + l1 * l1) / wl + (r0 * r0 + r1 * r1) / wr
                        if pr > out[0]:
                            out[0] = pr
                            out[1] = f
                            out[2] = nl
                            out[3] = midpoint(Xt[f, work[f, i]], Xt[f, work[f, i + 1]])
                q = qn
            continue
        yl = 0.0
        for i in range(s, e - 1):
            if crit == MSE:
                wl += 1.0 if unit else Wa[f, i]
                yl += Ya[f, i]
            else:
                k = q & mask
                wr_ = 1.0 if unit else Wa[f, i]
                lk = left[k]
                rk = tot[k] - lk
                sl2 += wr_ * (2.0 * lk + wr_)
                sr2 += wr_ * (wr_ - 2.0 * rk)
                left[k] = lk + wr_
                wl += wr_
            qn = Qw[f, i + 1]
            if (qn >> lg) > (q >> lg):
                nl = i - s + 1
                if nl >= min_leaf and m - nl >= min_leaf:
                    wr = wtot - wl
                    if wl > 0.0 and wr > 0.0:
                        if crit == GINI:
                            pr = sk_gini_proxy(sl2, sr2, wl, wr) if sk else sl2 / wl + sr2 / wr
                        elif crit == MSE:  # the same formula as scikit-learn's proxy
                            yr = t1 - yl
                            pr = yl * yl / wl + yr * yr / wr
                        else:
                            if sk:
                                for k in range(K):
                                    right[k] = tot[k] - left[k]
                                pr = sk_proxy(left, right, wl, wr, crit)
                            else:
                                pr = cart_proxy(left, tot, wl, wr, crit)
                        if pr > out[0]:
                            out[0] = pr
                            out[1] = f
                            out[2] = nl
                            out[3] = midpoint(Xt[f, work[f, i]], Xt[f, work[f, i + 1]])
            q = qn


@njit(cache=True)
def _node_stats(Qw, Wa, Ya, s, e, tot, crit, unit, lg):
    for k in range(tot.shape[0]):
        tot[k] = 0.0
    if crit == MSE:
        for i in range(s, e):
            w = 1.0 if unit else Wa[0, i]
            tot[0] += w
            tot[1] += Ya[0, i]
            tot[2] += Ya[0, i] * Ya[0, i] / w
    else:
        mask = (1 << lg) - 1
        for i in range(s, e):
            tot[Qw[0, i] & mask] += 1.0 if unit else Wa[0, i]


@njit(cache=True)
def _side_stats(Qw, Wa, Ya, f, s, e, out, crit, unit, lg):
    """Statistics of the rows ``[s, e)`` of feature ``f``'s order (the left child of a split)."""
    for k in range(out.shape[0]):
        out[k] = 0.0
    if crit == MSE:
        for i in range(s, e):
            w = 1.0 if unit else Wa[f, i]
            out[0] += w
            out[1] += Ya[f, i]
            out[2] += Ya[f, i] * Ya[f, i] / w
    else:
        mask = (1 << lg) - 1
        for i in range(s, e):
            out[Qw[f, i] & mask] += 1.0 if unit else Wa[f, i]


@njit(cache=True)
def _split_node(A, s, e, tot, rule, buf, W):
    """Score node ``[s, e)`` of the call's rows ``A`` (statistics ``tot``, root weight ``W``)
    under the `ScanRule` ``rule``: returns (priority, feature, position, threshold); feature -1
    when the node stays a leaf (pure, too small or no valid split)."""
    crit = rule.crit
    out = buf.out
    p = A.work.shape[0]
    m = e - s
    if m < 2 * rule.min_leaf or m < 2 or stat_is_pure(tot, crit):
        return -np.inf, -1, 0, 0.0
    if rule.ties == TIES_SKLEARN:
        for g in range(p):
            buf.const[g] = not (A.Xt[g, A.work[g, e - 1]] > A.Xt[g, A.work[g, s]] + 1e-7)
        nf = sk_feature_order(buf.features, buf.rng, buf.const, rule.max_features, buf.order)
        feats = buf.order
    else:
        feats = _features_for_node(p, rule.max_features)
        nf = feats.shape[0]
    _scan(A, s, e, tot, feats, nf, rule, buf)
    if out[1] < 0:
        return -np.inf, -1, 0, 0.0
    f = int(out[1])
    pos = int(out[2])
    if rule.ties == TIES_SKLEARN:
        left = buf.left
        right = buf.right
        _side_stats(A.Qw, A.Wa, A.Ya, f, s, s + pos, left, crit, rule.unit, rule.lg)
        for k in range(tot.shape[0]):
            right[k] = tot[k] - left[k]
        w = stat_weight(tot, crit)
        wl = stat_weight(left, crit)
        wr = w - wl
        imp = (w / W) * (sk_impurity(tot, w, crit) - wr / w * sk_impurity(right, wr, crit)
                         - wl / w * sk_impurity(left, wl, crit))
    else:
        imp = out[0] - cart_node_term(tot, crit)
    return imp, f, pos, out[3]


@njit(cache=True)
def _sift_up(h_key, h_id, hole, key, node):
    """Place (key, node) at ``hole`` or above: a parent moves down only when strictly smaller
    (the C++ standard library's push_heap)."""
    parent = (hole - 1) // 2
    while hole > 0 and h_key[parent] < key:
        h_key[hole] = h_key[parent]
        h_id[hole] = h_id[parent]
        hole = parent
        parent = (hole - 1) // 2
    h_key[hole] = key
    h_id[hole] = node


@njit(cache=True)
def _heap_push(h_key, h_id, n, key, node):
    """push_heap of (key, node) onto the max-heap ``h[:n]``; returns n + 1."""
    _sift_up(h_key, h_id, n, key, node)
    return n + 1


@njit(cache=True)
def _heap_pop(h_key, h_id, n):
    """pop_heap then back/pop_back: returns (node, n - 1). The hole left at the top descends
    along the larger child (the left one when neither is strictly larger) to the bottom, then
    the former last element is pushed up from there."""
    top = h_id[0]
    n -= 1
    if n == 0:
        return top, 0
    hole = 0
    child = 0
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if h_key[child] < h_key[child - 1]:
            child -= 1
        h_key[hole] = h_key[child]
        h_id[hole] = h_id[child]
        hole = child
    if (n & 1) == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        h_key[hole] = h_key[child - 1]
        h_id[hole] = h_id[child - 1]
        hole = child - 1
    _sift_up(h_key, h_id, hole, h_key[n], h_id[n])
    return top, n


@njit(cache=True)
def _partition_work(A, s, mid, e, f, T, has_q, weighted, regression):
    """Stable split of the segment ``[s, e)`` of every feature's order ``A.work`` but ``f``
    (already sorted by x_f: its left rows are the prefix ``[s, mid)``) into left rows first,
    moving the row-aligned ``Qw`` (when ``has_q``), ``Wa`` (``weighted``) and ``Ya``
    (``regression``) along, with the buffers ``T`` (`PartitionTmp`). Used by the CART
    generator on its copies and by the in-place states."""
    _, work, Qw, Wa, Ya = A
    flag, tmp_i, tmp_q, tmp_w, tmp_y = T
    p = work.shape[0]
    for i in range(s, mid):
        flag[work[f, i]] = 1
    for g in range(p):
        if g == f:
            continue
        a = s
        b = 0
        for i in range(s, e):
            r = work[g, i]
            if flag[r]:
                work[g, a] = r
                if has_q:
                    Qw[g, a] = Qw[g, i]
                if weighted:
                    Wa[g, a] = Wa[g, i]
                if regression:
                    Ya[g, a] = Ya[g, i]
                a += 1
            else:
                tmp_i[b] = r
                if has_q:
                    tmp_q[b] = Qw[g, i]
                if weighted:
                    tmp_w[b] = Wa[g, i]
                if regression:
                    tmp_y[b] = Ya[g, i]
                b += 1
        for i in range(b):
            work[g, a + i] = tmp_i[i]
            if has_q:
                Qw[g, a + i] = tmp_q[i]
            if weighted:
                Wa[g, a + i] = tmp_w[i]
            if regression:
                Ya[g, a + i] = tmp_y[i]
    for i in range(s, mid):
        flag[work[f, i]] = 0


@njit(cache=True)
def _state_copies(Xt, RS, yc, S, Q, packed, regression):
    """The row-aligned arrays of a generator call on state ``S`` (see above): ``Qw`` (a copy of
    the packed ``Q``, or ranks computed here), ``Wa``/``Ya`` (1 x 1 unless weighted /
    regression), whether the weights are all 1, and the class bits ``lg``."""
    p, m = S.shape
    K = RS.shape[1]
    unit = True  # every weight is 1: no Wa
    if not packed:
        for i in range(m):
            r = S[0, i]
            if (RS[r, 0] if regression else RS[r, yc[r]]) != 1.0:
                unit = False
                break
    lg = QBITS
    if packed:
        Qw = Q.copy()
    else:
        while (1 << lg) < K:
            lg += 1
        Qw = pack_ranks(Xt, S, yc, lg, not regression)
    Wa = np.empty((p, m) if not unit else (1, 1))
    Ya = np.empty((p, m) if regression else (1, 1))
    if regression or not unit:
        for g in range(p):
            for i in range(m):
                r = S[g, i]
                if not unit:
                    Wa[g, i] = RS[r, 0] if regression else RS[r, yc[r]]
                if regression:
                    Ya[g, i] = RS[r, 1]
    return Qw, Wa, Ya, unit, lg


@njit(cache=True)
def cart_candidates(Xt, RS, yc, S, Q, packed, cfg, flag, inplace=False):
    """Best-first CART with at most ``cfg.max_leaves`` leaves (scikit-learn's
    ``max_leaf_nodes``, no depth limit) on the state's rows ``S`` (with its packed ranks ``Q``
    when ``packed``), with the settings ``cfg`` (`CartSettings`: criterion, min_leaf,
    max_features, seed, ties, sk_seed). Returns the split of every internal node in
    node-creation order (features, thresholds) and the CART tree's node count.

    A node is a leaf when it is pure, has fewer than ``2 * min_leaf`` rows or no valid split;
    the open node with the largest impurity improvement is split next; ties follow ``ties``
    (`TIES_INDEX` or `TIES_SKLEARN` with scikit-learn's per-fit seed ``sk_seed``, see above).
    ``seed`` drives the ``max_features`` draws of `TIES_INDEX`. ``flag`` is a zeroed uint8
    scratch array of length n (left zeroed on return). ``inplace`` (packed states only):
    partition ``S`` and ``Q`` themselves instead of copies and merge every split back at the
    end (`merge_back`), so a large state costs no second p x m copy of each."""
    p, m = S.shape
    K = RS.shape[1]
    max_leaves = cfg.max_leaves
    crit = cfg.crit
    ties = cfg.ties
    regression = crit == MSE
    if cfg.max_features < p and ties == TIES_INDEX:
        np.random.seed(cfg.seed)
    inplace = inplace and packed
    if inplace:  # unit-weight classification: no Wa / Ya, and Q is used as it is
        work = S
        Qw, Wa, Ya, unit, lg = Q, np.empty((1, 1)), np.empty((1, 1)), True, QBITS
    else:
        work = S.copy()
        Qw, Wa, Ya, unit, lg = _state_copies(Xt, RS, yc, S, Q, packed, regression)
    weighted = not unit
    sp = np.empty((max(max_leaves, 1), 4), np.int64)  # splits partitioned: s, mid, e, f
    n_sp = 0
    cap = 2 * max_leaves + 1
    n_start = np.zeros(cap, np.int64)
    n_end = np.zeros(cap, np.int64)
    n_imp = np.full(cap, -np.inf)
    n_feat = np.full(cap, -1, np.int64)
    n_pos = np.zeros(cap, np.int64)
    n_thr = np.zeros(cap)
    n_split = np.zeros(cap, np.bool_)
    h_key = np.empty(cap)
    h_id = np.empty(cap, np.int64)
    nh = 0
    tot = np.zeros(K)
    left = np.zeros(K)
    right = np.zeros(K)
    out = np.zeros(4)
    tmp_i = np.empty(m, np.int32)
    tmp_q = np.empty(m, np.int32)
    tmp_w = np.empty(m if weighted else 1)
    tmp_y = np.empty(m if regression else 1)
    rng = np.zeros(1, np.int64)
    rng[0] = cfg.sk_seed
    buf = ScanScratch(left, right, out, np.arange(p), rng, np.zeros(p, np.bool_),
                      np.empty(p, np.int64))
    rule = ScanRule(crit, cfg.min_leaf, cfg.max_features, unit, lg, ties)
    A = CartRows(Xt, work, Qw, Wa, Ya)
    T = PartitionTmp(flag, tmp_i, tmp_q, tmp_w, tmp_y)

    _node_stats(Qw, Wa, Ya, 0, m, tot, crit, unit, lg)
    W = stat_weight(tot, crit)
    n_start[0] = 0
    n_end[0] = m
    n_nodes = 1
    if max_leaves >= 2:
        imp, f, pos, thr = _split_node(A, 0, m, tot, rule, buf, W)
        n_imp[0], n_feat[0], n_pos[0], n_thr[0] = imp, f, pos, thr
    nh = _heap_push(h_key, h_id, nh, n_imp[0] if n_feat[0] >= 0 else 0.0, 0)
    n_splits = 0
    while n_splits < max_leaves - 1 and nh > 0:
        if ties == TIES_SKLEARN:
            best, nh = _heap_pop(h_key, h_id, nh)
            if n_feat[best] < 0:
                continue
        else:
            best = -1
            for i in range(n_nodes):
                if n_feat[i] >= 0 and not n_split[i] and (best < 0 or n_imp[i] > n_imp[best]):
                    best = i
            if best < 0:
                break
        n_split[best] = True
        n_splits += 1
        s = n_start[best]
        e = n_end[best]
        f = n_feat[best]
        mid = s + n_pos[best]
        last = n_splits == max_leaves - 1
        if not last:
            _partition_work(A, s, mid, e, f, T, True, weighted, regression)
            sp[n_sp, 0], sp[n_sp, 1], sp[n_sp, 2], sp[n_sp, 3] = s, mid, e, f
            n_sp += 1
        for c in range(2):
            j = n_nodes
            n_nodes += 1
            n_start[j] = s if c == 0 else mid
            n_end[j] = mid if c == 0 else e
            if last:
                continue
            _node_stats(Qw, Wa, Ya, n_start[j], n_end[j], tot, crit, unit, lg)
            imp, fj, pos, thr = _split_node(A, n_start[j], n_end[j], tot, rule, buf, W)
            n_imp[j], n_feat[j], n_pos[j], n_thr[j] = imp, fj, pos, thr
        if not last and ties == TIES_SKLEARN:
            for j in (n_nodes - 2, n_nodes - 1):
                nh = _heap_push(h_key, h_id, nh, n_imp[j] if n_feat[j] >= 0 else 0.0, j)
    if inplace:  # undo the partitions, innermost (latest) first
        for k in range(n_sp - 1, -1, -1):
            merge_back(work, Qw, sp[k, 0], sp[k, 1], sp[k, 2], sp[k, 3], Xt, tmp_i, tmp_q, True)
    cf = np.empty(n_splits, np.int64)
    ct = np.empty(n_splits)
    j = 0
    for i in range(n_nodes):
        if n_split[i]:
            cf[j] = n_feat[i]
            ct[j] = n_thr[i]
            j += 1
    return cf, ct, n_nodes


@njit(cache=True)
def partition_side(S, Q, Xt, f, t, flag, left, packed):
    """One child of splitting state ``S`` (and its packed ranks ``Q``) by ``x_f <= t``
    (``left``: the rows with ``x_f <= t``): every feature's sorted order is a stable
    subsequence of the parent's, so no state sorts; a state's two children need not be alive
    at the same time. ``Q`` is ignored (and a
    1 x 1 array returned) unless ``packed``."""
    p, m = S.shape
    n = 0
    for i in range(m):
        r = S[0, i]
        if (Xt[f, r] <= t) == left:
            flag[r] = 1
            n += 1
    Sx = np.empty((p, n), np.int32)
    Qx = np.empty((p, n) if packed else (1, 1), np.int32)
    for g in range(p):
        a = 0
        for i in range(m):
            r = S[g, i]
            if flag[r]:
                Sx[g, a] = r
                if packed:
                    Qx[g, a] = Q[g, i]
                a += 1
    for i in range(m):
        flag[S[0, i]] = 0
    return Sx, Qx


# ----------------------------------------------------------------------------- in-place states
# Large inputs: one global ``GS`` (and ``GQ``) holds every feature's sorted rows; a state is a
# column segment [s, e) of it. Splitting a state partitions its segment in place (left rows
# first, each side still sorted); once both children are solved `merge_back` restores the
# parent's order by a stable merge on (value rank, row id), which is how `presort` ordered it.
# Memory: two p x n arrays for the whole search instead of sorted copies along the DFS path.


@njit(cache=True)
def partition_inplace(G, s, e, f, t, T, packed):
    """Stable in-place split of segment [s, e) of the global orders ``G`` (`CartRows`: ``Xt``,
    ``GS``, ``GQ``; see `inplace_orders`) by ``x_f <= t``, with the buffers ``T``
    (`PartitionTmp`); returns the boundary. The left rows are a prefix of feature f's order,
    so counting them finds the boundary."""
    nl = 0
    Xt = G.Xt
    GS = G.work
    while s + nl < e and Xt[f, GS[f, s + nl]] <= t:
        nl += 1
    _partition_work(G, s, s + nl, e, f, T, packed, False, False)
    return s + nl


def inplace_orders(Xt, GS, GQ, flag):
    """(`CartRows`, `PartitionTmp`) of the in-place states over the global orders ``GS`` (and
    packed ranks ``GQ``, 1 x 1 when unpacked) for `partition_inplace` and `merge_back`, with
    the zeroed uint8 ``flag`` of length n and fresh temporaries."""
    m = GS.shape[1]
    dummy = np.empty((1, 1))
    dtmp = np.empty(1)
    return (CartRows(Xt, GS, GQ, dummy, dummy),
            PartitionTmp(flag, np.empty(m, np.int32), np.empty(m, np.int32), dtmp, dtmp))


@njit(cache=True)
def merge_back(GS, GQ, s, mid, e, f, Xt, tmp_s, tmp_q, packed):
    """Undo `partition_inplace`: merge [s, mid) and [mid, e) of every feature but ``f`` by
    (value, row id)."""
    p = GS.shape[0]
    for g in range(p):
        if g == f:
            continue
        nl = mid - s
        for i in range(nl):
            tmp_s[i] = GS[g, s + i]
            if packed:
                tmp_q[i] = GQ[g, s + i]
        a = 0
        b = mid
        o = s
        while a < nl and b < e:
            ra = tmp_s[a]
            rb = GS[g, b]
            if packed:
                ka = tmp_q[a] // QSHIFT
                kb = GQ[g, b] // QSHIFT
            else:
                ka = Xt[g, ra]
                kb = Xt[g, rb]
            if ka < kb or (ka == kb and ra < rb):
                GS[g, o] = ra
                if packed:
                    GQ[g, o] = tmp_q[a]
                a += 1
            else:
                GS[g, o] = rb
                if packed:
                    GQ[g, o] = GQ[g, b]
                b += 1
            o += 1
        while a < nl:
            GS[g, o] = tmp_s[a]
            if packed:
                GQ[g, o] = tmp_q[a]
            a += 1
            o += 1


@njit(cache=True)
def topb_candidates(Xt, RS, yc, S, B, min_leaf, crit):
    """Top-B (Blanc et al. 2023, as in the DPDT paper §5.2): the best Gini threshold of every
    feature, then the B features with the best such split (ties: lower feature index).
    Regression (``crit == MSE``) scores by squared error instead of Gini."""
    p, m = S.shape
    K = RS.shape[1]
    crit = MSE if crit == MSE else GINI
    Qw, Wa, Ya, unit, lg = _state_copies(Xt, RS, yc, S, np.zeros((1, 1), np.int32), False,
                                         crit == MSE)
    tot = np.zeros(K)
    _node_stats(Qw, Wa, Ya, 0, m, tot, crit, unit, lg)
    out = np.zeros(4)
    buf = ScanScratch(np.zeros(K), np.zeros(K), out, np.zeros(1, np.int64),
                      np.zeros(1, np.int64), np.zeros(1, np.bool_), np.zeros(1, np.int64))
    rule = ScanRule(crit, min_leaf, p, unit, lg, TIES_INDEX)
    A = CartRows(Xt, S, Qw, Wa, Ya)
    score = np.full(p, -np.inf)
    thr = np.zeros(p)
    one = np.zeros(1, np.int64)
    for f in range(p):
        one[0] = f
        _scan(A, 0, m, tot, one, 1, rule, buf)
        if out[1] >= 0:
            score[f] = out[0]
            thr[f] = out[3]
    order = np.argsort(-score, kind="mergesort")
    nb = 0
    for i in range(p):
        if score[order[i]] > -np.inf and nb < B:
            nb += 1
    cf = np.empty(nb, np.int64)
    ct = np.empty(nb)
    for i in range(nb):
        cf[i] = order[i]
        ct[i] = thr[order[i]]
    return cf, ct


@njit(cache=True)
def midpoint_candidates(Xt, S, min_leaf, n_per_feature):
    """Thresholds between consecutive distinct values of every feature over the state's rows
    (both sides keeping ``min_leaf`` rows): all of them when ``n_per_feature <= 0`` (the
    exhaustive generator), else those nearest the ``i / n_per_feature`` quantiles (the quantile
    generator). Feature order, then increasing threshold."""
    p, m = S.shape
    cf = np.empty(p * max(m - 1, 1), np.int64)
    ct = np.empty(p * max(m - 1, 1))
    c = 0
    pos = np.empty(max(m - 1, 1), np.int64)
    for f in range(p):
        npos = 0
        for i in range(m - 1):
            nl = i + 1
            if nl < min_leaf or m - nl < min_leaf:
                continue
            if Xt[f, S[f, i + 1]] > Xt[f, S[f, i]]:
                pos[npos] = i
                npos += 1
        if n_per_feature <= 0:
            for j in range(npos):
                i = pos[j]
                cf[c] = f
                ct[c] = midpoint(Xt[f, S[f, i]], Xt[f, S[f, i + 1]])
                c += 1
        else:
            last = -1
            for q in range(1, n_per_feature):
                target = q * m / n_per_feature - 1.0
                best = -1
                bd = np.inf
                for j in range(npos):
                    d = abs(pos[j] - target)
                    if d < bd:
                        bd = d
                        best = j
                if best < 0 or best <= last:
                    continue
                last = best
                i = pos[best]
                cf[c] = f
                ct[c] = midpoint(Xt[f, S[f, i]], Xt[f, S[f, i + 1]])
                c += 1
    return cf[:c], ct[:c]


@njit(cache=True)
def child_stats(Xt, RS, yc, S, feats, thrs, Z1, Z2, tot, crit):
    """For each candidate (feats[c], thrs[c]) on the state ``S`` (statistics ``tot``): the left
    child's statistics, row count and Zobrist hashes (the right child's follow by
    subtraction), and both children's leaf losses and purity. The left child is a prefix of
    ``S[f]`` (rows sorted by feature f), so only that prefix is read."""
    nc = feats.shape[0]
    K = RS.shape[1]
    m = S.shape[1]
    L = np.zeros((nc, K))
    cnt = np.zeros(nc, np.int64)
    h1 = np.zeros(nc, np.uint64)
    h2 = np.zeros(nc, np.uint64)
    eL = np.zeros(nc)
    eR = np.zeros(nc)
    pL = np.zeros(nc, np.bool_)
    pR = np.zeros(nc, np.bool_)
    right = np.zeros(K)
    for c in range(nc):
        f = feats[c]
        t = thrs[c]
        a = np.uint64(0)
        b = np.uint64(0)
        n = 0
        while n < m:
            r = S[f, n]
            if Xt[f, r] > t:
                break
            if crit == MSE:
                for k in range(K):
                    L[c, k] += RS[r, k]
            else:
                L[c, yc[r]] += RS[r, yc[r]]
            a += Z1[r]
            b += Z2[r]
            n += 1
        cnt[c] = n
        h1[c] = a
        h2[c] = b
        for k in range(K):
            right[k] = tot[k] - L[c, k]
        eL[c] = leaf_error(L[c], crit)
        eR[c] = leaf_error(right, crit)
        pL[c] = stat_is_pure(L[c], crit)
        pR[c] = stat_is_pure(right, crit)
    return L, cnt, h1, h2, eL, eR, pL, pR


@njit(cache=True)
def leaf_child_stats_packed(Xt, S, Q, feats, thrs, tot):
    """`child_stats` for a packed state whose children are leaves (no hashes needed): the left
    child of (f, t) is the prefix of ``S[f]`` found by binary search on the values, and its
    class counts are read sequentially from ``Q[f]``."""
    nc = feats.shape[0]
    K = tot.shape[0]
    m = S.shape[1]
    L = np.zeros((nc, K))
    cnt = np.zeros(nc, np.int64)
    eL = np.zeros(nc)
    eR = np.zeros(nc)
    right = np.zeros(K)
    for c in range(nc):
        f = feats[c]
        t = thrs[c]
        lo = 0
        hi = m  # first position with value > t
        while lo < hi:
            md = (lo + hi) // 2
            if Xt[f, S[f, md]] <= t:
                lo = md + 1
            else:
                hi = md
        for i in range(lo):
            L[c, Q[f, i] & (QSHIFT - 1)] += 1.0
        cnt[c] = lo
        for k in range(K):
            right[k] = tot[k] - L[c, k]
        eL[c] = leaf_error(L[c], GINI)
        eR[c] = leaf_error(right, GINI)
    return L, cnt, eL, eR


@njit(cache=True)
def row_hash(rows, Z1, Z2):
    a = np.uint64(0)
    b = np.uint64(0)
    for i in range(rows.shape[0]):
        a += Z1[rows[i]]
        b += Z2[rows[i]]
    return a, b


@njit(cache=True)
def presort(Xt):
    """Every feature's row order (stable: ties by row id), as int32 ``p x n``."""
    p, n = Xt.shape
    S = np.empty((p, n), np.int32)
    for f in range(p):
        S[f] = np.argsort(Xt[f], kind="mergesort").astype(np.int32)
    return S
