"""Properties of every binarizer: column counts, encodings, fit-only-on-train, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebench.binarize import BinaryColumn, ColumnBinarizer, make_binarizer
from treebench.binarize.thresholds import Quantile
from treebench.errors import DataError, ParameterError
from treebench.registry import BINARIZERS

RNG = np.random.default_rng(0)


def _mixed(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n).round(2),
            "color": rng.choice(["red", "green", "blue"], size=n),
            "b": rng.integers(0, 7, size=n).astype(float),
        }
    )
    y = (X["a"] > 0).to_numpy().astype(int) ^ (X["color"] == "red").to_numpy()
    return X, y


def test_registry_lists_all_methods():
    names = set(BINARIZERS.names())
    assert {"none", "raw", "onehot", "quantile", "midpoints", "bucketize", "kmeans", "threshold-guess"} <= names


@pytest.mark.parametrize("method", ["quantile", "midpoints", "bucketize", "kmeans", "threshold-guess", "onehot"])
def test_outputs_are_binary_and_match_column_table(method):
    X, y = _mixed()
    b = make_binarizer(method, {}, ["color"]).fit(X, y)
    Z = b.transform(X)
    assert Z.dtype == np.uint8 and Z.shape == (len(X), len(b.columns_)) == (len(X), b.n_columns_)
    assert set(np.unique(Z)) <= {0, 1}
    # every column recomputed from its description
    for k, c in enumerate(b.columns_):
        x = X[c.feature]
        if c.op == "==":
            ref = (x == c.value).to_numpy()
        elif c.op == ">=":
            ref = (x >= c.value).to_numpy()
        elif c.op == "<=":
            ref = (x <= c.value).to_numpy()
        elif c.op == "in":
            ref = ((x >= c.value[0]) & (x < c.value[1])).to_numpy()
        else:
            raise AssertionError(c.op)
        np.testing.assert_array_equal(Z[:, k], ref.astype(np.uint8), err_msg=str(c))
    assert b.fit_time_ > 0  # measured, not a default


def test_onehot_order_is_feature_then_sorted_value_and_unseen_is_zero():
    X = pd.DataFrame({"z": ["b", "a", "c", "a"], "n": [10, 2, 1, 2], "m": ["x", "y", "x", "y"]})
    b = make_binarizer("onehot", {}, ["z", "n", "m"]).fit(X)
    assert [(c.feature, c.value) for c in b.columns_] == [
        ("z", "a"), ("z", "b"), ("z", "c"), ("n", 1), ("n", 2), ("n", 10), ("m", "x"), ("m", "y"),
    ]
    Z = b.transform(pd.DataFrame({"z": ["q", "c"], "n": [7, 10], "m": ["x", None]}))
    np.testing.assert_array_equal(Z, [[0, 0, 0, 0, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1, 0, 0]])


def test_quantile_max_columns_follows_topk_formula():
    """max_columns is the Top-k paper's total budget: B = min(budget // m + 1, k_j) buckets."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.integers(0, 50, 300).astype(float), "b": rng.normal(size=300), "c": rng.integers(0, 2, 300)})
    b = Quantile(max_columns=20).fit(X)
    m = 3
    for f in ["a", "b"]:
        d = np.unique(X[f])
        B = min(20 // m + 1, d.size)
        expect = np.quantile(d, np.arange(1, B) / B)
        got = [c.value for c in b.columns_ if c.feature == f]
        np.testing.assert_allclose(got, expect)
        assert all(c.op == ">=" for c in b.columns_ if c.feature == f)
    assert [c.value for c in b.columns_ if c.feature == "c"] == [1.0]  # ≤ 2 values: one indicator
    assert b.n_columns_ <= 20


def test_quantile_max_splits_is_per_feature():
    """With fewer splits than features every feature still gets its own thresholds."""
    rng = np.random.default_rng(2)
    X = pd.DataFrame({f"x{j}": rng.normal(size=200) for j in range(34)})  # ionosphere-like width
    b = make_binarizer("quantile", {"max_splits": 8}, []).fit(X)
    per = b.columns_per_feature_
    assert list(per) == list(X.columns) and set(per.values()) == {8}
    assert b.n_columns_ == 34 * 8
    d = np.unique(X["x0"])
    np.testing.assert_allclose([c.value for c in b.columns_ if c.feature == "x0"], np.quantile(d, np.arange(1, 9) / 9))


def test_quantile_both_bounds_and_default():
    X = pd.DataFrame({"a": np.arange(100.0), "b": np.arange(100.0) ** 2})
    b = make_binarizer("quantile", {"max_splits": 10, "max_columns": 8}, []).fit(X)
    assert b.columns_per_feature_ == {"a": 4, "b": 4}  # the tighter bound wins
    b = make_binarizer("quantile", {"max_splits": 3, "max_columns": 100}, []).fit(X)
    assert b.columns_per_feature_ == {"a": 3, "b": 3}
    b = make_binarizer("quantile", {}, []).fit(X)  # auto: 16 per feature
    assert b.columns_per_feature_ == {"a": 16, "b": 16}
    b = make_binarizer("quantile", {"max_columns": 100}, []).fit(X)  # auto + budget: no per-feature cap
    assert b.columns_per_feature_ == {"a": 50, "b": 50}


def test_quantile_budget_smaller_than_the_features_is_refused():
    X = pd.DataFrame({f"x{j}": np.arange(10.0) + j for j in range(5)})
    with pytest.raises(ParameterError, match=r"max_columns=4 is a total budget smaller than the 5 numeric features"):
        make_binarizer("quantile", {"max_columns": 4}, []).fit(X)
    assert make_binarizer("quantile", {"max_columns": 5}, []).fit(X).n_columns_ == 5


def test_midpoints_count_is_sum_of_distinct_minus_one_and_cap():
    X, y = _mixed()
    num = X[["a", "b"]]
    b = make_binarizer("midpoints", {}, []).fit(num, y)
    assert b.n_columns_ == sum(num[f].nunique() - 1 for f in num)
    with pytest.raises(ParameterError, match="max_columns=3"):
        make_binarizer("midpoints", {"max_columns": 3}, []).fit(num, y)


def test_bucketize_keeps_only_label_changes():
    X = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6]})
    y = np.array([0, 0, 1, 1, 0, 0])
    b = make_binarizer("bucketize", {}, []).fit(X, y)
    assert [c.value for c in b.columns_] == [2.5, 4.5]
    # a value carrying both labels keeps both neighbouring boundaries
    X2 = pd.DataFrame({"a": [1.0, 2, 2, 3]})
    b2 = make_binarizer("bucketize", {}, []).fit(X2, np.array([0, 0, 1, 1]))
    assert [c.value for c in b2.columns_] == [1.5, 2.5]
    assert b2.n_columns_ <= make_binarizer("midpoints", {}, []).fit(X2).n_columns_


