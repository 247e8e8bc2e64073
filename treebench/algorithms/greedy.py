"""`greedy`: the top-down ID3-style learner of the textbook chapter on decision trees.

Shalev-Shwartz & Ben-David, *Understanding Machine Learning*, ch. 18
(Cambridge University Press, 2014):

* **Growing** (§18.2, ID3 pseudocode). At a node with remaining depth budget ``h`` the learner
  returns a leaf when ``h == 0``, when the node is pure, or when no feature is non-constant on
  the node's rows (ID3's ``A = ∅``: a feature used above is constant below, so "not yet used"
  and "non-constant" coincide). Otherwise it splits on the best-scoring non-constant feature,
  **even when the best gain is zero** (as ID3 and the Top-k paper's Figure 1 do with ``k = 1``).
  ``min_improvement > 0`` turns a split whose gain is below it into a leaf (off by default).
  Leaves are labelled by `majority_label` with the class totals of the whole training set as
  the tie-break prior.
* **Gain measures** (§18.2.1). ``Gain(S, i) = C(S) − Σ_{b∈{0,1}} P[x_i = b] · C(S | x_i = b)``
  with the three impurities of the text, extended to any number of classes: ``"error"``
  ``1 − max_k p_k`` (train error), ``"entropy"`` ``−Σ_k p_k log2 p_k`` (information gain),
  ``"gini"`` ``1 − Σ_k p_k²`` (= ``2a(1 − a)`` with two classes). Probabilities are weighted
  frequencies (sample weights enter every count).
* **Pruning** (§18.2.2, "Generic Tree Pruning Procedure") with ``f`` the right-hand side of the
  MDL bound (18.1); see `prune_mdl`.

Split selection rule (shared with `topk`, so that Top-1 equals greedy)
---------------------------------------------------------------------
Each candidate feature ``j`` (non-constant on the node's rows, both children with at least
``min_samples_leaf`` rows) gets the score ``s_j = Σ_{b∈{0,1}} (W_b / W) · C(p_b)`` — the weighted
child impurity, computed directly (never as ``parent − gain``), where ``W`` is the node's total
weight, ``W_b`` the weight of the rows with ``x_j = b`` and ``p_b`` their class distribution.
Lower is better (highest gain). With ``s* = min_j s_j``, the chosen feature is the **lowest
index** ``j`` with ``s_j <= s* + 1e-12 · max(1, |s*|)``: scores within that tolerance are ties,
so float noise in different but equivalent computations cannot change the tree.

Rows with zero sample weight are dropped before learning (they do not make a feature
non-constant and do not count towards ``min_samples_leaf``); negative weights are an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.algorithms.base import TreeClassifierBase
from treebench.registry import ALGORITHMS
from treebench.search.criteria import CODES, impurity_np
from treebench.tree.arrays import BINARY_THRESHOLD, TreeArrays, binary_thresholds
from treebench.tree.labels import majority_label, recount

#: relative tolerance under which two scores (or two bound values) count as equal
TIE_RTOL = 1e-12


def tie_tolerance(best: float) -> float:
    """Absolute tolerance around the best score ``best`` (see the module docstring)."""
    return TIE_RTOL * max(1.0, abs(best))


# ---------------------------------------------------------------------------- impurities
def impurity(counts: np.ndarray, criterion: str) -> np.ndarray:
    """Impurity ``C(p)`` of the class distribution of each row of ``counts`` (…×K counts), by
    name (`treebench.search.criteria.impurity_np`). Rows with zero total get impurity 0."""
    return impurity_np(counts, CODES[criterion])


def split_scores(ones: np.ndarray, node_counts: np.ndarray, criterion: str) -> np.ndarray:
    """Weighted child impurity ``s_j`` of every feature (lower is better).

    ``ones[j, k]`` is the weight of class ``k`` among the node's rows with ``x_j = 1``;
    ``node_counts[k]`` the node's class weights.
    """
    zeros = np.maximum(node_counts[None, :] - ones, 0.0)
    w1 = ones.sum(axis=1)
    w0 = zeros.sum(axis=1)
    total = node_counts.sum()
    return (w0 * impurity(zeros, criterion) + w1 * impurity(ones, criterion)) / total


def select_feature(scores: np.ndarray, valid: np.ndarray) -> int:
    """Lowest-index valid feature whose score is within the tie tolerance of the best."""
    cand = np.flatnonzero(valid)
    if cand.size == 0:
        return -1
    s = scores[cand]
    best = s.min()
    return int(cand[np.flatnonzero(s <= best + tie_tolerance(best))[0]])


# ---------------------------------------------------------------------------- growing
#: rows × features gathered at once when counting (bounds the temporary copy to ~16 MB)
_BLOCK_ELEMENTS = 2**21


def _ones_counts(X: np.ndarray, yw: np.ndarray, rows: np.ndarray, block: int) -> np.ndarray:
    """``X[rows].T @ yw[rows]`` (class weights and row counts where ``x_j = 1``, for every
    feature ``j``), one matrix product per block of rows so the gathered copy stays small (also
    at the root when ``X`` is compact ``uint8``: a product would convert all of it to float)."""
    if rows.shape[0] == X.shape[0] and X.dtype == yw.dtype:  # the root: no copy needed
        return X.T @ yw
    out = np.zeros((X.shape[1], yw.shape[1]))
    for start in range(0, rows.shape[0], block):
        r = rows[start : start + block]
        out += X[r].T @ yw[r]
    return out


def grow_tree(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
    *,
    criterion: str,
    max_depth: int | None,
    min_samples_leaf: int = 1,
    min_improvement: float = 0.0,
    prior: np.ndarray | None = None,
) -> tuple[TreeArrays, int]:
    """Grow the greedy tree on 0/1 matrix ``X`` (rows with positive weight only).

    Returns the tree (pre-order node ids) and the number of feature scores computed.
    """
    n, d = X.shape
    yw = np.zeros((n, n_classes + 1), dtype=np.float64)
    yw[np.arange(n), y] = w
    yw[:, n_classes] = 1.0  # last column: unweighted row counts
    if prior is None:
        prior = yw[:, :n_classes].sum(axis=0)
    budget = np.inf if max_depth is None else max_depth
    block = max(1, _BLOCK_ELEMENTS // max(1, d))

    feature: list[int] = []
    left: list[int] = []
    right: list[int] = []
    value: list[np.ndarray] = []
    label: list[int] = []
    operations = 0
    # (rows, depth, parent, is_left); right pushed first so left subtrees come first (pre-order)
    stack: list[tuple[np.ndarray, int, int, bool]] = [(np.arange(n), 0, -1, True)]
    while stack:
        rows, depth, parent, is_left = stack.pop()
        nid = len(feature)
        if parent >= 0:
            (left if is_left else right)[parent] = nid
        counts = yw[rows, :n_classes].sum(axis=0)
        feature.append(-1)
        left.append(-1)
        right.append(-1)
        value.append(counts)
        label.append(majority_label(counts, prior))
        if depth >= budget or np.count_nonzero(counts > 0) <= 1:
            continue
        m = _ones_counts(X, yw, rows, block)  # d × (K+1): class weights, row counts at x_j = 1
        n_ones = m[:, n_classes]
        n_rows = rows.shape[0]
        valid = (n_ones >= min_samples_leaf) & (n_rows - n_ones >= min_samples_leaf)
        n_valid = int(np.count_nonzero(valid))
        if n_valid == 0:
            continue
        operations += n_valid
        scores = split_scores(m[:, :n_classes], counts, criterion)
        j = select_feature(scores, valid)
        if min_improvement > 0:
            gain = float(impurity(counts, criterion)) - float(scores[j])
            if gain < min_improvement:
                continue
        feature[nid] = j
        go_right = X[rows, j] > BINARY_THRESHOLD
        stack.append((rows[go_right], depth + 1, nid, False))
        stack.append((rows[~go_right], depth + 1, nid, True))
    tree = TreeArrays(
        np.array(feature),
        binary_thresholds(np.array(feature)),
        np.array(left),
        np.array(right),
        np.vstack(value),
        np.array(label),
    )
    return tree, operations


# ---------------------------------------------------------------------------- MDL pruning
def mdl_bound(
    error: float, n_nodes: int, *, n_features: int, n_classes: int, m: int, delta: float
) -> float:
    """Right-hand side of bound (18.1): ``L_S(h) + sqrt(((n+1)·log2(d+3) + ln(2/δ)) / (2m))``.

    ``error`` is the training error ``L_S(h)`` as a fraction, ``n_nodes`` the tree's node count
    ``n`` and ``n_features`` the number ``d`` of binary features. The textbook's code has
    ``d + 3`` symbols per block (d tests, leaf 0, leaf 1, end); with ``K`` classes it has
    ``d + K + 1``, which is what we use (equal to ``d + 3`` for two classes). ``log`` in the
    confidence term is the natural logarithm (Theorem 7.7 of the book).
    """
    bits = (n_nodes + 1) * math.log2(n_features + n_classes + 1)
    return error + math.sqrt((bits + math.log(2.0 / delta)) / (2.0 * m))


def _route(feature, left, right, X, start: int, rows: np.ndarray) -> np.ndarray:
    """Leaf reached by each of ``rows`` when entering the (current) tree at node ``start``."""
    node = np.full(rows.shape[0], start, dtype=np.int64)
    active = np.arange(rows.shape[0])
    while active.size:
        cur = node[active]
        f = feature[cur]
        inner = f >= 0
        active, cur, f = active[inner], cur[inner], f[inner]
        if not active.size:
            break
        go_right = X[rows[active], f] > BINARY_THRESHOLD
        node[active] = np.where(go_right, right[cur], left[cur])
    return node


def prune_mdl(
    tree: TreeArrays,
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    *,
    delta: float,
    prior: np.ndarray,
) -> tuple[TreeArrays, dict]:
    """Generic bottom-up pruning (§18.2.2) with ``f`` = the MDL bound (18.1) (`mdl_bound`).

    Nodes are visited in post-order (left subtree, right subtree, node), i.e. from the leaves to
    the root. At each internal node ``j`` the candidates are: the current tree with ``j``
    replaced by a leaf (the text's "leaf 1 / leaf 0"; only the majority leaf can minimise ``f``,
    so it stands for all of them), by its left subtree, by its right subtree, and the current
    tree. A child subtree keeps its tests and leaf labels but now receives all rows of ``j``.
    The candidate with the smallest ``f`` of the **whole** tree wins; values within
    ``1e-12·max(1,|f|)`` of the minimum tie, and ties go to the first in the order above, i.e.
    a replacement is made whenever it does not increase the bound. ``L_S`` is the weighted error
    over the total weight; ``m`` is the number of rows with positive weight.

    Returns the pruned tree (compact, pre-order; counts recomputed from the data; inner labels
    are the majority labels) and ``{"n_pruned": nodes removed, "n_replacements": …,
    "mdl_bound": f of the result}``.
    """
    m, total_w = X.shape[0], float(w.sum())

    def f(err: float, size: int) -> float:
        return mdl_bound(err / total_w, size, n_features=X.shape[1], n_classes=tree.n_classes,
                         m=m, delta=delta)

    st = _PruneState.of(tree)
    rows_at = _rows_at(tree, X)
    for j in _inner_postorder(tree):
        lj, rj = int(st.left[j]), int(st.right[j])
        err_cur = st.err_sub[lj] + st.err_sub[rj]
        size_cur = 1 + int(st.size_sub[lj]) + int(st.size_sub[rj])
        maj = majority_label(tree.value[j], prior)
        cands = [
            ("leaf", st.node_w[j] - tree.value[j, maj], 1),
            ("left", st.err_sub[lj] + st.subtree_error(lj, rows_at[rj], X, y, w),
             int(st.size_sub[lj])),
            ("right", st.err_sub[rj] + st.subtree_error(rj, rows_at[lj], X, y, w),
             int(st.size_sub[rj])),
            ("keep", err_cur, size_cur),
        ]
        fs = [f(st.total_err - err_cur + e, st.total_n - size_cur + s) for _, e, s in cands]
        best = min(fs)
        k = next(i for i, v in enumerate(fs) if v <= best + tie_tolerance(best))
        st.replace(j, cands[k], maj, err_cur, size_cur)

    pruned = _compact(st.feature, st.left, st.right, st.label, X, y, w, tree.n_classes, prior)
    info = {
        "n_pruned": tree.n_nodes - pruned.n_nodes,
        "n_replacements": st.n_replacements,
        "n_replaced_by_child": st.n_by_child,
        "mdl_bound": float(f(st.total_err, pruned.n_nodes)),
    }
    return pruned, info


@dataclass
class _PruneState:
    """The tree being pruned by `prune_mdl` (copies of the grown tree's arrays) with, per node,
    the weighted training error and the node count of its current subtree."""

    feature: np.ndarray
    left: np.ndarray
    right: np.ndarray
    label: np.ndarray
    node_w: np.ndarray  # weighted rows reaching each node of the grown tree
    err_sub: np.ndarray
    size_sub: np.ndarray
    total_err: float
    total_n: int
    n_replacements: int = 0
    n_by_child: int = 0

    @classmethod
    def of(cls, tree: TreeArrays) -> _PruneState:
        label = tree.label.copy()
        node_w = tree.value.sum(axis=1)
        err_sub = np.zeros(tree.n_nodes)
        leaves = tree.is_leaf
        err_sub[leaves] = node_w[leaves] - tree.value[leaves, label[leaves]]
        return cls(tree.feature.copy(), tree.left.copy(), tree.right.copy(), label, node_w,
                   err_sub, np.ones(tree.n_nodes, dtype=np.int64),
                   float(err_sub[leaves].sum()), tree.n_nodes)

    def subtree_error(self, start: int, rows: np.ndarray, X: np.ndarray, y: np.ndarray,
                      w: np.ndarray) -> float:
        """Weighted error of the current subtree at ``start`` on ``rows``."""
        if rows.size == 0:
            return 0.0
        leaf = _route(self.feature, self.left, self.right, X, start, rows)
        return float(w[rows][self.label[leaf] != y[rows]].sum())

    def replace(self, j: int, cand: tuple[str, float, int], maj: int, err_cur: float,
                size_cur: int) -> None:
        """Apply the winning candidate at inner node ``j`` ("keep" records its subtree)."""
        kind, err_new, size_new = cand
        if kind == "keep":
            self.err_sub[j], self.size_sub[j] = err_cur, size_cur
            return
        self.n_replacements += 1
        if kind == "leaf":
            self.feature[j], self.left[j], self.right[j], self.label[j] = -1, -1, -1, maj
        else:
            self.n_by_child += 1
            c = self.left[j] if kind == "left" else self.right[j]
            self.feature[j], self.left[j], self.right[j], self.label[j] = (
                self.feature[c], self.left[c], self.right[c], self.label[c])
        self.err_sub[j], self.size_sub[j] = err_new, size_new
        self.total_err += err_new - err_cur
        self.total_n += size_new - size_cur


def _rows_at(tree: TreeArrays, X: np.ndarray) -> dict[int, np.ndarray]:
    """Rows reaching every node of the grown tree (the rows of a node do not change before
    pruning visits it)."""
    rows_at: dict[int, np.ndarray] = {0: np.arange(X.shape[0])}
    for i in range(tree.n_nodes):
        if tree.feature[i] >= 0:
            r = rows_at[i]
            go_right = X[r, tree.feature[i]] > BINARY_THRESHOLD
            rows_at[int(tree.left[i])] = r[~go_right]
            rows_at[int(tree.right[i])] = r[go_right]
    return rows_at


def _inner_postorder(tree: TreeArrays) -> list[int]:
    """The inner nodes of ``tree`` in post-order (left subtree, right subtree, node)."""
    order: list[int] = []
    stack = [(0, False)]
    while stack:
        j, expanded = stack.pop()
        if tree.feature[j] < 0:
            continue
        if expanded:
            order.append(j)
            continue
        stack.append((j, True))
        stack.append((int(tree.right[j]), False))
        stack.append((int(tree.left[j]), False))
    return order


def _compact(feature, left, right, label, X, y, w, n_classes, prior) -> TreeArrays:
    """Renumber the nodes reachable from the root in pre-order and recount the data."""
    old_ids: list[int] = []
    stack = [0]
    while stack:
        i = stack.pop()
        old_ids.append(i)
        if feature[i] >= 0:
            stack.append(int(right[i]))
            stack.append(int(left[i]))
    new_id = {o: k for k, o in enumerate(old_ids)}
    idx = np.array(old_ids)
    feat = feature[idx]
    lft = np.array([new_id[int(left[o])] if feature[o] >= 0 else -1 for o in old_ids])
    rgt = np.array([new_id[int(right[o])] if feature[o] >= 0 else -1 for o in old_ids])
    tree = TreeArrays(feat, binary_thresholds(feat), lft, rgt,
                      np.zeros((len(old_ids), n_classes)), label[idx].copy())
    recount(tree, X, y, w, prior=prior, keep_leaf_labels=True)
    return tree


# ---------------------------------------------------------------------------- estimator
@ALGORITHMS.register(
    "greedy", tags=("greedy", "baseline"), inputs=("binary", "weights", "multiclass")
)
class GreedyTreeClassifier(TreeClassifierBase):
    """Greedy top-down tree on 0/1 features: ID3 with the textbook's gain measures and MDL pruning.

    Parameters
    ----------
    criterion : {"entropy", "gini", "error"}
        Impurity ``C`` of the gain (§18.2.1): information gain, Gini index or train error.
    max_depth : int or None
        Depth budget (tests on a path); ``None`` grows until leaves are pure or no feature splits.
    min_samples_leaf : int
        A split is a candidate only if both children keep at least this many rows (unweighted).
    prune : {"none", "mdl"}
        ``"mdl"`` runs the generic bottom-up pruning of §18.2.2 with the bound (18.1).
    mdl_delta : float in (0, 1)
        The confidence ``δ`` of bound (18.1).
    min_improvement : float >= 0
        Splits whose gain is below this become leaves (0 = split every impure node).

    Notes
    -----
    After ``fit``, ``solve_info_`` holds ``operations`` (feature scores computed), ``objective``
    (weighted training error of the returned tree), ``n_pruned`` (nodes removed by pruning),
    ``n_nodes_grown`` and, with ``prune="mdl"``, ``mdl_bound`` and ``n_replacements``.
    See the module docstring for the exact split rule and tie-breaking.
    """

    compact_input = True  # 0/1 uint8 matrices are used as they are (no float64 copy)


    _parameter_constraints = {
        "criterion": [StrOptions({"entropy", "gini", "error"})],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "prune": [StrOptions({"none", "mdl"})],
        "mdl_delta": [Interval(Real, 0.0, 1.0, closed="neither")],
        "min_improvement": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        criterion="entropy",
        max_depth=None,
        min_samples_leaf=1,
        prune="none",
        mdl_delta=0.05,
        min_improvement=0.0,
    ):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.prune = prune
        self.mdl_delta = mdl_delta
        self.min_improvement = min_improvement

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight  # not all zero (checked by the base)
        keep = sample_weight > 0
        if not keep.all():
            X, y_index, sample_weight = X[keep], y_index[keep], sample_weight[keep]
        n_classes = len(self.classes_)
        prior = np.bincount(y_index, weights=sample_weight, minlength=n_classes)
        tree, operations = grow_tree(
            X,
            y_index,
            sample_weight,
            n_classes,
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            min_improvement=float(self.min_improvement),
            prior=prior,
        )
        info: dict = {"operations": operations, "n_nodes_grown": tree.n_nodes, "n_pruned": 0}
        if self.prune == "mdl":
            tree, prune_info = prune_mdl(
                tree, X, y_index, sample_weight, delta=float(self.mdl_delta), prior=prior
            )
            info.update(prune_info)
        info["objective"] = tree.training_error(X, y_index, sample_weight)
        info["objective_kind"] = "errors"
        return tree, info
