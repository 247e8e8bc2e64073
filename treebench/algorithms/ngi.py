"""`ngi`: low-expected-cost trees by regularised impurity reduction and the paper's baselines.

Zhang & Gionis, "Regularized impurity reduction: accurate decision trees with complexity
guarantees", DMKD 2023, with the
paper's details checked against the authors' code.

* **Objects** (§6 "Datasets"). Training rows are coalesced: identical feature vectors become one
  object whose label is the (weighted) majority label, ties to the smallest label, and whose
  probability ``p(x)`` is its share of the total sample weight (multiplicity / n without
  weights). ``φ(S)`` counts pairs of objects of ``S`` with different labels (unweighted, §3).
* **Greedy rule** (Algorithm 1, Eq. 2). At a node ``S`` choose the test maximising
  ``Z(d) = (B(d) + E(d) + λ·D(d)) / c(d)``; ``B``, ``E`` (closed form of §4's ``f̃_i``) and
  ``D`` are documented in `treebench.search.ngi`. ``d_term="paper"`` uses §4's
  ``D = p(S)·(h(S) − h(S|d))``; ``d_term="authors"`` the authors' code's
  ``p(S)·(h(S) − Σ_v p(S_v)·h(S_v))`` with absolute masses (equal at the root; below it the
  authors' form shrinks ``h(S|d)`` and, with unequal costs, rewards cheap non-discriminative
  tests). The authors' iris seed-42 fixture (``tests/algorithms/test_ngi_iris.py``) is reproduced by ``d_term="authors"``
  with ``min_objects=2``; the paper's form gives the same λ and test AUC there but other trees
  for λ ≤ 10 (training cost 3.009524 instead of 3.228571 at λ = 1).
* **Stopping** (§3): ``S`` homogeneous, ``p(S) ≤ θ`` (tolerance 1e-7), no test left, or at most
  ``min_objects`` objects (the authors' code stops at 2; the paper has no such rule, default 1).
  A used test is removed from its subtree.
* **Ties**: first test in column order (scores within 1e-12 relative are equal), the branch
  ``x = 0`` for ``S_h``, the smallest label for an object's label (the paper's coalescing); a
  node's label follows the shared rule of `treebench.tree.labels` (ties to the class more
  frequent in the whole training set, then the smallest label), as for every learner.
* **Methods** (§6, Table 2): ``ec4.5`` / ``ecart`` (``D`` with entropy / Gini), ``asr`` (λ = 0,
  Navidi et al.), ``ip`` (maximise ``(p(S)φ(S) − Σ_v p(S_v)φ(S_v)) / c(d)``), ``bal`` (minimise
  ``|p(S_1) − p(S_0)|``, like the authors' code also over tests that do not split the node, which
  then cost a test and change nothing), ``bal-fixed`` (only splitting tests), ``c4.5`` /
  ``cart`` (information / Gini gain, costs ignored) and ``cc4.5`` / ``ccart`` (gain / cost). All
  share the objects, stopping rules and ties. Candidates are the tests that split the node,
  except for ``bal`` and for ``ec4.5``/``ecart`` with ``d_term="authors"``, which (like the
  authors' code) score every unused test: there a non-splitting test gets
  ``λ·p(S)·h(S)·(1 − p(S))/c(d) > 0`` below the root and, when cheap enough, is chosen; with
  unit costs a splitting test always scores higher, so unit-cost trees do not change.
* **Leaves** store the weighted class distribution of their objects (``tree_.value``, so
  ``predict_proba`` is that distribution); the empty branch of a non-splitting test predicts with
  the nearest non-empty ancestor's distribution.
* **Pruning** ``ccp(α)`` (§6, Breiman et al.): top-down, node ``t`` becomes a leaf when
  ``R(t) + α < Σ_{leaves ℓ of T_t} R(ℓ) + α·|leaves(T_t)|`` with ``R = p·h`` (entropy for the
  C4.5 family, ``asr`` and ``bal``; Gini for the CART family; ``p·φ`` for ``ip``), leaves counted
  on the unpruned subtree. ``ccp_alpha = 0`` prunes nothing.
* **Expected cost** (§3): ``Σ_x p(x) Σ_{tests on x's path} c(test)``, ``expected_cost``.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.search import ngi as K
from treebench.algorithms.base import TreeClassifierBase
from treebench.registry import ALGORITHMS
from treebench.search.criteria import CODES, node_risk_np
from treebench.tree.arrays import TreeArrays
from treebench.tree.labels import class_prior, majority_labels

#: method name → kernel code
METHODS = {
    "ec4.5": K.M_EC45,
    "ecart": K.M_ECART,
    "asr": K.M_ASR,
    "ip": K.M_IP,
    "bal": K.M_BAL,
    "bal-fixed": K.M_BAL_FIXED,
    "c4.5": K.M_C45,
    "cart": K.M_CART,
    "cc4.5": K.M_CC45,
    "ccart": K.M_CCART,
}

#: impurity of the pruning cost R = p·h for each method
PRUNE_IMPURITY = {
    "ec4.5": "entropy", "c4.5": "entropy", "cc4.5": "entropy", "asr": "entropy",
    "bal": "entropy", "bal-fixed": "entropy",
    "ecart": "gini", "cart": "gini", "ccart": "gini",
    "ip": "pairs",
}


# ---------------------------------------------------------------------------- objects
def coalesce(X: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray, n_classes: int):
    """Merge identical rows of the 0/1 matrix ``X`` into objects (§6 "Datasets").

    Returns ``(Xc, yc, wc, inverse)``: the objects' rows (uint8, in lexicographic order of the
    rows), their label (weighted majority, ties to the smallest label), their probability
    (share of the total weight; rows of zero weight are dropped before) and, for every input
    row, its object (-1 for dropped rows).
    """
    keep = sample_weight > 0
    rows = None if keep.all() else np.flatnonzero(keep)  # no copy of X in the common case
    Xk = X if rows is None else X[rows]
    rep, inv = unique_rows(Xk)
    n_obj = rep.shape[0]
    yk = y_index if rows is None else y_index[rows]
    wk = sample_weight if rows is None else sample_weight[rows]
    mass = np.bincount(inv * n_classes + yk, weights=wk, minlength=n_obj * n_classes)
    mass = mass.reshape(n_obj, n_classes)
    yc = np.argmax(mass, axis=1).astype(np.int64)  # first maximum: smallest label
    wc = mass.sum(axis=1)
    wc = wc / wc.sum()
    inverse = -np.ones(X.shape[0], dtype=np.int64)
    if rows is None:
        inverse[:] = inv
    else:
        inverse[rows] = inv
    Xc = np.ascontiguousarray(Xk[rep] != 0, dtype=np.uint8)
    return Xc, yc, wc, inverse


def unique_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a 0/1 matrix in lexicographic order, as ``(representative row index of
    each distinct row, distinct-row index of every row)``; equal to ``np.unique(X, axis=0,
    return_inverse=True)`` up to representation, but fast: rows are packed into big-endian
    64-bit words (word order = lexicographic order) and sorted by one `np.lexsort`."""
    n = X.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    packed = np.packbits(X != 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad or packed.shape[1] == 0:
        packed = np.hstack([packed, np.zeros((n, pad or 8), dtype=np.uint8)])
    words = np.ascontiguousarray(packed).view(">u8").astype(np.uint64)
    order = np.lexsort(words.T[::-1])  # the first word is the primary key
    sw = words[order]
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(sw[1:] != sw[:-1], axis=1)
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return order[new], inv


def ccp_prune_mask(feature, left, right, R, alpha: float) -> np.ndarray:
    """Nodes kept by top-down ``ccp(α)``: True for kept nodes; a kept node whose children are
    dropped becomes a leaf. Leaves of ``T_t`` are counted on the unpruned subtree."""
    n = feature.shape[0]
    sum_r = np.where(feature < 0, R, 0.0)
    n_leaves = (feature < 0).astype(np.int64)
    for i in range(n - 1, -1, -1):  # children have larger ids
        if feature[i] >= 0:
            sum_r[i] = sum_r[left[i]] + sum_r[right[i]]
            n_leaves[i] = n_leaves[left[i]] + n_leaves[right[i]]
    keep = np.zeros(n, dtype=bool)
    stack = [0]
    while stack:
        t = stack.pop()
        keep[t] = True
        if feature[t] < 0:
            continue
        if alpha > 0 and R[t] + alpha < sum_r[t] + alpha * n_leaves[t]:
            continue  # collapse t
        stack.append(int(left[t]))
        stack.append(int(right[t]))
    return keep


def _assemble(feature, left, right, value, objcount, keep, prior=None) -> tuple[TreeArrays, np.ndarray]:
    """Renumber the kept nodes in pre-order; returns the tree and each node's object counts.
    Nodes are labelled by the shared tie rule (`majority_labels`: ties to the larger ``prior``,
    the training class totals, then the lower index)."""
    order: list[int] = []
    stack = [0]
    while stack:
        i = stack.pop()
        order.append(i)
        if feature[i] >= 0 and keep[left[i]]:
            stack.append(int(right[i]))
            stack.append(int(left[i]))
    new = {o: k for k, o in enumerate(order)}
    idx = np.array(order, dtype=np.int64)
    internal = np.array([feature[o] >= 0 and keep[left[o]] for o in order], dtype=bool)
    feat = np.where(internal, feature[idx], -1)
    lft = np.array([new[int(left[o])] if internal[k] else -1 for k, o in enumerate(order)])
    rgt = np.array([new[int(right[o])] if internal[k] else -1 for k, o in enumerate(order)])
    val = value[idx]
    label = majority_labels(val, prior)
    # the empty branch of a non-splitting test predicts like its parent
    for k in range(len(order)):
        if internal[k]:
            for c in (lft[k], rgt[k]):
                if val[c].sum() <= 0:
                    label[c] = label[k]
    tree = TreeArrays(feat, np.where(internal, 0.5, -2.0), lft, rgt, val, label)
    return tree, objcount[idx]


def path_costs(tree: TreeArrays, cost: np.ndarray) -> np.ndarray:
    """Sum of test costs from the root to every node."""
    out = np.zeros(tree.n_nodes)
    for i in range(tree.n_nodes):
        if tree.feature[i] >= 0:
            c = out[i] + cost[tree.feature[i]]
            out[tree.left[i]] = c
            out[tree.right[i]] = c
    return out


def proba_table(tree: TreeArrays) -> np.ndarray:
    """Class distribution predicted at every node: its own, or (empty node) its nearest
    non-empty ancestor's."""
    v = tree.value.copy()
    for i in range(tree.n_nodes):
        if tree.feature[i] >= 0:
            for c in (tree.left[i], tree.right[i]):
                if v[c].sum() <= 0:
                    v[c] = v[i]
    tot = v.sum(axis=1, keepdims=True)
    return np.where(tot > 0, v / np.where(tot > 0, tot, 1.0), 1.0 / max(1, v.shape[1]))


# ---------------------------------------------------------------------------- estimator
class NGIClassifier(TreeClassifierBase):
    """NGI family on 0/1 features: EC4.5, ECART, ASR and the baselines of Zhang & Gionis (2023).

    Parameters
    ----------
    method : {"ec4.5", "ecart", "asr", "ip", "bal", "bal-fixed", "c4.5", "cart", "cc4.5", "ccart"}
        The greedy rule (module docstring).
    lam : float >= 0
        The trade-off λ of Eq. 2 (used by ``ec4.5`` and ``ecart``).
    theta : float in (0, 1)
        Nodes with probability ``p(S) ≤ θ`` become leaves (§3).
    min_objects : int >= 1
        Nodes with at most this many coalesced objects become leaves (authors' code: 2).
    d_term : {"paper", "authors"}
        Form of ``D`` below the root (module docstring).
    ccp_alpha : float >= 0
        Top-down cost-complexity pruning strength (0: no pruning).
    test_costs : array of shape (n_features,) or None
        Positive cost of each column's test; ``None`` takes the fit context's ``feature_costs``,
        unit costs when that is also ``None``.
    random_state : int or None
        Unused (the methods are deterministic); kept so the runner can pass seeds uniformly.

    Notes
    -----
    After ``fit``: ``tree_``, ``classes_``, ``test_costs_`` (the costs used),
    ``n_objects_`` (coalesced objects), ``node_proba_`` (class distribution predicted at
    every node), ``expected_cost_`` (expected cost on the coalesced
    training objects, §3) and ``solve_info_`` (``operations``: test scores computed,
    ``expected_cost``, ``n_objects``, ``n_nodes_grown``, ``n_pruned``, ``compile_seconds``).
    """

    binary_features_only = True

    _parameter_constraints = {
        "method": [StrOptions(set(METHODS))],
        "lam": [Interval(Real, 0.0, None, closed="left")],
        "theta": [Interval(Real, 0.0, 1.0, closed="neither")],
        "min_objects": [Interval(Integral, 1, None, closed="left")],
        "d_term": [StrOptions({"paper", "authors"})],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "test_costs": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        method="ecart",
        lam=1.0,
        theta=0.005,
        min_objects=1,
        d_term="paper",
        ccp_alpha=0.0,
        test_costs=None,
        random_state=None,
    ):
        self.method = method
        self.lam = lam
        self.theta = theta
        self.min_objects = min_objects
        self.d_term = d_term
        self.ccp_alpha = ccp_alpha
        self.test_costs = test_costs
        self.random_state = random_state

    def _method(self) -> str:
        return self.method

    def _costs(self, n_features: int, ctx) -> np.ndarray:
        src = self.test_costs if self.test_costs is not None else ctx.feature_costs
        if src is None:
            return np.ones(n_features)
        c = np.asarray(src, dtype=np.float64).reshape(-1)
        if c.shape != (n_features,):
            raise ValueError(
                f"test_costs must have one cost per column of X ({n_features}), got {c.size}."
            )
        if not np.all(np.isfinite(c)) or np.any(c <= 0):
            raise ValueError("test_costs must be positive finite numbers (one per column).")
        return c

    def _fit_tree(self, X, y_index, ctx):
        method = self._method()
        n_classes = len(self.classes_)
        cost = self._costs(X.shape[1], ctx)
        Xc, yc, wc, _ = coalesce(X, y_index, ctx.sample_weight, n_classes)
        compile_s = warmup()
        lam = 0.0 if method == "asr" else float(self.lam)
        capacity = 2 * Xc.shape[0] + 1
        problem = K.ngi_problem(Xc, yc, wc, cost, n_classes, METHODS[method], lam, self.theta,
                                self.min_objects, self.d_term == "paper")
        while True:
            n_nodes, feature, left, right, _parent, value, objcount, n_scored = K.grow(
                problem, capacity)
            if n_nodes >= 0:
                break
            capacity *= 2
        feature, left, right = feature[:n_nodes], left[:n_nodes], right[:n_nodes]
        value, objcount = value[:n_nodes], objcount[:n_nodes]
        R = node_risk_np(value, objcount, CODES[PRUNE_IMPURITY[method]])
        keep = ccp_prune_mask(feature, left, right, R, float(self.ccp_alpha))
        prior = class_prior(y_index, n_classes, ctx.sample_weight)
        tree, _ = _assemble(feature, left, right, value, objcount, keep, prior)
        self.test_costs_ = cost
        self.n_objects_ = int(Xc.shape[0])
        self.node_proba_ = proba_table(tree)
        leaves = tree.apply(Xc)
        self.expected_cost_ = float(np.dot(wc, path_costs(tree, cost)[leaves]))
        info = {
            "operations": int(n_scored),
            "expected_cost": self.expected_cost_,
            "n_objects": self.n_objects_,
            "n_nodes_grown": int(n_nodes),
            "n_pruned": int(n_nodes - tree.n_nodes),
            "compile_seconds": compile_s,
        }
        return tree, info

    def predict_proba(self, X):
        """Weighted class distribution of the coalesced training objects in the leaf each row
        reaches (an empty leaf: its nearest non-empty ancestor's)."""
        X = self._check_X(X)
        return self.node_proba_[self.tree_.apply(X)]

    def expected_cost(self, X, sample_weight=None) -> float:
        """Mean (weighted) sum of test costs on the paths of the rows of ``X`` (§3)."""
        X = self._check_X(X)
        c = path_costs(self.tree_, self.test_costs_)[self.tree_.apply(X)]
        return float(np.average(c, weights=sample_weight))


_COMPILED = False


def warmup() -> float:
    """Compile the kernels once per process on a tiny problem; returns the seconds spent."""
    global _COMPILED
    if _COMPILED:
        return 0.0
    t0 = time.perf_counter()
    X = np.array([[0, 1], [1, 0], [1, 1]], dtype=np.uint8)
    y = np.array([0, 1, 1], dtype=np.int64)
    w = np.full(3, 1 / 3)
    K.grow(K.ngi_problem(X, y, w, np.ones(2), 2, K.M_ECART, 1.0, 0.005, 1, True), 7)
    _COMPILED = True
    return time.perf_counter() - t0


#: the declaration every NGI learner shares: greedy, with its kernels in the "other" group
DECLARATION = {"tags": ("greedy", "cost-sensitive"), "warmup": warmup,
               "precompile": {"other": warmup}}
ALGORITHMS.register("ngi", **DECLARATION)(NGIClassifier)


def _fixed(name: str, cls_name: str, doc: str):
    # registered under REGISTRY_NAMES[name]
    """A registered subclass of `NGIClassifier` with ``method`` fixed to ``name``."""

    def __init__(self, lam=1.0, theta=0.005, min_objects=1, d_term="paper", ccp_alpha=0.0,
                 test_costs=None, random_state=None):
        self.lam = lam
        self.theta = theta
        self.min_objects = min_objects
        self.d_term = d_term
        self.ccp_alpha = ccp_alpha
        self.test_costs = test_costs
        self.random_state = random_state

    constraints = {k: v for k, v in NGIClassifier._parameter_constraints.items() if k != "method"}
    sub = type(
        cls_name,
        (NGIClassifier,),
        {
            "__init__": __init__,
            "__doc__": doc + "\n\nSame parameters as `NGIClassifier` without ``method``.",
            "__module__": __name__,
            "__qualname__": cls_name,
            "_parameter_constraints": constraints,
            "_method": lambda self: name,
            "method": property(lambda self: name),
        },
    )
    globals()[cls_name] = sub
    ALGORITHMS.register(REGISTRY_NAMES[name], **DECLARATION)(sub)
    return sub


_FIXED_DOCS = {
    "ec4.5": ("EC45", "EC4.5 (Zhang & Gionis 2023): NGI greedy rule with entropy impurity reduction."),
    "ecart": ("ECART", "ECART (Zhang & Gionis 2023): NGI greedy rule with Gini impurity reduction."),
    "asr": ("ASR", "ASR greedy rule of Navidi et al. (2020): NGI's B + E without impurity (λ = 0)."),
    "ip": ("IP", "IP baseline of Zhang & Gionis (2023): greedy reduction of weighted impure pairs."),
    "bal": ("BAL", "BAL baseline of Zhang & Gionis (2023) as in the authors' code: most balanced test."),
    "bal-fixed": ("BALFixed", "BAL baseline restricted to tests that split the node."),
    "c4.5": ("C45", "C4.5 baseline of the NGI paper: information gain on coalesced objects."),
    "cart": ("CART", "CART baseline of the NGI paper: Gini gain on coalesced objects."),
    "cc4.5": ("CC45", "Cost-benefit C4.5 of the NGI paper: information gain divided by test cost."),
    "ccart": ("CCART", "Cost-benefit CART of the NGI paper: Gini gain divided by test cost."),
}

#: registry name of each fixed-method class (``cart`` is taken by scikit-learn's CART, so the
#: paper's two plain baselines carry an ``ngi-`` prefix)
REGISTRY_NAMES = {m: (f"ngi-{m}" if m in ("c4.5", "cart") else m) for m in _FIXED_DOCS}

for _name, (_short, _doc) in _FIXED_DOCS.items():
    _fixed(_name, f"NGI{_short}Classifier", _doc)
