"""Missing and infinite values, and data paths that hold no data, as a user meets them through
the command line (docs/missing-values.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from tests.datafiles import missing_values_csv

runner = CliRunner()


def _config(tmp_path, algorithms, binarization, dataset_extra="", name="mv"):
    p = missing_values_csv(tmp_path)
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(f"""
name: {name}
datasets:
  - {{path: {p}, label: y{dataset_extra}}}
algorithms: {algorithms}
binarization: {binarization}
split: {{kind: kfold, n_splits: 2}}
execution: {{n_jobs: 1, backend: sequential}}
""")
    return cfg


def _run(cfg, out, *extra):
    return runner.invoke(app, ["run", str(cfg), "--out", str(out), "--no-report", *extra])


RAW = "[{method: raw}]"
BOTH = "[{method: raw}, {method: quantile, params: {max_splits: 4}}]"


# ------------------------------------------------------------------ learners without native routing


@pytest.mark.parametrize("dry", [False, True])
def test_a_learner_that_cannot_take_nan_is_refused_before_anything_runs(tmp_path, dry):
    cfg = _config(tmp_path, "[{name: cart, params: {max_depth: 2}}, {name: dpdt, params: {max_depth: 2}}]", BOTH)
    res = _run(cfg, tmp_path / "out", *(["--dry-run"] if dry else []))
    assert res.exit_code == 2, res.output
    msg = " ".join(res.output.split())
    assert "dataset `mv.csv`" in msg and "`age` has 6 missing value(s)" in msg and "`dpdt`" in msg
    assert "missing: impute" in msg and "Traceback" not in res.output
    assert not (tmp_path / "out" / "cells").exists()


def test_cart_routes_missing_values_and_the_summary_counts_them(tmp_path):
    cfg = _config(tmp_path, "[{name: cart, params: {max_depth: 2}}]", BOTH)
    res = _run(cfg, tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "warning: dataset `mv.csv`: missing values per column (40 rows): age 6, score 8, colour 5" in res.output
    assert "routed by `cart` itself" in res.output and "`is missing` column" in res.output
    df = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert (df["status"] == "ok").all() and len(df) == 4


def test_dry_run_prints_the_missing_value_counts(tmp_path):
    cfg = _config(tmp_path, "[{name: cart, params: {max_depth: 2}}]", BOTH)
    res = _run(cfg, tmp_path / "out", "--dry-run")
    assert res.exit_code == 0, res.output
    assert "missing values per column (40 rows): age 6, score 8, colour 5" in res.output


def test_show_says_where_missing_values_went(tmp_path):
    cfg = _config(tmp_path, "[{name: cart, params: {max_depth: 2}}]", BOTH)
    assert _run(cfg, tmp_path / "out").exit_code == 0
    df = pd.read_parquet(tmp_path / "out" / "results.parquet")
    texts = []
    for cid in df["cell_id"]:
        r = runner.invoke(app, ["show", str(tmp_path / "out"), cid])
        assert r.exit_code == 0, r.output
        texts.append(r.output)
    # every tree tests `score` (missing rows are all `yes`); each side holding missing scores says so
    quantile = [t for c, t in zip(df["binarizer"], texts, strict=True) if c == "quantile"]
    assert all("or score is missing" in t or "if score is missing" in t for t in quantile)
    raw = [t for c, t in zip(df["binarizer"], texts, strict=True) if c == "raw"]
    assert all("or score is missing" in t for t in raw)
    assert not any("if score < " in line and "missing" not in line for t in quantile for line in t.splitlines())


# ------------------------------------------------------------------ the `missing:` policy


def test_missing_impute_lets_any_learner_run_and_is_recorded(tmp_path):
    cfg = _config(tmp_path, "[{name: dpdt, params: {max_depth: 1}}]", RAW, ", missing: impute")
    res = _run(cfg, tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "imputed from the training rows" in res.output
    df = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert (df["status"] == "ok").all()
    assert all(json.loads(p)["missing"] == "impute" for p in df["binarizer_params"])


def test_missing_drop_rows_drops_before_the_split_and_counts(tmp_path):
    cfg = _config(tmp_path, "[{name: dpdt, params: {max_depth: 1}}]", RAW, ", missing: drop-rows")
    res = _run(cfg, tmp_path / "out")
    assert res.exit_code == 0, res.output
    gone = 40 - sum(1 for i in range(40) if i % 7 and i % 5 and i % 9)
    assert f"{gone} of 40 rows dropped because they have missing values" in " ".join(res.output.split())
    df = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert df["data_warnings"].str.contains(f"{gone} of 40 rows dropped").all()
    assert (df["n_train"] + df["n_test"] == 40 - gone).all()


def test_missing_error_refuses_with_one_sentence(tmp_path):
    cfg = _config(tmp_path, "[{name: cart, params: {max_depth: 2}}]", BOTH, ", missing: error")
    res = _run(cfg, tmp_path / "out")
    assert res.exit_code == 2, res.output
    assert "`age` has 6 missing value(s)" in res.output and "`missing: error`" in res.output


def test_missing_on_a_binarization_wins_over_the_default(tmp_path):
    cfg = _config(tmp_path, "[{name: greedy, params: {max_depth: 1}}]", "[{method: quantile, params: {missing: error}}]")
    res = _run(cfg, tmp_path / "out", "--dry-run")
    assert res.exit_code == 2 and "`missing: error`" in res.output


def test_missing_policy_values_are_checked_in_the_config(tmp_path):
    cfg = _config(tmp_path, "[{name: greedy, params: {max_depth: 1}}]", "[{method: quantile, params: {missing: drop-rows}}]")
    res = _run(cfg, tmp_path / "out", "--dry-run")
    assert res.exit_code == 2 and "on the dataset entry" in res.output
    cfg2 = tmp_path / "c2.yaml"
    cfg2.write_text("name: x\ndatasets: [{name: iris, missing: [NA]}]\nalgorithms: [cart]\n")
    res = _run(cfg2, tmp_path / "o2", "--dry-run")
    assert res.exit_code == 2 and "`missing` takes one of error, indicator, impute, drop-rows" in res.output


def test_missing_tokens_and_the_older_list_form(tmp_path):
    from treebench.config import validate_config

    p = tmp_path / "t.csv"
    p.write_text("a,b,y\n1,NA,x\n2,3,y\n4,5,x\n")
    for spec in ({"path": str(p), "missing_tokens": ["NA"]}, {"path": str(p), "missing": ["NA"]}):
        ds = validate_config({"name": "x", "datasets": [spec], "algorithms": ["cart"]}).datasets[0]
        name, params = ds.loader()
        assert name == "file" and params["missing"] == ["NA"] and ds.missing_policy is None
    ds = validate_config({"name": "x", "datasets": [{"path": str(p), "missing": "impute"}],
                          "algorithms": ["cart"]}).datasets[0]
    assert ds.missing_policy == "impute" and "missing" not in ds.loader()[1]


# ------------------------------------------------------------------ infinite values


def test_infinite_values_are_counted_by_info_and_refused_by_run(tmp_path):
    p = tmp_path / "inf.csv"
    p.write_text("a,b,y\n1,inf,x\n2,-inf,y\n3,4,x\n,5,y\n")
    r = runner.invoke(app, ["datasets", "info", str(p), "--json"])
    info = json.loads(r.output)
    assert {f["name"]: (f["missing"], f["infinite"]) for f in info["features"]} == {"a": (1, 0), "b": (0, 2)}
    text = runner.invoke(app, ["datasets", "info", str(p)]).output
    assert "2 infinite values" in text and " inf" in text
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: x\ndatasets: [{{path: {p}}}]\nalgorithms: [cart]\nbinarization: quantile\n"
                   "split: {kind: kfold, n_splits: 2, stratify: false}\n")
    res = _run(cfg, tmp_path / "out", "--dry-run")
    assert res.exit_code == 2, res.output
    assert "column `b` has 2 infinite value(s)" in " ".join(res.output.split())
    cfg.write_text(cfg.read_text().replace(f"{{path: {p}}}", f"{{path: {p}, missing_tokens: [inf, -inf]}}"))
    assert _run(cfg, tmp_path / "out", "--dry-run").exit_code == 0


# ------------------------------------------------------------------ data paths that hold no data


def test_header_only_csv_says_it_has_no_data_rows(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("a,b,target\n")
    r = runner.invoke(app, ["datasets", "info", str(p)])
    assert r.exit_code == 2 and "has a header line (a, b, target) but no data rows" in r.output
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: x\ndatasets: [{{path: {p}}}]\nalgorithms: [cart]\n")
    res = _run(cfg, tmp_path / "out")
    assert res.exit_code == 2 and "no data rows" in res.output and "single class" not in res.output


@pytest.mark.parametrize("kind", ["directory", "device"])
def test_a_data_path_that_is_no_file_says_what_it_is(tmp_path, kind):
    path = tmp_path if kind == "directory" else "/dev/zero"
    want = "is a directory, not a file" if kind == "directory" else "is a character device, not a regular file"
    r = runner.invoke(app, ["datasets", "info", str(path)])
    assert r.exit_code == 2 and want in r.output and "does not exist" not in r.output
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: x\ndatasets: [{{path: {path}}}]\nalgorithms: [cart]\n")
    res = _run(cfg, tmp_path / "out", "--dry-run")
    assert res.exit_code == 2 and want in res.output and "Traceback" not in res.output


# ------------------------------------------------------------------ a shared dataset with missing values


HEART = "originals/heart-cleveland/heart-c.arff"  # the catalog's file of heart-cleveland


def _shared_file(rel: str) -> Path:
    """``rel`` in a directory of ``TREEBENCH_DATA_DIR``; the test is skipped, with the reason,
    when it is not there (it would otherwise be downloaded: no test reaches the network)."""
    dirs = [d for d in os.environ.get("TREEBENCH_DATA_DIR", "").split(os.pathsep) if d]
    if not dirs:
        pytest.skip(f"TREEBENCH_DATA_DIR is not set (this test reads {rel} from it)")
    for d in dirs:
        if (Path(d) / rel).is_file():
            return Path(d) / rel
    pytest.skip(f"{rel} is in no directory of TREEBENCH_DATA_DIR ({os.pathsep.join(dirs)})")


@pytest.mark.data
def test_heart_cleveland_missing_values(tmp_path, monkeypatch):
    _shared_file(HEART)
    monkeypatch.setenv("TREEBENCH_OFFLINE", "1")  # the file in the data directory, or an error
    cfg = tmp_path / "hc.yaml"
    cfg.write_text("name: hc\ndatasets: [heart-cleveland]\nalgorithms: [{name: dpdt, params: {max_depth: 1}}]\n"
                   "binarization: raw\nsplit: {kind: kfold, n_splits: 2}\nexecution: {n_jobs: 1, backend: sequential}\n")
    res = _run(cfg, tmp_path / "out", "--dry-run")
    assert res.exit_code == 2 and "numeric column `ca` has 5 missing value(s)" in res.output
    cfg.write_text(cfg.read_text().replace("[heart-cleveland]", "[{name: heart-cleveland, missing: drop-rows}]"))
    res = _run(cfg, tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "7 of 303 rows dropped" in " ".join(res.output.split())
    info = runner.invoke(app, ["datasets", "info", "heart-cleveland", "--json"])
    feats = {f["name"]: f for f in json.loads(info.output)["features"]}
    assert feats["ca"]["missing"] == 5 and feats["thal"]["missing"] == 2 and feats["ca"]["infinite"] == 0


def test_nan_never_reaches_a_non_native_learner_matrix(tmp_path):
    """Property of the whole path: with the default policy, no binarized matrix a 0/1 learner
    gets holds NaN, and each missing value is a 1 in exactly its feature's `is missing` column."""
    from treebench.binarize import make_binarizer

    p = missing_values_csv(tmp_path)
    from treebench.data.base import load_dataset

    ds = load_dataset("file", {"path": str(p), "label": "y"})
    b = make_binarizer("quantile", {"max_splits": 4}, ds.categorical).fit(ds.X, ds.y)
    Z = b.transform(ds.X)
    assert Z.dtype == np.uint8
    for f in ("age", "score", "colour"):
        j = next(k for k, c in enumerate(b.columns_) if c.feature == f and c.op == "missing")
        np.testing.assert_array_equal(Z[:, j], ds.X[f].isna().to_numpy())


