"""treebench.metrics: every metric equals scikit-learn's on the same input; the registry names
columns consistently and scores a cell in one call."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    log_loss,
    mean_squared_error,
    r2_score,
    roc_auc_score,
)
from sklearn.preprocessing import label_binarize

from treebench import metrics
from treebench.tree.arrays import TreeBuilder


def _data(n_classes, seed, weighted=False):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 200))
    classes = np.array(sorted(rng.choice(100, n_classes, replace=False)))
    y = classes[np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])]
    pred = classes[rng.integers(0, n_classes, n)]
    # coarse probabilities create many ties, as tree leaves do; some are exactly 0
    proba = rng.integers(0, 4, (n, n_classes)).astype(float)
    proba[proba.sum(axis=1) == 0, 0] = 1.0
    proba /= proba.sum(axis=1, keepdims=True)
    w = rng.integers(1, 5, n).astype(float) if weighted else None
    return classes, y, pred, proba, w


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("seed", range(6))
def test_metrics_match_sklearn(n_classes, seed, weighted):
    classes, y, pred, proba, w = _data(n_classes, seed, weighted)
    assert metrics.accuracy(y, pred, w) == pytest.approx(accuracy_score(y, pred, sample_weight=w))
    assert metrics.balanced_accuracy(y, pred, w) == pytest.approx(
        balanced_accuracy_score(y, pred, sample_weight=w))
    assert metrics.log_loss(y, proba, classes, w) == pytest.approx(
        log_loss(y, proba, labels=classes, sample_weight=w))
    if n_classes == 2:
        ref = roc_auc_score(y, proba[:, 1], sample_weight=w)
    else:  # the NGI protocol: macro average over the columns of the label-indicator matrix
        ref = roc_auc_score(label_binarize(y, classes=classes), proba, average="macro",
                            sample_weight=w)
    assert metrics.roc_auc(y, proba, classes, w) == pytest.approx(ref)
    if w is None:
        ovo = roc_auc_score(y, proba, multi_class="ovo", labels=classes) if n_classes > 2 else ref
        assert metrics.roc_auc_ovo(y, proba, classes) == pytest.approx(ovo)


def _ovo_pair_by_pair(P, C):
    """The one-vs-one macro AUC over node groups one class pair and one direction at a time
    (the definition; the production code ranks each class's scores once for all pairs)."""
    K = P.shape[1]
    return float(np.mean([0.5 * (metrics._auc_grouped(P[:, a], C[:, a], C[:, b])
                                 + metrics._auc_grouped(P[:, b], C[:, b], C[:, a]))
                          for a in range(K) for b in range(a + 1, K)]))


@pytest.mark.parametrize("seed", range(40))
def test_ovo_over_groups_is_bit_identical_to_pair_by_pair(seed):
    rng = np.random.default_rng(seed)
    G, K = int(rng.integers(1, 120)), int(rng.integers(2, 11))
    C = rng.integers(0, 5, size=(G, K)).astype(float)
    if seed % 2:  # weighted counts: sums that depend on their order
        C *= rng.random((G, K)) * 3
    if seed % 3 == 0:  # a class with no rows: its pairs are undefined
        C[:, int(rng.integers(K))] = 0.0
    # coarse scores tie across groups, as leaves of one tree do
    P = rng.integers(0, 4, size=(G, K)) / 4 if seed % 4 < 2 else rng.random((G, K))
    got, want = metrics._auc_ovo_grouped(P, C), _ovo_pair_by_pair(P, C)
    assert got == want or (np.isnan(got) and np.isnan(want))


@pytest.mark.parametrize("seed", range(5))
def test_regression_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=50)
    pred = y + rng.normal(scale=0.5, size=50)
    w = rng.random(50)
    for sw in (None, w):
        assert metrics.mse(y, pred, sw) == pytest.approx(mean_squared_error(y, pred, sample_weight=sw))
        assert metrics.r2(y, pred, sw) == pytest.approx(r2_score(y, pred, sample_weight=sw))
    assert metrics.r2(np.ones(3), np.ones(3)) == 1.0


def test_auc_undefined_when_a_class_is_missing():
    y = np.array([0, 0, 0])
    assert np.isnan(metrics.roc_auc(y, np.full((3, 2), 0.5), np.array([0, 1])))
    y3 = np.array([0, 1, 1])
    assert np.isnan(metrics.roc_auc(y3, np.full((3, 3), 1 / 3), np.array([0, 1, 2])))
    assert np.isnan(metrics.roc_auc_ovo(y3, np.full((3, 3), 1 / 3), np.array([0, 1, 2])))


def _stump_tree():
    # root tests column 1; its right child tests column 0
    b = TreeBuilder(n_classes=2)
    root = b.add_split(1, 0.5, [2, 2])
    lft = b.add_leaf([2, 0])
    rgt = b.add_split(0, 0.5, [0, 2])
    b.set_children(root, lft, rgt)
    b.set_children(rgt, b.add_leaf([0, 1]), b.add_leaf([0, 1]))
    return b.build()


def test_expected_cost_is_sum_of_costs_on_paths():
    tree = _stump_tree()
    X = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    # paths: rows 0, 1 test column 1 only; rows 2, 3 test columns 1 and 0
    assert metrics.expected_path_cost(tree, X) == pytest.approx((1 + 1 + 2 + 2) / 4)
    costs = np.array([10.0, 3.0])
    assert metrics.expected_path_cost(tree, X, costs) == pytest.approx((3 + 3 + 13 + 13) / 4)
    w = np.array([1.0, 1.0, 0.0, 2.0])
    assert metrics.expected_path_cost(tree, X, costs, w) == pytest.approx((3 + 3 + 2 * 13) / 4)
    # unit costs give the expected path length, which is the mean leaf depth
    assert metrics.expected_path_cost(tree, X, np.ones(2)) == pytest.approx(
        tree.node_depths()[tree.apply(X)].mean())
    assert np.isnan(metrics.expected_path_cost(tree, X[:0]))


