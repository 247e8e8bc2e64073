"""The metric registry: every metric of a cell, computed in one place and referred to by name.

A `Metric` says what it reads (hard predictions, class probabilities, the fitted `TreeArrays`,
the column costs), which task it applies to, and how its results columns are named. The worker
calls `score_cell` once per cell; the config's ``metrics:`` list, the report and ``expect:``
items name metrics by their registry name (``accuracy``), and `columns` turns a name into its
results columns (``train_accuracy``, ``test_accuracy``, ``val_accuracy``).

Column naming (kept from the first results schema): metrics of predictions are prefixed with
the split (``test_roc_auc``), metrics of the tree's paths are suffixed (``expected_tests_test``,
``expected_cost_test``), and tree-size metrics have no split (``n_leaves``). Rows that a cell
does not have (no validation rows) give no column; a metric that does not apply to the cell's
task (``r2`` of a classifier) gives no column either; an undefined value (the AUC of a test
fold that lacks a class) is NaN.

Every computation is plain numpy and equals scikit-learn's function on the same input (tests
compare them): ``accuracy_score``, ``balanced_accuracy_score``, ``log_loss``, ``roc_auc_score``
(binary; ``multi_class="ovr"``/``"ovo"`` with macro average), ``r2_score``,
``mean_squared_error``, all with sample weights. scikit-learn's per-call validation dominated
tiny cells, hence the own code.

`problem_objective` computes the value of a cell's problem (``problem_objective``,
`treebench.algorithms.objectives.objective_of`) from the returned tree on the training rows,
one code for every learner of the problem; it is no registered metric, since its unit depends
on the problem, and the report aggregates registered metrics across problems.

``expected_tests`` and ``expected_cost`` are the NGI paper's complexity measure
(Ma et al., DMKD 2023, §3): the expected cost of a tree over objects ``x`` with probabilities
``p(x)``, ``c(T) = Σ_x p(x) · c(T, x)``, where ``c(T, x)`` sums the costs of the tests ``x``
passes through; ``p`` is the (sample-weighted) empirical distribution of the split's rows.
With unit costs it is the expected path length (``expected_tests``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treebench.columns import Column
from treebench.errors import did_you_mean
from treebench.tree.simplify import effective_leaves
from treebench.tree.arrays import TreeArrays
from treebench.registry import METRICS

SPLITS = ("train", "val", "test")


# ----------------------------------------------------------------------------- plain metrics
def _w(y: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    return np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, np.float64)


def accuracy(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """(Weighted) fraction of rows predicted right."""
    if sample_weight is None:
        return float(np.mean(y == pred))
    return float(np.average(y == pred, weights=sample_weight))


def balanced_accuracy(
    y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None
) -> float:
    """Mean (weighted) recall over the classes present in ``y``."""
    classes, inv = np.unique(y, return_inverse=True)
    w = _w(y, sample_weight)
    hit = (y == pred) * w
    per_class = np.bincount(inv, weights=hit) / np.bincount(inv, weights=w)
    return float(np.nanmean(per_class))


def log_loss(
    y: np.ndarray, proba: np.ndarray, classes: np.ndarray, sample_weight=None
) -> float:
    """Mean negative log-probability of the true class, probabilities clipped to
    ``[eps, 1 - eps]`` with ``eps`` the float64 machine epsilon (as scikit-learn does): a leaf
    that gives the true class probability 0 costs ``-log(eps) ≈ 36``, not infinity."""
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, len(classes) - 1)
    known = classes[idx] == y  # a test label the model never saw has probability 0
    p = np.where(known, proba[np.arange(len(y)), idx], 0.0)
    return _mean_neg_log(p, sample_weight)


def _mean_neg_log(p: np.ndarray, sample_weight=None) -> float:
    """`log_loss` from each row's probability of its true class."""
    eps = np.finfo(np.float64).eps
    return float(np.average(-np.log(np.clip(p, eps, 1.0 - eps)), weights=_w(p, sample_weight)))


