"""Data preparation for large datasets: binarizing in row chunks straight
into each split's matrix gives the same matrices, and the same cell rows, as transforming every
row at once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treebench import api
from treebench.execute import fold
from treebench.results.store import read_table

from runs import steady_columns, tiny_config

BINARIZERS = [("raw", {}), ("quantile", {"max_splits": 3}), ("midpoints", {}), ("kmeans", {"n_bins": 3}),
              ("threshold-guess", {"n_estimators": 5, "max_depth": 2})]


@pytest.mark.parametrize("method,params", BINARIZERS)
def test_chunked_transform_equals_the_all_rows_transform(method, params):
    from treebench.binarize import make_binarizer

    rng = np.random.default_rng(0)
    n = 203
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n).astype(float),
                      "c": rng.choice(["x", "y", "z"], n)})
    y = (X["a"] > 0).astype(int).to_numpy()
    perm = rng.permutation(n)
    parts = (perm[:120], perm[120:180], perm[180:])
    binz = make_binarizer(method, dict(params), ["c"])
    binz.fit(X.iloc[parts[0]], y[parts[0]])
    whole = fold.transform_splits(binz, X, parts, chunked=False)
    old = fold.CHUNK_ROWS
    fold.CHUNK_ROWS = 7  # many chunks, the last one short
    try:
        chunked = fold.transform_splits(binz, X, (*parts, None), chunked=True)
    finally:
        fold.CHUNK_ROWS = old
    assert chunked[3] is None
    for a, b in zip(whole, chunked[:3], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_chunked_preparation_gives_the_same_cell_rows(write_config, tmp_path, monkeypatch):
    cfg = tiny_config(datasets=["iris", "wine"],
                      split={"kind": "train-val-test", "seeds": [0, 1]},
                      binarization={"method": "quantile", "params": {"max_splits": 4}},
                      algorithms=[{"name": "cart", "params": {"max_depth": [2, 4]}},
                                  {"name": "topk", "params": {"k": 2, "max_depth": 2}}])
    path = write_config(cfg)
    a = api.run_experiment(path, api.RunOptions(out=tmp_path / "a", progress=False, report=False))
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    monkeypatch.setattr(fold, "CHUNKED_ABOVE", 0)
    monkeypatch.setattr(fold, "CHUNK_ROWS", 11)
    b = api.run_experiment(path, api.RunOptions(out=tmp_path / "b", progress=False, report=False))
    ta = read_table(a.out / "results.parquet").sort_values("cell_id").reset_index(drop=True)
    tb = read_table(b.out / "results.parquet").sort_values("cell_id").reset_index(drop=True)
    assert (ta["status"] == "ok").all() and len(ta) == 12
    cols = steady_columns(ta)
    pd.testing.assert_frame_equal(ta[cols], tb[cols])


def test_fit_on_all_binarizes_once_and_each_fold_takes_its_rows(write_config, tmp_path, monkeypatch):
    """``fit_on: all``: the binarizer fitted on every row is the same for every
    fold, so it is fitted and applied once per (dataset, binarizer); each fold's matrices are
    exactly the rows of a fresh fit-on-all-and-transform, for 4 folds, and a second binarizer
    gets its own fit."""
    from treebench.binarize import make_binarizer
    from treebench.binarize import thresholds

    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    monkeypatch.setattr(fold, "_ALL_ROWS", type(fold._ALL_ROWS)())
    fits = []
    real_fit = thresholds.Quantile.fit

    def counting_fit(self, X, y=None, **kw):
        fits.append(len(X))
        return real_fit(self, X, y, **kw)

    monkeypatch.setattr(thresholds.Quantile, "fit", counting_fit)
    binz = [{"method": "quantile", "params": {"max_splits": s, "fit_on": "all"}} for s in (3, 5)]
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 4}, binarization=binz)
    exp = api.resolve_experiment(write_config(cfg))
    cells = api.plan(exp, tmp_path / "out").to_run
    seen, prep_fits = set(), []
    for c in cells:
        n = len(fits)
        prep = fold.prepare(c)
        prep_fits += fits[n:]
        ds = fold.dataset_for(c, None)
        y = np.asarray(ds.y)
        fresh = make_binarizer(c.binarizer, dict(c.binarizer_params), list(ds.categorical))
        fresh.fit(ds.X, y)
        X_all = np.asarray(fresh.transform(ds.X))
        from treebench.data.splits import SplitOptions, make_split

        split = make_split(SplitOptions(**c.split), y, fold=c.fold, seed=c.seed,
                           predefined=(ds.train_index, ds.test_index))
        np.testing.assert_array_equal(prep.X_train, X_all[split.train])
        np.testing.assert_array_equal(prep.X_test, X_all[split.test])
        np.testing.assert_array_equal(prep.y_train, y[split.train])
        assert prep.columns == [col.to_dict() for col in fresh.columns_]
        seen.add((c.fold, c.binarizer_params["max_splits"]))
    assert len(seen) == 8  # 4 folds x 2 binarizers
    assert prep_fits == [150, 150]  # one fit on all of iris per binarizer, not one per fold
