"""CART routes missing values natively (scikit-learn's trees), the tree keeps that routing
(`TreeArrays.missing_left`), and only learners declaring the input kind `missing` take NaN."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treebench.registry import ALGORITHMS
from treebench.tree.arrays import TreeArrays
from treebench.tree.export import export_text


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0.3).astype(int)
    miss = rng.random(n) < 0.3
    X[miss, 0] = np.nan
    y[miss] = (X[miss, 1] > 0).astype(int)  # missing rows follow another feature
    return X, y


@pytest.mark.parametrize("seed", range(4))
def test_cart_predictions_match_scikit_learn_on_missing_values(seed):
    X, y = _data(seed)
    Xt, _ = _data(seed + 100, 120)
    ours = ALGORITHMS.get("cart").obj(max_depth=4, random_state=0).fit(X, y)
    ref = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    assert ours.tree_.missing_left is not None
    # node counts recounted with the routing: every training row reaches one leaf
    assert ours.tree_.value[0].sum() == len(y)
    back = TreeArrays.from_dict(ours.tree_.to_dict())
    assert back == ours.tree_ and np.array_equal(back.apply(Xt), ours.tree_.apply(Xt))


def test_cart_regressor_routes_missing_values_too():
    X, y = _data(1)
    ours = ALGORITHMS.get("cart-regressor").obj(max_depth=3, random_state=0).fit(X, y.astype(float))
    ref = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y.astype(float))
    np.testing.assert_allclose(ours.predict(X), ref.predict(X))


def test_rules_say_where_missing_values_go():
    X, y = _data(0)
    tree = ALGORITHMS.get("cart").obj(max_depth=2, random_state=0).fit(X, y).tree_
    text = export_text(tree, ["a", "b", "c"])
    assert text.count("is missing") >= 1
    # a tree fitted without missing values says nothing about them
    clean = ALGORITHMS.get("cart").obj(max_depth=2).fit(np.nan_to_num(X), y).tree_
    assert clean.missing_left is None and "missing" not in export_text(clean, ["a", "b", "c"])
    assert "missing_left" not in clean.to_dict()


def test_only_learners_declaring_missing_take_nan():
    X, y = _data(0, 60)
    declared = {e.name for e in ALGORITHMS if "missing" in e.inputs}
    assert {"cart", "cart-regressor", "random-forest"} <= declared
    assert ALGORITHMS.get("cart").obj().__sklearn_tags__().input_tags.allow_nan
    dpdt = ALGORITHMS.get("dpdt").obj(max_depth=1)
    assert not dpdt.__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match="NaN"):
        dpdt.fit(X, y)
    with pytest.raises(ValueError, match="infinity"):  # infinite values: never, not even for CART
        ALGORITHMS.get("cart").obj().fit(np.where(np.isnan(X), np.inf, X), y)
