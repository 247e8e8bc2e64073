"""Split criteria: every impurity function and split score of treebench's learners, by named
code, with the per-side statistics of a split and the feature ranking with its exact tie rule.

Codes (one space for every learner): `ENTROPY` (log2 in the Top-k/greedy/NGI forms, natural
log in scikit-learn's), `GINI`, `KEARNS_MANSOUR`, `ERROR`, `MSE` (regression: statistics
``[w, Σwy, Σwy²]``), `PAIRS` (NGI's heterogeneous pairs φ). `CODES` maps the names users write
to them.

The same impurity appears in three float forms on purpose; each learner's published or
reference numbers depend on its form, so they are kept apart, each under its own name:

* the Top-k form (Blanc et al., NeurIPS 2023, §3.1, Definition 2): `impurity`,
  `child_impurity`: sequential subtraction (``1 - p_1² - p_2² ...``, ``-p_1 log2 p_1 - ...``);
* the clamped sum form (Shalev-Shwartz & Ben-David, §18.2.1 gains; Zhang & Gionis, DMKD 2023,
  §5 ``D`` and the pruning risk ``R = p·h``): ``max(1 - Σ q², 0)`` and ``max(-Σ q log2 q, 0)``,
  NumPy in `impurity_np` / `node_risk_np` (greedy, NGI's pruning) and compiled in `gini_sum`
  / `entropy_sum` (NGI's kernels), so NGI's kernels and its pruning agree bit for bit;
* scikit-learn's CART forms (Kohler et al., KDD 2025, §5.2 "Calls to CART", matching
  ``sklearn/tree/_criterion.pyx``): the proxies `cart_proxy` / `cart_node_term` (natural
  log via `xlogx`), the node impurity `sk_impurity` (log2 as ``ln x / ln 2``), `sk_proxy`,
  `sk_gini_proxy`, and the leaf loss `leaf_error`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# criterion codes
ENTROPY, GINI, KEARNS_MANSOUR, ERROR, MSE, PAIRS = 0, 1, 2, 3, 4, 5
#: the names users write (configs, estimator parameters) -> codes
CODES = {"entropy": ENTROPY, "gini": GINI, "kearns-mansour": KEARNS_MANSOUR, "error": ERROR,
         "mse": MSE, "pairs": PAIRS}
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


# ------------------------------------------------------------------- the clamped sum form
def impurity_np(counts, crit):
    """Impurity of the class distribution of each row of ``counts`` (... x K weights), NumPy:
    `ENTROPY` ``max(-Σ p log2 p, 0)``, `GINI` ``max(1 - Σ p², 0)``, `ERROR` ``1 - max p``
    (Shalev-Shwartz & Ben-David §18.2.1). Rows with zero total get impurity 0."""
    counts = np.asarray(counts, dtype=np.float64)
    tot = counts.sum(axis=-1)
    safe = np.where(tot > 0, tot, 1.0)
    p = counts / safe[..., None]
    if crit == ENTROPY:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
        out = -terms.sum(axis=-1)
    elif crit == GINI:
        out = 1.0 - (p * p).sum(axis=-1)
    elif crit == ERROR:
        out = 1.0 - p.max(axis=-1)
    else:
        raise ValueError(f"impurity_np: unknown criterion code {crit!r}")
    return np.where(tot > 0, np.maximum(out, 0.0), 0.0)


def node_risk_np(value, objcount, crit):
    """NGI's node risk ``R = p·h`` of every node (Zhang & Gionis §6, cost-complexity pruning):
    ``p`` the node's mass (row sums of ``value``), ``h`` its `impurity_np`, or for `PAIRS` the
    heterogeneous pairs of its objects (``objcount``: class object counts), ``p·φ``."""
    p = value.sum(axis=1)
    if crit == PAIRS:
        n = objcount.sum(axis=1)
        return p * (n * n - (objcount**2).sum(axis=1)) / 2.0
    return p * impurity_np(value, crit)


@njit(cache=True)
def entropy_sum(counts, tot):
    """``max(-Σ q log2 q, 0)``, ``q = counts / tot`` (0 when ``tot <= 0``): the compiled twin of
    `impurity_np`'s entropy (NGI's ``h``, Zhang & Gionis §5)."""
    if tot <= 0.0:
        return 0.0
    h = 0.0
    for c in counts:
        if c > 0.0:
            q = c / tot
            h -= q * np.log2(q)
    return max(h, 0.0)


@njit(cache=True)
def gini_sum(counts, tot):
    """``max(1 - Σ q², 0)`` (the sum first, then the subtraction: not the Top-k form): the
    compiled twin of `impurity_np`'s Gini (NGI's ``h``, Zhang & Gionis §5)."""
    if tot <= 0.0:
        return 0.0
    s = 0.0
    for c in counts:
        q = c / tot
        s += q * q
    return max(1.0 - s, 0.0)


@njit(cache=True)
def hetero_pairs(kcounts, n):
    """NGI's φ (Zhang & Gionis §4, the IP criterion): heterogeneous pairs among ``n`` objects
    with class object counts ``kcounts``, ``(n² - Σ k_c²) / 2``."""
    s = 0.0
    for c in kcounts:
        s += c * c
    return (n * n - s) / 2.0


# ------------------------------------------------------------ scikit-learn's CART forms
@njit(cache=True)
def xlogx(v):
    """``v ln v`` (0 at 0)."""
    return v * np.log(v) if v > 0.0 else 0.0


@njit(cache=True)
def cart_proxy(left, tot, wl, wr, crit):
    """scikit-learn's proxy impurity improvement of a split (larger is better), from the left
    child's statistics and the node's: `GINI` ``Σ l_k²/w_l + Σ r_k²/w_r``, `ENTROPY`
    ``Σ (l_k ln l_k + r_k ln r_k) - w_l ln w_l - w_r ln w_r``, `MSE`
    ``(Σwy)_l²/w_l + (Σwy)_r²/w_r``."""
    K = left.shape[0]
    if crit == GINI:
        sl = 0.0
        sr = 0.0
        for k in range(K):
            a = left[k]
            b = tot[k] - a
            sl += a * a
            sr += b * b
        return sl / wl + sr / wr
    if crit == ENTROPY:
        s = 0.0
        for k in range(K):
            a = left[k]
            b = tot[k] - a
            s += xlogx(a) + xlogx(b)
        return s - xlogx(wl) - xlogx(wr)
    a = left[1]
    b = tot[1] - a
    return a * a / wl + b * b / wr


@njit(cache=True)
def cart_node_term(tot, crit):
    """The node's own term of `cart_proxy`: improvement = proxy - node term (w · impurity, up
    to a constant shared by node and children)."""
    K = tot.shape[0]
    if crit == GINI:
        w = 0.0
        s = 0.0
        for k in range(K):
            w += tot[k]
            s += tot[k] * tot[k]
        return s / w if w > 0 else 0.0
    if crit == ENTROPY:
        w = 0.0
        s = 0.0
        for k in range(K):
            w += tot[k]
            s += xlogx(tot[k])
        return s - xlogx(w)
    return tot[1] * tot[1] / tot[0] if tot[0] > 0 else 0.0


@njit(cache=True)
def stat_weight(tot, crit):
    """Total weight of a node's statistics (``tot[0]`` for `MSE`, else the class sum)."""
    if crit == MSE:
        return tot[0]
    s = 0.0
    for k in range(tot.shape[0]):
        s += tot[k]
    return s


