"""Slow, obvious reference implementations ("naive twins") used as test oracles.

Each algorithm owns one section, marked by a ``# --- name ---`` comment; the code is written for
clarity (plain Python loops over rows and features), never for speed, and imports nothing from
the implementation it checks.
"""

from __future__ import annotations

import math

# --- greedy ---
# Reference for treebench.algorithms.greedy: the ID3 recursion of the textbook (§18.2, §18.2.1)
# and the generic bottom-up pruning (§18.2.2) with the MDL bound (18.1), on nested dicts.

GREEDY_TIE_RTOL = 1e-12



def class_weights(rows, y, w, n_classes):
    """The weight of each class among ``rows`` (lists, plain Python)."""
    c = [0.0] * n_classes
    for r in rows:
        c[y[r]] += w[r]
    return c

def naive_impurity(counts, criterion):
    """C(p) of one class-count vector: entropy (log2), Gini 1 − Σp², or error 1 − max p."""
    tot = sum(counts)
    if tot <= 0:
        return 0.0
    ps = [c / tot for c in counts]
    if criterion == "entropy":
        return -sum(p * math.log2(p) for p in ps if p > 0)
    if criterion == "gini":
        return 1.0 - sum(p * p for p in ps)
    if criterion == "error":
        return 1.0 - max(ps)
    raise ValueError(criterion)


def naive_majority(counts, prior):
    """Largest count; ties → larger prior; then lower class index."""
    best = max(counts)
    cands = [k for k, c in enumerate(counts) if c == best]
    best_prior = max(prior[k] for k in cands)
    return min(k for k in cands if prior[k] == best_prior)


def _naive_counts(rows, y, w, n_classes):
    counts = [0.0] * n_classes
    for r in rows:
        counts[y[r]] += w[r]
    return counts


def naive_greedy(
    X,
    y,
    n_classes,
    *,
    sample_weight=None,
    criterion="entropy",
    max_depth=None,
    min_samples_leaf=1,
    min_improvement=0.0,
):
    """Grow the greedy tree; returns ``(root, n_scores)`` with nested-dict nodes.

    Node: ``{"feature": j or -1, "counts": [...], "label": k, "left": node, "right": node}``.
    Rows of zero weight are ignored. Split rule: smallest weighted child impurity, ties (within
    1e-12·max(1, |best|)) to the lowest feature index.
    """
    X = [[int(v) for v in row] for row in X]
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]
    rows0 = [r for r in range(len(y)) if w[r] > 0]
    d = len(X[0]) if X else 0
    prior = _naive_counts(rows0, y, w, n_classes)
    n_scores = 0

    def build(rows, depth):
        nonlocal n_scores
        counts = _naive_counts(rows, y, w, n_classes)
        node = {"feature": -1, "counts": counts, "label": naive_majority(counts, prior)}
        if max_depth is not None and depth >= max_depth:
            return node
        if sum(1 for c in counts if c > 0) <= 1:
            return node
        total = sum(counts)
        scores = {}
        for j in range(d):
            r0 = [r for r in rows if X[r][j] == 0]
            r1 = [r for r in rows if X[r][j] == 1]
            if len(r0) < min_samples_leaf or len(r1) < min_samples_leaf:
                continue
            c0 = _naive_counts(r0, y, w, n_classes)
            c1 = _naive_counts(r1, y, w, n_classes)
            scores[j] = (
                sum(c0) / total * naive_impurity(c0, criterion)
                + sum(c1) / total * naive_impurity(c1, criterion)
            )
        n_scores += len(scores)
        if not scores:
            return node
        best = min(scores.values())
        j = min(k for k, s in scores.items() if s <= best + GREEDY_TIE_RTOL * max(1.0, abs(best)))
        if min_improvement > 0 and naive_impurity(counts, criterion) - scores[j] < min_improvement:
            return node
        node["feature"] = j
        node["left"] = build([r for r in rows if X[r][j] == 0], depth + 1)
        node["right"] = build([r for r in rows if X[r][j] == 1], depth + 1)
        return node

    return build(rows0, 0), n_scores


def naive_predict_one(node, x):
    while node["feature"] >= 0:
        node = node["right"] if int(x[node["feature"]]) == 1 else node["left"]
    return node["label"]


def naive_n_nodes(node):
    if node["feature"] < 0:
        return 1
    return 1 + naive_n_nodes(node["left"]) + naive_n_nodes(node["right"])


def naive_mdl_prune(root, X, y, n_classes, *, sample_weight=None, delta=0.05):
    """Generic bottom-up pruning (§18.2.2) with f = bound (18.1), evaluated on the whole tree.

    Post-order walk; at each inner node the candidates, in order of preference on ties, are:
    majority leaf, left subtree, right subtree, current tree; ``f`` is recomputed from scratch
    by predicting every training row. Modifies ``root`` in place and returns it; counts and inner
    labels are recomputed afterwards (leaf labels are kept).
    """
    X = [[int(v) for v in row] for row in X]
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]
    rows0 = [r for r in range(len(y)) if w[r] > 0]
    d = len(X[0])
    m = len(rows0)
    total_w = sum(w[r] for r in rows0)
    prior = _naive_counts(rows0, y, w, n_classes)

    def f_whole():
        err = sum(w[r] for r in rows0 if naive_predict_one(root, X[r]) != y[r]) / total_w
        n = naive_n_nodes(root)
        bits = (n + 1) * math.log2(d + n_classes + 1)
        return err + math.sqrt((bits + math.log(2 / delta)) / (2 * m))

    def visit(node, rows):
        if node["feature"] < 0:
            return
        j = node["feature"]
        visit(node["left"], [r for r in rows if X[r][j] == 0])
        visit(node["right"], [r for r in rows if X[r][j] == 1])
        counts = _naive_counts(rows, y, w, n_classes)
        current = dict(node)
        cands = [
            {"feature": -1, "counts": counts, "label": naive_majority(counts, prior)},
            dict(node["left"]),
            dict(node["right"]),
            current,
        ]
        values = []
        for c in cands:
            node.clear()
            node.update(c)
            values.append(f_whole())
        best = min(values)
        k = next(i for i, v in enumerate(values) if v <= best + GREEDY_TIE_RTOL * max(1, best))
        node.clear()
        node.update(cands[k])

    visit(root, rows0)

    def recount(node, rows):
        node["counts"] = _naive_counts(rows, y, w, n_classes)
        if node["feature"] >= 0:
            j = node["feature"]
            recount(node["left"], [r for r in rows if X[r][j] == 0])
            recount(node["right"], [r for r in rows if X[r][j] == 1])
            node["label"] = naive_majority(node["counts"], prior)

    recount(root, rows0)
    return root


def naive_tree_to_lists(root):
    """Pre-order ``(feature, left, right, value, label)`` lists, like `TreeArrays`."""
    feature, left, right, value, label = [], [], [], [], []

    def add(node):
        i = len(feature)
        feature.append(node["feature"])
        left.append(-1)
        right.append(-1)
        value.append(list(node["counts"]))
        label.append(node["label"])
        if node["feature"] >= 0:
            left[i] = add(node["left"])
            right[i] = add(node["right"])
        return i

    add(root)
    return feature, left, right, value, label


def naive_all_depth2_errors(X, y):
    """Training errors of every tree of depth ≤ 2 on 0/1 features (best leaf labels).

    Yields ``(error, description)``; a leaf takes the majority label of its rows (0 errors of
    the minority are unavoidable for that leaf, so this enumerates every distinct partition).
    """
    X = [[int(v) for v in row] for row in X]
    y = [int(v) for v in y]
    d = len(X[0])

    def leaf_err(rows):
        if not rows:
            return 0
        ones = sum(y[r] for r in rows)
        return min(ones, len(rows) - ones)

    def depth1(rows):
        out = [(leaf_err(rows), "leaf")]
        for j in range(d):
            r0 = [r for r in rows if X[r][j] == 0]
            r1 = [r for r in rows if X[r][j] == 1]
            out.append((leaf_err(r0) + leaf_err(r1), f"x{j}"))
        return out

    rows = list(range(len(y)))
    yield from depth1(rows)
    for j in range(d):
        r0 = [r for r in rows if X[r][j] == 0]
        r1 = [r for r in rows if X[r][j] == 1]
        for e0, t0 in depth1(r0):
            for e1, t1 in depth1(r1):
                yield e0 + e1, f"x{j}? (0: {t0}, 1: {t1})"


# --- topk ---
# Reference for treebench.algorithms.topk: the plain recursion of Figure 1 of Blanc et al.
# (NeurIPS 2023), which by Lemma 3.2 returns the best tree of the Top-k search space
# (Definition 3), and an exhaustive search over all trees of bounded depth. Plain Python lists.

TOPK_TIE_RTOL = 1e-12