def binary_auc(pos: np.ndarray, score: np.ndarray, sample_weight=None) -> float:
    """Area under the ROC curve of ``score`` for the positives ``pos``: the (weighted)
    probability that a positive outscores a negative, ties counted 1/2 (Mann–Whitney U)."""
    w = _w(pos, sample_weight)
    wp = float(w[pos].sum())
    wn = float(w[~pos].sum())
    if wp == 0 or wn == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    p, ww = pos[order], w[order]
    return _auc_sorted(score[order], np.where(p, ww, 0.0), np.where(p, 0.0, ww), wp, wn)


def _auc_sorted(s: np.ndarray, pos: np.ndarray, neg: np.ndarray, wp: float, wn: float) -> float:
    """The Mann–Whitney AUC of items sorted by score ``s`` (rows, or groups of rows that share
    a score such as a tree's leaves), each with positive weight ``pos`` and negative weight
    ``neg``; ``wp``/``wn`` are the totals."""
    # group tied scores; within a group a positive beats every negative below, ties count 1/2
    starts = np.concatenate(([0], np.flatnonzero(np.diff(s)) + 1))
    neg_in_group = np.add.reduceat(neg, starts)
    pos_in_group = np.add.reduceat(pos, starts)
    neg_below = np.cumsum(neg_in_group) - neg_in_group
    u = float(np.sum(pos_in_group * (neg_below + 0.5 * neg_in_group)))
    return u / (wp * wn)


