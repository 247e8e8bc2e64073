"""Regression end to end through the CLI: regression datasets, the
`cart-regressor` conversion, unstratified splits, the learner/task pairing, R² rows, the report."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.data.splits import SplitOptions, make_split, stratification_problem
from treebench.registry import ALGORITHMS, DATASETS
from treebench.results.store import read_table
from treebench.tree.arrays import check_tree

from runs import tiny_config

runner = CliRunner()


def _reg_config(**over):
    cfg = tiny_config(
        datasets=["diabetes", {"name": "friedman1", "params": {"n_samples": 120, "noise": 0.5}}],
        split={"kind": "kfold", "n_splits": 3},
        algorithms=[{"name": "cart-regressor", "params": {"max_depth": [1, 2]}}],
        metrics=["r2", "mse", "accuracy"],
        report={"figures": ["*"]},
    )
    cfg.update(over)
    return cfg


def test_regression_datasets_are_registered_with_continuous_targets():
    ds = DATASETS.get("diabetes").obj()
    assert ds.meta["task"] == "regression" and ds.X.shape == (442, 10)
    assert ds.y.dtype == np.float64 and len(np.unique(ds.y)) > 100
    f = DATASETS.get("friedman1").obj(n_samples=50, noise=0.0, seed=3)
    assert f.meta["task"] == "regression" and f.X.shape == (50, 10)
    # noise-free Friedman #1 is exactly its formula
    X = f.X.to_numpy()
    expect = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    np.testing.assert_allclose(f.y, expect)
    again = DATASETS.get("friedman1").obj(n_samples=50, noise=0.0, seed=3)
    np.testing.assert_array_equal(again.y, f.y)


def test_cart_regressor_matches_sklearn_and_recounts_values():
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(0)
    X = rng.random((80, 4))
    y = X[:, 0] * 3 + rng.normal(size=80)
    w = rng.integers(1, 4, size=80).astype(float)
    est = ALGORITHMS.get("cart-regressor").obj(max_depth=3, random_state=0).fit(X, y, sample_weight=w)
    ref = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.predict(X), ref.predict(X))
    assert est.tree_.is_regression
    check_tree(est.tree_, X=X, y_index=y, sample_weight=w, max_depth=3)
    # Σw at the root is the total weight, exactly
    assert est.tree_.value[0, 0] == w.sum()
    lone = ALGORITHMS.get("cart-regressor").obj(max_depth=0).fit(X, y)
    assert lone.tree_.n_nodes == 1 and np.allclose(lone.predict(X), y.mean())


def test_regression_splits_are_plain_without_warning():
    y = np.linspace(0.0, 1.0, 50)  # every value once: no class could be stratified
    assert stratification_problem("kfold", y, n_splits=5, task="regression") is None
    sp = make_split(SplitOptions("kfold", n_splits=5), y, fold=0, seed=1, task="regression")
    assert sp.warning is None and len(sp.test) == 10
    ho = make_split(SplitOptions("holdout", test_size=0.2), y, fold=0, seed=1, task="regression")
    assert ho.warning is None and len(ho.test) == 10
    # the classification path still warns on the same labels
    assert make_split(SplitOptions("kfold", n_splits=5), y, fold=0, seed=1).warning is not None


def test_run_regression_end_to_end(write_config, tmp_path):
    out = tmp_path / "o"
    r = runner.invoke(app, ["run", str(write_config(_reg_config())), "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "stratified" not in r.output and "class" not in r.output
    df = read_table(out / "results.parquet")
    assert len(df) == 2 * 3 * 2 and (df["status"] == "ok").all()
    for c in ("train_r2", "test_r2", "train_mse", "test_mse"):
        assert df[c].notna().all(), c
    assert (df["train_r2"] > 0).all() and (df["train_mse"] > 0).all()
    assert df["train_accuracy"].isna().all() and df["test_accuracy"].isna().all()
    # deeper CART fits the training data at least as well (nested greedy trees)
    g = df.groupby(["dataset", "fold", "param_max_depth"])["train_r2"].mean().unstack()
    assert (g[2] >= g[1] - 1e-12).all()
    figs = sorted(p.name for p in (out / "report" / "figures").iterdir())
    assert any("train_test_r2_vs_max_depth" in f for f in figs), figs
    r = runner.invoke(app, ["report", str(out), "--format", "md,csv"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    ("datasets", "algorithm", "words"),
    [
        (["diabetes"], "cart", ("`cart` is a classifier", "continuous target")),
        (["iris"], "cart-regressor", ("`cart-regressor` is a regressor", "class target")),
        (["iris"], "dpdt-regressor", ("`dpdt-regressor` is a regressor",)),
    ],
)
def test_learner_task_mismatch_is_a_config_error(write_config, tmp_path, datasets, algorithm, words):
    cfg = write_config(_reg_config(datasets=datasets, algorithms=[{"name": algorithm, "params": {"max_depth": 2}}]))
    r = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    for w in words:
        assert w in r.output, r.output


def test_constant_regression_target_is_refused(write_config, tmp_path):
    from treebench.data.base import Dataset
    from treebench.data.checks import check_dataset_split
    from treebench.errors import DataError

    import pandas as pd

    ds = Dataset("flat", pd.DataFrame({"a": [1.0, 2.0, 3.0]}), np.full(3, 2.5), meta={"task": "regression"})
    with pytest.raises(DataError, match="constant"):
        check_dataset_split(ds, "flat", {"kind": "kfold"})
    ok = Dataset("ok", pd.DataFrame({"a": [1.0, 2.0, 3.0]}), np.array([1.0, 2.0, 4.0]), meta={"task": "regression"})
    assert check_dataset_split(ok, "ok", {"kind": "kfold", "n_splits": 3}) == []