def naive_topk_impurity(counts, criterion):
    """Impurity of a class-count vector: the greedy section's entropy (log2), gini and error,
    plus Kearns–Mansour 2·sqrt(p(1 − p)) of the second class's share (binary labels)."""
    if criterion != "kearns-mansour":
        return naive_impurity(counts, criterion)
    tot = sum(counts)
    if tot <= 0:
        return 0.0
    p = counts[1] / tot if len(counts) > 1 else 0.0
    return 2.0 * math.sqrt(max(p * (1.0 - p), 0.0))


def naive_topk_order(X, y, w, rows, n_classes, criterion="entropy", min_samples_leaf=1):
    """Splitting features of ``rows`` best first: increasing weighted child impurity, ties
    (within 1e-12 max(1,|s|) of the best remaining) to the lower index, by repeated selection."""
    total = sum(w[r] for r in rows)
    scores = {}
    for j in range(len(X[0])):
        r0 = [r for r in rows if X[r][j] == 0]
        r1 = [r for r in rows if X[r][j] == 1]
        if len(r0) < min_samples_leaf or len(r1) < min_samples_leaf:
            continue
        s = 0.0
        for part in (r0, r1):
            c = class_weights(part, y, w, n_classes)
            s += sum(c) / total * naive_topk_impurity(c, criterion)
        scores[j] = s
    order = []
    left = dict(scores)
    while left:
        best = min(left.values())
        j = min(f for f, s in left.items() if s <= best + TOPK_TIE_RTOL * max(1.0, abs(best)))
        order.append(j)
        del left[j]
    return order


def naive_topk(X, y, n_classes, k, depth, *, criterion="entropy", sample_weight=None,
               min_samples_leaf=1, min_improvement=None):
    """Figure 1 verbatim (k=None: every feature). Returns ``(error, n_nodes, tree)`` where tree
    is a nested tuple ``(feature, left, right)`` or ``None`` for a leaf. Among candidate trees:
    lower error, then fewer nodes, then the first explored. With ``min_improvement`` m, the
    best split is kept only if its error is below the leaf's error minus m."""
    X = [[int(v) for v in row] for row in X]
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]

    def rec(rows, h):
        c = class_weights(rows, y, w, n_classes)
        leaf = (sum(c) - max(c), 1, None)
        if h == 0 or sum(1 for v in c if v > 0) <= 1:
            return leaf
        order = naive_topk_order(X, y, w, rows, n_classes, criterion, min_samples_leaf)
        if not order:
            return leaf
        best = None
        for j in order if k is None else order[:k]:
            e0, n0, t0 = rec([r for r in rows if X[r][j] == 0], h - 1)
            e1, n1, t1 = rec([r for r in rows if X[r][j] == 1], h - 1)
            cand = (e0 + e1, n0 + n1 + 1, (j, t0, t1))
            if best is None or (cand[0], cand[1]) < (best[0], best[1]):
                best = cand
        if min_improvement is not None and not best[0] < leaf[0] - min_improvement:
            return leaf
        return best

    return rec(list(range(len(y))), depth)


def naive_topk_widened(X, y, n_classes, w, depth, *, criterion="entropy"):
    """The primal heuristic of the anytime Top-k search (`treebench.search.anytime`, a search
    with ``k_top`` = ``w``): Figure 1 at k = all, except that a node with a depth budget of 3 or
    more tries only the first ``w`` of its ranked features after dropping each feature whose
    column on the node's rows equals or complements that of a feature ranked before it.
    Returns ``(error, n_nodes, tree)`` as `naive_topk` (lower error, then fewer nodes, then the
    first explored)."""
    X = [[int(v) for v in row] for row in X]
    y = [int(v) for v in y]
    wt = [1.0] * len(y)

    def rec(rows, h):
        c = class_weights(rows, y, wt, n_classes)
        leaf = (sum(c) - max(c), 1, None)
        if h == 0 or sum(1 for v in c if v > 0) <= 1:
            return leaf
        order = naive_topk_order(X, y, wt, rows, n_classes, criterion)
        if not order:
            return leaf
        if h > 2:
            order = naive_drop_equivalent(X, rows, order)[0][:w]
        best = None
        for j in order:
            e0, n0, t0 = rec([r for r in rows if X[r][j] == 0], h - 1)
            e1, n1, t1 = rec([r for r in rows if X[r][j] == 1], h - 1)
            cand = (e0 + e1, n0 + n1 + 1, (j, t0, t1))
            if best is None or (cand[0], cand[1]) < (best[0], best[1]):
                best = cand
        return best

    return rec(list(range(len(y))), depth)


def naive_optimal_error(X, y, n_classes, depth, sample_weight=None):
    """Smallest training error of any tree of depth <= ``depth`` (exhaustive)."""
    X = [[int(v) for v in row] for row in X]
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]

    def rec(rows, h):
        c = class_weights(rows, y, w, n_classes)
        best = sum(c) - max(c)
        if h == 0 or best == 0:
            return best
        for j in range(len(X[0])):
            r0 = [r for r in rows if X[r][j] == 0]
            r1 = [r for r in rows if X[r][j] == 1]
            if r0 and r1:
                best = min(best, rec(r0, h - 1) + rec(r1, h - 1))
        return best

    return rec(list(range(len(y))), depth)


def naive_topk_tree_tuple(tree):
    """TreeArrays -> the nested ``(feature, left, right)`` tuple of `naive_topk`."""

    def rec(i):
        if tree.feature[i] < 0:
            return None
        return (int(tree.feature[i]), rec(tree.left[i]), rec(tree.right[i]))

    return rec(0)