@njit(cache=True)
def stat_is_pure(tot, crit):
    """A node that no split improves: one class present, or (`MSE`) a variance within
    ``1e-12`` of 0 relative to the mean square of its targets (no absolute floor: targets
    scaled by 1e-6 keep their tree)."""
    if crit == MSE:
        w = tot[0]
        if w <= 0:
            return True
        var = tot[2] / w - (tot[1] / w) ** 2
        return var <= 1e-12 * (tot[2] / w)
    nz = 0
    for k in range(tot.shape[0]):
        if tot[k] > 0:
            nz += 1
    return nz <= 1


@njit(cache=True)
def sk_impurity(c, w, crit):
    """scikit-learn's node impurity of class weights ``c`` (total ``w``): Gini 1 - Σ c_k²/w²,
    entropy -Σ (c_k/w) log2(c_k/w) (log2 as ln(x) / ln(2)); regression ``c = [w, Σwy, Σwy²]``:
    Σwy²/w - (Σwy/w)²."""
    if crit == MSE:
        return c[2] / w - (c[1] / w) * (c[1] / w)
    if crit == GINI:
        sq = 0.0
        for k in range(c.shape[0]):
            sq += c[k] * c[k]
        return 1.0 - sq / (w * w)
    ent = 0.0
    for k in range(c.shape[0]):
        if c[k] > 0.0:
            ck = c[k] / w
            ent -= ck * (np.log(ck) / np.log(2.0))
    return ent


@njit(cache=True)
def sk_proxy(left, right, wl, wr, crit):
    """scikit-learn's own proxy ``-w_r I(right) - w_l I(left)`` (`sk_impurity`; `MSE`: its
    ``(Σwy)_l²/w_l + (Σwy)_r²/w_r``), for the "sklearn" tie rule of DPDT's generator."""
    if crit == MSE:
        return left[1] * left[1] / wl + right[1] * right[1] / wr
    return -wr * sk_impurity(right, wr, crit) - wl * sk_impurity(left, wl, crit)


@njit(cache=True)
def sk_gini_proxy(sl2, sr2, wl, wr):
    """scikit-learn's Gini proxy -w_r (1 - Σr²/w_r²) - w_l (1 - Σl²/w_l²), from the sums of
    squared class weights (exact for integer weights, so equal to its own evaluation)."""
    return -wr * (1.0 - sr2 / (wr * wr)) - wl * (1.0 - sl2 / (wl * wl))


@njit(cache=True)
def leaf_error(st, crit):
    """Weighted loss of a leaf (DPDT's ``E``, Kohler et al. Eq. 1): misclassified mass (largest
    class predicted) or, for `MSE`, the weighted squared error around the weighted mean."""
    if crit == MSE:
        w = st[0]
        if w <= 0.0:
            return 0.0
        v = st[2] - st[1] * st[1] / w
        return v if v > 0.0 else 0.0
    s = 0.0
    mx = 0.0
    for k in range(st.shape[0]):
        s += st[k]
        if st[k] > mx:
            mx = st[k]
    return s - mx
