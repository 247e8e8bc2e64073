"""Missing values in binarizers (docs/missing-values.md): the `is missing` column, 0 in every
other column of the feature, printed rules that say "or missing", impute on the fit rows only,
and `missing: error`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treebench.binarize import BinaryColumn, make_binarizer
from treebench.errors import DataError, ParameterError

BINARY_METHODS = ["quantile", "midpoints", "bucketize", "kmeans", "threshold-guess"]


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    score = rng.normal(0, 2, size=n).round(2)  # values on both sides of 0
    y = (score > 0.5).astype(int)
    score[rng.random(n) < 0.25] = np.nan
    y[np.isnan(score)] = 1
    colour = rng.choice(["red", "green", "blue"], size=n).astype(object)
    colour[rng.random(n) < 0.2] = None
    return pd.DataFrame({"score": score, "colour": colour, "full": rng.integers(0, 5, size=n).astype(float)}), y


@pytest.mark.parametrize("method", BINARY_METHODS)
def test_missing_values_get_an_is_missing_column_and_zero_elsewhere(method):
    X, y = _data()
    b = make_binarizer(method, {}, ["colour"]).fit(X, y)
    Z = b.transform(X)
    for feature in ("score", "colour"):
        cols = [k for k, c in enumerate(b.columns_) if c.feature == feature]
        ind = [k for k in cols if b.columns_[k].op == "missing"]
        assert len(ind) == 1 and ind[0] == cols[-1]  # one indicator, after the feature's own columns
        miss = X[feature].isna().to_numpy()
        np.testing.assert_array_equal(Z[:, ind[0]], miss.astype(np.uint8))
        others = [k for k in cols if k != ind[0]]
        assert not Z[np.ix_(miss, others)].any()  # a missing value satisfies no condition
        assert all(b.columns_[k].missing for k in others)
    # a feature without missing values gets no indicator and unmarked columns
    assert not any(c.op == "missing" or c.missing for c in b.columns_ if c.feature == "full")
    assert b.columns_per_feature_["score"] == sum(c.feature == "score" for c in b.columns_)


@pytest.mark.parametrize("method", BINARY_METHODS)
def test_a_missing_value_is_never_read_as_zero(method):
    """A missing row differs from a row whose value is 0 wherever 0 satisfies the column's
    test: it lands on no `x <= t` (or `x >= t`) side because NaN was read as 0."""
    X, y = _data()
    b = make_binarizer(method, {}, ["colour"]).fit(X, y)
    probe = pd.DataFrame({"score": [np.nan, 0.0, -1e9, 1e9], "colour": ["red"] * 4, "full": [1.0] * 4})
    nan_row, zero_row, low_row, high_row = b.transform(probe)
    tests = [k for k, c in enumerate(b.columns_) if c.feature == "score" and c.op != "missing"]
    assert tests and not nan_row[tests].any()
    # where 0 passes a test (`x <= t` with t >= 0, `x >= t` with t <= 0), the missing value does not
    assert all(nan_row[k] == 0 for k in tests if zero_row[k] == 1)
    # the extreme values pass some test of the feature; a missing value passes none
    assert low_row[tests].any() or high_row[tests].any()


def test_rules_say_or_missing_on_the_zero_side():
    X, y = _data()
    b = make_binarizer("quantile", {"max_splits": 2}, ["colour"]).fit(X, y)
    texts = {(c.feature, c.op): (c.false_text(), c.true_text()) for c in b.columns_}
    ge = next(c for c in b.columns_ if c.feature == "score" and c.op == ">=")
    assert ge.false_text().endswith("or score is missing") and "missing" not in ge.true_text()
    assert texts[("score", "missing")] == ("score is not missing", "score is missing")
    full = next(c for c in b.columns_ if c.feature == "full")
    assert "missing" not in full.false_text()
    # the column table round-trips, and tables without missing values are unchanged
    for c in b.columns_:
        assert BinaryColumn.from_dict(c.to_dict()) == c
    assert "missing" not in full.to_dict()


def test_none_binarizer_reads_missing_as_neither_zero_nor_one():
    X = pd.DataFrame({"a": [0.0, 1.0, np.nan, 1.0]})
    b = make_binarizer("none", {}, []).fit(X, [0, 1, 1, 0])
    np.testing.assert_array_equal(b.transform(X), [[0, 0], [1, 0], [0, 1], [1, 0]])
    with pytest.raises(DataError, match="has the value 2"):
        make_binarizer("none", {}, []).fit(pd.DataFrame({"a": [0.0, 2.0]}), [0, 1])


def test_raw_keeps_nan_and_indicator_adds_a_column():
    X = pd.DataFrame({"s": [1.0, np.nan, 3.0]})
    plain = make_binarizer("raw", {}, []).fit(X, [0, 1, 0])
    assert plain.n_columns_ == 1 and np.isnan(plain.transform(X)[1, 0])
    ind = make_binarizer("raw", {"missing": "indicator"}, []).fit(X, [0, 1, 0])
    np.testing.assert_array_equal(ind.transform(X)[:, 1], [0, 1, 0])


def test_impute_uses_the_fit_rows_only():
    train = pd.DataFrame({"s": [1.0, 2.0, np.nan, 10.0], "c": ["a", None, "a", "b"]})
    test = pd.DataFrame({"s": [np.nan, 100.0, 200.0, 300.0], "c": [None, "b", "b", "b"]})
    b = make_binarizer("quantile", {"missing": "impute"}, ["c"]).fit(train, [0, 1, 0, 1])
    assert b.fill_values_ == {"s": 2.0, "c": "a"}  # training median and mode; the test rows change nothing
    assert not any(c.op == "missing" or c.missing for c in b.columns_)
    Z = b.transform(test)
    filled = b.transform(pd.DataFrame({"s": [2.0], "c": ["a"]}))
    np.testing.assert_array_equal(Z[0], filled[0])  # the missing test row reads as the training median/mode


def test_impute_refuses_a_feature_missing_in_every_fit_row():
    X = pd.DataFrame({"s": [np.nan, np.nan], "t": [1.0, 2.0]})
    with pytest.raises(DataError, match="missing in every row"):
        make_binarizer("quantile", {"missing": "impute"}, []).fit(X, [0, 1])


def test_missing_error_names_the_feature_and_the_count():
    X, y = _data()
    b = make_binarizer("quantile", {"missing": "error"}, ["colour"])
    n = int(X["score"].isna().sum())
    with pytest.raises(DataError, match=rf"feature `score` has {n} missing value\(s\).*missing: error"):
        b.fit(X, y)
    clean = X.dropna()
    b.fit(clean, y[clean.index])
    with pytest.raises(DataError, match="asked to transform"):
        b.transform(X)


@pytest.mark.parametrize("value,match", [("drop-rows", "on the dataset entry"), ("sometimes", "must be one of")])
def test_binarizer_missing_values_are_checked(value, match):
    with pytest.raises(ParameterError, match=match):
        make_binarizer("quantile", {"missing": value}, [])