def naive_pack_columns(X):
    """(n, d) 0/1 -> list over words of lists over features of ints (bit i%64 = row i)."""
    n, d = len(X), len(X[0])
    W = max(1, (n + 63) // 64)
    out = [[0] * d for _ in range(W)]
    for i in range(n):
        for j in range(d):
            if X[i][j]:
                out[i // 64][j] |= 1 << (i % 64)
    return out


# --- binarize ---


def naive_threshold_columns(x, thresholds, op):
    """(n, k) 0/1 list of lists: column j is ``x[r] <op> thresholds[j]``; NaN gives 0."""
    import math

    ops = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}
    return [[0 if (isinstance(v, float) and math.isnan(v)) else int(ops[op](v, t)) for t in thresholds] for v in x]


def naive_onehot_columns(codes, k):
    """(n, k) 0/1 list of lists with a 1 at column ``codes[r]`` (none for -1)."""
    return [[int(c == j) for j in range(k)] for c in codes]


def naive_bin_codes(x, uppers):
    """Index of the first upper bound above ``x[r]`` (intervals ``[previous, upper)``); -1 for
    NaN or a value at or after the last upper bound."""
    import math

    out = []
    for v in x:
        if isinstance(v, float) and math.isnan(v):
            out.append(-1)
            continue
        out.append(next((i for i, u in enumerate(uppers) if v < u), -1))
    return out


# --- ngi ---
# Reference for treebench.algorithms.ngi and its kernels (Zhang & Gionis, DMKD 2023), written from
# the paper's definitions (§3, §4 Eq. 2 and the functions f^p, f̄^p, f^φ, f̃) and the authors'
# conventions of the authors' code: E is computed literally from f̃_i before and after the test
# (a quadratic pair count per node), not by the closed form. Objects are plain lists.

NGI_TIE_RTOL = 1e-12


def naive_ngi_coalesce(X, y, w=None):
    """Identical rows → one object: (rows, labels, probabilities), rows sorted; the label is the
    weighted majority (ties → smallest label); the probability is the share of the weight."""
    w = [1.0] * len(y) if w is None else list(w)
    groups = {}
    for row, lab, wi in zip(X, y, w):
        if wi <= 0:
            continue
        key = tuple(int(v) for v in row)
        groups.setdefault(key, {})
        groups[key][int(lab)] = groups[key].get(int(lab), 0.0) + wi
    total = sum(sum(g.values()) for g in groups.values())
    rows, labels, probs = [], [], []
    for key in sorted(groups):
        g = groups[key]
        best = max(g.values())
        labels.append(min(lab for lab, v in g.items() if v == best))
        rows.append(list(key))
        probs.append(sum(g.values()) / total)
    return rows, labels, probs


def naive_ngi_pairs(S, y):
    """φ(S): pairs of objects of S with different labels, by enumerating the pairs."""
    return sum(1 for a in range(len(S)) for b in range(a + 1, len(S)) if y[S[a]] != y[S[b]])


def naive_ngi_h(S, y, w, kind):
    """h(S) of Eq. 1 on the weighted class distribution: entropy (log2) or Gini."""
    p = sum(w[i] for i in S)
    if p <= 0:
        return 0.0
    classes = sorted({y[i] for i in S})
    qs = [sum(w[i] for i in S if y[i] == c) / p for c in classes]
    if kind == "entropy":
        return max(0.0, -sum(q * math.log2(q) for q in qs if q > 0))
    return max(0.0, 1.0 - sum(q * q for q in qs))


def naive_ngi_f_tilde(i, node, root, y, w, theta, phi_root=None):
    """f̃_i(D') where ``node`` is S^{(i)}_{D'} and ``root`` is X (§4); ``phi_root`` = φ(X)."""
    a = max(w[i], theta)
    p_node = sum(w[j] for j in node)
    fp = min((1.0 - p_node) / (1.0 - a), 1.0) if a < 1.0 else 1.0
    if phi_root is None:
        phi_root = naive_ngi_pairs(root, y)
    fphi = (phi_root - naive_ngi_pairs(node, y)) / phi_root if phi_root > 0 else 1.0
    return 1.0 - (1.0 - fp) * (1.0 - fphi)


def naive_ngi_branches(S, X, j):
    return [[i for i in S if X[i][j] == 0], [i for i in S if X[i][j] == 1]]


def naive_ngi_terms(S, root, X, y, w, j, theta, d_term="paper"):
    """Every score of test j at node S: dict with B, E, D_entropy, D_gini, IP, BAL, gains."""
    br = naive_ngi_branches(S, X, j)
    p = sum(w[i] for i in S)
    pv = [sum(w[i] for i in b) for b in br]
    h_index = 0 if len(br[0]) >= len(br[1]) else 1  # most objects; ties → branch 0
    out = {"B": p - pv[h_index]}
    e = 0.0
    phi_root = naive_ngi_pairs(root, y)
    for b in br:
        for i in b:
            before = naive_ngi_f_tilde(i, S, root, y, w, theta, phi_root)
            after = naive_ngi_f_tilde(i, b, root, y, w, theta, phi_root)
            if before < 1.0:
                e += w[i] * (after - before) / (1.0 - before)
    out["E"] = e
    for kind in ("entropy", "gini"):
        hs = naive_ngi_h(S, y, w, kind)
        hv = [naive_ngi_h(b, y, w, kind) for b in br]
        if d_term == "paper":
            out["D_" + kind] = p * (hs - sum((pv[v] / p) * hv[v] for v in range(2)))
        else:
            out["D_" + kind] = p * (hs - sum(pv[v] * hv[v] for v in range(2)))
        out["gain_" + kind] = hs - sum((pv[v] / p) * hv[v] for v in range(2))
    out["IP"] = p * naive_ngi_pairs(S, y) - sum(pv[v] * naive_ngi_pairs(br[v], y) for v in range(2))
    out["BAL"] = abs(pv[1] - pv[0]) if br[0] and br[1] else 0.0
    out["splits"] = bool(br[0]) and bool(br[1])
    return out


def naive_ngi_score(method, t, cost, lam):
    """The score a method maximises, from one dict of `naive_ngi_terms`."""
    if method == "ec4.5":
        return (t["B"] + t["E"] + lam * t["D_entropy"]) / cost
    if method == "ecart":
        return (t["B"] + t["E"] + lam * t["D_gini"]) / cost
    if method == "asr":
        return (t["B"] + t["E"]) / cost
    if method == "ip":
        return t["IP"] / cost
    if method in ("bal", "bal-fixed"):
        return -t["BAL"]
    if method == "c4.5":
        return t["gain_entropy"]
    if method == "cart":
        return t["gain_gini"]
    if method == "cc4.5":
        return t["gain_entropy"] / cost
    if method == "ccart":
        return t["gain_gini"] / cost
    raise ValueError(method)


def naive_ngi_tree(X, y, w, n_classes, method, *, lam=1.0, theta=0.005, min_objects=1,
                   d_term="paper", costs=None):
    """Grow the tree of Algorithm 1 (or a baseline) on objects; nested dicts with ``value``
    (weighted class masses), ``counts`` (objects per class) and ``feature``/``children``."""
    m = len(X[0])
    costs = [1.0] * m if costs is None else list(costs)
    root = list(range(len(y)))

    def node(S, used):
        value = [0.0] * n_classes
        counts = [0] * n_classes
        for i in S:
            value[y[i]] += w[i]
            counts[y[i]] += 1
        out = {"value": value, "counts": counts, "feature": -1}
        p = sum(w[i] for i in S)
        if (not S or sum(1 for c in counts if c) <= 1 or p <= theta + 1e-7
                or len(S) <= min_objects):
            return out
        best, best_j = None, -1
        scored = []
        for j in range(m):
            if j in used:
                continue
            t = naive_ngi_terms(S, root, X, y, w, j, theta, d_term)
            all_tests = method == "bal" or (d_term == "authors" and method in ("ec4.5", "ecart"))
            if not t["splits"] and not all_tests:
                continue
            scored.append((j, naive_ngi_score(method, t, costs[j], lam)))
        if not scored:
            return out
        best = max(s for _, s in scored)
        best_j = next(j for j, s in scored if s >= best - NGI_TIE_RTOL * max(1.0, abs(best)))
        br = naive_ngi_branches(S, X, best_j)
        out["feature"] = best_j
        out["children"] = [node(br[0], used | {best_j}), node(br[1], used | {best_j})]
        return out

    return node(root, frozenset())


def naive_ngi_prune(tree, alpha, kind):
    """Top-down ccp(α) on a nested-dict tree (R = p·h, or p·φ for ``kind == "pairs"``)."""

    def R(nd):
        p = sum(nd["value"])
        if kind == "pairs":
            n = sum(nd["counts"])
            return p * (n * n - sum(c * c for c in nd["counts"])) / 2.0
        if p <= 0:
            return 0.0
        qs = [v / p for v in nd["value"]]
        if kind == "entropy":
            return p * max(0.0, -sum(q * math.log2(q) for q in qs if q > 0))
        return p * max(0.0, 1.0 - sum(q * q for q in qs))

    def leaves(nd):
        if nd["feature"] < 0:
            return [nd]
        return leaves(nd["children"][0]) + leaves(nd["children"][1])

    def prune(nd):
        if nd["feature"] < 0:
            return nd
        lv = leaves(nd)
        if alpha > 0 and R(nd) + alpha < sum(R(x) for x in lv) + alpha * len(lv):
            return {"value": nd["value"], "counts": nd["counts"], "feature": -1}
        return dict(nd, children=[prune(nd["children"][0]), prune(nd["children"][1])])

    return prune(tree)


def naive_ngi_preorder(tree):
    """(feature, value) of every node in pre-order (left before right)."""
    out = [(tree["feature"], list(tree["value"]))]
    for c in tree.get("children", []) if tree["feature"] >= 0 else []:
        out += naive_ngi_preorder(c)
    return out


def naive_ngi_path_cost(tree_arrays, x, costs):
    """Sum of the costs of the tests met by row x, walking the TreeArrays from the root."""
    i, total = 0, 0.0
    while tree_arrays.feature[i] >= 0:
        f = tree_arrays.feature[i]
        total += costs[f]
        i = tree_arrays.left[i] if x[f] <= tree_arrays.threshold[i] else tree_arrays.right[i]
    return total


# --- shared layers (numba intrinsics) ---
# Python twins of numba intrinsics (one machine instruction when compiled, no pure-Python path):
# the NUMBA_DISABLE_JIT pass (`make test-nojit`) puts them in place of the intrinsics.
def popcount(x) -> int:
    """Number of set bits of a uint64 (a Python int: mixed with int64 indices, numpy's uint64
    would turn them into floats)."""
    return bin(int(x)).count("1")


def ctz(x) -> int:
    """Trailing zeros of a non-zero uint64."""
    x = int(x)
    return (x & -x).bit_length() - 1


# ============================================================================ runner helper
# Naive twins of the runner's tree-size and tie-rule helpers.

def naive_effective_leaves(feature, left, right, label) -> int:
    """Leaves after merging same-label sibling leaves, by rebuilding the tree recursively."""

    def walk(i):  # returns ("leaf", label) or ("split", n_leaves)
        if feature[i] < 0:
            return ("leaf", int(label[i]))
        a, b = walk(left[i]), walk(right[i])
        if a[0] == "leaf" and b[0] == "leaf" and a[1] == b[1]:
            return a
        na = 1 if a[0] == "leaf" else a[1]
        nb = 1 if b[0] == "leaf" else b[1]
        return ("split", na + nb)

    r = walk(0)
    return 1 if r[0] == "leaf" else r[1]


def naive_tie_label(counts, prior) -> int:
    """Majority class; ties to the class more frequent in training (prior), then lower index."""
    best = None
    for c in range(len(counts)):
        key = (counts[c], prior[c], -c)
        if best is None or key > best[0]:
            best = (key, c)
    return best[1]


# --- gosdt ---
# Reference for treebench.algorithms.gosdt (GOSDT objective, McTavish et al. AAAI 2022 eq. (3)):
# every binary tree on 0/1 features up to a depth is enumerated explicitly and scored as
# (misclassified weight) / (total weight) + lam * leaves; the naive equivalent-points bound and
# the Theorem 4.3 bound. Plain Python loops, tiny inputs only.

import numpy as np  # noqa: E402


def naive_all_trees(d, depth):
    """Every tree of depth <= depth over features 0..d-1 as nested tuples: ``None`` is a leaf,
    ``(j, left, right)`` tests feature j (left: x_j = 0)."""
    if depth == 0:
        return [None]
    sub = naive_all_trees(d, depth - 1)
    out = [None]
    for j in range(d):
        for a in sub:
            for b in sub:
                out.append((j, a, b))
    return out


def naive_tree_leaves_of(tree, x):
    node, path = tree, ()
    while node is not None:
        j, a, b = node
        path += ((j, int(x[j])),)
        node = b if x[j] == 1 else a
    return path


def naive_regularized_objective(tree, X, y, lam, n_classes, sample_weight=None, labels=None):
    """R(t) with majority labels per leaf (or the given per-leaf ``labels`` dict); leaves are
    counted in the tree, empty ones included."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    groups = {}
    for i in range(len(y)):
        key = naive_tree_leaves_of(tree, X[i])
        groups.setdefault(key, np.zeros(n_classes))[y[i]] += w[i]
    err = 0.0
    for key, cnt in groups.items():
        if labels is None:
            err += cnt.sum() - cnt.max()
        else:
            err += cnt.sum() - cnt[labels.get(key, int(np.argmax(cnt)))]
    return err / w.sum() + lam * naive_n_leaves(tree)


def naive_n_leaves(tree):
    if tree is None:
        return 1
    return naive_n_leaves(tree[1]) + naive_n_leaves(tree[2])


def naive_gosdt_costs(X, y, n_classes, depth, sample_weight=None):
    """(error rate, leaves) of every tree of depth <= depth (explicit enumeration)."""
    X = np.asarray(X).astype(int)
    return [(naive_regularized_objective(t, X, y, 0.0, n_classes, sample_weight),
             naive_n_leaves(t)) for t in naive_all_trees(X.shape[1], depth)]


def naive_gosdt(X, y, n_classes, lam, depth, sample_weight=None, costs=None):
    """The minimum of R(t) over every tree of depth <= depth (explicit enumeration)."""
    if costs is None:
        costs = naive_gosdt_costs(X, y, n_classes, depth, sample_weight)
    return min(e + lam * h for e, h in costs)


def naive_equivalent_points(X, y, rows, sample_weight=None):
    """Errors any tree makes on ``rows``: per group of identical feature vectors, its weight
    minus its largest class weight."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    groups = {}
    for i in np.flatnonzero(rows):
        groups.setdefault(tuple(np.asarray(X[i]).astype(int)), {}).setdefault(int(y[i]), 0.0)
        groups[tuple(np.asarray(X[i]).astype(int))][int(y[i])] += w[i]
    return sum(sum(g.values()) - max(g.values()) for g in groups.values())


def naive_theorem43_bound(tree, X, y, y_ref, lam, n_classes):
    """McTavish et al. Theorem 4.3: (|reference errors| + errors of ``tree`` (majority labels) on
    the rows the reference gets right) / N + lam * leaves(tree)."""
    X = np.asarray(X).astype(int)
    groups = {}
    for i in range(len(y)):
        groups.setdefault(naive_tree_leaves_of(tree, X[i]), np.zeros(n_classes))[y[i]] += 1
    labels = {k: int(np.argmax(v)) for k, v in groups.items()}
    err = 0
    for i in range(len(y)):
        if y_ref[i] != y[i]:
            err += 1
        elif labels[naive_tree_leaves_of(tree, X[i])] != y[i]:
            err += 1
    return err / len(y) + lam * naive_n_leaves(tree)


# --- dpdt ---
# Reference for treebench.algorithms.dpdt / search.dpdt (Kohler, Akrour & Preux, KDD 2025):
# rows as Python lists, statistics as lists (w·one-hot class vector, or [w, w·y, w·y²] for
# regression), a plain recursion without memoisation for the Bellman backup (Algorithm 1).
# Tie rules mirror the spec: strict '>' on proxies (lower feature, then smaller threshold), a
# split must be strictly cheaper than the leaf and than earlier candidates.


def naive_dpdt_stats(rows, RS):
    K = len(RS[0])
    out = [0.0] * K
    for r in rows:
        for k in range(K):
            out[k] += RS[r][k]
    return out


def naive_dpdt_leaf_error(st, regression=False):
    if regression:
        w = st[0]
        return max(st[2] - st[1] * st[1] / w, 0.0) if w > 0 else 0.0
    return sum(st) - max(st)


def naive_dpdt_proxy(left, tot, crit):
    """scikit-learn's proxy improvement: gini Σl²/wl + Σr²/wr; entropy −(wl·Hl + wr·Hr) in
    nats; mse (Σwy)l²/wl + (Σwy)r²/wr."""
    right = [t - a for t, a in zip(tot, left)]
    if crit == "mse":
        return left[1] * left[1] / left[0] + right[1] * right[1] / right[0]
    wl, wr = sum(left), sum(right)
    if crit == "gini":
        return sum(a * a for a in left) / wl + sum(b * b for b in right) / wr

    def xlx(v):
        return v * math.log(v) if v > 0 else 0.0

    return sum(xlx(a) for a in left) + sum(xlx(b) for b in right) - xlx(wl) - xlx(wr)


def naive_dpdt_node_term(tot, crit):
    if crit == "mse":
        return tot[1] * tot[1] / tot[0] if tot[0] > 0 else 0.0
    w = sum(tot)
    if crit == "gini":
        return sum(c * c for c in tot) / w if w > 0 else 0.0

    def xlx(v):
        return v * math.log(v) if v > 0 else 0.0

    return sum(xlx(c) for c in tot) - xlx(w)


def naive_dpdt_midpoint(a, b):
    t = a / 2.0 + b / 2.0
    return a if (t >= b or not math.isfinite(t)) else t


def naive_dpdt_best_split(X, RS, rows, crit, min_leaf, features=None):
    """(proxy, feature, threshold) of the best split of ``rows``, or None."""
    tot = naive_dpdt_stats(rows, RS)
    best = None
    feats = range(len(X[0])) if features is None else features
    for f in feats:
        order = sorted(rows, key=lambda r: (X[r][f], r))
        for i in range(len(order) - 1):
            a, b = X[order[i]][f], X[order[i + 1]][f]
            if not b > a:
                continue
            left = order[: i + 1]
            if len(left) < min_leaf or len(order) - len(left) < min_leaf:
                continue
            ls = naive_dpdt_stats(left, RS)
            wl = ls[0] if crit == "mse" else sum(ls)
            wr = (tot[0] if crit == "mse" else sum(tot)) - wl
            if wl <= 0 or wr <= 0:
                continue
            pr = naive_dpdt_proxy(ls, tot, crit)
            if best is None or pr > best[0]:
                best = (pr, f, naive_dpdt_midpoint(a, b))
    return best


def _naive_pure(st, crit):
    if crit == "mse":
        w = st[0]
        return w <= 0 or st[2] / w - (st[1] / w) ** 2 <= 1e-12 * (st[2] / w)
    return sum(1 for c in st if c > 0) <= 1


def naive_dpdt_cart(X, RS, rows, max_leaves, crit, min_leaf=1):
    """Best-first CART with ``max_leaves`` leaves: (list of (feature, threshold) of the
    internal nodes in creation order, node count)."""
    nodes = []  # [rows, split or None, improvement, was_split]

    def make(rs):
        st = naive_dpdt_stats(rs, RS)
        sp = None
        if len(rs) >= 2 * min_leaf and len(rs) >= 2 and not _naive_pure(st, crit):
            b = naive_dpdt_best_split(X, RS, rs, crit, min_leaf)
            if b is not None:
                sp = (b[1], b[2], b[0] - naive_dpdt_node_term(st, crit))
        nodes.append([rs, sp, False])

    make(list(rows))
    splits = 0
    while splits < max_leaves - 1:
        open_ = [i for i, nd in enumerate(nodes) if nd[1] is not None and not nd[2]]
        if not open_:
            break
        best = open_[0]
        for i in open_:
            if nodes[i][1][2] > nodes[best][1][2]:
                best = i
        nodes[best][2] = True
        splits += 1
        f, t, _ = nodes[best][1]
        rs = nodes[best][0]
        make([r for r in rs if X[r][f] <= t])
        make([r for r in rs if X[r][f] > t])
    cands = [(nd[1][0], nd[1][1]) for nd in nodes if nd[2]]
    return cands, len(nodes)


def naive_dpdt_topb(X, RS, rows, B, min_leaf=1):
    scored = []
    for f in range(len(X[0])):
        b = naive_dpdt_best_split(X, RS, rows, "gini", min_leaf, features=[f])
        if b is not None:
            scored.append((-b[0], f, b[2]))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [(f, t) for _, f, t in scored[:B]]


def naive_dpdt_midpoints(X, rows, min_leaf=1):
    out = []
    m = len(rows)
    for f in range(len(X[0])):
        vals = sorted(X[r][f] for r in rows)
        for i in range(m - 1):
            if vals[i + 1] > vals[i] and i + 1 >= min_leaf and m - i - 1 >= min_leaf:
                out.append((f, naive_dpdt_midpoint(vals[i], vals[i + 1])))
    return out


def naive_dpdt_partition(X, S, f, t):
    """Children's per-feature sorted row lists (filtering each of the parent's lists)."""
    SL = [[r for r in lst if X[r][f] <= t] for lst in S]
    SR = [[r for r in lst if X[r][f] > t] for lst in S]
    return SL, SR


def naive_dpdt(X, RS, rows, depth, generator, alpha=0.0, regression=False, min_leaf=1, d=0):
    """Plain backward induction: (cost = error + α·Σw·tests, tree) with tree = ("leaf", st)
    or (f, t, left, right). ``generator(rows, d)`` returns the candidate (feature, threshold)
    list."""
    st = naive_dpdt_stats(rows, RS)
    err = naive_dpdt_leaf_error(st, regression)
    best = (err, ("leaf", st))
    pure = err <= 1e-12 * abs(st[2]) if regression else err == 0
    if d >= depth or pure or len(rows) < 2 * min_leaf:
        return best
    W = st[0] if regression else sum(st)
    for f, t in generator(rows, d):
        L = [r for r in rows if X[r][f] <= t]
        R = [r for r in rows if X[r][f] > t]
        if len(L) < max(1, min_leaf) or len(R) < max(1, min_leaf):
            continue
        cl, tl = naive_dpdt(X, RS, L, depth, generator, alpha, regression, min_leaf, d + 1)
        cr, tr = naive_dpdt(X, RS, R, depth, generator, alpha, regression, min_leaf, d + 1)
        c = alpha * W + cl + cr
        if c < best[0]:
            best = (c, (f, t, tl, tr))
    return best


def naive_brute_force_optimal(X, RS, depth, alpha=0.0, regression=False):
    """Optimal cost of a depth-``depth`` tree by enumerating every split at every node."""
    return naive_dpdt(
        X, RS, list(range(len(X))), depth,
        lambda rows, d: naive_dpdt_midpoints(X, rows), alpha, regression,
    )[0]


# --- dpdt: scikit-learn's tie rule ---
# Reference for search.dpdt.sk_rand_int / sk_feature_order (TIES_SKLEARN): scikit-learn's
# splitter draws a node's features by Fisher-Yates from an array that persists across the nodes
# of one fit, with a 32-bit xorshift generator; constant features are set aside unscanned.
# Python integers, one list per array.


def naive_sk_rand_int(state, low, high):
    """One xorshift32 step of ``state[0]`` (0 -> 1), reduced modulo 2^31, into [low, high)."""
    s = state[0] or 1
    s ^= (s << 13) % 2**32
    s ^= s >> 17
    s ^= (s << 5) % 2**32
    state[0] = s
    return low + (s % 2**31) % (high - low)


def naive_sk_feature_order(features, state, const, max_features):
    """The features scanned on one node, in visit order (``features`` and ``state`` change)."""
    order = []
    f_i = len(features)
    visited = found = 0
    while f_i > found and (visited < max_features or visited <= found):
        visited += 1
        j = naive_sk_rand_int(state, 0, f_i - found) + found
        g = features[j]
        if const[g]:
            features[j], features[found] = features[found], g
            found += 1
        else:
            f_i -= 1
            features[j], features[f_i] = features[f_i], g
            order.append(g)
    return order


# --- depth-2 solver (treebench.search.depth2 / counts.pair_counts_buf) ---
# Naive twins of the compiled depth-2 kernels: plain Python over lists of rows, no pair table.


def naive_pair_counts(X, y, rows, n_classes):
    """P[c][i][j] = number of rows of class c in ``rows`` with x_i = x_j = 1 (every i, j)."""
    d = len(X[0])
    P = [[[0] * d for _ in range(d)] for _ in range(n_classes)]
    for r in rows:
        on = [j for j in range(d) if X[r][j]]
        for i in on:
            for j in on:
                P[y[r]][i][j] += 1
    return P


def _naive_label_counts(y, rows, n_classes):
    c = [0] * n_classes
    for r in rows:
        c[y[r]] += 1
    return c


def naive_stump_error(X, y, rows, n_classes, features, msl):
    """Smallest error of a one-split tree on ``rows`` over ``features`` (each side >= msl
    rows), or None when no feature splits."""
    best = None
    for j in features:
        r0 = [r for r in rows if not X[r][j]]
        r1 = [r for r in rows if X[r][j]]
        if len(r0) < msl or len(r1) < msl:
            continue
        e = sum(len(s) - max(_naive_label_counts(y, s, n_classes)) for s in (r0, r1))
        best = e if best is None else min(best, e)
    return best


def naive_depth2_search(X, y, n_classes, order, features, msl, regularized, M, nu, lam):
    """(objective, root) of `depth2_search` by direct enumeration: each root ``order[a]`` in
    turn, each child costs (Top-k) its leaf when pure else its best stump, or (regularised)
    min(leaf, best stump); the first root with the smallest total wins; (inf, -1) if none.
    ``regularized="leaves"`` is Top-k with min_improvement 0 (`depth2_root_values` with
    ``leaves``): a child keeps its leaf unless its best stump has fewer errors."""
    rows = list(range(len(y)))
    best, best_f = float("inf"), -1
    for i in order:
        tot = 0.0 if regularized is True else nu
        for side in (0, 1):
            ch = [r for r in rows if bool(X[r][i]) == bool(side)]
            cnt = _naive_label_counts(y, ch, n_classes)
            e_leaf = len(ch) - max(cnt)
            others = [j for j in features if j != i]
            if regularized is True:
                cost = e_leaf + lam
                e = naive_stump_error(X, y, ch, n_classes, others, 0)
                if e is not None and e + 2 * lam < cost:
                    cost = e + 2 * lam
            else:
                cost = e_leaf * M + nu
                if sum(1 for v in cnt if v > 0) > 1:
                    e = naive_stump_error(X, y, ch, n_classes, others, msl)
                    if e is not None and not (regularized == "leaves" and e >= e_leaf):
                        cost = e * M + 3 * nu
            tot += cost
        if tot < best:
            best, best_f = tot, i
    return best, best_f



def naive_depth2_regularized(X, y, n_classes, rows, order, features, lam, best, floor):
    """(objective, root) of `search.depth2.depth2_lazy` (and `depth2_regularized`) on the
    node ``rows``: each root ``order[a]`` in turn costs, per child, min(leaf, best stump over
    ``features`` other than the root); a root replaces the best when its total is strictly
    below it, and the scan stops once the best is <= ``floor``; (best, -1) when no root
    beats the starting ``best``."""
    best_f = -1
    for i in order:
        tot = 0.0
        for side in (0, 1):
            ch = [r for r in rows if bool(X[r][i]) == bool(side)]
            cost = len(ch) - max(_naive_label_counts(y, ch, n_classes)) + lam
            e = naive_stump_error(X, y, ch, n_classes, [j for j in features if j != i], 0)
            if e is not None and e + 2 * lam < cost:
                cost = e + 2 * lam
            tot += cost
        if tot < best:
            best, best_f = tot, i
            if best <= floor:
                break
    return best, best_f


def naive_partner_row(X, y, rows, n_classes, i):
    """Row ``i`` of `naive_pair_counts`: out[c][j] = rows of class c with x_i = x_j = 1."""
    return [[sum(1 for r in rows if y[r] == c and X[r][i] and X[r][j])
             for j in range(len(X[0]))] for c in range(n_classes)]

# --- features equivalent on a node (treebench.search.equiv) ---
def naive_drop_equivalent(X, rows, order):
    """(kept, dropped) of `drop_equivalent`: walking ``order``, a feature is dropped when its
    column on ``rows`` equals, or is the complement of, that of a feature kept before it."""
    kept, dropped = [], []
    for j in order:
        col = [X[r][j] for r in rows]
        same = any(col == [X[r][k] for r in rows] or col == [1 - X[r][k] for r in rows]
                   for k in kept)
        (dropped if same else kept).append(j)
    return kept, dropped


# --- depth-2 search under a lower-bound guess (treebench.search.depth2) ---
# The recursion of `search.gosdt.solve` at depth budgets 1 and 2 under a lower-bound guess
# (McTavish et al. AAAI 2022 §4.3 steps 1, 2a, 2b), written out on Python lists of rows: every
# feature ranking sorted explicitly by (leaf errors of the children, feature index), the same
# floating-point expressions as the kernels. ``ref_wrong[r]`` is 1 when the reference errs on r.


def _naive_guess_side(X, y, rows, n_classes, j):
    """(rows with x_j = 0, rows with x_j = 1, their leaf errors, classes present in each)."""
    r0 = [r for r in rows if not X[r][j]]
    r1 = [r for r in rows if X[r][j]]
    out = [r0, r1]
    for part in (r0, r1):
        c = _naive_label_counts(y, part, n_classes)
        out.append(len(part) - max(c))
    for part in (r0, r1):
        c = _naive_label_counts(y, part, n_classes)
        out.append(sum(1 for v in c if v > 0))
    return out


def naive_guess_child_bound(e, b, lam):
    """lb_curr of a budget-1 child (leaf error e, reference errors b): its leaf when step 1
    applies (e + lam <= 2 lam or <= b + 2 lam), else max(b + lam, 2 lam)."""
    leaf = e + lam
    if leaf <= 2.0 * lam or leaf <= b + 2.0 * lam:
        return leaf
    return max(b + lam, 2.0 * lam)


def naive_guess_budget1(X, y, n_classes, ref_wrong, rows, lam, ub):
    """(value, feature) of a depth-budget-1 subproblem under the guess and the bound ``ub``:
    a value < ub is the recursion's tree (feature -1: a leaf); otherwise a value >= ub."""
    cnt = _naive_label_counts(y, rows, n_classes)
    e = len(rows) - max(cnt)
    leaf = e + lam
    if sum(1 for v in cnt if v > 0) <= 1 or e <= lam:
        return leaf, -1
    b = float(sum(int(ref_wrong[r]) for r in rows))
    if leaf <= b + 2.0 * lam:  # step 1
        return leaf, -1
    floor = max(b + lam, 2.0 * lam)
    found = leaf < ub
    best = leaf if found else ub
    best_f = -1
    if floor < best:
        cand = []
        for j in range(len(X[0])):
            r0, r1, e0, e1, _, _ = _naive_guess_side(X, y, rows, n_classes, j)
            if r0 and r1:
                cand.append((e0 + e1, j, e0, e1))
        cand.sort()
        for _, j, e0, e1 in cand:
            v = (e0 + lam) + (e1 + lam)
            if v >= best:
                continue
            best, best_f, found = v, j, True
            if best <= floor:  # step 2a
                break
    if found:
        return best, best_f
    return (ub if ub > floor else floor), -1


def naive_depth2_guessed(X, y, n_classes, ref_wrong, rows, lam, best, floor):
    """(value, root feature) of a depth-budget-2 node under the guess, as the recursion finds
    it from the node's ``best`` (its leaf or bound to beat) and ``floor``; (best, -1) when no
    split is below ``best``."""
    b = float(sum(int(ref_wrong[r]) for r in rows))
    cand = []
    for j in range(len(X[0])):
        sides = _naive_guess_side(X, y, rows, n_classes, j)
        if sides[0] and sides[1]:
            cand.append((sides[2] + sides[3], j, sides))
    cand.sort(key=lambda t: (t[0], t[1]))
    best_f = -1
    if not floor < best:
        return best, best_f
    for _, j, (r0, r1, e0, e1, p0, p1) in cand:
        s0 = 2.0 * lam if (p0 > 1 and e0 > lam and 2.0 * lam < e0 + lam) else e0 + lam
        s1 = 2.0 * lam if (p1 > 1 and e1 > lam and 2.0 * lam < e1 + lam) else e1 + lam
        if s0 + s1 >= best:
            continue
        b0 = float(sum(int(ref_wrong[r]) for r in r0))
        b1 = max(b - b0, 0.0)
        lb0 = naive_guess_child_bound(e0, b0, lam)
        lb1 = naive_guess_child_bound(e1, b1, lam)
        if lb0 + lb1 >= best:
            continue
        # each child solved on its own (no bound from the node's best tree)
        o0, _ = naive_guess_budget1(X, y, n_classes, ref_wrong, r0, lam, float("inf"))
        o1, _ = naive_guess_budget1(X, y, n_classes, ref_wrong, r1, lam, float("inf"))
        if o0 + o1 < best:
            best, best_f = o0 + o1, j
        if best <= floor:
            break
    return best, best_f


# --- the whole search under a lower-bound guess (treebench.search.gosdt) ---
# McTavish et al. (AAAI 2022) §4.3 as a plain recursion on lists of rows, the rule of
# `search.gosdt.solve` under a guess: a subproblem (rows, depth budget) has one value,
# whoever asks (its children are solved on their own, never under the caller's best tree);
# step 1 makes a leaf when ub <= lb_guess + lam (b + 2 lam, b = the reference's errors);
# otherwise features are tried in rank order (children's leaf errors, then index), a feature is
# omitted when its children's guessed bounds reach the best so far (step 2b) and the node stops
# at the first tree <= lb_curr = max(b + lam, 2 lam) (step 2a). Same floating-point expressions.


def _naive_guess_child_lb(e, b, lam, lev):
    """The guessed bound of a child with leaf error e, reference errors b, budget lev."""
    leaf = e + lam
    if lev == 0 or leaf <= 2.0 * lam or leaf <= b + 2.0 * lam:
        return leaf
    return max(b + lam, 2.0 * lam)


def naive_gosdt_guessed(X, y, n_classes, ref_wrong, rows, lam, lev):
    """(value, tree) of the subproblem (rows, lev) under the guess; tree = None for a leaf or
    (feature, tree when 0, tree when 1)."""
    cnt = _naive_label_counts(y, rows, n_classes)
    e = float(len(rows) - max(cnt))
    leaf = e + lam
    if lev == 0 or sum(1 for v in cnt if v > 0) <= 1 or e <= lam:
        return leaf, None
    b = float(sum(int(ref_wrong[r]) for r in rows))
    if leaf <= b + 2.0 * lam:  # step 1
        return leaf, None
    floor = max(b + lam, 2.0 * lam)
    best, tree = leaf, None
    if not floor < best:
        return best, tree
    cand = []
    for j in range(len(X[0])):
        r0, r1, e0, e1, p0, p1 = _naive_guess_side(X, y, rows, n_classes, j)
        if r0 and r1:
            cand.append((e0 + e1, j, r0, r1, float(e0), float(e1), p0, p1))
    cand.sort(key=lambda t: (t[0], t[1]))
    for _, j, r0, r1, e0, e1, p0, p1 in cand:
        if lev == 1:
            v = (e0 + lam) + (e1 + lam)
            if v >= best:
                continue
            best, tree = v, (j, None, None)
        else:
            s0 = 2.0 * lam if (p0 > 1 and e0 > lam and 2.0 * lam < e0 + lam) else e0 + lam
            s1 = 2.0 * lam if (p1 > 1 and e1 > lam and 2.0 * lam < e1 + lam) else e1 + lam
            if s0 + s1 >= best:
                continue
            b0 = float(sum(int(ref_wrong[r]) for r in r0))
            b1 = max(b - b0, 0.0)
            if (_naive_guess_child_lb(e0, b0, lam, lev - 1)
                    + _naive_guess_child_lb(e1, b1, lam, lev - 1)) >= best:  # step 2b
                continue
            o0, t0 = naive_gosdt_guessed(X, y, n_classes, ref_wrong, r0, lam, lev - 1)
            o1, t1 = naive_gosdt_guessed(X, y, n_classes, ref_wrong, r1, lam, lev - 1)
            if o0 + o1 < best:
                best, tree = o0 + o1, (j, t0, t1)
        if best <= floor:  # step 2a
            break
    return best, tree


def naive_tree_preorder(tree):
    """Feature of every node in pre-order (-1 at leaves), the layout of `fit_gosdt`."""
    if tree is None:
        return [-1]
    j, t0, t1 = tree
    return [j] + naive_tree_preorder(t0) + naive_tree_preorder(t1)


# --- the GOSDT search's exactness techniques (treebench.search.gosdt) ---
# The dynamic programme of McTavish et al. (AAAI 2022) eq. (5) without any bound, pruning or
# memo: the optimum of (rows, depth budget) in count units (errors + lam * leaves) is the better
# of the leaf and, over every feature that splits the rows, the sum of the two children's
# optima. Rows as Python lists; exponential in the depth, tiny inputs only.


def naive_gosdt_dp(X, y, n_classes, rows, depth, lam, sample_weight=None):
    """Optimum of errors(t) + lam * leaves(t) over trees of depth <= ``depth`` on ``rows``."""
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]
    cnt = [0.0] * n_classes
    for r in rows:
        cnt[y[r]] += w[r]
    best = sum(cnt) - max(cnt) + lam
    if depth == 0:
        return best
    for j in range(len(X[0])):
        r0 = [r for r in rows if not X[r][j]]
        r1 = [r for r in rows if X[r][j]]
        if not r0 or not r1:
            continue
        v = naive_gosdt_dp(X, y, n_classes, r0, depth - 1, lam, sample_weight)
        if v >= best:
            continue
        v += naive_gosdt_dp(X, y, n_classes, r1, depth - 1, lam, sample_weight)
        if v < best:
            best = v
    return best