def test_registry_columns_and_names():
    assert metrics.columns("accuracy") == ["train_accuracy", "val_accuracy", "test_accuracy"]
    assert metrics.columns("expected_cost") == [
        "expected_cost_train", "expected_cost_val", "expected_cost_test"]
    assert metrics.columns("n_leaves") == ["n_leaves"]
    assert metrics.metric_of_column("test_roc_auc").name == "roc_auc"
    assert metrics.metric_of_column("cell_id") is None
    cols = metrics.result_columns()
    assert len(cols) == len(set(cols))
    with pytest.raises(ValueError, match="did you mean `accuracy`"):
        metrics.get("acuracy")


def test_score_cell_classifier_and_regressor():
    from sklearn.tree import DecisionTreeRegressor

    from treebench.algorithms.cart import CARTClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (60, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = CARTClassifier(max_depth=2).fit(X, y)
    row = metrics.score_cell(est, {"train": (X, y, None), "test": (X[:20], y[:20], None)},
                             costs=np.array([1.0, 2.0, 3.0, 4.0]))
    assert row["train_accuracy"] == 1.0 and "val_accuracy" not in row
    assert row["n_leaves"] == est.tree_.n_leaves
    assert row["expected_tests_train"] == pytest.approx(
        metrics.expected_path_cost(est.tree_, X))
    assert "train_r2" not in row
    reg = DecisionTreeRegressor(max_depth=2).fit(X, y + 0.5)
    rrow = metrics.score_cell(reg, {"test": (X, y + 0.5, None)})
    assert rrow["test_r2"] == pytest.approx(r2_score(y + 0.5, reg.predict(X)))
    assert "test_accuracy" not in rrow and "n_leaves" not in rrow


def test_predictions_read_off_the_tree_equal_the_estimators():
    from treebench.algorithms.greedy import GreedyTreeClassifier

    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (80, 5)).astype(float)
    y = rng.integers(0, 3, 80)
    est = GreedyTreeClassifier(max_depth=2).fit(X, y)
    d = metrics.Inputs(est, X, y)
    assert d._from_tree()
    assert np.array_equal(d.pred, est.predict(X))
    assert np.allclose(d.proba, est.predict_proba(X))


def _row_wise(d):
    """Every classification metric of ``d`` computed on rows (the per-row probability matrix
    and label comparisons), bypassing the leaf view."""
    w = d.sample_weight
    return {
        "accuracy": metrics.accuracy(d.y, d.pred, w),
        "balanced_accuracy": metrics.balanced_accuracy(d.y, d.pred, w),
        "log_loss": metrics.log_loss(d.y, d.proba, d.classes, w),
        "roc_auc": metrics.roc_auc(d.y, d.proba, d.classes, w),
        "roc_auc_ovo": metrics.roc_auc_ovo(d.y, d.proba, d.classes),
    }


@pytest.mark.parametrize("labels", ["int", "str"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("seed", range(4))
def test_leaf_view_equals_row_wise_metrics(seed, n_classes, weighted, labels):
    """The leaf view (codes, per-node counts) gives the row-wise values: to the bit without
    weights, to rounding with them; also with test labels the model never saw (AUC NaN) and a
    split that lacks a class."""
    from treebench.algorithms.greedy import GreedyTreeClassifier

    rng = np.random.default_rng(seed)
    n = 300
    X = rng.integers(0, 2, (n, 6)).astype(float)
    names = np.array([f"c{i:02d}" for i in range(n_classes + 2)], dtype=object)
    codes = (X[:, 0] + 2 * X[:, 1] + rng.integers(0, 2, n)).astype(int) % n_classes
    y = names[codes] if labels == "str" else codes * 7 + 3
    est = GreedyTreeClassifier(max_depth=3).fit(X, y)
    cases = {"train": (X, y)}
    y_new = y.copy()
    y_new[:5] = names[n_classes + 1] if labels == "str" else -4  # never seen, sorts in between
    y_new[5:9] = names[n_classes] if labels == "str" else 1000
    cases["unseen"] = (X, y_new)
    keep = codes != 0
    cases["lacks a class"] = (X[keep], y[keep])
    for name, (Xs, ys) in cases.items():
        w = rng.integers(1, 6, len(ys)).astype(float) if weighted else None
        d = metrics.Inputs(est, Xs, ys, w)
        assert d.by_leaf is not None
        want = _row_wise(metrics.Inputs(est, Xs, ys, w))
        got = {k: getattr(d.by_leaf, k)() for k in want}
        for k in want:
            if np.isnan(want[k]):
                assert np.isnan(got[k]), (name, k)
            elif weighted and k in ("roc_auc",):
                assert got[k] == pytest.approx(want[k], rel=1e-12), (name, k)
            else:
                assert got[k] == want[k], (name, k, got[k], want[k])
        if name == "unseen":
            assert np.isnan(got["roc_auc"]) and got["log_loss"] > 30 * 5 / len(ys)
        assert d.proba is not None  # the row path still works after the view
    row = metrics.score_split(est, X, y, "train")
    assert row["train_roc_auc"] == metrics.roc_auc(y, est.predict_proba(X), est.classes_)
