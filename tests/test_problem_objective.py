"""Every row of a problem reports that problem's objective (``problem_objective``), computed
by treebench from the returned tree on the training rows, the same way for every learner; a
solver's own figure is ``solver_objective`` (docs/objectives.md, docs/results-columns.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from treebench.algorithms import objectives as O
from treebench.cli import app
from treebench.results.store import read_table

from runs import tiny_config

LAM = 0.02


def _run(tmp_path, algorithms, **over):
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 2},
                      binarization={"method": "quantile", "params": {"max_splits": 3}},
                      algorithms=algorithms, **over)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    return read_table(out / "results.parquet"), out


def _same_problem_entries():
    def entry(name, problem, **params):
        return {"name": name, "label": f"{name}/{problem}", "objective": problem,
                "params": {"max_depth": 3, **params}}

    lam = {"lambda": LAM}
    return ([entry(n, "min-errors") for n in ("topk", "dl85", "streed", "contree",
                                               "optimal-numeric")]
            + [entry(n, "min-errors-then-nodes") for n in ("topk", "streed", "contree",
                                                            "optimal-numeric", "gosdt")]
            + [entry(n, "errors+lambda*leaves", **lam) for n in ("streed", "contree",
                                                                  "optimal-numeric", "gosdt")])


@pytest.mark.peers
def test_learners_of_one_problem_report_equal_problem_objectives(tmp_path):
    """On the same folds and 0/1 columns, the optimal learners of each problem (peers and
    ours) report the same ``problem_objective`` (and, for min-errors-then-nodes, the same
    ``problem_tiebreak``) where they prove their trees optimal: the problem's value of their
    trees, computed the same way; a tree not proven optimal is no better."""
    for module in ("pystreed", "pycontree", "pydl85"):
        pytest.importorskip(module)
    t, _ = _run(tmp_path, _same_problem_entries())
    assert (t["status"] == "ok").all(), t[["algorithm_label", "error"]]
    for (problem, fold), every in t.groupby(["problem", "fold"]):
        rows = every[every["optimal"].fillna(False).astype(bool)]
        assert rows["algorithm_name"].nunique() >= 3, (problem, every["optimal"])
        values = rows["problem_objective"].astype(float)
        assert np.allclose(values, values.iloc[0], rtol=0, atol=1e-12), (problem, rows[
            ["algorithm_label", "problem_objective", "solver_objective"]])
        assert (every["problem_objective"] >= values.iloc[0] - 1e-12).all()
        kinds = set(rows["problem_objective_kind"])
        assert kinds == {O.PROBLEM_OBJECTIVES[problem]}, kinds
        ties = rows["problem_tiebreak"]
        if problem == "min-errors-then-nodes":
            assert ties.nunique() == 1 and (ties == rows["n_nodes"]).all()
            plain = t[(t["problem"] == "min-errors") & (t["fold"] == fold)]
            assert (ties.iloc[0] <= plain["n_nodes"]).all()
        else:
            assert ties.isna().all()
    # each problem's objective in its own units, from the trees' training predictions
    errors = (1 - t["train_accuracy"]) * t["n_train"]
    plain = t["problem"].isin(["min-errors", "min-errors-then-nodes"])
    assert np.allclose(t.loc[plain, "problem_objective"], errors[plain])
    lam = t["problem"] == "errors+lambda*leaves"
    assert (t.loc[lam, "problem_weight"] == LAM).all()
    want = (1 - t.loc[lam, "train_accuracy"]) + LAM * t.loc[lam, "n_leaves"]
    assert np.allclose(t.loc[lam, "problem_objective"], want, rtol=0, atol=1e-12)
    # STreeD and ConTree with a cost per node: the problem's value, not their errors
    peers = lam & t["algorithm_name"].isin(["streed", "contree"])
    assert (t.loc[peers, "problem_objective"] > errors[peers] / t.loc[peers, "n_train"]).all()


def test_every_row_of_a_problem_has_its_objective_and_others_none(tmp_path):
    """Rows of learners without a problem (CART: greedy) leave the columns empty; DPDT's
    exhaustive search reports errors + alpha x path, equal to its own objective; a restricted
    problem (Top-k's search space for k = 2) is measured with its learner's unrestricted
    objective."""
    t, _ = _run(tmp_path, [
        {"name": "cart", "params": {"max_depth": 2}},
        {"name": "dpdt", "params": {"max_depth": 2, "candidates": "exhaustive",
                                    "alpha": 0.01}},
        {"name": "topk", "params": {"max_depth": 2, "k": 2}},
    ])
    by = {n: g for n, g in t.groupby("algorithm_name")}
    cart = by["cart"]
    assert cart["problem_objective"].isna().all() and cart["problem_objective_kind"].isna().all()
    dpdt = by["dpdt"]
    assert set(dpdt["problem"]) == {"errors+alpha*path"}
    assert set(dpdt["problem_objective_kind"]) == {"errors+alpha*path"}
    assert (dpdt["problem_weight"] == 0.01).all()
    assert np.allclose(dpdt["problem_objective"], dpdt["solver_objective"], rtol=1e-12)
    path = dpdt["expected_tests_train"] * dpdt["n_train"]
    errors = (1 - dpdt["train_accuracy"]) * dpdt["n_train"]
    assert np.allclose(dpdt["problem_objective"], errors + 0.01 * path)
    topk = by["topk"]
    assert set(topk["problem"]) == {"topk-search-space"}
    assert set(topk["problem_objective_kind"]) == {"errors-then-nodes"}
    assert (topk["problem_tiebreak"] == topk["n_nodes"]).all()


def test_the_solver_figure_is_named_as_the_solvers(tmp_path):
    """``solver_objective``/``solver_objective_kind`` hold a learner's own figure; cell files
    and tables of the older layout (``objective``/``objective_kind``) read with the new names,
    and an expectation or filter naming ``objective`` still finds the column."""
    t, out = _run(tmp_path, [{"name": "gosdt", "params": {"max_depth": 2,
                                                          "regularization": LAM}}])
    assert "objective" not in t.columns and "objective_kind" not in t.columns
    assert set(t["solver_objective_kind"]) == {"error_rate+lambda*leaves"}
    assert np.allclose(t["solver_objective"], t["problem_objective"], rtol=0, atol=1e-12)
    for p in (out / "cells").glob("*.json"):  # as an older treebench wrote them
        rec = json.loads(p.read_text())
        rec.pop("sha256", None)
        row = rec["row"]
        row["objective"] = row.pop("solver_objective")
        row["objective_kind"] = row.pop("solver_objective_kind")
        for col in ("problem_objective", "problem_objective_kind", "problem_weight",
                    "problem_tiebreak"):
            row.pop(col, None)
        p.write_text(json.dumps(rec))
    for name in ("results.parquet", "results.csv", ".cells-index.json"):
        (out / name).unlink(missing_ok=True)
    r = CliRunner().invoke(app, ["results", "check", str(out), "--repair"])
    assert r.exit_code == 0, r.output
    old = read_table(out / "results.parquet")
    assert np.allclose(old["solver_objective"], t["solver_objective"])
    assert old["problem_objective"].isna().all()
    r = CliRunner().invoke(app, ["cells", str(out), "--ids", "--where",
                                 "objective_kind=error_rate+lambda*leaves"])
    assert r.exit_code == 0 and len(r.output.split()) == 2, r.output


def test_the_objective_of_each_problem_is_stated():
    """Every problem with a global objective names its kind, and every kind is described, in
    the code and on both pages that show the columns."""
    from pathlib import Path

    for problem in O.PROBLEMS:
        kind = O.PROBLEM_OBJECTIVES.get(problem)
        assert kind is None or kind in O.OBJECTIVES, problem
    assert set(O.PROBLEM_OBJECTIVES.values()) == set(O.OBJECTIVES)
    docs = Path(__file__).resolve().parents[1] / "docs"
    for page in ("objectives.md", "results-columns.md"):
        text = (docs / page).read_text(encoding="utf-8")
        assert all(f"| `{kind}` |" in text for kind in O.OBJECTIVES), page
    assert O.objective_of("streed", {"cost_complexity": 0.05}) == O.Objective(
        "error_rate+lambda*leaves", 0.05)
    assert O.objective_of("gosdt", {"regularization": 0.1, "lb_guess": {},
                                    "lexicographic": False}) == O.Objective(
        "error_rate+lambda*leaves", 0.1)
    assert O.objective_of("dpdt-regressor", {"candidates": "cart", "alpha": 0.5}) == (
        O.Objective("sse+alpha*path", 0.5))
    assert O.objective_of("cart", {}) is None