# --- compact cache keys (treebench.search.cache.row_key) ---
def naive_row_key(rows, modulus=(1 << 61) - 1, point=0x0B3D5A7C19E2F4D1):
    """The row set's fingerprint with Python integers: its bitset's 32-bit chunks (low half of
    word 0 first) as the coefficients of a polynomial with no constant term, evaluated at
    ``point mod modulus``."""
    r = point % modulus
    acc = 0
    for w, word in enumerate(rows):
        word = int(word)
        acc += (word & 0xFFFFFFFF) * pow(r, 2 * w + 1, modulus)
        acc += (word >> 32) * pow(r, 2 * w + 2, modulus)
    return acc % modulus


# --- dpdt13: DPDT's exhaustive generator on the search layer (treebench.search.dpdt_layer) ---
def _dpdt13_leaf(rows, y, n_classes):
    counts = [0] * n_classes
    for r in rows:
        counts[y[r]] += 1
    return float(len(rows) - max(counts)), counts


def _dpdt13_sides(X01, rows, j):
    left = [r for r in rows if X01[r][j] == 0]
    right = [r for r in rows if X01[r][j] == 1]
    return left, right


def naive_dpdt13_best(X01, y, n_classes, rows, depth, alpha, min_leaf):
    """DP value and root feature (-1: leaf) of ``(rows, depth budget)`` by plain backward
    induction over every tree (X01: lists of 0/1, y: class indices), with the DP's rules: pure
    states, states with fewer than ``2 * min_leaf`` rows and budget 0 are leaves; a split is
    valid when both sides keep ``min_leaf`` rows and costs ``(alpha * |rows| + v_left) +
    v_right``; the first option in order (leaf, feature 0, 1, ...) strictly better than every
    earlier one is taken. The oracle of the layer solver's contract and depth-2 kernel."""
    err, _ = _dpdt13_leaf(rows, y, n_classes)
    if depth == 0 or err == 0.0 or len(rows) < 2 * min_leaf:
        return err, -1
    best, best_f = err, -1
    for i in range(len(X01[0]) if X01 else 0):
        left, right = _dpdt13_sides(X01, rows, i)
        if len(left) < max(1, min_leaf) or len(right) < max(1, min_leaf):
            continue
        vl = naive_dpdt13_best(X01, y, n_classes, left, depth - 1, alpha, min_leaf)[0]
        vr = naive_dpdt13_best(X01, y, n_classes, right, depth - 1, alpha, min_leaf)[0]
        cost = (alpha * float(len(rows)) + vl) + vr
        if cost < best:
            best, best_f = cost, i
    return best, best_f