def _auc_grouped(score: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> float:
    """`binary_auc` over groups of rows that share a score: ``score``, positive and negative
    weight per group (equal scores of different groups tie as rows do)."""
    wp, wn = float(pos.sum()), float(neg.sum())
    if wp == 0 or wn == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    return _auc_sorted(score[order], pos[order], neg[order], wp, wn)


def roc_auc(y: np.ndarray, proba: np.ndarray, classes: np.ndarray, sample_weight=None) -> float:
    """Binary AUC of the second class's score; with more classes the macro average of the
    one-vs-rest AUCs on the label-indicator matrix (the NGI protocol's
    ``roc_auc_score(label_binarize(y, classes), proba, average="macro")``).

    NaN when ``y`` lacks one of ``classes`` (the AUC of an absent class is undefined).
    """
    present = np.unique(y)
    if len(present) < 2 or len(present) != len(classes) or not np.isin(present, classes).all():
        return float("nan")
    if len(classes) == 2:
        return binary_auc(y == classes[1], proba[:, 1], sample_weight)
    return float(np.mean([
        binary_auc(y == c, proba[:, j], sample_weight) for j, c in enumerate(classes)
    ]))


def roc_auc_ovo(y: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> float:
    """Macro one-vs-one AUC (Hand & Till 2001): for every pair of classes ``(a, b)``, the mean
    of AUC(a vs b, score of a) and AUC(b vs a, score of b) on the rows of ``a`` and ``b``;
    then the mean over pairs. Equals `roc_auc` for two classes; NaN when ``y`` lacks a class.
    (scikit-learn takes no sample weights here; neither do we.)"""
    present = np.unique(y)
    if len(present) < 2 or len(present) != len(classes) or not np.isin(present, classes).all():
        return float("nan")
    if len(classes) == 2:
        return binary_auc(y == classes[1], proba[:, 1])
    pairs = []
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            rows = (y == classes[a]) | (y == classes[b])
            ya = y[rows] == classes[a]
            pairs.append(0.5 * (binary_auc(ya, proba[rows, a]) + binary_auc(~ya, proba[rows, b])))
    return float(np.mean(pairs))


def mse(y: np.ndarray, pred: np.ndarray, sample_weight=None) -> float:
    """(Weighted) mean squared error."""
    r = np.asarray(y, np.float64) - np.asarray(pred, np.float64)
    return float(np.average(r * r, weights=_w(r, sample_weight)))


def r2(y: np.ndarray, pred: np.ndarray, sample_weight=None) -> float:
    """Coefficient of determination ``1 - SSE / SST`` (weighted); with a constant target, 1.0
    for a perfect prediction and 0.0 otherwise (scikit-learn's convention)."""
    y = np.asarray(y, np.float64)
    w = _w(y, sample_weight)
    sse = float(np.sum(w * (y - pred) ** 2))
    sst = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
    if sst == 0:
        return 1.0 if sse == 0 else 0.0
    return 1.0 - sse / sst


def expected_path_cost(
    tree, X: np.ndarray, costs: np.ndarray | None = None, sample_weight=None, leaves=None
) -> float:
    """``Σ_x p(x) · c(T, x)``: the (weighted) mean over the rows of ``X`` of the summed column
    costs of the tests on each row's path (NGI §3); unit costs (``None``) give the mean path
    length. NaN without rows. ``leaves`` (``tree.apply(X)``) may be passed when known."""
    if X.shape[0] == 0:
        return float("nan")
    node_cost = path_costs(tree, costs)
    leaves = tree.apply(X) if leaves is None else leaves
    return float(np.average(node_cost[leaves], weights=sample_weight))


def path_costs(tree, costs: np.ndarray | None = None) -> np.ndarray:
    """Summed test cost from the root to every node (``None``: unit costs, i.e. node depths)."""
    out = np.zeros(tree.n_nodes, dtype=np.float64)
    for i in range(tree.n_nodes):  # children have larger ids than their parents
        f = tree.feature[i]
        if f >= 0:
            c = 1.0 if costs is None else float(costs[f])
            out[tree.left[i]] = out[i] + c
            out[tree.right[i]] = out[i] + c
    return out


# ----------------------------------------------------------------------------- the registry
@dataclass
class Inputs:
    """What a metric may read for one split; predictions are computed once, on first use."""

    est: Any
    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray | None = None
    costs: np.ndarray | None = None
    _cache: dict[str, Any] = field(default_factory=dict)

    @property
    def tree(self):
        t = getattr(self.est, "tree_", None)
        return t if isinstance(t, TreeArrays) else None

    @property
    def classes(self) -> np.ndarray:
        return self.est.classes_

    @property
    def leaves(self) -> np.ndarray:
        """The leaf each row reaches (one tree walk shared by every metric of the split)."""
        if "leaves" not in self._cache:
            self._cache["leaves"] = self.tree.apply(self.X)
        return self._cache["leaves"]

    def _from_tree(self) -> bool:
        """Whether predictions may be read off the tree: the estimator says so
        (``predicts_from_tree``: a treebench tree classifier that does not override
        ``predict``/``predict_proba``; the registry-wide test checks those equal the tree's),
        which saves re-validating the data per call."""
        if "from_tree" not in self._cache:
            predicts_from_tree = getattr(type(self.est), "predicts_from_tree", None)
            self._cache["from_tree"] = bool(
                predicts_from_tree is not None and self.tree is not None and predicts_from_tree()
            )
        return self._cache["from_tree"]

    @property
    def pred(self) -> np.ndarray:
        if "pred" not in self._cache:
            if self._from_tree():
                self._cache["pred"] = self.classes[self.tree.label[self.leaves]]
            else:
                self._cache["pred"] = self.est.predict(self.X)
        return self._cache["pred"]

    @property
    def proba(self) -> np.ndarray | None:
        if "proba" not in self._cache:
            if self._from_tree():
                v = self.tree.value[self.leaves]
                tot = v.sum(axis=1, keepdims=True)
                with np.errstate(invalid="ignore", divide="ignore"):
                    self._cache["proba"] = np.where(
                        tot > 0, v / np.where(tot > 0, tot, 1.0), 1.0 / v.shape[1])
                return self._cache["proba"]
            try:
                self._cache["proba"] = self.est.predict_proba(self.X)
            except (AttributeError, NotImplementedError):
                self._cache["proba"] = None
        return self._cache["proba"]


    @property
    def by_leaf(self) -> _LeafView | None:
        """The split read at the tree's nodes (`_LeafView`) when predictions come off the tree
        (`_from_tree`) of a classifier; None otherwise (metrics then read rows)."""
        if "by_leaf" not in self._cache:
            self._cache["by_leaf"] = _LeafView.of(self) if self._from_tree() else None
        return self._cache["by_leaf"]


@dataclass
class _LeafView:
    """A classification split read at the tree's nodes: no per-row probability matrix (805 k
    rows x 23 classes is 150 MB on KDD Cup 99) and no label comparisons on object arrays.

    Labels become order-preserving codes: ``y_code`` is each row's position in the sorted union
    of the model's classes and the labels it never saw, ``model_code`` the position of each
    model class, so `accuracy`, `balanced_accuracy` and `log_loss` on codes are those of the
    labels to the bit. The AUCs sum each node's (weighted) class counts instead of rows: a
    tree gives every row of a leaf the same scores, so rows and leaves make the same tie groups
    (equal to the bit without weights, where the sums are whole numbers)."""

    d: Inputs
    y_code: np.ndarray
    model_code: np.ndarray
    n_labels: int
    node_proba: np.ndarray
    _counts: dict[bool, np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, d: Inputs) -> _LeafView | None:
        classes, y = np.asarray(d.classes), np.asarray(d.y)
        K = len(classes)
        if K == 0 or not np.all(classes[:-1] < classes[1:]) or d.tree.value.shape[1] != K:
            return None
        idx = np.minimum(np.searchsorted(classes, y), K - 1)
        known = classes[idx] == y
        if known.all():
            model_code, y_code, n_labels = np.arange(K), idx, K
        else:  # labels the model never saw: ranked among its classes
            unseen = np.unique(y[~known])
            rank = np.empty(K + len(unseen), dtype=np.int64)
            rank[np.argsort(np.concatenate([classes, unseen]), kind="mergesort")] = np.arange(len(rank))
            model_code = rank[:K]
            y_code = model_code[idx]
            y_code[~known] = rank[K + np.searchsorted(unseen, y[~known])]
            n_labels = len(rank)
        v = d.tree.value
        tot = v.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            proba = np.where(tot > 0, v / np.where(tot > 0, tot, 1.0), 1.0 / v.shape[1])
        return cls(d, y_code, model_code, n_labels, proba)

    @property
    def pred_code(self) -> np.ndarray:
        return self.model_code[self.d.tree.label[self.d.leaves]]

    def counts(self, weighted: bool = True) -> np.ndarray:
        """(n_nodes, n_labels): the (weighted) rows of each label at each node."""
        if weighted not in self._counts:
            n_nodes, U = self.node_proba.shape[0], self.n_labels
            w = self.d.sample_weight if weighted else None
            self._counts[weighted] = np.bincount(
                self.d.leaves * U + self.y_code, weights=w, minlength=n_nodes * U
            ).astype(np.float64).reshape(n_nodes, U)
        return self._counts[weighted]

    def accuracy(self) -> float:
        return accuracy(self.y_code, self.pred_code, self.d.sample_weight)

    def balanced_accuracy(self) -> float:
        return balanced_accuracy(self.y_code, self.pred_code, self.d.sample_weight)

    def log_loss(self) -> float:
        col = np.full(self.n_labels, -1, dtype=np.int64)
        col[self.model_code] = np.arange(len(self.model_code))
        c = col[self.y_code]
        p = np.where(c >= 0, self.node_proba[self.d.leaves, np.maximum(c, 0)], 0.0)
        return _mean_neg_log(p, self.d.sample_weight)

    def _auc_parts(self, weighted: bool):
        """(scores, counts) over the nodes some row reaches, or None when the AUC is undefined
        (fewer than two classes, a model class missing, or a label the model never saw)."""
        C = self.counts(weighted)
        present = self.counts(False).sum(axis=0) > 0
        K = len(self.model_code)
        if K < 2 or self.n_labels != K or not present.all():
            return None
        reached = self.counts(False).sum(axis=1) > 0
        return self.node_proba[reached], C[reached]

    def _node_auc(self, weighted: bool, multiclass) -> float:
        """The AUC from the nodes' class counts: binary directly, else ``multiclass(P, C)``."""
        parts = self._auc_parts(weighted)
        if parts is None:
            return float("nan")
        P, C = parts
        if P.shape[1] == 2:
            return _auc_grouped(P[:, 1], C[:, 1], C[:, 0])
        return multiclass(P, C)

    def roc_auc(self) -> float:
        return self._node_auc(True, _auc_ovr_grouped)

    def roc_auc_ovo(self) -> float:
        return self._node_auc(False, _auc_ovo_grouped)


def _auc_ovr_grouped(P, C) -> float:
    """One-vs-rest macro AUC over node groups (scores ``P``, class counts ``C``)."""
    tot = C.sum(axis=1)
    return float(np.mean([_auc_grouped(P[:, j], C[:, j], tot - C[:, j])
                          for j in range(P.shape[1])]))


def _auc_against(score: np.ndarray, pos: np.ndarray, negs: np.ndarray) -> np.ndarray:
    """`_auc_grouped` ``(score, pos, negs[j])`` for every row ``j`` of ``negs`` (shape
    (m, groups)) in one pass: the groups are sorted and their ties found once. Bit-identical
    to the calls one by one (each row is summed as the one-row call sums it)."""
    wp = float(pos.sum())
    wn = negs.sum(axis=1)
    out = np.full(negs.shape[0], np.nan)
    ok = (wn != 0) & (wp != 0)
    if not ok.any():
        return out
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(s)) + 1))
    pos_in_group = np.add.reduceat(pos[order], starts)
    neg_in_group = np.add.reduceat(np.ascontiguousarray(negs[ok][:, order]), starts, axis=1)
    neg_below = np.cumsum(neg_in_group, axis=1) - neg_in_group
    u = np.sum(pos_in_group * (neg_below + 0.5 * neg_in_group), axis=1)
    out[ok] = u / (wp * wn[ok])
    return out


