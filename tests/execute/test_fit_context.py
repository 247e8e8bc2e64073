"""The runner side of the fit context: every cell's learner gets the
validation rows, feature groups, column costs and a deadline; validation rows give val_*
metrics."""

from __future__ import annotations

import time

import numpy as np
import pytest

from treebench.algorithms.base import TreeClassifierBase, TreeRegressorBase
from treebench.config.cells import expand
from treebench.config import validate_config
from treebench.errors import ConfigError
from treebench.execute import fit as fitting, fold
from treebench.execute.fit_context import column_costs, feature_groups
from treebench.tree.arrays import TreeArrays

COLS = [
    {"feature": "a", "op": ">=", "value": 1.0},
    {"feature": "a", "op": ">=", "value": 2.0},
    {"feature": "c", "op": "==", "value": "x"},
]


def test_feature_groups_from_the_column_table():
    assert feature_groups(COLS, ["a", "b", "c"], 3).tolist() == [0, 0, 2]
    # no table (or one that does not match the matrix): every column is its own feature
    assert feature_groups([], ["a", "b"], 2).tolist() == [0, 1]


def test_column_costs_kinds():
    g = np.array([0, 0, 2])
    names = ["a", "b", "c"]
    assert column_costs({}, g, names) is None
    assert column_costs({"kind": "unit"}, g, names) is None
    given = column_costs({"kind": "given", "values": {"a": 5, "c": 2}, "default": 1}, g, names)
    assert given.tolist() == [5.0, 5.0, 2.0]
    # the dataset's own costs when the config gives none
    assert column_costs({"kind": "given"}, g, names, {"a": 3, "b": 4, "c": 1}).tolist() == [3, 3, 1]
    r1 = column_costs({"kind": "random", "seed": 4, "low": 1, "high": 10}, np.arange(500), names)
    r2 = column_costs({"kind": "random", "seed": 4, "low": 1, "high": 10}, np.arange(500), names)
    assert np.array_equal(r1, r2) and r1.min() == 1 and r1.max() == 10
    assert np.all(r1 == np.round(r1))
    with pytest.raises(ValueError, match="feature `z`"):
        column_costs({"kind": "given", "values": {"z": 1}}, g, names)
    with pytest.raises(ValueError, match="no cost for feature `b`"):
        column_costs({"kind": "given", "values": {"a": 1, "c": 1}}, g, names)
    with pytest.raises(ValueError, match="declares no feature_costs"):
        column_costs({"kind": "given"}, g, names)


def _cfg(**over):
    cfg = {
        "name": "ctx",
        "datasets": ["iris"],
        "split": {"kind": "train-val-test", "test_size": 0.2, "valid_size": 0.2, "seeds": [1]},
        "binarization": {"method": "quantile", "params": {"max_splits": 12}},
        "algorithms": ["cart"],
        "limits": {"time": 30},
    }
    cfg.update(over)
    return cfg


@pytest.mark.parametrize("bad, match", [
    ({"kind": "unit", "seed": 3}, "seed"),
    ({"kind": "random", "values": {"a": 1}}, "values"),
    ({"kind": "random", "low": 5, "high": 2}, "low"),
    ({"kind": "given", "values": {"a": -1}}, "finite"),
    ({"kind": "cheap"}, "kind"),
])
def test_costs_config_errors(bad, match):
    with pytest.raises(ConfigError, match=match):
        validate_config(_cfg(costs=bad))


def test_unit_costs_leave_cell_ids_unchanged():
    a = expand(validate_config(_cfg()))
    b = expand(validate_config(_cfg(costs="unit")))
    c = expand(validate_config(_cfg(costs={"kind": "random"})))
    assert [x.id for x in a] == [x.id for x in b]
    assert a[0].id != c[0].id and c[0].costs == {"kind": "random", "seed": 0, "low": 1, "high": 10}


class _Spy(TreeClassifierBase):
    """Records the context it was given; fits a majority leaf."""

    _parameter_constraints: dict = {}
    seen: list = []

    def _fit_tree(self, X, y_index, ctx):
        _Spy.seen.append((X.shape, ctx, time.perf_counter()))
        return TreeArrays.leaf(np.bincount(y_index, minlength=len(self.classes_))), {}


