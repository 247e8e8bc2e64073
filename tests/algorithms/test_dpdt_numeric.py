"""DPDT's exhaustive generator on raw numeric features, solved by the numeric optimal-tree
search (`treebench.algorithms._dpdt_numeric`): the same tree as backward induction over every
state (Kohler, Akrour & Preux, KDD 2025, Algorithm 1 with the exhaustive generator of §5.2),
node for node, on tie-heavy data; the dispatch of ``search="auto"`` and the refusals of
``search="numeric"``."""

from __future__ import annotations

import numpy as np
import pytest
from treecompare import assert_same_tree

from treebench.algorithms.dpdt import DPDTClassifier, DPDTRegressor
from treebench.tree.arrays import check_tree

from quantbnb import load_quantbnb


def _numeric_data(seed: int):
    """Few distinct values per feature (ties between thresholds and between features), a
    duplicated and a constant column, repeated rows with different labels on odd seeds."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 60))
    p = int(rng.integers(2, 5))
    X = rng.integers(0, int(rng.integers(2, 6)), size=(n, p)).astype(float) * 0.7 - 1.0
    if seed % 2:
        X = X[rng.integers(0, max(2, n // 4), size=n)]
    X = np.column_stack([X, X[:, 0], np.full(n, 3.25)])
    y = rng.integers(0, int(rng.integers(2, 4)), size=n)
    return X, y


def _fit_both(X, y, depth, sample_weight=None, alpha=0.0):
    kw = dict(max_depth=depth, candidates="exhaustive", alpha=alpha)
    dp = DPDTClassifier(search="dp", **kw).fit(X, y, sample_weight=sample_weight)
    num = DPDTClassifier(search="numeric", **kw).fit(X, y, sample_weight=sample_weight)
    return dp, num


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_numeric_search_returns_the_dp_tree(seed, depth):
    X, y = _numeric_data(seed)
    dp, num = _fit_both(X, y, depth)
    check_tree(num.tree_)
    assert_same_tree(dp, num)
    assert num.solve_info_["search"] == "numeric" and dp.solve_info_["search"] == "dp"
    for key in ("objective", "training_error", "expected_path_length", "training_accuracy"):
        assert num.solve_info_[key] == pytest.approx(dp.solve_info_[key], abs=1e-12), key
    assert num.solve_info_["optimal"] and num.solve_info_["optimal_for_mdp"]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["whole", "zeros"])
def test_numeric_search_returns_the_dp_tree_with_weights(seed, kind):
    """Whole-number weights, some of them zero (rows the DP drops and the numeric search
    ignores, thresholds included)."""
    X, y = _numeric_data(100 + seed)
    rng = np.random.default_rng(seed)
    w = rng.integers(1 if kind == "whole" else 0, 4, size=len(y)).astype(float)
    w[0] = max(w[0], 1.0)  # never every weight zero
    dp, num = _fit_both(X, y, 2, sample_weight=w)
    assert_same_tree(dp, num)
    assert num.solve_info_["objective"] == dp.solve_info_["objective"]


ALPHAS = (0.01, 0.1, 1 / 3, 1.0, 7.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_numeric_search_with_a_test_price_returns_the_dp_tree(alpha, depth, seed):
    """``E + alpha * L``: the same tree (features, thresholds, children, class counts,
    labels) and the bit-identical objective and training error as backward induction, on
    tie-heavy data; seeds 2 and 5 with whole-number weights (zeros among them). With
    α = 1/3 or 0.1 many trees tie in real numbers and the DP's choice among them rests on
    how its floats round."""
    X, y = _numeric_data(200 + seed)
    w = None
    if seed % 3 == 2:
        w = np.random.default_rng(seed).integers(0, 4, size=len(y)).astype(float)
        w[0] = max(w[0], 1.0)
    dp, num = _fit_both(X, y, depth, sample_weight=w, alpha=alpha)
    check_tree(num.tree_)
    assert_same_tree(dp, num)
    assert num.solve_info_["search"] == "numeric" and dp.solve_info_["search"] == "dp"
    for key in ("objective", "training_error", "training_accuracy"):
        assert num.solve_info_[key] == dp.solve_info_[key], key
    assert num.solve_info_["expected_path_length"] == pytest.approx(
        dp.solve_info_["expected_path_length"], abs=1e-12)
    assert num.solve_info_["optimal"]


@pytest.mark.parametrize("rows", ["all", "versicolor-virginica"])
@pytest.mark.parametrize("alpha", [0.01, 0.1, 1.0])
def test_alpha_search_returns_the_dp_tree_on_iris(rows, alpha):
    """Many distinct values, so candidates are pruned before their children are solved.
    Before: a pruned candidate skipped adding its boundary row to the left part, so every
    later threshold of that feature was scored on wrong counts: iris at depth 3, α = 0.1,
    came out 32 against the DP's 31, and the versicolor-virginica rows at depth 2 missed the
    split on petal width."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    depth = 3
    if rows != "all":
        X, y, depth = X[y > 0], y[y > 0], 2
    dp, num = _fit_both(X, y, depth, alpha=alpha)
    assert_same_tree(dp, num)
    assert num.solve_info_["objective"] == dp.solve_info_["objective"]