def naive_dpdt13_value(X01, y, n_classes, rows, depth, alpha, min_leaf):
    """DP value of ``(rows, depth budget)`` (`naive_dpdt13_best`)."""
    return naive_dpdt13_best(X01, y, n_classes, rows, depth, alpha, min_leaf)[0]


# ----------------------------------------------------------------------------- test data
def node_class_counts(X, y, n_classes, rows):
    """A node's inputs to the depth-2 kernels: its row mask, the class counts among the rows
    with each feature = 1 (d x n_classes) and the node's class totals."""
    n, d = X.shape
    r = np.zeros(n, bool)
    r[rows] = True
    cnt1 = np.zeros((d, n_classes))
    for c in range(n_classes):
        cnt1[:, c] = X[r & (y == c)].sum(axis=0)
    return r, cnt1, np.bincount(y[r], minlength=n_classes).astype(float)


def twinned_columns(rng, n, d_base, density=0.5):
    """Random 0/1 columns (n x 2 d_base) of which half are copies or complements of the others,
    shuffled: data on which equivalent-feature dropping has work to do."""
    X = (rng.random((n, d_base)) < density).astype(np.int64)
    extra = []
    for _ in range(d_base):
        j = int(rng.integers(0, d_base))
        extra.append(X[:, j] if rng.random() < 0.5 else 1 - X[:, j])
    return np.column_stack([X] + extra)[:, rng.permutation(2 * d_base)]


