"""Results table schema and the parquet / CSV round trip."""

from __future__ import annotations

import pandas as pd
import pytest

from treebench.results import schema
from treebench.results.store import read_table, to_frame, write_tables


def _rows():
    base = {"experiment": "e", "dataset": "d", "fold": 0, "seed": 0, "algorithm": "topk",
            "binarizer": "none", "status": "ok", "train_accuracy": 0.9, "test_accuracy": 0.8,
            "optimal": True, "n_leaves": 4}
    return [
        {**base, "cell_id": "a", "param_k": 1, "param_max_depth": 3},
        {**base, "cell_id": "b", "param_k": "all", "param_max_depth": 3, "optimal": None},
        {**base, "cell_id": "c", "status": "timeout", "error": "killed", "test_accuracy": None,
         "param_k": None, "bparam_max_splits": 200},
    ]


def test_round_trip_parquet_and_csv(tmp_path):
    df = to_frame(_rows())
    schema.validate(df)
    pq, csv = write_tables(tmp_path, df)
    for path in (pq, csv):
        back = read_table(path)
        assert list(back.columns) == list(df.columns)
        assert back["param_k"].tolist() == [1, "all", None]
        assert back["bparam_max_splits"].tolist() == [None, None, 200]
        assert all(type(v) is int for v in back["bparam_max_splits"].dropna())  # 200, never 200.0
        pd.testing.assert_series_equal(back["test_accuracy"], df["test_accuracy"])
        assert back["optimal"].tolist()[:1] == [True] and pd.isna(back["optimal"].iloc[1])
        assert back["status"].tolist() == ["ok", "ok", "timeout"]


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: d.drop(columns=["status"]), "lacks"),
        (lambda d: d.assign(bogus=1), "unknown column"),
        (lambda d: d.assign(status=pd.Series(["ok", "ok", "exploded"], dtype="string")), "unknown value"),
        (lambda d: d.assign(cell_id=pd.Series(["a", "a", "c"], dtype="string")), "duplicate"),
        (lambda d: d.assign(test_accuracy=pd.Series([1.5, 0.2, None], dtype="Float64")), "outside"),
        (lambda d: d.assign(fold=d["fold"].astype("float64")),
         "column `fold` has dtype float64, expected Int64"),
    ],
)
def test_schema_rejects(mutate, fragment):
    df = mutate(to_frame(_rows()))
    with pytest.raises(schema.SchemaError, match=fragment):
        schema.validate(df)


def test_one_row_check_allows_undefined_metrics_and_names_wrong_values():
    """NaN is an undefined metric (an AUC on a fold with one class), never out of range."""
    from treebench.results.schema import check_row

    row = {"status": "ok", "test_roc_auc": float("nan"), "test_accuracy": 0.5, "n_leaves": 3}
    assert check_row(row) is None
    assert "outside [0, 1]" in check_row({**row, "test_roc_auc": 1.02})
    assert "negative" in check_row({**row, "n_leaves": -1})
    assert "not one of" in check_row({**row, "status": "fine"})
    assert "whole number" in check_row({**row, "n_leaves": "3"})