def test_kmeans_bins_partition_each_feature():
    X, y = _mixed(200)
    b = make_binarizer("kmeans", {"n_bins": 5}, []).fit(X[["a", "b"]], y)
    Z = b.transform(X[["a", "b"]])
    for f in ["a", "b"]:
        idx = [k for k, c in enumerate(b.columns_) if c.feature == f]
        assert len(idx) == 5
        np.testing.assert_array_equal(Z[:, idx].sum(axis=1), 1)


def test_threshold_guess_keeps_reference_accuracy_and_prunes():
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("pqrs"))
    y = ((X.p > 0.3) & (X.q < 0.5) | (X.r > 1)).to_numpy().astype(int)
    params = {"n_estimators": 20, "max_depth": 3, "random_state": 0}
    b = make_binarizer("threshold-guess", params, []).fit(X, y)
    tg = b.parts_[0][0]
    assert tg.final_accuracy_ >= tg.reference_accuracy_
    assert b.n_columns_ < tg.n_reference_thresholds_  # some columns were eliminated
    Z = b.transform(X)
    gb = GradientBoostingClassifier(**params).fit(Z, y)
    assert gb.score(Z, y) >= tg.reference_accuracy_ - 1e-12  # the reference's accuracy is kept
    ref = GradientBoostingClassifier(**params).fit(X, y)
    used = {(f, t) for e in ref.estimators_.ravel() for f, t, l in zip(e.tree_.feature, e.tree_.threshold, e.tree_.children_left) if l >= 0}
    assert {(list("pqrs").index(c.feature), c.value) for c in b.columns_} <= used