def _auc_ovo_grouped(P, C) -> float:
    """One-vs-one macro AUC (Hand & Till) over node groups: the mean over class pairs
    ``a < b`` of ``(AUC(a against b) + AUC(b against a)) / 2``, where AUC(a against b) ranks
    the groups by class ``a``'s score among the rows of classes ``a`` and ``b``."""
    K = P.shape[1]
    CT = np.ascontiguousarray(C.T)  # a class's counts as one contiguous row
    against = np.empty((K, K))
    for a in range(K):
        against[a] = _auc_against(P[:, a], CT[a], CT)
    pairs = [0.5 * (against[a, b] + against[b, a]) for a in range(K) for b in range(a + 1, K)]
    return float(np.mean(pairs))


@dataclass(frozen=True)
class Metric:
    """One named metric.

    ``needs``: ``"pred"``, ``"proba"``, ``"tree"`` (the fitted `TreeArrays`) or ``"recorded"``
    (measured by the runner, not computed from the model: times, memory);
    ``task``: ``"classification"``, ``"regression"`` or ``"any"``;
    ``per_split``: one value per split (train/val/test) or one per cell;
    ``suffix``: split written after the name (``expected_tests_test``) instead of before;
    ``greater_is_better``: the direction (None when neither, e.g. tree size).
    """

    name: str
    description: str
    needs: str
    task: str = "any"
    per_split: bool = True
    suffix: bool = False
    greater_is_better: bool | None = None
    dtype: str = "Float64"
    fn: Callable[[Inputs], float] | None = None

    def column(self, split: str | None = None) -> str:
        if not self.per_split or split is None:
            return self.name
        return f"{self.name}_{split}" if self.suffix else f"{split}_{self.name}"

    def columns(self) -> list[str]:
        return [self.column(s) for s in SPLITS] if self.per_split else [self.name]

    def applies(self, task: str) -> bool:
        return self.task in ("any", task)


