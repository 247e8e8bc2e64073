"""The float type of prepared matrices: float32 for learners that round to
float32 themselves (CART), float64 for learners that need exact values (DPDT), uint8 for 0/1
data; and the same cell rows as the float64 path, on data where float32 is exact (digits) and
where it is not (iris, a file with large integers, two-decimal rates and a text column)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treebench import api
from treebench.algorithms.cart import CARTClassifier
from treebench.algorithms.dpdt import DPDTClassifier
from treebench.binarize import passthrough
from treebench.binarize import _common as binarize_common
from treebench.execute import fold, precision
from treebench.execute.precision import float32_exact, float32_policy, matrix_dtype

from runs import net_frame, result_rows, tiny_config

# ------------------------------------------------------------------ the dtype decision


def test_float32_exact_on_exact_and_inexact_values(monkeypatch):
    assert float32_exact(np.array([[0.0, 1.0, 0.5, np.nan], [2.0**24, -3.0, 0.25, 1e30 * 0]]))
    assert not float32_exact(np.array([[0.07]]))  # two-decimal rates (KDD Cup 99)
    assert not float32_exact(np.array([[2.0**24 + 1]]))  # large integers (src_bytes)
    assert not float32_exact(np.array([[1e300]]))  # overflows to inf in float32
    assert float32_exact(np.zeros((3, 2), dtype=np.uint8))
    assert float32_exact(np.zeros((3, 2), dtype=np.float32))
    monkeypatch.setattr(precision, "BLOCK_ROWS", 2)  # the inexact value in a later block
    x = np.zeros((7, 2))
    x[6, 1] = 0.1
    assert not float32_exact(x)
    assert not float32_exact(pd.DataFrame(x, columns=["a", "b"]))
    assert float32_exact(pd.DataFrame({"a": [1.0, None, 3.0], "b": [1, 2, 3]}))


def test_matrix_dtype_rules():
    def never_called():
        raise AssertionError("the exactness test runs only for the 'exact' policy")

    assert matrix_dtype(np.uint8, "always", never_called) == np.uint8  # 0/1 stays one byte
    assert matrix_dtype(np.float64, "never", never_called) == np.float64
    assert matrix_dtype(np.float64, "always", never_called) == np.float32
    assert matrix_dtype(np.float64, "exact", lambda: True) == np.float32
    assert matrix_dtype(np.float64, "exact", lambda: False) == np.float64


def test_learner_policies():
    assert float32_policy(CARTClassifier) == "always"
    assert float32_policy(CARTClassifier()) == "always"
    assert float32_policy(DPDTClassifier) == "never"  # float64 midpoints of exact values
    assert float32_policy(object) == "never"  # declares nothing

    class Exact:
        float32_input = "exact"
        compact_input = True

    class ExactButCopies:
        float32_input = "exact"  # but would copy float32 to float64 itself: no saving

    class Wrong:
        float32_input = "sometimes"

    assert float32_policy(Exact) == "exact"
    assert float32_policy(ExactButCopies) == "never"
    with pytest.raises(ValueError, match="float32_input"):
        float32_policy(Wrong)


def _cell(dataset, algorithm, binarizer="raw", params=None):
    from treebench.config.cells import expand
    from treebench.config import validate_config

    exp = validate_config({"name": "p", "seed": 0, "datasets": [dataset], "split": {"kind": "holdout"},
                           "binarization": [{"method": binarizer, "params": params or {}}],
                           "algorithms": [{"name": algorithm, "params": {"max_depth": 2}}]})
    return expand(exp)[0]


@pytest.mark.parametrize("chunked", [False, True])
def test_prepare_picks_the_type_per_learner_and_keeps_one_copy_per_fold(monkeypatch, chunked):
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    if chunked:
        monkeypatch.setattr(fold, "CHUNKED_ABOVE", 0)
        monkeypatch.setattr(fold, "CHUNK_ROWS", 13)
    cart = fold.prepare(_cell("iris", "cart"))
    assert cart.X_train.dtype == np.float32 and cart.X_test.dtype == np.float32
    dpdt = fold.prepare(_cell("iris", "dpdt"))
    assert dpdt.X_train.dtype == np.float64 and dpdt.X_test.dtype == np.float64
    assert len(fold._PREPARED) == 1  # the float32 fold was replaced, not kept beside it
    # the float32 matrices are the float64 ones rounded, nothing else
    np.testing.assert_array_equal(cart.X_train, dpdt.X_train.astype(np.float32))
    np.testing.assert_array_equal(cart.X_test, dpdt.X_test.astype(np.float32))
    assert fold.prepare(_cell("iris", "dpdt")) is dpdt  # served from the cache
    binary = fold.prepare(_cell("iris", "cart", "quantile", {"max_splits": 3}))
    assert binary.X_train.dtype == np.uint8
    assert fold.prepare(_cell("iris", "dpdt", "quantile", {"max_splits": 3})) is binary


def test_exact_policy_uses_float32_only_on_exact_data(monkeypatch):
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    monkeypatch.setattr(fold, "learner_float32_policy", lambda name: "exact")
    digits = fold.prepare(_cell("digits", "cart"))  # pixel counts 0..16: exact
    assert digits.X_train.dtype == np.float32 and digits.values_exact is True
    iris = fold.prepare(_cell("iris", "cart"))  # 5.1 cm is not a float32
    assert iris.X_train.dtype == np.float64 and iris.values_exact is False


# ------------------------------------------------------------------ same rows as before


def _old_paths(monkeypatch):
    """What preparation did before float64 for every numeric learner, raw
    columns written one by one, one-hot codes through a Python object index."""
    monkeypatch.setattr(CARTClassifier, "float32_input", "never")
    monkeypatch.setattr(passthrough.RawPassthrough, "_fill", binarize_common.TableBinarizer._fill)
    monkeypatch.setattr(binarize_common, "category_codes", lambda s, values: pd.Index(
        values, dtype=object).get_indexer(s.astype(object)).astype(np.int64))


def _file_dataset(tmp_path):
    """Values float32 cannot hold (two-decimal rates, integers above 2**24), a text column."""
    df = net_frame(np.random.default_rng(3), 240)
    path = tmp_path / "net.csv"
    df.to_csv(path, index=False)
    return {"path": str(path), "label": "label", "categorical": ["proto"], "name": "net"}


@pytest.mark.parametrize("chunked", [False, True])
def test_new_preparation_gives_the_rows_of_the_old_one(write_config, tmp_path, monkeypatch, chunked):
    cfg = tiny_config(
        datasets=["iris", "digits", _file_dataset(tmp_path)],
        split={"kind": "holdout", "seeds": [0]},
        binarization=[{"method": "raw"}, {"method": "quantile", "params": {"max_splits": 3}},
                      {"method": "kmeans", "params": {"n_bins": 3}}],
        algorithms=[{"name": "cart", "params": {"max_depth": [2, 4]}},
                    {"name": "dpdt", "params": {"max_depth": 2}},
                    {"name": "greedy", "params": {"max_depth": 2}},
                    {"name": "topk", "params": {"k": 2, "max_depth": 2}}])
    path = write_config(cfg)
    if chunked:  # the row-block path that large datasets take, with a short last block
        # (the file dataset then goes through the prepared-matrix cache, kept in tmp_path)
        monkeypatch.setenv("TREEBENCH_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setattr(fold, "CHUNKED_ABOVE", 0)
        monkeypatch.setattr(fold, "CHUNK_ROWS", 17)
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    new = api.run_experiment(path, api.RunOptions(out=tmp_path / "new", progress=False, report=False))
    with monkeypatch.context() as m:
        _old_paths(m)
        m.setattr(fold, "_PREPARED", type(fold._PREPARED)())
        old = api.run_experiment(path,
                                 api.RunOptions(out=tmp_path / "old", progress=False, report=False))
    a, b = result_rows(new.out), result_rows(old.out)
    assert (a["status"] == "ok").all(), a.loc[a["status"] != "ok", ["cell_id", "error"]]
    assert set(a["algorithm_label"]) == {"cart", "dpdt", "greedy", "topk"}
    assert set(a["binarizer"]) >= {"raw", "quantile", "kmeans"}
    assert len(a) >= 3 * (3 + 2 * 5)  # raw: cart x2 + dpdt; binary: all four learners
    pd.testing.assert_frame_equal(a, b)


# ------------------------------------------------------------------ the binarizers' fast paths


def test_arrow_category_codes_equal_the_object_index():
    s = pd.Series(["b", None, "a", "zz", "b", "c"], dtype=pd.StringDtype("pyarrow"))
    values = ["a", "b", "c"]
    want = pd.Index(values, dtype=object).get_indexer(s.astype(object))
    got = binarize_common.category_codes(s, values)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, [1, -1, 0, -1, 1, 2])
    mixed = pd.Series([1, "a", None], dtype=object)  # other dtypes: the object index
    np.testing.assert_array_equal(binarize_common.category_codes(mixed, [1, "a"]), [0, 1, -1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_raw_columns_at_once_equal_column_by_column(dtype):
    from treebench.binarize import make_binarizer

    X = pd.DataFrame({
        "f": [0.07, np.nan, 2.0**24 + 1, -1.5],
        "c": ["x", "y", None, "x"],
        "i": pd.array([1, None, 3, 4], dtype="Int64"),
        "b": [True, False, True, False],
        "u": np.array([3, 0, 255, 7], dtype=np.uint8),
    })
    binz = make_binarizer("raw", {}, ["c"]).fit(X)
    fast = binz.fill(X, np.zeros((4, binz.n_columns_), dtype=dtype))
    part = binz.parts_[0][0]
    slow = np.zeros_like(fast)
    binarize_common.TableBinarizer._fill(part, X, slow, binz.feature_start_)
    binz.parts_[1][0]._fill(X, slow, binz.feature_start_)
    for f, j in binz.indicators_.items():  # `c is missing` (docs/missing-values.md)
        slow[:, j] = X[f].isna()
    assert list(binz.indicators_) == ["c"]
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast, binz.transform(X).astype(dtype))
    with pytest.raises(ValueError, match="C-ordered"):
        binz.fill(X, np.zeros((3, binz.n_columns_)))
