"""The DPDT solver: backward induction (Algorithm 1 of Kohler, Akrour & Preux, KDD 2025) over
the MDP of §4, memoised by (depth, row set), with the candidate generators of §5.2, the paper's
operation count and the exact α envelope. The estimators live in `treebench.algorithms.dpdt`;
the compiled kernels in `treebench.search.dpdt`."""

from __future__ import annotations

import time
from collections import namedtuple
from numbers import Integral

import numpy as np

from treebench.search import dpdt as K
from treebench.algorithms.base import majority_label
from treebench.tree.arrays import TreeBuilder


#: one child of a split, for `Solver.children_inplace`: its class statistics, leaf error,
#: whether it is terminal (a leaf without search) and its memo key (depth, size, h1, h2)
Child = namedtuple("Child", ["stats", "leaf_err", "terminal", "key"])


def budget_at(budgets, depth: int, generator: str) -> int:
    """B at ``depth``: the tuple's entry (depths beyond the tuple use 2), or the int at every
    depth. For ``cart`` B = 1 counts as 2 (§5.2: B = 1 is the
    greedy tree, whose one candidate is the split of a 2-leaf CART)."""
    if isinstance(budgets, Integral):
        b = int(budgets)
    else:
        seq = list(budgets)
        b = int(seq[depth]) if depth < len(seq) else 2
    if generator == "cart":
        b = max(b, 2)
    return b