def _nan_without_proba(fn):
    def wrapped(d: Inputs) -> float:
        return float("nan") if d.proba is None else fn(d)

    return wrapped


def _by_leaf_or(name: str, fn):
    """``fn(d)`` on rows, or the `_LeafView` method ``name`` when the split has one."""

    def wrapped(d: Inputs) -> float:
        view = d.by_leaf
        return getattr(view, name)() if view is not None else fn(d)

    return wrapped


def register(metric: Metric) -> Metric:
    """Add a metric to the metric registry (`treebench.registry.METRICS`; its name must be
    new). A plug-in package calls this in the module its ``treebench.metrics`` entry point
    names; the metric's columns then belong to every results table (`declared_columns`)."""
    if METRICS.registered(metric.name):
        raise ValueError(f"metric `{metric.name}` is registered twice")
    METRICS.register(metric.name, description=metric.description)(metric)
    return metric


for _m in (
    Metric("accuracy", "fraction of rows predicted right (sample-weighted)", "pred",
           "classification", greater_is_better=True,
           fn=_by_leaf_or("accuracy", lambda d: accuracy(d.y, d.pred, d.sample_weight))),
    Metric("balanced_accuracy", "mean recall over the classes present", "pred",
           "classification", greater_is_better=True,
           fn=_by_leaf_or("balanced_accuracy",
                            lambda d: balanced_accuracy(d.y, d.pred, d.sample_weight))),
    Metric("log_loss", "mean -log probability of the true class (clipped at machine epsilon)",
           "proba", "classification", greater_is_better=False,
           fn=_by_leaf_or("log_loss", _nan_without_proba(
               lambda d: log_loss(d.y, d.proba, d.classes, d.sample_weight)))),
    Metric("roc_auc", "ROC AUC; several classes: macro one-vs-rest on the label-indicator matrix",
           "proba", "classification", greater_is_better=True,
           fn=_by_leaf_or("roc_auc", _nan_without_proba(
               lambda d: roc_auc(d.y, d.proba, d.classes, d.sample_weight)))),
    Metric("roc_auc_ovo", "ROC AUC; several classes: macro one-vs-one (Hand & Till 2001)",
           "proba", "classification", greater_is_better=True,
           fn=_by_leaf_or("roc_auc_ovo", _nan_without_proba(
               lambda d: roc_auc_ovo(d.y, d.proba, d.classes)))),
    Metric("r2", "coefficient of determination 1 - SSE/SST", "pred", "regression",
           greater_is_better=True, fn=lambda d: r2(d.y, d.pred, d.sample_weight)),
    Metric("mse", "mean squared error", "pred", "regression", greater_is_better=False,
           fn=lambda d: mse(d.y, d.pred, d.sample_weight)),
    Metric("expected_tests", "expected path length: mean number of tests per row", "tree",
           suffix=True, greater_is_better=False,
           fn=lambda d: expected_path_cost(d.tree, d.X, None, d.sample_weight, d.leaves)),
    Metric("expected_cost", "expected test cost: mean summed column cost on a row's path "
           "(NGI §3; unit costs give expected_tests)", "tree", suffix=True,
           greater_is_better=False,
           fn=lambda d: expected_path_cost(d.tree, d.X, d.costs, d.sample_weight, d.leaves)),
    Metric("n_leaves", "leaves of the tree", "tree", per_split=False, dtype="Int64",
           fn=lambda d: d.tree.n_leaves),
    Metric("n_leaves_effective", "leaves after merging sibling leaves that predict the same "
           "class, recursively (comparable across learner families)", "tree",
           per_split=False, dtype="Int64", fn=lambda d: _effective_leaves(d.tree)),
    Metric("n_nodes", "nodes of the tree (tests and leaves)", "tree", per_split=False,
           dtype="Int64", fn=lambda d: d.tree.n_nodes),
    Metric("depth", "depth of the tree (tests on the longest path; a lone leaf has 0)", "tree",
           per_split=False, dtype="Int64", fn=lambda d: d.tree.depth),
    Metric("fit_seconds", "fit time without JIT compilation (recorded)", "recorded",
           per_split=False, greater_is_better=False),
    Metric("fit_seconds_spread", "largest minus smallest fit time over a cell's `repeat:` "
           "fits (recorded)", "recorded", per_split=False, greater_is_better=False),
    Metric("fit_cpu_seconds", "CPU time of the fit's process without JIT compilation "
           "(recorded)", "recorded", per_split=False, greater_is_better=False),
    Metric("compile_seconds", "JIT compilation inside the fit (recorded)", "recorded",
           per_split=False, greater_is_better=False),
    Metric("binarize_seconds", "binarizer fit and transform time (recorded)", "recorded",
           per_split=False, greater_is_better=False),
    Metric("prepare_seconds", "data load, split and binarization in the worker (recorded; 0 "
           "when cached)", "recorded", per_split=False, greater_is_better=False),
    Metric("peak_rss_mb", "peak resident memory of the cell's process, including the pages it "
           "shares with the warm worker (recorded)", "recorded",
           per_split=False, greater_is_better=False),
    Metric("cell_rss_mb", "memory the cell added: peak RSS minus the worker's RSS at fork "
           "(recorded)", "recorded", per_split=False, greater_is_better=False),
):
    register(_m)