@pytest.mark.parametrize("seed", range(8))
def test_alpha_search_returns_the_dp_tree_on_many_distinct_values(seed):
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(60, 120))
    X = rng.normal(size=(n, 3)).round(2)
    y = ((X[:, 0] + 0.5 * X[:, 1] > 0) ^ (rng.random(n) < 0.2)).astype(int)
    dp, num = _fit_both(X, y, 2 + seed % 2, alpha=(0.01, 0.1, 0.3)[seed % 3])
    assert_same_tree(dp, num)
    assert num.solve_info_["objective"] == dp.solve_info_["objective"]


def test_a_tie_in_real_numbers_is_decided_by_the_dp_floats():
    """α = 0.29 on 100 rows (71 of class 0, then 29 of class 1): the leaf costs 29 and the
    split between the classes 0.29 * 100, which is 29 in real numbers but 28.999999999999996
    in floats. The DP splits (its float is strictly lower); a search comparing costs within a
    tolerance would keep the leaf."""
    X = np.arange(100, dtype=float).reshape(-1, 1)
    y = np.r_[np.zeros(71, int), np.ones(29, int)]
    dp, num = _fit_both(X, y, 1, alpha=0.29)
    assert_same_tree(dp, num)
    assert num.tree_.feature[0] == 0 and num.tree_.threshold[0] == 70.5
    assert num.solve_info_["objective"] == 0.29 * 100 < 29.0


@pytest.mark.data
def test_raisin_depth_2_on_a_subsample_equals_the_dp():
    X, y = load_quantbnb("raisin")
    X, y = X[:160], y[:160]
    dp, num = _fit_both(X, y, 2)
    assert_same_tree(dp, num)


def test_auto_takes_the_numeric_search_only_where_it_is_the_dp():
    X, y = _numeric_data(7)
    base = dict(max_depth=2, candidates="exhaustive")
    assert DPDTClassifier(**base).fit(X, y).solve_info_["search"] == "numeric"
    assert DPDTClassifier(alpha=0.1, **base).fit(X, y).solve_info_["search"] == "numeric"
    frac = np.linspace(0.5, 1.5, len(y))
    refused = [
        (dict(max_depth=17), None, "depths up to 16"),
        (dict(alpha_path=True), None, "α path"),
        (dict(max_features=1), None, "max_features"),
        (dict(min_samples_leaf=2), None, "min_samples_leaf"),
        (dict(candidates="quantile"), None, "exhaustive generator only"),
        (dict(), frac, "whole-number sample weights"),
        (dict(), np.full(len(y), 0.3), "whole-number sample weights"),  # the DP's sums of 0.3 round
        # whole numbers whose sums pass 2^52, the exact limit
        (dict(), np.full(len(y), 2.0**60) + np.arange(len(y)) % 3, "summing to at most 2**52"),
    ]
    for kw, sw, why in refused:
        kw = {**base, **kw}
        assert DPDTClassifier(**kw).fit(X, y, sample_weight=sw).solve_info_["search"] == "dp"
        with pytest.raises(ValueError, match="search='numeric' cannot fit") as exc:
            DPDTClassifier(search="numeric", **kw).fit(X, y, sample_weight=sw)
        assert why in str(exc.value)
    with pytest.raises(ValueError, match="classification only"):
        DPDTRegressor(max_depth=2, candidates="exhaustive", search="numeric").fit(
            X, y.astype(float))


