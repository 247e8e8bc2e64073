"""TreeArrays invariants, prediction, export, and the scikit-learn adapter."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.tree import DecisionTreeClassifier

from treebench.algorithms.cart import CARTClassifier
from treebench.tree.columns import BinaryColumn
from treebench.tree.arrays import TreeArrays, TreeBuilder, check_tree
from treebench.tree.export import conditions_from_columns, export_dict, export_dot, export_text


def _stump() -> TreeArrays:
    b = TreeBuilder(n_classes=2)
    root = b.add_split(0, 0.5, [3, 2])
    left = b.add_leaf([3, 0])
    right = b.add_split(1, 0.5, [0, 2])
    b.set_children(right, b.add_leaf([0, 1]), b.add_leaf([0, 1]), )
    b.set_children(root, left, right)
    return b.build()


def test_builder_shape_depth_and_apply():
    t = _stump()
    check_tree(t)
    assert (t.n_nodes, t.n_leaves, t.depth) == (5, 3, 2)
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    assert t.apply(X).tolist() == [1, 1, 3, 4]
    assert t.predict_index(X).tolist() == [0, 0, 1, 1]
    from treebench.metrics import expected_path_cost

    assert expected_path_cost(t, X) == pytest.approx((1 + 1 + 2 + 2) / 4)
    np.testing.assert_allclose(t.predict_proba(X).sum(axis=1), 1.0)
    assert TreeArrays.leaf([1, 2]).depth == 0


def test_check_tree_catches_broken_trees():
    t = _stump()
    bad = TreeArrays(t.feature, t.threshold, t.left, t.right, t.value.copy(), t.label)
    bad.value[0, 0] += 1
    with pytest.raises(AssertionError, match="sum of its children"):
        check_tree(bad)
    loop = TreeArrays(t.feature, t.threshold, np.array([1, -1, 1, -1, -1]), t.right, t.value, t.label)
    with pytest.raises(AssertionError):
        check_tree(loop)
    with pytest.raises(AssertionError, match="max_depth"):
        check_tree(t, max_depth=1)
    X = np.array([[0, 0], [1, 1]])
    with pytest.raises(AssertionError, match="leaf counts"):
        check_tree(t, X=X, y_index=np.array([0, 1]))


def test_dict_roundtrip_and_equality():
    t = _stump()
    t2 = TreeArrays.from_dict(json.loads(json.dumps(t.to_dict())))
    assert t == t2


def test_export_uses_binarizer_conditions():
    t = _stump()
    cols = [BinaryColumn("age", ">=", 31.5).to_dict(), BinaryColumn("color", "==", "red").to_dict()]
    names, conds = conditions_from_columns(cols)
    text = export_text(t, names, ["no", "yes"], conds)
    assert "if age < 31.5" in text and "if age >= 31.5" in text
    assert "if color != red" in text and "if color == red" in text
    assert "class: no" in text and "class: yes" in text
    d = export_dict(t, names, ["no", "yes"], conds)
    assert d["left_if"] == "age < 31.5" and d["left"]["class"] == "no"
    dot = export_dot(t, names, ["no", "yes"], conds)
    assert dot.startswith("digraph") and dot.count("->") == 4


def test_rules_escape_characters_that_are_not_printable():
    """A category or column name read from a data file with a NUL, a newline or an escape
    character prints as Python escapes, so it cannot break a rule's line or a terminal."""
    t = _stump()
    cols = [BinaryColumn("a\nb", ">=", 1.5).to_dict(), BinaryColumn("c", "==", "x\x00y\x1b").to_dict()]
    names, conds = conditions_from_columns(cols)
    text = export_text(t, names, ["no", "yes"], conds)
    assert "\x00" not in text and "\x1b" not in text
    assert "c == x\\x00y\\x1b" in text and "a\\nb >= 1.5" in text
    raw = export_text(t, ["p\x00q", "r"], ["no", "yes"])
    assert "p\\x00q <=" in raw and "\x00" not in raw


def test_export_raw_features():
    X, y = load_iris(return_X_y=True)
    est = CARTClassifier(max_depth=2).fit(X, y)
    text = export_text(est.tree_, ["sepal length", "sepal width", "petal length", "petal width"])
    assert "<=" in text and ">" in text and "petal" in text


@pytest.mark.parametrize("loader", [load_iris, load_wine])
@pytest.mark.parametrize("depth", [None, 1, 3])
def test_cart_conversion_matches_sklearn(loader, depth):
    X, y = loader(return_X_y=True)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    ours = CARTClassifier(max_depth=depth, random_state=0).fit(X, y, sample_weight=w)
    ref = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X))
    check_tree(ours.tree_, X=X, y_index=y, sample_weight=w, max_depth=depth)
    assert ours.tree_.n_leaves == ref.get_n_leaves() and ours.tree_.depth == ref.get_depth()


def test_cart_depth_zero_is_a_leaf():
    X, y = load_iris(return_X_y=True)
    est = CARTClassifier(max_depth=0).fit(X, y)
    assert est.tree_.n_nodes == 1 and est.tree_.depth == 0


def test_leaf_errors_are_the_training_errors_recounted_from_the_data():
    """`TreeArrays.leaf_errors` reads the weighted errors off the leaves' class weights: the
    same number as sending the training rows down the tree and counting them."""
    import numpy as np

    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier

    rng = np.random.default_rng(4)
    X = rng.integers(0, 6, size=(80, 3)).astype(float)
    y = rng.integers(0, 3, size=80)
    w = rng.integers(1, 4, size=80).astype(float)
    for depth in (0, 1, 2):
        tree = OptimalNumericClassifier(max_depth=depth).fit(X, y, sample_weight=w).tree_
        assert tree.leaf_errors == tree.training_error(X, y, w)
        assert tree.leaf_errors > 0