def _effective_leaves(tree) -> int:
    return effective_leaves(tree)


def _registry():

    return METRICS


def get(name: str) -> Metric:
    """The metric ``name``; ValueError with a suggestion when unknown."""
    reg = _registry()
    if name in reg:
        return reg.get(name).obj
    known = names()
    raise ValueError(
        f"unknown metric `{name}`{did_you_mean(name, known)}; known: {', '.join(known)}"
    )


def names() -> list[str]:
    """Registry names in registration order (built-in ones first, then plug-ins)."""
    return [e.name for e in _registry().in_order()]


def all_metrics() -> list[Metric]:
    """Every metric, built-in and plug-in, in registration order."""
    return [e.obj for e in _registry().in_order()]


def columns(name: str) -> list[str]:
    """The results columns of metric ``name`` (e.g. ``accuracy`` → train/val/test_accuracy)."""
    return get(name).columns()


def result_columns() -> dict[str, str]:
    """Every metric column of the results table with its pandas dtype, in registry order."""
    return {c: m.dtype for m in all_metrics() for c in m.columns()}


def declared_columns() -> tuple[Column, ...]:
    """The results columns this registry declares: one per computed metric and split (the
    recorded ones, times and memory, are the runner's cost columns), asked each time, so that
    a plug-in metric registered after import is in the table too."""
    out = []
    for m in all_metrics():
        if m.needs == "recorded":
            continue
        for split in (SPLITS if m.per_split else (None,)):
            where = f" ({split} rows)" if split else ""
            out.append(Column(m.column(split), m.dtype, m.description + where,
                              f"metric `{m.name}`", "metrics"))
    return tuple(out)