def test_a_timed_out_numeric_search_returns_a_valid_tree():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(int)
    est = DPDTClassifier(max_depth=4, candidates="exhaustive", time_limit=0.05).fit(X, y)
    check_tree(est.tree_)
    assert est.solve_info_["search"] == "numeric"
    assert est.solve_info_["timed_out"] == (not est.solve_info_["optimal"])


def test_thresholds_near_the_largest_float_are_the_same_in_both_searches():
    """``0.5 * (a + b)`` overflows to inf there; both searches use ``a/2 + b/2``."""
    big = np.finfo(np.float64).max
    X = np.array([[big * 0.9], [big * 0.95], [big], [-big], [0.0], [big * 0.99]])
    y = np.array([0, 1, 1, 0, 0, 1])
    dp, num = _fit_both(X, y, 2)
    assert_same_tree(dp, num)
    assert np.all(np.isfinite(num.tree_.threshold))
    assert num.predict(X).tolist() == y.tolist()


def test_a_run_records_which_search_solved_each_dpdt_cell(tmp_path, monkeypatch):
    """Through the CLI: DPDT's exhaustive cells on raw iris say ``search = numeric`` in the
    results table, and reach optimal-numeric's training accuracy on every fold."""
    import yaml
    from typer.testing import CliRunner

    from treebench.cli import app
    from treebench.results.store import read_table

    cfg = {"name": "dn", "seed": 0, "datasets": ["iris"], "split": {"kind": "kfold", "n_splits": 3},
           "binarization": {"method": "raw"},
           "algorithms": [{"name": "dpdt", "params": {"max_depth": 2, "candidates": "exhaustive"}},
                          {"name": "dpdt", "label": "dpdt-a", "params": {
                              "max_depth": 2, "candidates": "exhaustive", "alpha": 0.01}},
                          {"name": "optimal-numeric", "params": {"max_depth": 2}}],
           "execution": {"n_jobs": 1, "backend": "sequential"}}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", "exp.yaml", "-o", "out", "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    df = read_table(tmp_path / "out" / "results.parquet")
    by = {lab: g.sort_values("fold") for lab, g in df.groupby("algorithm_label")}
    assert (by["dpdt"]["search"] == "numeric").all()
    assert (by["dpdt-a"]["search"] == "numeric").all()  # alpha > 0 too
    assert by["optimal-numeric"]["search"].isna().all()
    assert by["dpdt"]["train_accuracy"].tolist() == by["optimal-numeric"]["train_accuracy"].tolist()


def test_whole_weights_past_exact_sums_run_the_dp_and_agree_with_it():
    """Whole-number weights of about 1e17 sum past 2^53, where sums of whole numbers round:
    such fits run the DP, not the numeric search (which returned up to twice the DP's
    error on them)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(40, 3)).astype(float)
    y = rng.integers(0, 3, size=40)
    w = rng.integers(1, 4, size=40) * 1e17 + rng.integers(0, 3, size=40)
    auto = DPDTClassifier(max_depth=3, candidates="exhaustive").fit(X, y, sample_weight=w)
    dp = DPDTClassifier(max_depth=3, candidates="exhaustive", search="dp").fit(
        X, y, sample_weight=w)
    assert auto.solve_info_["search"] == "dp"
    assert auto.solve_info_["objective"] == dp.solve_info_["objective"]


@pytest.mark.parametrize("search", ["auto", "dp", "layer"])
def test_training_error_is_the_trees_errors_exactly_with_a_test_price(search):
    """``training_error`` was ``objective - alpha * L``, whose subtraction rounds: 54 errors
    read 54.00000000000001 (wine, depth 1, alpha 0.29; raw features: the numeric search and
    the DP) and 17 errors 17.000000000000004 (0/1 features, alpha 0.07: the layer and the
    DP). Now every search counts the tree's errors at its leaves."""
    from sklearn.datasets import load_wine

    if search == "layer":
        r = np.random.default_rng(11)
        n = int(r.integers(20, 120))  # 33
        X, y, alpha, depth = r.integers(0, 2, (n, 4)).astype(float), r.integers(0, 3, n), 0.07, 2
    else:
        (X, y), alpha, depth = load_wine(return_X_y=True), 0.29, 1
    est = DPDTClassifier(max_depth=depth, candidates="exhaustive", alpha=alpha, search=search)
    info = est.fit(X, y).solve_info_
    errors = est.tree_.training_error(X, y)
    assert info["training_error"] == errors
    assert info["training_accuracy"] == 1.0 - errors / len(y)