# ----------------------------------------------------------------------------- numeric optimal
def naive_numeric_midpoint(a, b):
    """Threshold between consecutive distinct values a < b (`_numeric_kernels.midpoint`)."""
    return naive_dpdt_midpoint(a, b)


def naive_gini_seed(values, y, w, n_classes):
    """The first Gini split of one feature (`_numeric_kernels.gini_seed`): over the
    boundaries between distinct ``values`` (in increasing order), the one maximising
    sum_c L_c^2 / W_L + sum_c R_c^2 / W_R (L, R: class weights left and right), the first
    on ties. Returns ``(k, rows left of it, weight left of it)``, or ``(-1, 0, 0.0)``."""
    order = np.argsort(values, kind="stable")
    v, yy, ww = values[order], y[order], w[order]
    total = np.bincount(yy, weights=ww, minlength=n_classes)
    best, out = -1.0, (-1, 0, 0.0)
    cuts = [i for i in range(1, len(v)) if v[i] != v[i - 1]]
    for k, i in enumerate(cuts):
        left = np.bincount(yy[:i], weights=ww[:i], minlength=n_classes)
        right = total - left
        score = (left @ left) / left.sum() + (right @ right) / right.sum()
        if score > best + 1e-12 * max(1.0, abs(score)):
            best, out = score, (k, i, float(ww[:i].sum()))
    return out