def metric_of_column(column: str) -> Metric | None:
    """The metric a results column belongs to (None for a column that is no metric)."""
    for m in all_metrics():
        if column in m.columns():
            return m
    return None


def score_split(
    est, X: np.ndarray, y: np.ndarray, split: str, *, sample_weight=None, costs=None, task=None
) -> dict[str, float]:
    """Every per-split metric of ``est`` on ``(X, y)``, keyed by results column."""
    if len(y) == 0:
        return {}
    return _score_inputs(Inputs(est, X, y, sample_weight, costs), split,
                         task or estimator_task(est))


def _score_inputs(d: Inputs, split: str, task: str) -> dict[str, float]:
    """Every per-split metric of the split ``d``."""
    out: dict[str, float] = {}
    for m in all_metrics():
        if not m.per_split or m.fn is None or not m.applies(task):
            continue
        if m.needs == "tree" and d.tree is None:
            continue
        out[m.column(split)] = m.fn(d)
    return out


def score_model(est) -> dict[str, float]:
    """The metrics of the fitted model itself (tree size), keyed by results column."""
    d = Inputs(est, np.zeros((0, 0)), np.zeros(0))
    out: dict[str, float] = {}
    for m in all_metrics():
        if m.per_split or m.fn is None or (m.needs == "tree" and d.tree is None):
            continue
        out[m.column()] = m.fn(d)
    return out


