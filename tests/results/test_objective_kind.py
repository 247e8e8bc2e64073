"""The ``solver_objective`` column (a learner's own figure) carries its unit in
``solver_objective_kind``: learners report different things (GOSDT a rate plus λ·leaves, the
others weighted error counts), so the column is only comparable within one kind, and report
tables and figures leave it out (``problem_objective`` compares learners of one problem)."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results import schema
from treebench.results.store import read_table

from runs import tiny_config


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    cfg = tiny_config(
        split={"kind": "kfold", "n_splits": 2},
        binarization={"method": "quantile", "params": {"max_splits": 2}},
        algorithms=[{"name": "topk", "params": {"max_depth": 2, "k": 2}},
                    {"name": "greedy", "params": {"max_depth": 2}},
                    {"name": "gosdt", "params": {"max_depth": 2, "regularization": 0.02}},
                    {"name": "dpdt", "params": {"max_depth": 2, "alpha": 0.01}}])
    import yaml

    path = tmp / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp / "out"), "-q"])
    assert r.exit_code == 0, r.output
    return tmp / "out"


def test_each_row_names_its_objective_kind(run_dir):
    t = read_table(run_dir / "results.parquet")
    kinds = dict(zip(t["algorithm_label"], t["solver_objective_kind"], strict=True))
    assert kinds == {"topk": "errors", "greedy": "errors", "gosdt": "error_rate+lambda*leaves",
                     "dpdt": "errors+alpha*path"}
    assert set(t["solver_objective_kind"]) <= set(schema.OBJECTIVE_KINDS)
    errors = (1 - t["train_accuracy"]) * t["n_train"]  # unit weights
    e = t["solver_objective_kind"] == "errors"
    assert np.allclose(t.loc[e, "solver_objective"], errors[e])
    g = t["solver_objective_kind"] == "error_rate+lambda*leaves"
    assert np.allclose(t.loc[g, "solver_objective"],
                       (1 - t.loc[g, "train_accuracy"]) + 0.02 * t.loc[g, "n_leaves"])


def test_report_tables_do_not_show_the_objective(run_dir):
    assert "objective" not in schema.METRIC_COLUMNS  # only metrics are aggregated across learners
    files = [p for p in (run_dir / "report").rglob("*") if p.suffix in (".csv", ".md", ".tex")]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    assert texts and not any("solver_objective" in t for t in texts)
    headers = [p.read_text(encoding="utf-8").splitlines()[0] for p in files if p.suffix == ".csv"]
    assert headers and not any("objective" in h for h in headers)  # no table has the column


def test_every_objective_kind_is_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "results-columns.md").read_text(encoding="utf-8")
    for kind in schema.OBJECTIVE_KINDS:
        assert f"`{kind}`" in doc
