"""Compiled kernels of the NGI family (Zhang & Gionis, DMKD 2023; ``treebench.algorithms.ngi``).

Objects are the *coalesced* training rows (identical feature vectors merged, §6 "Datasets"):
``X`` is their 0/1 matrix (uint8, one row per object), ``y`` their class index, ``w`` their
probability ``p(x)`` (multiplicity / n, so ``Σ w = 1``). A node ``S`` is a contiguous segment
``idx[start:end]`` of a permutation of the objects (partitioned in place, zeros first).

`node_scores` computes, for every test ``j`` of a node, in one pass over the node's objects and
the tests (O(m·|S|)), the per-branch masses, weighted class masses and unweighted class object
counts, and from them every score of the family:

* ``B = p(S) − p(S_h)``, ``S_h`` the branch with the most objects (ties: branch 0) (Eq. 2);
* ``E``, the re-weighted marginal gain of the functions ``f̃_i`` (§4), in closed form. With
  ``g_i(S) = max(p(S) − a_i, 0)·φ(S) / ((1 − a_i)·φ(X))`` (so ``1 − f̃_i = g_i`` at the node
  reached by ``x_i``) and ``a_i = max(p(x_i), θ)``, the marginal ratio is ``1 − g_i(S_v)/g_i(S)``
  and ``E = Σ_v Σ_{i∈S_v} w_i − (φ(S_v)/φ(S)) · Σ_{i∈S_v} w_i·max(p(S_v) − a_i, 0)/(p(S) − a_i)``.
  Inside a branch with ``p(S_v) > θ`` every ``a_i ≤ p(S_v)``, so the inner sum is
  ``p(S_v)·U_v − V_v`` with ``U_v = Σ w_i/(p(S) − a_i)`` and ``V_v = Σ w_i·a_i/(p(S) − a_i)``;
  with ``p(S_v) ≤ θ`` it is 0. Two per-object sums per branch, hence O(|S|) per test;
* ``D`` for entropy (log 2) and Gini, in the paper's form ``p(S)·h(S) − Σ_v p(S_v)·h(S_v)``
  or the authors' code's ``p(S)·(h(S) − Σ_v p(S_v)·h(S_v))`` (absolute masses);
* IP: ``p(S)·φ(S) − Σ_v p(S_v)·φ(S_v)``; BAL: ``|p(S_1) − p(S_0)|`` (lower is better);
* information and Gini gains ``h(S) − Σ_v (p(S_v)/p(S))·h(S_v)`` (C4.5 / CART).

`grow` builds the whole tree with an explicit stack (no Python per node).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.criteria import entropy_sum, gini_sum, hetero_pairs

# method codes (kept in sync with ``ngi.METHODS``)
M_EC45, M_ECART, M_ASR, M_IP, M_BAL, M_BAL_FIXED, M_C45, M_CART, M_CC45, M_CCART = range(10)

#: the inputs of `grow` (`ngi_problem` builds it with fixed field types)
NgiProblem = namedtuple(
    "NgiProblem",
    ["X", "y", "w", "cost", "n_classes", "method", "lam", "theta", "min_objects", "d_paper"],
)

#: relative tolerance under which two scores are ties (first test in column order wins)
TIE_RTOL = 1e-12
#: p(S) <= θ + THETA_TOL stops a node (the authors' tolerance)
THETA_TOL = 1e-7


@njit(cache=True)
def node_scores(X, idx, start, end, y, w, theta, avail, n_classes, d_paper):
    """Scores of every test at the node ``idx[start:end]``; see the module docstring.

    Returns ``(split, B, E, D_entropy, D_gini, IP, BAL, gain_entropy, gain_gini)``, each of
    length m; ``split[j]`` is True when test ``j`` is available and sends objects both ways.
    Unavailable tests get zeros.
    """
    m = X.shape[1]
    k = n_classes
    N = end - start
    Wc = np.zeros(k)
    Kc = np.zeros(k)
    p = 0.0
    for t in range(start, end):
        i = idx[t]
        Wc[y[i]] += w[i]
        Kc[y[i]] += 1.0
        p += w[i]
    phi = hetero_pairs(Kc, float(N))
    n1 = np.zeros(m)
    W1 = np.zeros((m, k))
    K1 = np.zeros((m, k))
    U1 = np.zeros(m)
    V1 = np.zeros(m)
    Ut = 0.0
    Vt = 0.0
    for t in range(start, end):
        i = idx[t]
        wi = w[i]
        ai = max(wi, theta)
        den = p - ai
        ui = wi / den if den > 0.0 else 0.0
        vi = ui * ai
        Ut += ui
        Vt += vi
        yi = y[i]
        row = X[i]
        for j in range(m):
            if row[j]:
                n1[j] += 1.0
                W1[j, yi] += wi
                K1[j, yi] += 1.0
                U1[j] += ui
                V1[j] += vi
    h_ent = entropy_sum(Wc, p)
    h_gin = gini_sum(Wc, p)
    split = np.zeros(m, dtype=np.bool_)
    B = np.zeros(m)
    E = np.zeros(m)
    De = np.zeros(m)
    Dg = np.zeros(m)
    IP = np.zeros(m)
    BAL = np.zeros(m)
    Ge = np.zeros(m)
    Gg = np.zeros(m)
    W0 = np.zeros(k)
    K0 = np.zeros(k)
    for j in range(m):
        if not avail[j]:
            continue
        nn1 = n1[j]
        nn0 = N - nn1
        split[j] = nn1 > 0 and nn0 > 0
        p1 = 0.0
        for c in range(k):
            W0[c] = Wc[c] - W1[j, c]
            K0[c] = Kc[c] - K1[j, c]
            p1 += W1[j, c]
        p0 = 0.0
        for c in range(k):
            p0 += W0[c]
        # B: the branch with the most objects is S_h (ties: branch 0)
        B[j] = p - (p0 if nn0 >= nn1 else p1)
        # E (closed form)
        phi1 = hetero_pairs(K1[j], nn1)
        phi0 = hetero_pairs(K0, nn0)
        e = p0 + p1
        if phi > 0.0:
            if p0 > theta:
                e -= (phi0 / phi) * (p0 * (Ut - U1[j]) - (Vt - V1[j]))
            if p1 > theta:
                e -= (phi1 / phi) * (p1 * U1[j] - V1[j])
        E[j] = e
        he0 = entropy_sum(W0, p0)
        he1 = entropy_sum(W1[j], p1)
        hg0 = gini_sum(W0, p0)
        hg1 = gini_sum(W1[j], p1)
        if d_paper:
            De[j] = p * h_ent - (p0 * he0 + p1 * he1)
            Dg[j] = p * h_gin - (p0 * hg0 + p1 * hg1)
        else:
            De[j] = p * (h_ent - (p0 * he0 + p1 * he1))
            Dg[j] = p * (h_gin - (p0 * hg0 + p1 * hg1))
        IP[j] = p * phi - (p0 * phi0 + p1 * phi1)
        BAL[j] = abs(p1 - p0) if split[j] else 0.0
        if p > 0.0:
            Ge[j] = h_ent - (p0 * he0 + p1 * he1) / p
            Gg[j] = h_gin - (p0 * hg0 + p1 * hg1) / p
    return split, B, E, De, Dg, IP, BAL, Ge, Gg


@njit(cache=True)
def method_scores(p, scores, avail):
    """The score each method maximises, and which tests are candidates: the tests that split
    the node, or every unused test for the authors' BAL and for EC4.5/ECART with the authors'
    ``D`` (there a test that does not split scores ``λ·p(S)·h(S)·(1 − p(S))/c(d)``, which a
    cheap test can make the best; with the paper's ``D`` it scores 0 and never wins)."""
    split, B, E, De, Dg, IP, BAL, Ge, Gg = scores
    method = p.method
    lam = p.lam
    cost = p.cost
    d_paper = p.d_paper
    m = B.shape[0]
    s = np.zeros(m)
    cand = split.copy()
    for j in range(m):
        if method == M_EC45:
            s[j] = (B[j] + E[j] + lam * De[j]) / cost[j]
        elif method == M_ECART:
            s[j] = (B[j] + E[j] + lam * Dg[j]) / cost[j]
        elif method == M_ASR:
            s[j] = (B[j] + E[j]) / cost[j]
        elif method == M_IP:
            s[j] = IP[j] / cost[j]
        elif method == M_BAL or method == M_BAL_FIXED:
            s[j] = -BAL[j]
        elif method == M_C45:
            s[j] = Ge[j]
        elif method == M_CART:
            s[j] = Gg[j]
        elif method == M_CC45:
            s[j] = Ge[j] / cost[j]
        else:  # M_CCART
            s[j] = Gg[j] / cost[j]
        if method == M_BAL or (not d_paper and (method == M_EC45 or method == M_ECART)):
            cand[j] = avail[j]
    return s, cand


@njit(cache=True)
def select(s, cand):
    """First candidate (column order) within the tie tolerance of the best score; -1 if none."""
    best = -np.inf
    for j in range(s.shape[0]):
        if cand[j] and s[j] > best:
            best = s[j]
    if best == -np.inf:
        return -1
    tol = TIE_RTOL * max(1.0, abs(best))
    for j in range(s.shape[0]):
        if cand[j] and s[j] >= best - tol:
            return j
    return -1


def ngi_problem(X, y, w, cost, n_classes, method, lam, theta, min_objects, d_paper):
    """The inputs of `grow` as one record (`NgiProblem`), with the field types every fit and
    the warm-up share: coalesced objects ``X`` (uint8), ``y``, ``w``; test costs; the method
    code and its parameters; ``d_paper`` the paper's form of ``D``."""
    return NgiProblem(np.ascontiguousarray(X, np.uint8), np.ascontiguousarray(y, np.int64),
                      np.ascontiguousarray(w, np.float64), np.ascontiguousarray(cost, np.float64),
                      int(n_classes), int(method), float(lam), float(theta), int(min_objects),
                      bool(d_paper))


@njit(cache=True)
def grow(p, capacity):
    """Grow the tree of one method on the coalesced objects (problem ``p``, `ngi_problem`).

    Returns ``(n_nodes, feature, left, right, parent, value, objcount, n_scored)`` where ``value``
    holds weighted class masses and ``objcount`` class object counts per node (children get
    larger ids than their parent; `ngi` renumbers in pre-order);
    ``n_nodes == -1`` means ``capacity`` was too small (call again with more).
    """
    X = p.X
    y = p.y
    w = p.w
    n_classes = p.n_classes
    theta = p.theta
    n, m = X.shape
    idx = np.arange(n)
    feature = -np.ones(capacity, dtype=np.int64)
    left = -np.ones(capacity, dtype=np.int64)
    right = -np.ones(capacity, dtype=np.int64)
    parent = -np.ones(capacity, dtype=np.int64)
    value = np.zeros((capacity, n_classes))
    objcount = np.zeros((capacity, n_classes))
    # stack of pending nodes: id, start, end
    st_id = np.zeros(capacity, dtype=np.int64)
    st_a = np.zeros(capacity, dtype=np.int64)
    st_b = np.zeros(capacity, dtype=np.int64)
    sp = 0
    st_id[0] = 0
    st_a[0] = 0
    st_b[0] = n
    sp = 1
    n_nodes = 1
    n_scored = 0
    avail = np.empty(m, dtype=np.bool_)
    while sp > 0:
        sp -= 1
        node = st_id[sp]
        a = st_a[sp]
        b = st_b[sp]
        mass = 0.0
        for t in range(a, b):
            i = idx[t]
            value[node, y[i]] += w[i]
            objcount[node, y[i]] += 1.0
            mass += w[i]
        if b - a == 0:
            continue  # an empty branch of a non-splitting test (authors' BAL): a leaf
        n_present = 0
        for c in range(n_classes):
            if objcount[node, c] > 0:
                n_present += 1
        if n_present <= 1 or mass <= theta + THETA_TOL or b - a <= p.min_objects:
            continue
        for j in range(m):
            avail[j] = True
        anc = parent[node]
        while anc >= 0:
            avail[feature[anc]] = False
            anc = parent[anc]
        scores = node_scores(X, idx, a, b, y, w, theta, avail, n_classes, p.d_paper)
        s, cand = method_scores(p, scores, avail)
        for j in range(m):
            if avail[j]:
                n_scored += 1
        f = select(s, cand)
        if f < 0:
            continue
        if n_nodes + 2 > capacity:
            return -1, feature, left, right, parent, value, objcount, n_scored
        # partition idx[a:b]: zeros first (left), stable
        lo = a
        tmp = np.empty(b - a, dtype=np.int64)
        nt = 0
        for t in range(a, b):
            i = idx[t]
            if X[i, f] == 0:
                idx[lo] = i
                lo += 1
            else:
                tmp[nt] = i
                nt += 1
        for t in range(nt):
            idx[lo + t] = tmp[t]
        feature[node] = f
        lid = n_nodes
        rid = n_nodes + 1
        n_nodes += 2
        left[node] = lid
        right[node] = rid
        parent[lid] = node
        parent[rid] = node
        # push right first so the left subtree is grown first (ids still grow downwards)
        st_id[sp] = rid
        st_a[sp] = lo
        st_b[sp] = b
        sp += 1
        st_id[sp] = lid
        st_a[sp] = a
        st_b[sp] = lo
        sp += 1
    return n_nodes, feature, left, right, parent, value, objcount, n_scored
