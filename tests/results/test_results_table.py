"""The results table: typed parameter columns in parquet, the effective leaves of every row,
the status lists of the API and the schema, and a timed-out cell's row shown as such."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from treebench import api
from treebench.cli import app
from treebench.results.store import read_table

from runs import tiny_config

runner = CliRunner()


def _run(path, out, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("report", False)
    return api.run_experiment(path, api.RunOptions(out=out, **kw))


def test_parquet_parameter_columns_are_typed(tmp_path):
    import pyarrow.parquet as pq

    from treebench.results.store import to_frame, write_tables

    rows = []
    for i, (k, depth, crit, alpha) in enumerate([(1, 2, "gini", 0.0), ("all", 3, "entropy", 0.5)]):
        rows.append({"cell_id": f"c{i}", "dataset": "d", "algorithm": "a", "status": "ok",
                     "param_k": k, "param_max_depth": depth, "param_criterion": crit,
                     "param_alpha": alpha, "bparam_flag": True})
    pq_path, _ = write_tables(tmp_path, to_frame(rows, experiment="e"))
    types = {f.name: str(f.type) for f in pq.read_schema(pq_path)}
    assert types["param_max_depth"] == "int64"
    assert types["param_alpha"] == "double"
    assert types["param_criterion"] in ("string", "large_string")
    assert types["param_k"] in ("string", "large_string")
    assert types["bparam_flag"] == "bool"
    raw = pd.read_parquet(pq_path)
    assert list(raw["param_k"]) == ["1", "all"]  # no JSON quotes ('"all"')
    back = read_table(pq_path)
    assert list(back["param_k"]) == [1, "all"] and list(back["param_max_depth"]) == [2, 3]


def test_rows_carry_effective_leaves(write_config, tmp_path):
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0]},
                      algorithms=[{"name": "cart", "params": {"max_depth": 4}}])
    _run(write_config(cfg), tmp_path / "o")
    df = read_table(tmp_path / "o" / "results.parquet")
    assert (df["n_leaves_effective"] <= df["n_leaves"]).all() and (df["n_leaves_effective"] >= 1).all()


def test_api_status_lists_agree_with_the_schema():
    from treebench.results import schema

    assert set(api.FAIL_STATUSES) == set(schema.ERROR_STATUSES)
    assert set(api.RETRYABLE) == set(schema.FAILED_STATUSES)


def test_show_says_a_cell_timed_out(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "test-sleep", "params": {"seconds": 3}}],
                      split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.3})
    out = tmp_path / "o"
    _run(write_config(cfg), out)
    cid = read_table(out / "results.parquet")["cell_id"].iloc[0]
    r = runner.invoke(app, ["show", str(out), cid[:8]])
    assert r.exit_code == 2 and "timed out" in r.output