def test_worker_passes_the_context_and_scores_validation_rows(monkeypatch):
    monkeypatch.setattr(fitting, "make_estimator", lambda cell: _Spy())
    _Spy.seen.clear()
    cell = expand(validate_config(_cfg(costs={"kind": "random", "seed": 7})))[0]
    prep = fold.prepare(cell)
    assert prep.X_val is not None and prep.X_val.shape[1] == prep.X_train.shape[1]
    n = len(prep.y_train) + len(prep.y_val) + len(prep.y_test)
    assert n == 150 and len(prep.y_val) == 30
    t0 = time.perf_counter()
    out = fitting.fit_and_score(cell, prep)
    shape, ctx, t_fit = _Spy.seen[-1]
    assert ctx.X_val.shape == (30, shape[1]) and np.array_equal(ctx.y_val, prep.y_val)
    # quantile columns of one iris feature share its group
    feats = [c["feature"] for c in prep.columns]
    names = list(prep.feature_names)
    assert ctx.feature_groups.tolist() == [names.index(f) for f in feats]
    assert ctx.feature_costs.shape == (shape[1],) and set(ctx.feature_costs) <= set(range(1, 11))
    assert t_fit + 29 < ctx.deadline <= t0 + 31  # now + the cell's 30 s, set just before fit
    row = _measured(out)
    assert row["n_val"] == 30
    assert {"val_accuracy", "val_roc_auc", "expected_tests_val", "expected_cost_val"} <= set(row)
    assert row["expected_cost_test"] == 0.0  # a lone leaf tests nothing


def test_worker_charges_given_costs_per_feature(monkeypatch):
    cfg = _cfg(algorithms=[{"name": "cart", "params": {"max_depth": 2}}],
               split={"kind": "holdout", "seeds": [0]},
               costs={"kind": "given", "default": 1,
                      "values": {"petal length (cm)": 10, "petal width (cm)": 10}})
    cell = expand(validate_config(cfg))[0]
    prep = fold.prepare(cell)
    row = _measured(fitting.fit_and_score(cell, prep))
    assert "val_accuracy" not in row and row["n_val"] == 0
    tree = TreeArrays.from_dict(fitting.fit_and_score(cell, prep)["tree"])
    costs = np.array([10.0 if c["feature"].startswith("petal") else 1.0 for c in prep.columns])
    from treebench.metrics import expected_path_cost

    assert row["expected_cost_train"] == pytest.approx(expected_path_cost(tree, prep.X_train, costs))
    assert row["expected_cost_test"] == pytest.approx(expected_path_cost(tree, prep.X_test, costs))
    assert costs[tree.feature[0]] == 10.0  # CART's root tests a petal feature on iris
    assert row["expected_cost_train"] > row["expected_tests_train"]



def _measured(out: dict) -> dict:
    """Every column the fit measured (its parts of the results row), as one dict."""
    return {k: v for part in out["parts"].values() for k, v in part.items()}


class _MeanRegressor(TreeRegressorBase):
    """A lone regression leaf (the weighted mean)."""

    _parameter_constraints: dict = {}

    def _fit_tree(self, X, y, ctx):
        return TreeArrays.regression_leaf(y, ctx.sample_weight), {}


def test_worker_scores_regressors_with_r2_and_mse(monkeypatch):
    from sklearn.metrics import mean_squared_error, r2_score

    monkeypatch.setattr(fitting, "make_estimator", lambda cell: _MeanRegressor())
    import dataclasses

    cell = expand(validate_config(_cfg()))[0]
    prep = fold.prepare(cell)
    rng = np.random.default_rng(0)
    # a real-valued target on the same rows (iris's labels are class names)
    prep = dataclasses.replace(prep, **{k: rng.normal(size=len(getattr(prep, k)))
                                         for k in ("y_train", "y_val", "y_test")})
    out = fitting.fit_and_score(cell, prep)
    row = _measured(out)
    y_tr, y_te = prep.y_train, prep.y_test
    pred = np.full(len(y_te), y_tr.mean())
    assert row["test_mse"] == pytest.approx(mean_squared_error(y_te, pred))
    assert row["test_r2"] == pytest.approx(r2_score(y_te, pred))
    assert "val_r2" in row and "test_accuracy" not in row
    assert row["n_classes"] is None and out["classes"] == []
    assert row["n_leaves"] == 1 and row["expected_tests_test"] == 0.0