@pytest.mark.parametrize("method", ["quantile", "midpoints", "bucketize", "kmeans", "threshold-guess"])
def test_fit_never_sees_other_rows(method):
    """Fitting on train rows only: changing test rows never changes the fitted column table."""
    X, y = _mixed(120)
    train = np.arange(80)
    b1 = make_binarizer(method, {}, ["color"]).fit(X.iloc[train], y[train])
    X2 = X.copy()
    X2.loc[80:, "a"] = 1000.0 + np.arange(40)
    b2 = make_binarizer(method, {}, ["color"]).fit(X2.iloc[train], y[train])
    assert b1.columns_ == b2.columns_
    vals = [v for c in b1.columns_ if c.feature == "a" for v in np.ravel(c.value) if np.isfinite(v)]
    assert vals and max(vals) <= X["a"].iloc[train].max()
    # transform of unseen rows uses the fitted table only
    assert b1.transform(X2.iloc[80:]).shape == (40, b1.n_columns_)


def test_none_validates_binary_input():
    X = pd.DataFrame({"u": [0, 1, 1], "v": [1, 0, 1]})
    b = make_binarizer("none", {}, []).fit(X)
    np.testing.assert_array_equal(b.transform(X), X.to_numpy())
    assert [c.true_text() for c in b.columns_] == ["u = 1", "v = 1"]
    with pytest.raises(DataError, match="`v` has the value 2"):
        b.transform(pd.DataFrame({"u": [0], "v": [2]}))
    with pytest.raises(DataError, match="needs 0/1"):
        make_binarizer("none", {}, []).fit(pd.DataFrame({"u": [0.5, 1]}))


def test_raw_passes_numeric_through_and_onehots_categories():
    X, y = _mixed()
    b = make_binarizer("raw", {}, ["color"]).fit(X, y)
    Z = b.transform(X)
    assert Z.dtype == np.float64
    assert [c.feature for c in b.columns_][:2] == ["a", "color"]
    np.testing.assert_array_equal(Z[:, 0], X["a"].to_numpy())
    assert b.columns_[0] == BinaryColumn("a", "raw")
    assert b.columns_[0].split_text(1.5) == ("a <= 1.5", "a > 1.5")
    with pytest.raises(ValueError):
        b.columns_[0].false_text()


def test_text_in_numeric_column_is_clear_error():
    X = pd.DataFrame({"a": ["1", "x"]}, dtype=object)
    with pytest.raises(DataError, match="declare it categorical"):
        Quantile().fit(X)


@pytest.mark.parametrize(
    "method,params,msg",
    [
        ("quantile", {"max_splits": 0}, "max_splits"),
        ("quantile", {"max_columns": 0}, "max_columns"),
        ("kmeans", {"n_bins": 1}, "n_bins"),
        ("quantile", {"fit_on": "test"}, "fit_on"),
        ("nope", {}, "unknown binarizer"),
        ("quantile", {"categorical": "nope"}, "unknown binarizer"),
    ],
)
def test_parameter_errors(method, params, msg):
    with pytest.raises(ParameterError, match=msg):
        make_binarizer(method, params, [])


def test_fit_on_recorded_and_sample_weight_used():
    b = make_binarizer("quantile", {"fit_on": "all", "max_splits": 10}, [])
    assert isinstance(b, ColumnBinarizer) and b.fit_on == "all"
    X = pd.DataFrame({"a": [1.0, 2, 3, 4]})
    y = np.array([0, 1, 1, 0])
    # zero weight hides the row from bucketize
    full = make_binarizer("bucketize", {}, []).fit(X, y)
    hidden = make_binarizer("bucketize", {}, []).fit(X, y, sample_weight=[1, 1, 1, 0])
    assert full.n_columns_ == 2 and hidden.n_columns_ == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=40), st.integers(1, 50))
def test_quantile_thresholds_strictly_inside_and_increasing(vals, max_splits):
    for key in ("max_splits", "max_columns"):
        _check_quantile_thresholds(vals, max_splits, key)


def _check_quantile_thresholds(vals, max_splits, key):
    X = pd.DataFrame({"a": vals})
    b = Quantile(**{key: max_splits}).fit(X)
    t = np.array([c.value for c in b.columns_])
    d = np.unique(vals)
    if d.size > 2:
        assert np.all(np.diff(t) > 0) and t[0] > d[0] and t[-1] <= d[-1]
        assert t.size <= max_splits
    else:
        assert t.size == 1