class Solver:
    """Backward induction over the memoised MDP (Algorithm 1)."""

    def __init__(self, X, RS, crit, regression, est, alpha, deadline, seed, path, sk_seed=0):
        # one transposed copy (features contiguous); the row-major X is not kept
        self.Xt = np.ascontiguousarray(X.T)
        self.RS = RS
        # class index of every row (its statistics' non-zero column); zeros for regression
        self.yc = np.zeros(len(RS), np.int64) if regression else np.argmax(RS, axis=1)
        self.crit = crit
        self.regression = regression
        self.D = int(est.max_depth)
        self.gen = est.candidates
        self.budgets = est.budgets
        self.alpha = float(alpha)
        self.min_leaf = int(est.min_samples_leaf)
        self.max_features = _n_features(est.max_features, X.shape[1])
        self.deadline = deadline
        self.path = path
        rng = np.random.default_rng(0 if seed is None else seed)
        n = X.shape[0]
        self.Z1 = rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.Z2 = rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.seed = int(rng.integers(0, 2**31 - 1))
        # CART's tie rule (see search.dpdt): scikit-learn's draws the same per-fit seed for
        # every call, as the authors' code fits every CART with the same random_state
        self.ties = K.TIES_SKLEARN if getattr(est, "tie_break", "index") == "sklearn" else (
            K.TIES_INDEX)
        self.sk_seed = int(sk_seed)
        self.flag = np.zeros(n, np.uint8)
        # unweighted classification: states carry packed ranks/classes (see search.dpdt)
        self.packed = (not regression and RS.shape[1] < K.QSHIFT
                       and bool(np.all(RS[np.arange(n), self.yc] == 1.0)))
        self._noq = np.zeros((1, 1), np.int32)
        self.memo: dict = {}
        entry_bytes = 400 + (200 if path else 0)
        self.max_entries = max(1, int(est.cache_limit_mb * 2**20 / entry_bytes))
        self.stats = dict(states=0, cache_hits=0, candidates=0, generator_calls=0,
                          operations_distinct=0, timed_out=False, cache_full=False)

    # ---------------------------------------------------------------- leaves
    def leaf_err(self, st):
        if self.regression:
            w = st[0]
            return max(st[2] - st[1] * st[1] / w, 0.0) if w > 0 else 0.0
        return float(st.sum() - st.max())

    def weight(self, st):
        return float(st[0]) if self.regression else float(st.sum())

    # ---------------------------------------------------------------- generator
    def candidates(self, S, Q, d, inplace=False):
        B = budget_at(self.budgets, d, self.gen)
        g = self.gen
        if g == "cart":
            self.stats["generator_calls"] += 1
            cfg = K.cart_settings(B, self.crit, self.min_leaf, self.max_features,
                                  self.seed + self.stats["generator_calls"], self.ties,
                                  self.sk_seed)
            f, t, nodes = K.cart_candidates(self.Xt, self.RS, self.yc, S,
                                            Q if self.packed else self._noq, self.packed, cfg,
                                            self.flag, inplace)
            return f, t, int(nodes)
        if g == "topb":
            f, t = K.topb_candidates(self.Xt, self.RS, self.yc, S, B, self.min_leaf, self.crit)
        elif g == "quantile":
            f, t = K.midpoint_candidates(self.Xt, S, self.min_leaf, B + 1)
        else:
            f, t = K.midpoint_candidates(self.Xt, S, self.min_leaf, 0)
        self.stats["generator_calls"] += 1
        return f, t, int(f.shape[0])

    # ---------------------------------------------------------------- DP
    def terminal(self, st, m, d):
        """Whether the node is a leaf: the depth is spent, it is too small to split, or it is
        pure: no error (classification), or a squared error within rounding of its targets'
        second moment Σw·y² (regression; relative, so scaling the targets by any factor keeps
        the tree: an absolute floor made nodes of targets near 1e-6 "pure" and their trees not
        optimal)."""
        err = self.leaf_err(st)
        return d >= self.D or m < 2 * self.min_leaf or err <= (
            1e-12 * abs(st[2]) if self.regression else 0.0
        )

    def leaf_entry(self, st, err=None):
        if err is None:
            err = float(K.leaf_error(st, self.crit))
        leaf = (st,)
        hull = [(0.0, err, leaf)] if self.path else None
        return (err, leaf, 0, hull)

    def solve(self, S, Q, st, d, key, seg=None):
        """(cost, tree, operations of the unmemoised sub-MDP, envelope) of state ``S`` at ``d``;
        ``seg`` = (s, e) when ``S`` is the segment of the in-place global orders."""
        hit = self.memo.get(key)
        if hit is not None:
            self.stats["cache_hits"] += 1
            return hit
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.stats["timed_out"] = True
            return self.leaf_entry(st)
        self.stats["states"] += 1
        m = S.shape[1]
        err = float(K.leaf_error(st, self.crit))
        leaf = (st,)
        best_cost, best_tree = err, leaf
        feats, thrs, own_ops = self.candidates(S, Q, d, seg is not None)
        self.stats["operations_distinct"] += own_ops
        ops = own_ops
        W = self.weight(st)
        aW = self.alpha * W
        if self.packed and d + 1 >= self.D:  # leaf children: no hashes, no purity needed
            Lst, cnt, eL, eR = K.leaf_child_stats_packed(self.Xt, S, Q, feats, thrs, st)
        else:
            Lst, cnt, h1, h2, eL, eR, pL, pR = K.child_stats(
                self.Xt, self.RS, self.yc, S, feats, thrs, self.Z1, self.Z2, st, self.crit)
        ml = max(1, self.min_leaf)
        valid = (cnt >= ml) & (m - cnt >= ml)
        self.stats["candidates"] += int(valid.sum())
        nd = d + 1
        points = [(0.0, err, leaf)] if self.path else None
        if nd >= self.D:
            # children are leaves: vectorised Bellman backup
            costs = np.where(valid, aW + eL + eR, np.inf)
            if costs.size:
                c = int(np.argmin(costs))  # first minimum: generator order
                if costs[c] < best_cost:
                    best_cost = float(costs[c])
                    best_tree = self._split_leaves(st, Lst[c], feats[c], thrs[c])
                if self.path:
                    order = np.flatnonzero(valid)
                    if order.size:
                        e = eL[order] + eR[order]
                        c = int(order[int(np.argmin(e))])
                        points.append((W, float(eL[c] + eR[c]),
                                       self._split_leaves(st, Lst[c], feats[c], thrs[c])))
        else:
            ph1, ph2 = key[2], key[3]
            tl = 2 * self.min_leaf
            for c in np.flatnonzero(valid):
                nl = int(cnt[c])
                nr = m - nl
                ls = Lst[c]
                rs = st - ls
                f, t = int(feats[c]), float(thrs[c])
                lterm = bool(pL[c]) or nl < tl
                rterm = bool(pR[c]) or nr < tl
                kl = (nd, nl, int(h1[c]), int(h2[c]))
                kr = (nd, nr, (ph1 - int(h1[c])) % 2**64, (ph2 - int(h2[c])) % 2**64)
                if seg is not None:
                    el, er = self.children_inplace(seg, f, t,
                                                   Child(ls, float(eL[c]), lterm, kl),
                                                   Child(rs, float(eR[c]), rterm, kr))
                else:
                    el = self.leaf_entry(ls, float(eL[c])) if lterm else self.child(
                        S, Q, f, t, True, ls, nd, kl)
                    er = self.leaf_entry(rs, float(eR[c])) if rterm else self.child(
                        S, Q, f, t, False, rs, nd, kr)
                ops += el[2] + er[2]
                cost = aW + el[0] + er[0]
                if cost < best_cost:
                    best_cost = cost
                    best_tree = (st, f, t, el[1], er[1])
                if self.path:
                    points.extend(
                        (W + a[0] + b[0], a[1] + b[1], (st, f, t, a[2], b[2]))
                        for a in el[3] for b in er[3]
                    )
        hull = _lower_hull(points) if self.path else None
        out = (best_cost, best_tree, ops, hull)
        if len(self.memo) < self.max_entries:
            self.memo[key] = out
        else:
            self.stats["cache_full"] = True
        return out

    def child(self, S, Q, f, t, left, st, d, key):
        """Solve one child of a split; its sorted orders exist only while it is solved (and not
        at all on a memo hit), so a DFS path holds one child per level."""
        hit = self.memo.get(key)
        if hit is not None:
            self.stats["cache_hits"] += 1
            return hit
        Sx, Qx = K.partition_side(S, Q if Q is not None else self._noq, self.Xt, f, t, self.flag,
                                  left, self.packed)
        return self.solve(Sx, Qx if self.packed else None, st, d, key)

    def children_inplace(self, seg, f, t, left, right):
        """Both children (`Child`) of the split ``x_f <= t`` of the in-place segment ``seg``:
        partition it, solve the children on their sub-segments, merge the parent's order
        back."""
        el = self.leaf_entry(left.stats, left.leaf_err) if left.terminal else self.memo.get(
            left.key)
        er = self.leaf_entry(right.stats, right.leaf_err) if right.terminal else self.memo.get(
            right.key)
        self.stats["cache_hits"] += int(not left.terminal and el is not None)
        self.stats["cache_hits"] += int(not right.terminal and er is not None)
        if el is not None and er is not None:
            return el, er
        s0, e0 = seg
        G, T = self.G, self.T
        GS, GQ = G.work, G.Qw
        mid = K.partition_inplace(G, s0, e0, f, t, T, self.packed)
        if el is None:
            el = self.solve(GS[:, s0:mid], GQ[:, s0:mid] if self.packed else None,
                            left.stats, left.key[0], left.key, (s0, mid))
        if er is None:
            er = self.solve(GS[:, mid:e0], GQ[:, mid:e0] if self.packed else None,
                            right.stats, right.key[0], right.key, (mid, e0))
        K.merge_back(GS, GQ, s0, mid, e0, f, self.Xt, T.tmp_i, T.tmp_q, self.packed)
        return el, er

    def _split_leaves(self, st, ls, f, t):
        return (st, int(f), float(t), (ls.copy(),), (st - ls,))


