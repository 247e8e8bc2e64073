"""A cell's anytime trace through the runner: kept in the cell file (not the results table,
which holds the figures derived from it), read back by `treebench.results.traces.cell_trace`
and printed by `treebench show`."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.cellfile import cells_dir, read_cell
from treebench.results.traces import TRACE_KEY, cell_trace, record_trace

from runs import run_folder

CONFIG = {
    "name": "traced", "seed": 0, "datasets": ["iris"],
    "split": {"kind": "kfold", "n_splits": 2}, "binarization": {"method": "raw"},
    "algorithms": [{"name": "optimal-numeric", "params": {"max_depth": 2}},
                   {"name": "cart", "params": {"max_depth": 2}}],
    "execution": {"n_jobs": 1, "backend": "sequential"},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return run_folder(tmp_path_factory.mktemp("traces"), CONFIG)


def _table(folder):
    return pd.read_parquet(folder / "results.parquet")


@pytest.mark.kernels
def test_the_trace_is_in_the_cell_file_and_its_figures_in_the_table(folder):
    t = _table(folder)
    assert TRACE_KEY not in t.columns
    searched = t[t["algorithm_name"] == "optimal-numeric"]
    assert len(searched) == 2
    for _, row in searched.iterrows():
        trace = cell_trace(folder, row["cell_id"])
        assert trace is not None and trace.shape[1] == 3
        assert (trace[:, 1][1:] <= trace[:, 1][:-1]).all()
        assert (trace[:, 2][1:] >= trace[:, 2][:-1]).all() and (trace[:, 2] <= trace[:, 1]).all()
        assert trace[-1, 1] == pytest.approx(row["solver_objective"])
        assert bool(row["optimal"]) and trace[-1, 2] == trace[-1, 1]
        assert row["time_to_best"] == pytest.approx(trace[trace[:, 1] <= trace[-1, 1]][0, 0])
        assert row["time_to_proof"] == pytest.approx(trace[-1, 0])
        assert 0.0 <= row["primal_integral"] <= 1.0
    for _, row in t[t["algorithm_name"] == "cart"].iterrows():  # no search, no trace
        assert cell_trace(folder, row["cell_id"]) is None
        assert pd.isna(row["time_to_best"]) and pd.isna(row["primal_integral"])


@pytest.mark.kernels
def test_show_prints_the_trace(folder):
    cid = _table(folder).query("algorithm_name == 'optimal-numeric'")["cell_id"].iloc[0]
    trace = cell_trace(folder, cid)
    res = CliRunner().invoke(app, ["show", str(folder), cid])
    assert res.exit_code == 0, res.output
    assert f"# anytime trace ({len(trace)} records): seconds, incumbent, lower bound" in res.output
    assert f"{trace[-1, 1]:.6g}  {trace[-1, 2]:.6g}" in res.output.splitlines()[len(trace) + 1]


def test_a_record_without_a_trace_or_with_another_value_has_none(folder):
    rec, _ = read_cell(next(cells_dir(folder).glob("*.json")))
    rec = dict(rec, solve_info={TRACE_KEY: "not a list"})
    assert record_trace(rec) is None
    assert record_trace(dict(rec, solve_info={TRACE_KEY: [[0.0, 1.0, None]]})).shape == (1, 3)
    assert record_trace(dict(rec, solve_info=None)) is None
