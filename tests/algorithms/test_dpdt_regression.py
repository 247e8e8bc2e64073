"""DPDTRegressor on scikit-learn's bundled diabetes data and a Friedman #1 problem (the regression
setting of the paper's regression experiments): DPDT never has a larger training squared error than CART at the same
depth (Theorem 5.1 carries over: the CART generator contains CART's greedy split), and its
test R² stays in CART's range. Checked values are printed in the assertion messages."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from treebench.algorithms.dpdt import DPDTRegressor


def _sets():
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", X, y
    X, y = make_friedman1(n_samples=1000, noise=1.0, random_state=0)
    yield "friedman1", X, y


@pytest.mark.parametrize("name, X, y", list(_sets()), ids=["diabetes", "friedman1"])
@pytest.mark.parametrize("depth", [2, 3])
def test_dpdt_regressor_vs_cart(name, X, y, depth):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    cart = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(Xtr, ytr)
    est = DPDTRegressor(max_depth=depth, budgets=(16, 16, 16)).fit(Xtr, ytr)
    sse_cart = float(np.sum((cart.predict(Xtr) - ytr) ** 2))
    assert est.solve_info_["objective"] <= sse_cart + 1e-6 * sse_cart
    assert est.tree_.squared_error(Xtr, ytr) == pytest.approx(est.solve_info_["objective"])
    r2 = (cart.score(Xtr, ytr), est.score(Xtr, ytr), cart.score(Xte, yte), est.score(Xte, yte))
    assert r2[1] >= r2[0] - 1e-12, r2
    assert r2[3] > r2[2] - 0.1, f"{name} d{depth} R2 train cart/dpdt, test cart/dpdt = {r2}"


@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e-10, 1e-150, 1e100])
def test_scaling_the_targets_keeps_the_optimal_tree(scale):
    """The squared error of every tree scales by s², so the optimum is the same tree: the
    purity test is relative to the targets' mean square (an absolute floor of 1e-12 made
    nodes of targets near 1e-6 "pure", and their trees, reported optimal, were not)."""
    from treebench.algorithms.dpdt import DPDTRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3)).round(2)
    y = X[:, 0] + 0.1 * rng.normal(size=30)
    ref = DPDTRegressor(max_depth=2, candidates="exhaustive").fit(X, y)
    est = DPDTRegressor(max_depth=2, candidates="exhaustive").fit(X, y * scale)
    assert est.solve_info_["optimal"]
    assert est.tree_.feature.tolist() == ref.tree_.feature.tolist()
    assert est.solve_info_["objective"] / scale**2 == pytest.approx(ref.solve_info_["objective"])


@pytest.mark.parametrize("offset", [1e6, -1e8, 3e9])
@pytest.mark.parametrize("candidates", ["exhaustive", "quantile"])
def test_shifting_the_targets_keeps_the_optimal_tree(offset, candidates):
    """A constant added to every target changes no tree's squared error, so the tree, its
    objective and its alpha path stay and the predictions move by the constant. Sums of
    shifted targets cancel: at offset 1e6 every node was "pure" and a lone leaf (squared error
    0.171875) was claimed optimal where one split has 0.15625."""
    X = np.array([[1.0], [0.0], [1.0], [0.0]])
    y = np.array([0.5, 0.75, 0.75, 0.25])
    est = DPDTRegressor(max_depth=1, candidates="exhaustive").fit(X, y + offset)
    assert est.tree_.feature.tolist()[0] == 0 and est.solve_info_["optimal"]
    assert est.solve_info_["objective"] == pytest.approx(0.15625, rel=1e-6)
    np.testing.assert_allclose(est.predict(X) - offset, [0.625, 0.5, 0.625, 0.5], atol=1e-6)

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)).round(1)
    y = X[:, 0] - X[:, 1] ** 2 + 0.25 * rng.integers(0, 4, size=40)
    w = rng.integers(1, 4, size=40).astype(float)
    kw = dict(max_depth=2, candidates=candidates, alpha_path=True)
    ref = DPDTRegressor(**kw).fit(X, y, sample_weight=w)
    est = DPDTRegressor(**kw).fit(X, y + offset, sample_weight=w)
    assert est.tree_.feature.tolist() == ref.tree_.feature.tolist()
    assert est.tree_.threshold.tolist() == ref.tree_.threshold.tolist()
    assert est.solve_info_["objective"] == pytest.approx(ref.solve_info_["objective"], rel=1e-6)
    np.testing.assert_allclose(est.predict(X) - offset, ref.predict(X), atol=1e-6 * abs(offset))
    assert len(est.alpha_path_) == len(ref.alpha_path_)
    for a, b in zip(est.alpha_path_, ref.alpha_path_):
        assert a["tree"].feature.tolist() == b["tree"].feature.tolist()
        np.testing.assert_allclose(a["tree"].value[:, 1] / a["tree"].value[:, 0] - offset,
                                   b["tree"].value[:, 1] / b["tree"].value[:, 0],
                                   atol=1e-6 * abs(offset))


@pytest.mark.parametrize("offset", [0.0, 1e6, -1e8])
def test_cart_candidates_under_an_offset_do_no_worse_than_cart(offset):
    """With CART candidates the DP can always keep CART's own tree, so its training squared
    error is at most CART's. Under an offset of 1e6 its sums made every node "pure" and it
    returned a lone leaf where scikit-learn's CART splits."""
    rng = np.random.default_rng(5)
    for X, y in ((np.array([[1.0], [0.0], [1.0], [0.0]]), np.array([0.5, 0.75, 0.75, 0.25])),
                 (rng.normal(size=(60, 3)).round(1), None)):
        if y is None:
            y = X[:, 0] - X[:, 1] ** 2 + 0.25 * rng.integers(0, 4, size=len(X))
        y = y + offset
        for depth in (1, 2):
            dp = DPDTRegressor(max_depth=depth, candidates="cart").fit(X, y)
            cart = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)
            sse = [float(np.sum((y - m.predict(X)) ** 2)) for m in (dp, cart)]
            assert sse[0] <= sse[1] * (1 + 1e-9) + 1e-9, (offset, depth, sse)
            assert dp.solve_info_["objective"] == pytest.approx(sse[0], rel=1e-6, abs=1e-6)


def test_targets_whose_squares_overflow_are_refused():
    from treebench.algorithms.cart import CARTRegressor
    from treebench.algorithms.dpdt import DPDTRegressor

    X = np.arange(10.0).reshape(-1, 1)
    for est in (DPDTRegressor(max_depth=1), CARTRegressor(max_depth=1)):
        with pytest.raises(ValueError, match="squares overflow a float"):
            est.fit(X, np.arange(10.0) * 1e160)
