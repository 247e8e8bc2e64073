"""Compact inputs: 0/1 uint8 matrices reach learners that opt in
(``compact_input``) without a float64 copy, give the same trees, and bad values are still
found; the worker binarizes every row once and takes the splits' rows."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.algorithms.base import check_binary_matrix
from treebench.algorithms.cart import CARTClassifier
from treebench.algorithms.greedy import GreedyTreeClassifier


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((300, 12)) < 0.4).astype(np.uint8)
    y = ((X[:, 0] ^ X[:, 5]) | (rng.random(300) < 0.1)).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [GreedyTreeClassifier, CARTClassifier])
def test_uint8_input_is_kept_and_gives_the_same_tree(cls):
    X, y = _data()
    a = cls(max_depth=3).fit(X, y)
    b = cls(max_depth=3).fit(X.astype(np.float64), y)
    assert a.tree_ == b.tree_
    assert a._check_X(X).dtype == np.uint8  # no float64 copy at predict either
    assert np.array_equal(a.predict(X), b.predict(X.astype(np.float64)))


def test_learners_that_do_not_opt_in_still_get_float64():
    from treebench.algorithms.testing import SleepClassifier

    X, y = _data()
    est = SleepClassifier(seconds=0).fit(X, y)
    assert est._check_X(X).dtype == np.float64


def test_check_binary_matrix_finds_the_first_bad_value_in_any_block():
    X = np.zeros((3_000_000 // 8, 8), dtype=np.uint8)  # several blocks of rows
    check_binary_matrix(X)
    X[-1, 3] = 2
    with pytest.raises(ValueError, match=rf"column 3 has the value 2 \(row {X.shape[0] - 1}\)"):
        check_binary_matrix(X)
    Xf = np.ones((10, 2))
    Xf[4, 1] = 0.5
    with pytest.raises(ValueError, match=r"column 1 has the value 0.5 \(row 4\)"):
        check_binary_matrix(Xf)
    check_binary_matrix(np.zeros((0, 3)))


def test_worker_rows_equal_binarizing_each_split():
    from treebench.binarize import make_binarizer
    from treebench.config.cells import expand
    from treebench.config import validate_config
    from treebench.data.base import load_dataset
    from treebench.data.splits import SplitOptions, make_split
    from treebench.execute import fold

    cfg = {"name": "w", "datasets": ["iris"],
           "split": {"kind": "train-val-test", "seeds": [3]},
           "binarization": {"method": "quantile", "params": {"max_splits": 12}},
           "algorithms": ["greedy"]}
    cell = expand(validate_config(cfg))[0]
    prep = fold.prepare(cell)
    ds = load_dataset("iris")
    y = np.asarray(ds.y)
    sp = make_split(SplitOptions("train-val-test"), y, fold=0, seed=3)
    b = make_binarizer("quantile", {"max_splits": 12}, list(ds.categorical))
    b.fit(ds.X.iloc[sp.train], y[sp.train])
    assert np.array_equal(prep.X_train, b.transform(ds.X.iloc[sp.train]))
    assert np.array_equal(prep.X_test, b.transform(ds.X.iloc[sp.test]))
    assert np.array_equal(prep.X_val, b.transform(ds.X.iloc[sp.valid]))
    assert prep.X_train.dtype == np.uint8