def score_cell(
    est,
    data: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None]],
    costs: np.ndarray | None = None,
    objective: Any = None,
) -> dict[str, Any]:
    """All metrics of one cell: ``data`` maps a split name (train/val/test) to its
    ``(X, y, sample_weight)``; ``costs`` are the per-column test costs (None: unit). With the
    ``objective`` of the cell's problem (`treebench.algorithms.objectives.Objective`: its
    ``kind`` and ``weight``), also its `problem_objective` columns on the training rows."""
    task = estimator_task(est)
    out: dict[str, Any] = score_model(est)
    for split, (X, y, w) in data.items():
        if len(y) == 0:
            continue
        d = Inputs(est, X, y, w, costs)
        out.update(_score_inputs(d, split, task))
        if split == "train" and objective is not None:
            out.update(problem_objective(d, objective.kind, objective.weight))
    return out


def problem_objective(d: Inputs, kind: str, weight: float = 0.0) -> dict[str, Any]:
    """The problem-objective columns (``problem_objective``, ``problem_objective_kind``,
    ``problem_weight``, ``problem_tiebreak``; declared in `treebench.algorithms.objectives`)
    of the tree of ``d.est`` on the training rows ``d``: the objective ``kind``
    (`treebench.algorithms.objectives.OBJECTIVES`) with the weight λ or α, read off the fitted
    tree itself (each row's leaf, its label or mean, the leaves, nodes and depths), so every
    learner of a problem is measured by the same code. Nothing for a model that is no single
    `TreeArrays` (its columns stay empty)."""
    tree = d.tree
    if tree is None:
        return {}
    w = _w(d.y, d.sample_weight)
    if tree.is_regression:
        r = tree.node_mean()[d.leaves] - np.asarray(d.y, np.float64)
        loss = float(np.sum(w * r * r))
    else:
        wrong = np.asarray(d.classes)[tree.label[d.leaves]] != np.asarray(d.y)
        loss = float(np.sum(w[wrong]))
    if kind == "error_rate+lambda*leaves":
        total = float(np.sum(w))
        value = (loss / total if total > 0 else 0.0) + weight * tree.n_leaves
    elif kind in ("errors+alpha*path", "sse+alpha*path"):
        value = loss + weight * float(np.sum(w * tree.node_depths()[d.leaves]))
    else:  # errors, errors-then-nodes
        value = loss
    return {"problem_objective": value, "problem_objective_kind": kind,
            "problem_weight": weight,
            "problem_tiebreak": tree.n_nodes if kind == "errors-then-nodes" else None}


def estimator_task(est) -> str:
    """``"regression"`` for regressors (a regression `TreeArrays`, else scikit-learn's estimator
    type), else classification."""
    task = getattr(getattr(est, "tree_", None), "task", None)
    if task in ("classification", "regression"):
        return task
    from sklearn.base import is_regressor

    return "regression" if is_regressor(est) else "classification"