def _lower_hull(points):
    """Vertices of the lower envelope of ``E + α L`` over α >= 0: sorted by L ascending, E
    strictly decreasing, convex. Equal (L, E) keep the first point (leaf, then generator order)."""
    pts = sorted(enumerate(points), key=lambda iv: (iv[1][0], iv[1][1], iv[0]))
    out = []
    for _, p in pts:
        if out and p[1] >= out[-1][1]:  # more tests and no fewer errors: never optimal
            continue
        while len(out) >= 2:
            (l1, e1, _), (l2, e2, _) = out[-2], out[-1]
            # drop out[-1] when it lies on or above the segment out[-2] -> p
            if (e2 - e1) * (p[0] - l1) >= (p[1] - e1) * (l2 - l1):
                out.pop()
            else:
                break
        out.append(p)
    return out


def _n_features(max_features, p):
    if max_features is None:
        return p
    if isinstance(max_features, str):
        return max(1, int(np.sqrt(p)) if max_features == "sqrt" else int(np.log2(p)))
    if isinstance(max_features, Integral):
        return min(p, int(max_features))
    return max(1, int(float(max_features) * p))


def to_arrays(tree, n_cols, task, prior):
    b = TreeBuilder(n_classes=n_cols, task=task)

    def lab(st):
        return None if task == "regression" else majority_label(st, prior)

    def rec(node):
        if len(node) == 1:
            return b.add_leaf(node[0], lab(node[0]))
        st, f, t, lt, rt = node
        i = b.add_split(f, t, st, lab(st))
        li = rec(lt)
        ri = rec(rt)
        b.set_children(i, li, ri)
        return i

    rec(tree)
    return b.build()


def tree_stats(tree, W):
    """(error mass, Σ w·depth, n_leaves) of a nested-tuple tree."""
    stack = [(tree, 0)]
    L = 0.0
    leaves = 0
    while stack:
        node, d = stack.pop()
        if len(node) == 1:
            leaves += 1
            L += d * W(node[0])
        else:
            stack.append((node[3], d + 1))
            stack.append((node[4], d + 1))
    return L, leaves