def naive_gini_order(X, y, w, n_classes):
    """Features by the score of their best Gini split (`_numeric_kernels.rank_seeds`): a list
    of ``(score, feature)``, best score first, a feature with a single value (score -1)
    last, ties by the lower index."""
    scores = []
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        v, yy, ww = X[order, f], y[order], w[order]
        total = np.bincount(yy, weights=ww, minlength=n_classes)
        best = -1.0
        for i in range(1, len(v)):
            if v[i] != v[i - 1]:
                left = np.bincount(yy[:i], weights=ww[:i], minlength=n_classes)
                right = total - left
                best = max(best, (left @ left) / left.sum() + (right @ right) / right.sum())
        scores.append((best, f))
    return sorted(scores, key=lambda t: (-t[0], t[1]))


def numeric_splits(X, rows):
    """Every split of ``rows`` on a numeric matrix, in order (feature, then increasing
    threshold): ``(feature, threshold, left rows, right rows)``, thresholds the midpoints
    between consecutive distinct values among ``rows``."""
    for f in range(X.shape[1]):
        vals = sorted({X[r, f] for r in rows})
        for a, b in zip(vals, vals[1:]):
            t = naive_numeric_midpoint(a, b)
            yield (f, t, [r for r in rows if X[r, f] <= t], [r for r in rows if X[r, f] > t])

def naive_numeric_optimal(X, y, n_classes, depth, sample_weight=None, lam=0.0, eps=None):
    """Brute force over every tree of depth <= ``depth`` whose thresholds are midpoints of
    consecutive distinct values among the node's rows (rows of zero weight ignored), for
    weighted errors + ``lam * W`` per leaf. Returns ``(cost, tree)``, tree a nested tuple
    ``(feature, threshold, left, right)`` or None for a leaf, chosen by the documented tie
    rule: a leaf unless a split is strictly better (by more than ``eps``), then the lowest
    feature, then the lowest threshold, children by the same rule."""
    X = np.asarray(X, dtype=float)
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]
    rows0 = [r for r in range(len(y)) if w[r] > 0]
    total = sum(w[r] for r in rows0)
    pen = lam * total
    if eps is None:
        integer = lam == 0 and all(float(w[r]).is_integer() for r in rows0)
        eps = 0.5 if integer else 1e-9 * max(1.0, total)

    def rec(rows, h):
        c = class_weights(rows, y, w, n_classes)
        best = (sum(c) - max(c) + pen, None)
        if h == 0:
            return best
        for f, t, left, right in numeric_splits(X, rows):
            cl, tl = rec(left, h - 1)
            cr, tr = rec(right, h - 1)
            if cl + cr < best[0] - eps:
                best = (cl + cr, (f, t, tl, tr))
        return best

    return rec(rows0, depth)