def test_output_size_cap_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TREEBENCH_MAX_MATRIX_GB", "0.000001")  # about 1 KiB
    X = pd.DataFrame({"a": np.arange(2000, dtype=float)})
    b = make_binarizer("quantile", {"max_splits": 10}, []).fit(X)
    with pytest.raises(ParameterError, match=r"needs 19.5 KiB, more than the 1.05 KiB cap"):
        b.transform(X)


@pytest.mark.parametrize("method", ["quantile", "midpoints", "onehot"])
def test_zero_weight_rows_set_no_columns(method):
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 99.0], "c": ["p", "q", "p", "zzz"]})
    y = np.array([0, 1, 0, 1])
    w = np.array([1.0, 2.0, 1.0, 0.0])
    b = make_binarizer(method, {}, ["c"]).fit(X, y, sample_weight=w)
    ref = make_binarizer(method, {}, ["c"]).fit(X.iloc[:3], y[:3])
    assert b.columns_ == ref.columns_


@pytest.mark.parametrize("method", ["midpoints", "bucketize", "kmeans"])
def test_values_near_the_largest_float_are_split_between_them(method):
    """1.6e308 and 1.7e308 sum to infinity: a midpoint taken as (a + b) / 2 was a threshold no
    value reaches (a constant column, a tree of one leaf), and k-means squared them (refused).
    The threshold lies strictly between the two values."""
    import numpy as np
    import pandas as pd

    from treebench.binarize import make_binarizer

    x = np.array([1.6e308, 1.7e308] * 10 + [-1.7e308, 5.0])
    y = np.array([0, 1] * 10 + [0, 1])
    X = pd.DataFrame({"v": x})
    with np.errstate(all="raise"):
        b = make_binarizer(method, {}, []).fit(X, y)
    # thresholds (``>=`` columns) or bin edges (``in`` intervals, k-means): finite inner cuts
    cuts = [v for c in b.columns_ for v in (c.value if c.op == "in" else (c.value,))]
    inner = [v for v in cuts if not np.isinf(v)]
    assert inner and not np.isnan(cuts).any()
    Z = b.transform(X)
    # some column tells 1.6e308 from 1.7e308 apart
    assert any(Z[0, k] != Z[1, k] for k in range(Z.shape[1]))


def test_threshold_guess_columns_split_as_the_float32_reference_does():
    """The boosted reference compares float32 copies of the features: an odd integer above
    2**24 rounds to the even float32 above it and goes right of the threshold between its two
    neighbours, where `x <= t` on the float64 values sent it left, so no column expressed the
    reference's split (rows of class 1 fell on the class-0 side)."""
    v = np.array([16777216, 16777218, 16777219, 16777220, 16777222] * 8, dtype=np.float64)
    y = np.array([0, 0, 1, 1, 1] * 8)
    b = make_binarizer("threshold-guess", {"n_estimators": 5, "max_depth": 1})
    Z = b.fit(pd.DataFrame({"a": v}), y).transform(pd.DataFrame({"a": v}))
    assert Z.shape[1] >= 1
    assert any(set(y[Z[:, j] == 1]) == {0} and set(y[Z[:, j] == 0]) == {1}
               for j in range(Z.shape[1]))


def test_float32_tie_cut_keeps_the_reference_rows_on_their_side():
    """For float32 neighbours a < b in the data and t = a/2 + b/2: every float64 value that
    rounds to a or b falls on the side of the cut its float32 copy falls of t."""
    from treebench.binarize.threshold_guess import float32_tie_cut

    rng = np.random.default_rng(0)
    for _ in range(3000):
        a = np.float32(rng.choice([rng.normal() * 10.0 ** rng.integers(-3, 9),
                                   rng.integers(2**24, 2**27)]))
        b = a
        for _ in range(int(rng.integers(1, 4))):
            b = np.nextafter(b, np.float32(np.inf))
        t = float(a) / 2 + float(b) / 2
        cut = float32_tie_cut(t)
        assert cut == t or cut == np.nextafter(t, -np.inf)  # only a tie moves it, by one step
        for v in (t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), float(a), float(b)):
            if np.float32(v) in (a, b):
                assert (v <= cut) == (float(np.float32(v)) <= t), (a, b, v)
    assert float32_tie_cut(1e300) == 1e300 and float32_tie_cut(0.5) == 0.5
