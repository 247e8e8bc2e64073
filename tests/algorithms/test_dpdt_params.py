"""The parameters of `DPDTClassifier` and `DPDTRegressor`: one shared ``__init__`` (the same
names and defaults for both), whose task-dependent ``criterion`` defaults to None, the task's
own criterion; a config that sets ``criterion`` works as it always did, and a results row
records it exactly when the config sets it."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from sklearn.base import clone
from sklearn.datasets import make_friedman1
from sklearn.utils._param_validation import InvalidParameterError
from typer.testing import CliRunner

from treebench.algorithms.dpdt import DPDTClassifier, DPDTRegressor
from treebench.cli import app
from treebench.results.store import read_table


def test_classifier_and_regressor_take_the_same_parameters():
    cls, reg = DPDTClassifier().get_params(), DPDTRegressor().get_params()
    assert cls == reg
    assert cls["criterion"] is None and cls["max_depth"] == 3 and cls["search"] == "auto"
    for est, crit in ((DPDTClassifier(criterion="entropy"), "entropy"),
                      (DPDTRegressor(criterion="squared_error"), "squared_error")):
        assert clone(est).get_params()["criterion"] == crit


def test_criterion_none_is_the_tasks_own_criterion():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(120, 5)).astype(float)
    y = (X[:, 0] + X[:, 1] * (X[:, 2] > 1) + rng.integers(0, 2, 120) > 3).astype(int)
    default = DPDTClassifier(max_depth=3, budgets=3).fit(X, y)
    gini = DPDTClassifier(max_depth=3, budgets=3, criterion="gini").fit(X, y)
    np.testing.assert_array_equal(default.tree_.feature, gini.tree_.feature)
    np.testing.assert_array_equal(default.tree_.threshold, gini.tree_.threshold)
    assert default.solve_info_["objective"] == gini.solve_info_["objective"]
    Xr, yr = make_friedman1(n_samples=150, noise=0.5, random_state=0)
    r_default = DPDTRegressor(max_depth=2, budgets=4).fit(Xr, yr)
    r_sse = DPDTRegressor(max_depth=2, budgets=4, criterion="squared_error").fit(Xr, yr)
    np.testing.assert_array_equal(r_default.predict(Xr), r_sse.predict(Xr))


@pytest.mark.parametrize(("est", "bad"), [(DPDTRegressor, "gini"), (DPDTClassifier, "squared_error")])
def test_a_criterion_of_the_other_task_is_refused(est, bad):
    with pytest.raises(InvalidParameterError, match="criterion"):
        est(max_depth=1, criterion=bad).fit(np.eye(4), np.arange(4.0) % 2)


def _config(path, algorithms):
    cfg = {
        "name": "dpdt-criterion", "seed": 0,
        "datasets": [{"name": "friedman1", "params": {"n_samples": 80, "noise": 0.5}}],
        "split": {"kind": "holdout", "test_size": 0.25},
        "binarization": {"method": "raw"},
        "algorithms": algorithms,
        "metrics": ["r2", "mse"],
        "execution": {"n_jobs": 1, "backend": "sequential"},
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_regressor_criterion_through_a_config(tmp_path):
    params = {"max_depth": 2, "budgets": 4}
    cfg = _config(tmp_path / "exp.yaml", [
        {"name": "dpdt-regressor", "label": "default", "params": params},
        {"name": "dpdt-regressor", "label": "sse", "params": {**params, "criterion": "squared_error"}},
    ])
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output
    df = read_table(out / "results.parquet").set_index("algorithm_label")
    assert (df["status"] == "ok").all()
    assert df.loc["sse", "param_criterion"] == "squared_error"
    assert df.loc["default", "param_criterion"] is None or np.isnan(df.loc["default", "param_criterion"])
    assert df.loc["default", "train_mse"] == df.loc["sse", "train_mse"]
    assert df.loc["default", "test_mse"] == df.loc["sse", "test_mse"]


def test_a_classifier_criterion_for_the_regressor_is_a_config_error(tmp_path):
    cfg = _config(tmp_path / "exp.yaml",
                  [{"name": "dpdt-regressor", "params": {"max_depth": 2, "criterion": "gini"}}])
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"])
    assert r.exit_code == 2, r.output
    assert "criterion" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("search", ["auto", "dp"])
def test_weights_whose_path_mass_overflows_are_refused(search):
    """Total weight 1.5e308 is a float, but a depth-2 tree's path mass (2 × that) is not:
    the fit reported a training error of -inf and an accuracy of inf."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.arange(30) % 2
    w = np.r_[np.full(15, 1e307), np.ones(15)]
    est = DPDTClassifier(max_depth=2, candidates="exhaustive", alpha=0.01, search=search)
    with pytest.raises(ValueError, match="max_depth=2 .* pass the largest float"):
        est.fit(X, y, sample_weight=w)


@pytest.mark.parametrize("params,why", [
    ({"max_depth": [2, 17], "candidates": "exhaustive", "search": "numeric"}, "depths up to 16"),
    ({"max_depth": 2, "candidates": "cart", "search": "numeric"}, "exhaustive generator only"),
    ({"max_depth": 2, "candidates": "exhaustive", "search": "layer", "alpha_path": True},
     "α path"),
])
def test_a_search_that_cannot_fit_the_parameters_is_a_config_error(tmp_path, monkeypatch,
                                                                   params, why):
    """A search asked for by name that cannot solve these parameters whatever the data
    failed in every cell (exit 3, the message only in the results); now the config is
    refused with that sentence (exit 2) before any cell runs."""
    X = np.random.default_rng(0).normal(size=(30, 2))
    lines = ["f0,f1,label"] + [f"{a},{b},{i % 2}" for i, (a, b) in enumerate(X)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cfg = {"name": "s", "datasets": [{"path": "d.csv", "label": "label"}],
           "split": {"kind": "holdout", "test_size": 0.25}, "binarization": {"method": "raw"},
           "algorithms": [{"name": "dpdt", "params": params}],
           "execution": {"n_jobs": 1, "backend": "sequential"}}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", "exp.yaml", "-o", "out", "-q", "--no-report"])
    assert r.exit_code == 2, r.output
    assert "cannot fit this problem" in r.output and why in r.output
    assert "Traceback" not in r.output
    cells = tmp_path / "out" / "cells"
    assert not cells.exists() or not any(cells.glob("*.json"))