def naive_numeric_widened(X, y, n_classes, width, depth, lam=0.0):
    """The primal heuristic of the anytime numeric search (a widened search,
    `treebench.search.numeric_anytime`): the fewest errors + ``lam * W`` per leaf over the
    trees of depth <= ``depth`` in which a node with three or more tests left splits at the
    best Gini split (`naive_gini_seed`) of one of the ``width`` features of the best Gini
    scores (`naive_gini_order`; a feature with a single value among the node's rows has
    none), and a node with two or fewer tests left at any midpoint. Unit weights. Returns the
    cost, or None when two features' scores tie at the ``width`` cut-off of some node (which
    of them the search takes depends on rounding)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=np.int64)
    pen = lam * len(y)
    tied = []

    def rec(rows, h):
        c = np.bincount(y[rows], minlength=n_classes)
        best = float(c.sum() - c.max()) + pen
        if h == 0 or best == pen:
            return best
        if h <= 2:
            splits = [(np.array(a), np.array(b)) for _, _, a, b in numeric_splits(X, rows)]
        else:
            w = np.ones(len(rows))
            order = naive_gini_order(X[rows], y[rows], w, n_classes)
            if width < len(order) and order[width - 1][0] >= 0 and abs(
                    order[width - 1][0] - order[width][0]) <= 1e-9 * abs(order[width][0]):
                tied.append(rows)
            splits = []
            for score, f in order[:width]:
                k, i, _ = naive_gini_seed(X[rows, f], y[rows], w, n_classes)
                if k >= 0:
                    v = np.sort(X[rows, f], kind="stable")
                    t = naive_numeric_midpoint(v[i - 1], v[i])
                    splits.append((rows[X[rows, f] <= t], rows[X[rows, f] > t]))
        for left, right in splits:
            best = min(best, rec(left, h - 1) + rec(right, h - 1))
        return best

    cost = rec(np.arange(len(y)), depth)
    return None if tied else cost


def naive_numeric_lexicographic(X, y, n_classes, depth, sample_weight=None):
    """Brute force over the same trees as `naive_numeric_optimal` for the pair (weighted
    errors, leaves) compared lexicographically: a leaf unless a split's pair is smaller, then
    the lowest feature, then the lowest threshold, children by the same rule. Returns
    ``((errors, leaves), tree)``."""
    X = np.asarray(X, dtype=float)
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]

    def rec(rows, h):
        c = class_weights(rows, y, w, n_classes)
        best = ((sum(c) - max(c), 1), None)
        if h == 0:
            return best
        for f, t, left, right in numeric_splits(X, rows):
            (el, ll), tl = rec(left, h - 1)
            (er, lr), tr = rec(right, h - 1)
            if (el + er, ll + lr) < best[0]:
                best = ((el + er, ll + lr), (f, t, tl, tr))
        return best

    return rec([r for r in range(len(y)) if w[r] > 0], depth)


def naive_dpdt_numeric(X, y, n_classes, depth, alpha, sample_weight=None):
    """DPDT's exhaustive backward induction on numeric features, plainly: at every node the
    first minimum over (leaf, every feature's midpoints increasing) of the float
    ``(alpha * W + v_left) + v_right``, a split taken only when strictly below the best so
    far (rows of zero weight dropped). Returns ``(value, tree)`` as `naive_numeric_optimal`."""
    X = np.asarray(X, dtype=float)
    y = [int(v) for v in y]
    w = [1.0] * len(y) if sample_weight is None else [float(v) for v in sample_weight]

    def rec(rows, h):
        c = class_weights(rows, y, w, n_classes)
        best = (sum(c) - max(c), None)
        if h == 0 or len(rows) < 2 or best[0] <= 0.0:
            return best
        aW = alpha * sum(c)
        for f, t, left, right in numeric_splits(X, rows):
            cl, tl = rec(left, h - 1)
            cr, tr = rec(right, h - 1)
            if (aW + cl) + cr < best[0]:
                best = ((aW + cl) + cr, (f, t, tl, tr))
        return best

    return rec([r for r in range(len(y)) if w[r] > 0], depth)


def naive_tree_tuple(tree, i=0):
    """TreeArrays -> the nested ``(feature, threshold, left, right)`` tuple (None: leaf)."""
    if tree.feature[i] < 0:
        return None
    return (int(tree.feature[i]), float(tree.threshold[i]), naive_tree_tuple(tree, tree.left[i]),
            naive_tree_tuple(tree, tree.right[i]))


# --- search read-back ---
# Reference for treebench.search.readback: the recursive pre-order walk of a chosen tree.


def naive_read_back(X, y, sw, n_classes, choose, depth):
    """Pre-order (feature, left, right, class weights) of the tree whose node on the rows
    ``rows`` (a list of row indices) with depth budget ``h`` splits on ``choose(rows, h)``
    (-1: a leaf); left is ``x_f = 0``."""
    feat, left, right, value = [], [], [], []

    def visit(rows, h):
        node = len(feat)
        tot = [0.0] * n_classes
        for i in rows:
            tot[y[i]] += sw[i]
        f = choose(rows, h)
        feat.append(f)
        left.append(-1)
        right.append(-1)
        value.append(tot)
        if f >= 0:
            left[node] = visit([i for i in rows if X[i][f] == 0], h - 1)
            right[node] = visit([i for i in rows if X[i][f] != 0], h - 1)
        return node

    visit(list(range(len(y))), depth)
    return feat, left, right, value


# --- exact optima (treebench.search.exactness: the searches' optimality claims) ---
# Brute force in exact rational arithmetic (fractions.Fraction: every float weight is a
# rational number), so that a search's claim of optimality is checked against the true optimum
# whatever the range of the weights.


def naive_exact_optimum(X, y, depth, sample_weight, lam=0, per_leaf=None):
    """The least ``errors + price * leaves`` over every tree of depth <= ``depth`` whose tests
    are ``x_f <= a`` for a value ``a`` of feature ``f`` among the node's rows (not its largest;
    on 0/1 columns the one test of the feature), in exact arithmetic: ``errors`` the weight of
    the misclassified rows (majority label at each leaf), ``price`` = ``per_leaf`` if given,
    else ``lam`` times the total weight. Rows of zero weight are ignored. Returns a Fraction."""
    from fractions import Fraction

    w = [Fraction(float(v)) for v in sample_weight]
    rows0 = [r for r in range(len(y)) if w[r] > 0]
    total = sum(w[r] for r in rows0)
    price = Fraction(per_leaf) if per_leaf is not None else Fraction(lam) * total
    yy = [int(v) for v in y]

    def rec(rows, h):
        c = {}
        for r in rows:
            c[yy[r]] = c.get(yy[r], Fraction(0)) + w[r]
        best = sum(c.values()) - max(c.values()) + price
        if h == 0:
            return best
        for f in range(len(X[0])):
            values = sorted({float(X[r][f]) for r in rows})
            for a in values[:-1]:
                left = [r for r in rows if float(X[r][f]) <= a]
                right = [r for r in rows if float(X[r][f]) > a]
                best = min(best, rec(left, h - 1) + rec(right, h - 1))
        return best

    return rec(rows0, depth)


def naive_exact_objective(predicted, y, sample_weight, n_leaves, lam=0, per_leaf=None):
    """``errors + price * n_leaves`` of a fitted tree in exact arithmetic (`naive_exact_optimum`'s
    terms), from its predictions on the training rows."""
    from fractions import Fraction

    w = [Fraction(float(v)) for v in sample_weight]
    price = Fraction(per_leaf) if per_leaf is not None else Fraction(lam) * sum(w)
    errors = sum((w[r] for r in range(len(y)) if predicted[r] != y[r]), Fraction(0))
    return errors + price * n_leaves


def random_rashomon_problems(seed, wanted, lams, accept=lambda X, y, depth: True):
    """``wanted`` small random problems ``(X, y, depth, lam, multiplier)`` with 0/1 features
    (6-15 rows, 2-3 columns), two classes present, depth 1 or 2, ``lam`` drawn from ``lams``
    and the multiplier from 0.1, 0.3 and 0.6; only draws that ``accept`` takes."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < wanted:
        n = int(rng.integers(6, 16))
        X = rng.integers(0, 2, size=(n, int(rng.integers(2, 4))))
        y = rng.integers(0, 2, size=n)
        depth = int(rng.integers(1, 3))
        lam = float(rng.choice(lams))
        mult = float(rng.choice([0.1, 0.3, 0.6]))
        if len(set(y)) == 2 and accept(X, y, depth):
            out.append((X, y, depth, lam, mult))
    return out


def naive_rashomon_trees(X, y, counts, n_classes, depth, A, P, binary=True,
                         keep_redundant=False, leaf_ties="prior"):
    """Every tree of depth <= ``depth`` as (cost, nested tuple), by brute force: a leaf, or a
    split on a feature (0/1: left is ``x == 0``; numeric: ``x <= t`` at each midpoint between
    consecutive distinct values of the node's rows) with both sides non-empty, and every pair of
    subtrees; without ``keep_redundant``, no split into two leaves that predict the same class
    (the class with the most weight; ties to the larger class total, then the lower index, or
    with ``leaf_ties="last"`` to the highest index).
    Cost ``errors * A + leaves * P`` in whole units (``counts`` are whole weights)."""
    X = np.asarray(X)
    y = np.asarray(y)
    counts = np.asarray(counts, dtype=np.int64)
    keep = counts > 0
    prior = np.bincount(y[keep], weights=counts[keep], minlength=n_classes)

    def label(rows):
        w = np.bincount(y[rows], weights=counts[rows], minlength=n_classes)
        tied = [k for k in range(n_classes) if w[k] == w.max()]
        if leaf_ties == "last":
            return tied[-1]
        return max(tied, key=lambda k: (prior[k], -k))

    def trees(rows, d):
        w = np.bincount(y[rows], weights=counts[rows], minlength=n_classes)
        out = [(int(round(w.sum() - w.max())) * A + P, ("leaf",))]
        if d == 0:
            return out
        for f in range(X.shape[1]):
            x = X[rows, f]
            if binary:
                cuts = [0.5]
            else:
                v = np.unique(x)
                cuts = list(v[:-1] + (v[1:] - v[:-1]) / 2.0)
            for t in cuts:
                go = x <= t
                if go.all() or not go.any():
                    continue
                same = label(rows[go]) == label(rows[~go])
                lt = trees(rows[go], d - 1)
                rt = trees(rows[~go], d - 1)
                out.extend((a + b, (f, float(t), ta, tb)) for a, ta in lt for b, tb in rt
                           if keep_redundant or not (same and ta == tb == ("leaf",)))
        return out

    return trees(np.flatnonzero(keep), depth)
