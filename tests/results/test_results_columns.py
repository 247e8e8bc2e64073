"""Results columns declared where they are produced (`treebench.columns`), the row built from
its parts, the ``algorithm_label`` rename and results written in the older layout."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results import schema
from treebench.results.store import read_table, to_frame, write_tables

from runs import tiny_config


def _folder(tmp_path, **over):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config(**over)), encoding="utf-8")
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output
    return out


def _to_old_layout(out) -> None:
    """Rewrite every cell file of ``out`` as an older treebench wrote it: the label in the
    column ``algorithm``, no ``algorithm_name`` column, no content hash; the tables and the
    index go (a copy of the cell files only)."""
    for p in (out / "cells").glob("*.json"):
        rec = json.loads(p.read_text())
        rec.pop("sha256", None)
        row = rec["row"]
        row["algorithm"] = row.pop("algorithm_label")
        row.pop("algorithm_name")
        p.write_text(json.dumps(rec))
    for name in ("results.parquet", "results.csv", ".cells-index.json"):
        (out / name).unlink(missing_ok=True)


def test_run_writes_label_and_registry_name_columns(tmp_path):
    out = _folder(tmp_path, algorithms=[{"name": "cart", "label": "shallow",
                                         "params": {"max_depth": 1}}])
    df = read_table(out / "results.parquet")
    assert set(df["algorithm_label"]) == {"shallow"} and set(df["algorithm_name"]) == {"cart"}
    assert "algorithm" not in df.columns
    r = CliRunner().invoke(app, ["cells", str(out), "--ids", "--where", "algorithm=shallow"])
    assert r.exit_code == 0 and len(r.output.split()) == 3, r.output  # the old name: an alias
    r = CliRunner().invoke(app, ["cells", str(out), "--ids", "--where", "label=shallow fold=0"])
    assert r.exit_code == 0 and len(r.output.split()) == 1, r.output


def test_cell_files_of_the_older_layout_read_as_the_new_one(tmp_path):
    out = _folder(tmp_path, algorithms=[{"name": "cart", "label": "shallow",
                                         "params": {"max_depth": 1}}])
    _to_old_layout(out)
    run = CliRunner().invoke
    r = run(app, ["cells", str(out), "--where", "algorithm=shallow fold=1"])
    assert r.exit_code == 0 and "shallow" in r.output, r.output
    r = run(app, ["results", "check", str(out), "--repair"])
    assert r.exit_code == 0, r.output
    df = read_table(out / "results.parquet")
    assert df["algorithm_label"].tolist() == ["shallow"] * 3
    assert df["algorithm_name"].tolist() == ["cart"] * 3  # from the cell file's record
    r = run(app, ["report", str(out)])
    assert r.exit_code == 0, r.output
    assert "shallow" in (out / "report" / "index.html").read_text(encoding="utf-8")


def test_tables_of_the_older_layout_read_as_the_new_one(tmp_path):
    """A table written before: the label in ``algorithm``, no ``algorithm_name`` (declared
    since: null), GOSDT's ``reference_bound`` column present."""
    df = to_frame([{"experiment": "e", "cell_id": "a", "dataset": "d", "algorithm_label": "g",
                    "algorithm_name": "gosdt", "status": "ok", "reference_bound": 0.25}])
    old = df.rename(columns={"algorithm_label": "algorithm"}).drop(columns=["algorithm_name"])
    old.to_parquet(tmp_path / "results.parquet")
    old.astype(object).to_csv(tmp_path / "results.csv", index=False)
    for name in ("results.parquet", "results.csv"):
        back = read_table(tmp_path / name)
        assert back["algorithm_label"].tolist() == ["g"] and back["algorithm_name"].isna().all()
        assert back["reference_bound"].tolist() == [0.25]