def test_labels_read_as_numbers_in_one_file_and_text_in_the_other_are_one_class_set(tmp_path):
    """A predefined split whose training labels are numbers and whose test file has a text
    label: one sentence naming the unseen label, not a TypeError from sorting mixed types."""
    (tmp_path / "tr.csv").write_text("a,b,y\n1,2,0\n2,3,1\n3,1,0\n4,4,1\n")
    (tmp_path / "te.csv").write_text("a,b,y\n1,2,x\n2,3,1\n")
    r = _run_on_file(tmp_path, f"{{path: {tmp_path / 'tr.csv'}, test_path: {tmp_path / 'te.csv'}, "
                     "label: y}", "predefined")
    assert r.exit_code == 2 and "'x'" in r.output and "never have" in r.output, r.output


def test_a_file_with_only_a_label_column_is_one_sentence(tmp_path):
    (tmp_path / "one.csv").write_text("y\n0\n1\n0\n1\n")
    r = _run_on_file(tmp_path, f"{{path: {tmp_path / 'one.csv'}}}", "full")
    assert r.exit_code == 2 and "no feature column besides the label" in r.output, r.output


def _run_on_file(tmp_path, dataset: str, split: str):
    """`treebench run` of CART on one file dataset (a YAML flow mapping) with ``split``."""
    from typer.testing import CliRunner

    from treebench.cli import app

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: file\ndatasets:\n  - {dataset}\nsplit: {{kind: {split}}}\n"
                   "binarization: {method: raw}\nalgorithms: [{name: cart}]\n"
                   "execution: {n_jobs: 1, backend: sequential}\n")
    return CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
