"""The rows of a run on data with missing values say how the cell treated them and how many
there were (``missing_handling``, ``missing_values``, ``missing_per_column`` and a note in
``data_warnings``, the run summary's words): the results table alone tells a reader
(docs/missing-values.md)."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.store import read_table
from tests.datafiles import missing_values_csv

COUNTS = {"age": 6, "score": 8, "colour": 5}


def _run(tmp_path, datasets: str, algorithms: str, binarization: str) -> pd.DataFrame:
    p = missing_values_csv(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
name: mv
datasets: {datasets.replace("PATH", str(p))}
algorithms: {algorithms}
binarization: {binarization}
split: {{kind: kfold, n_splits: 2}}
execution: {{n_jobs: 1, backend: sequential}}
""")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--no-report", "-q"])
    assert r.exit_code == 0, r.output
    parquet = read_table(out / "results.parquet")
    csv = read_table(out / "results.csv")  # what a reader of the csv sees
    cols = ["cell_id", "missing_handling", "missing_values", "missing_per_column",
            "data_warnings"]
    pd.testing.assert_frame_equal(parquet[cols].reset_index(drop=True),
                                  csv[cols].reset_index(drop=True))
    return csv


def test_rows_say_how_missing_values_were_handled_and_count_them(tmp_path):
    t = _run(tmp_path, "[{path: PATH, label: y}]", "[{name: cart, params: {max_depth: 2}}]",
             "[{method: raw}, {method: quantile, params: {max_splits: 4}}]")
    assert len(t) == 4 and (t["status"] == "ok").all()
    assert (t["missing_values"] == sum(COUNTS.values())).all()
    assert all(json.loads(v) == COUNTS for v in t["missing_per_column"])
    raw = t[t["binarizer"] == "raw"]
    # numeric features go to cart as NaN, the categorical one gets an `is missing` column
    assert set(raw["missing_handling"]) == {"learner+indicator"}
    assert raw["data_warnings"].str.contains(
        "missing values per column (40 rows): age 6, score 8, colour 5; routed by `cart` "
        "itself on `raw` features", regex=False).all()
    quantile = t[t["binarizer"] == "quantile"]
    assert set(quantile["missing_handling"]) == {"indicator"}
    assert quantile["data_warnings"].str.contains(
        "an `is missing` column per feature (`quantile`)", regex=False).all()


def test_rows_say_missing_values_were_imputed_or_their_rows_dropped(tmp_path):
    (tmp_path / "impute").mkdir()
    t = _run(tmp_path / "impute", "[{path: PATH, label: y, missing: impute}]",
             "[{name: dpdt, params: {max_depth: 1}}]", "[{method: raw}]")
    assert set(t["missing_handling"]) == {"impute"}
    assert (t["missing_values"] == 19).all()
    assert t["data_warnings"].str.contains("imputed from the training rows", regex=False).all()

    (tmp_path / "drop").mkdir()
    t = _run(tmp_path / "drop", "[{path: PATH, label: y, missing: drop-rows}]",
             "[{name: dpdt, params: {max_depth: 1}}]", "[{method: raw}]")
    gone = 40 - sum(1 for i in range(40) if i % 7 and i % 5 and i % 9)
    assert set(t["missing_handling"]) == {"drop-rows"}
    # the counts are those of the rows as loaded, which made the dropped rows go
    assert (t["missing_values"] == 19).all()
    assert all(json.loads(v) == COUNTS for v in t["missing_per_column"])
    assert t["data_warnings"].str.contains(f"{gone} of 40 rows dropped").all()


def test_rows_of_data_without_missing_values_say_none(tmp_path):
    p = tmp_path / "full.csv"
    p.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(20)))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
name: full
datasets: [{{path: {p}, label: y}}]
algorithms: [{{name: cart, params: {{max_depth: 1}}}}]
binarization: [{{method: raw}}]
split: {{kind: kfold, n_splits: 2}}
execution: {{n_jobs: 1, backend: sequential}}
""")
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "-q",
                                 "--no-report"])
    assert r.exit_code == 0, r.output
    t = read_table(tmp_path / "o" / "results.csv")
    assert set(t["missing_handling"]) == {"none"} and (t["missing_values"] == 0).all()
    assert set(t["missing_per_column"]) == {"{}"} and t["data_warnings"].isna().all()
