"""A learner that stops at its own time budget (``timed_out`` in its solve info) makes a
``timeout`` row whose ``error`` says so, and the run summary prints it (it printed
"timeout: 1 cell(s): (no message)")."""

from __future__ import annotations

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from treebench.cli import app


def test_a_dpdt_timeout_says_what_happened(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.random((400, 5)), rng.integers(0, 2, 400)
    data = tmp_path / "r.csv"
    data.write_text("a,b,c,d,e,y\n" + "".join(",".join(f"{v:.6f}" for v in X[i]) + f",{y[i]}\n"
                                              for i in range(400)))
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"name: t\ndatasets: [{{path: {data}, label: y}}]\nsplit: {{kind: holdout}}\n"
                   "binarization: raw\nalgorithms: [{name: dpdt, params: {max_depth: 4, "
                   "candidates: exhaustive, search: dp, time_limit: 0.05}}, "
                   "{name: dpdt, label: dpdt-again, params: {max_depth: 4, "
                   "candidates: exhaustive, search: dp, time_limit: 0.04}}]\n"
                   "execution: {n_jobs: 1, backend: sequential}\n")
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--no-report"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "(no message)" not in text
    said = ("`dpdt` stopped at its time budget (time_limit 0.05 s) and returned the best tree "
            "it had then; the metrics are that tree's")
    assert f"timeout: 1 cell(s): {said}" in text
    # a second entry of the learner is named by its label, on a line of its own
    assert ("timeout: 1 cell(s): `dpdt-again` stopped at its time budget (time_limit 0.04 s)"
            in text)
    table = pd.read_parquet(tmp_path / "o" / "results.parquet")
    row = table[table["algorithm_label"] == "dpdt"].iloc[0]
    assert row["status"] == "timeout" and row["error"] == said
    assert bool(row["timed_out"]) and row["n_leaves"] >= 1 and 0 <= row["test_accuracy"] <= 1