def test_learner_columns_are_declared_by_the_learner_not_globally():
    assert "reference_bound" not in schema.declared()
    assert schema.declared(["gosdt"])["reference_bound"].dtype == "Float64"
    assert "reference_bound" in schema.declared(["gosdt-ref"])
    assert "search" not in schema.declared(["gosdt"])
    assert schema.declared(["dpdt"])["search"].dtype == "string"
    assert set(schema.declared(None)) == set(schema.declared(["gosdt", "dpdt", "rashomon"]))
    # a table of cart rows has no GOSDT column; one whose gosdt rows report it has it, typed
    # by the learner's declaration (reading a table loads a learner only for such a column)
    cart = to_frame([{"cell_id": "a", "algorithm_name": "cart", "status": "ok"}])
    gosdt = to_frame([{"cell_id": "a", "algorithm_name": "gosdt", "status": "ok",
                       "reference_bound": 1}])
    assert "reference_bound" not in cart.columns
    assert str(gosdt["reference_bound"].dtype) == "Float64" and gosdt["reference_bound"].tolist() == [1.0]
    with pytest.raises(schema.SchemaError, match="unknown column.*bogus"):
        schema.validate(gosdt.assign(bogus=1))


def test_a_plugin_learner_declares_its_own_column():
    from treebench.columns import Column
    from treebench.registry import ALGORITHMS

    col = Column("toy_nodes_seen", "Int64", "nodes the toy looked at", "the learner", "solver")
    ALGORITHMS.register("toy-columns", columns=(col,))(type(ALGORITHMS.get("cart").obj))
    try:
        df = to_frame([{"cell_id": "a", "algorithm_name": "toy-columns", "status": "ok",
                        "toy_nodes_seen": 7}])
        assert df["toy_nodes_seen"].dtype == "Int64" and df["toy_nodes_seen"].tolist() == [7]
        schema.validate(df)
    finally:
        ALGORITHMS.unregister("toy-columns")
    with pytest.raises(schema.SchemaError, match="toy_nodes_seen"):  # its learner is gone
        to_frame([{"cell_id": "a", "algorithm_name": "toy-columns", "status": "ok",
                   "toy_nodes_seen": 7}])


def test_a_column_declared_twice_must_agree():
    from treebench.columns import Column, merge

    a = Column("x", "Int64", "x", "one", "solver")
    assert merge((a,), (Column("x", "Int64", "x again", "two", "solver"),)) == {"x": a}
    with pytest.raises(ValueError, match="declared as Int64 by one and as Float64 by two"):
        merge((a,), (Column("x", "Float64", "x", "two", "solver"),))
    with pytest.raises(ValueError, match="dtype"):
        Column("y", "float", "y", "one", "solver")


def test_a_row_is_built_from_declared_parts_only():
    from treebench.config.cells import expand
    from treebench.config import validate_config
    from treebench.results.rows import build_row

    cell = expand(validate_config(tiny_config()))[0]
    row = build_row(cell, {"experiment": "e"}, status="ok", error=None,
                    measured={"data": {"n_train": 3}, "metrics": {"test_accuracy": 1.0},
                              "solver": {"optimal": True}, "cost": {"fit_seconds": 0.1}},
                    runner={"wall_seconds": 0.2})
    assert row["algorithm_label"] == "cart" and row["algorithm_name"] == "cart"
    assert schema.check_row(row) is None
    with pytest.raises(ValueError, match="reference_bound of learner `cart` are declared "
                                         "nowhere"):
        build_row(cell, {}, status="ok", error=None,
                  measured={"solver": {"reference_bound": 0.1}})


def test_a_claim_may_name_the_old_column_and_mixes_with_the_new(tmp_path):
    from treebench.config.expectations import Expectation

    e = Expectation(source="s", where={"algorithm": "topk"}, metric="test_accuracy",
                    compare={"where": {"algorithm_label": "cart"}})
    assert e.where == {"algorithm_label": "topk"}
    with pytest.raises(ValueError, match="names the column `algorithm_label` twice"):
        Expectation(source="s", where={"algorithm": "a", "label": "b"}, metric="test_accuracy",
                    ge=0)
    # a solver column that only a learner declares is a valid metric of a claim
    assert Expectation(source="s", metric="reference_bound", ge=0).metric == "reference_bound"


def test_the_results_table_csv_and_parquet_hold_the_same_columns(tmp_path):
    df = to_frame([{"cell_id": "a", "algorithm_label": "x", "status": "ok"}])
    pq, csv = write_tables(tmp_path, df)
    assert list(read_table(pq).columns) == list(read_table(csv).columns) == list(df.columns)
