"""The report's solvers section: drawn when two solvers of one problem ran (cactus plot,
performance profile, PAR-2, gap over time, ratios against a reference solver with the spread
over repeats), timeouts kept as censored observations, certificate disagreements in red."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.report import solver_figures as F
from treebench.report import solvers as S
from treebench.results.cellfile import encode_record
from treebench.results.store import read_table

from runs import tiny_config


def _config(tmp_path, **over):
    algs = [{"name": "topk", "label": "ours", "objective": "min-errors",
             "params": {"max_depth": 2}},
            {"name": "dl85", "label": "peer", "objective": "min-errors",
             "params": {"max_depth": 2}},
            {"name": "cart", "params": {"max_depth": 2}}]
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 3}, algorithms=algs, repeat=3,
                      binarization={"method": "quantile", "params": {"max_splits": 3}},
                      limits={"time": 30}, **over)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def _run(tmp_path, **over):
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(_config(tmp_path, **over)), "--out", str(out),
                                 "-q"])
    assert r.exit_code == 0, r.output
    return out


@pytest.mark.peers
def test_two_solvers_of_one_problem_get_the_section(tmp_path):
    pytest.importorskip("pydl85")
    out = _run(tmp_path, report={"reference_solver": "peer"})
    rep = out / "report"
    page = (rep / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="solvers">Solvers</h2>' in page and "Certificates agree" in page
    figs = sorted(p.name for p in (rep / "figures").glob("solvers__*.png"))
    assert figs == ["solvers__min-errors__cactus.png", "solvers__min-errors__gap__iris.png",
                    "solvers__min-errors__profile.png"], figs
    par2 = pd.read_csv(rep / "tables" / "solvers_par2_min-errors.csv")
    assert list(par2["solver"]) == ["ours", "peer"]  # cart solves no problem with an optimum
    assert (par2["solved"] == 3).all() and (par2["instances"] == 3).all()
    ratios = pd.read_csv(rep / "tables" / "solvers_ratios_min-errors.csv")
    assert list(ratios.columns) == ["instance", "peer time (s)", "ours / peer"]
    assert len(ratios) == 5 and ratios["instance"].iloc[-2].startswith("geometric mean")
    assert ratios["instance"].iloc[-1].startswith("largest ratio")
    fastest = pd.read_csv(rep / "tables" / "solvers_fastest_min-errors.csv")
    assert list(fastest.columns) == ["instance", "fastest (s)", "ours / fastest other",
                                     "peer / fastest other"]
    assert fastest["ours / fastest other"].iloc[0].endswith(" vs peer")
    assert "fastest other solver" in page
    t = read_table(out / "results.parquet")
    ours = t[t["algorithm_label"] == "ours"].sort_values("fold")
    peer = t[t["algorithm_label"] == "peer"].sort_values("fold")
    first = ratios["ours / peer"].iloc[0].split()[0]
    want = ours["fit_seconds"].iloc[0] / peer["fit_seconds"].iloc[0]
    assert first == f"{want:.3g}", (first, want)  # the table prints three significant digits
    assert "[" in ratios["ours / peer"].iloc[0]  # the spread over the three repeats
    md = (rep / "summary.md").read_text(encoding="utf-8")
    assert "## Solvers" in md and "solvers__min-errors__profile.png" in md


@pytest.mark.peers
def test_a_planted_disagreement_is_a_red_line(tmp_path):
    pytest.importorskip("pydl85")
    out = _run(tmp_path)
    t = read_table(out / "results.parquet")
    row = t[(t["algorithm_label"] == "peer") & (t["fold"] == 0)].iloc[0]
    p = out / "cells" / f"{row['cell_id']}.json"
    rec = json.loads(p.read_bytes())
    rec.pop("sha256", None)
    rec["row"]["problem_objective"] = float(row["problem_objective"]) - 1
    rec["solve_info"] = {**(rec.get("solve_info") or {}),  # where a learner's trace is kept
                         "anytime_trace": [[0.001, 9.0, 3.0], [0.002, 6.0, 6.0]]}
    p.write_bytes(encode_record(rec)[0])
    traces = F.read_traces(out, [str(c) for c in t["cell_id"]])
    # the planted trace, and those our own searches keep in their cells' solve info
    assert row["cell_id"] in traces and traces[row["cell_id"]].shape == (2, 3)
    assert all(tr.ndim == 2 and tr.shape[1] == 3 and len(tr) >= 1 for tr in traces.values())
    gap = F.gap_curves(S.Problem("min-errors", pd.DataFrame({
        "solver": ["peer"], "dataset": ["d"], "time": [0.01], "limit": [30.0],
        "gap_final": [0.0], "cell_id": [row["cell_id"]]}), ["peer"], "peer"), "d",
        np.array([0.0005, 0.0015, 0.005, 0.02]), traces)
    assert gap["peer"].tolist() == [[1.0, 2 / 3, 0.0, 0.0]]
    r = CliRunner().invoke(app, ["report", str(out)])
    assert r.exit_code == 0, r.output
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert '<span class="verdict fail">Certificate disagreement' in page
    assert str(row["cell_id"]) in page


def test_an_unknown_reference_solver_is_refused(tmp_path):
    r = CliRunner().invoke(app, ["run", str(_config(tmp_path, report={
        "reference_solver": "per"})), "--dry-run"])
    assert r.exit_code == 2 and "reference_solver" in r.output and "peer" in r.output


@pytest.mark.parametrize("floor", [-0.05, ".inf", True])
def test_a_floor_that_is_no_duration_is_refused(tmp_path, floor):
    path = _config(tmp_path, report={"min_reference_seconds": 0.05})
    path.write_text(path.read_text(encoding="utf-8").replace(
        "min_reference_seconds: 0.05", f"min_reference_seconds: {str(floor).lower()}"),
        encoding="utf-8")
    r = CliRunner().invoke(app, ["run", str(path), "--dry-run"])
    assert r.exit_code == 2 and "min_reference_seconds" in r.output, r.output
    assert "Traceback" not in r.output


def _problem(rows) -> S.Problem:
    fits = pd.DataFrame(rows, columns=["solver", "instance", "time", "solved", "limit",
                                       "status", "repeats"])
    fits["dataset"], fits["label"], fits["gap_final"] = "d", fits["instance"], 0.0
    fits["cell_id"] = fits["solver"] + fits["instance"]
    fits.loc[~fits["solved"], "gap_final"] = 1.0
    return S.Problem("min-errors", fits, ["a", "b"], "a")


def test_timeouts_are_censored_never_dropped():
    p = _problem([("a", "i1", 1.0, True, 10.0, "ok", [1.0]),
                  ("b", "i1", 2.0, True, 10.0, "ok", [2.0]),
                  ("a", "i2", 4.0, True, 10.0, "ok", [4.0]),
                  ("b", "i2", None, False, 10.0, "timeout", []),
                  ("a", "i3", None, False, 10.0, "timeout", []),
                  ("b", "i3", 5.0, True, 10.0, "ok", [5.0])])
    f = p.fits
    assert S.par2(f[f["solver"] == "b"]) == pytest.approx((2.0 + 20.0 + 5.0) / 3)
    taus, rho = S.profile(p)
    # b is fastest on i3, within 2 of a on i1, never solves i2: ρ_b ends at 2/3
    assert rho["b"][-1] == pytest.approx(2 / 3) and rho["a"][-1] == pytest.approx(2 / 3)
    assert rho["a"][0] == pytest.approx(2 / 3) and rho["b"][0] == pytest.approx(1 / 3)
    d = S.ratio_display(p)
    assert [r[2] for r in d.rows[:3]] == ["2", "> 2.5", "< 0.5"]
    assert d.rows[3][2] == "2; 2 censored"


def _three_solvers(rows, min_seconds=0.0) -> S.Problem:
    p = _problem(rows)
    return S.Problem("min-errors", p.fits, ["a", "b", "c"], "a", min_seconds=min_seconds)


def test_each_solver_meets_the_fastest_other_solver_of_each_fit():
    """The fastest-other table measures every solver, the reference too, against its
    strongest rival on each instance: a rival that did not finish is passed over for one that
    did, and only when none finished is the ratio censored (at the shortest limit)."""
    p = _three_solvers([("a", "i1", 1.0, True, 10.0, "ok", [1.0]),
                        ("b", "i1", 4.0, True, 10.0, "ok", [4.0]),
                        ("c", "i1", 2.0, True, 10.0, "ok", [2.0]),
                        ("a", "i2", 3.0, True, 10.0, "ok", [3.0]),
                        ("b", "i2", 6.0, True, 10.0, "ok", [6.0]),
                        ("c", "i2", None, False, 5.0, "timeout", []),
                        ("a", "i3", 2.0, True, 10.0, "ok", [2.0]),
                        ("b", "i3", None, False, 10.0, "timeout", []),
                        ("c", "i3", None, False, 5.0, "timeout", [])])
    d = S.fastest_display(p)
    assert d.header == ["instance", "fastest (s)", "a / fastest other", "b / fastest other",
                        "c / fastest other"]
    assert d.rows[0] == ["i1", "1 (a)", "0.5 vs c", "4 vs a", "2 vs a"]
    assert d.rows[1][2:] == ["0.5 vs b", "2 vs a", "> 1.67 vs a"]
    assert d.rows[2][2:] == ["< 0.4 vs c", "> 5 vs a", "> 2.5 vs a"]
    assert d.rows[3][2:] == ["0.5; 1 censored", "2.83; 1 censored", "2; 2 censored"]
    assert d.rows[4][2:] == ["0.5 (0 of 2)", "4 (2 of 2)", "2 (1 of 1)"]
    # the reference table is unchanged by the new one: b and c against a only
    assert S.ratio_display(p).rows[2][2:] == ["> 5", "> 2.5"]


def test_the_rivals_option_measures_every_solver_against_the_named_entries_only():
    """With two solvers of one's own (a, b) and one peer (c), `rivals: [c]` measures a and b
    against c alone, and c against nobody; a solver named with its varying parameter is the
    rival its entry names."""
    rows = [("a", "i1", 1.0, True, 10.0, "ok", [1.0]),
            ("b", "i1", 0.5, True, 10.0, "ok", [0.5]),
            ("c (k=2)", "i1", 4.0, True, 10.0, "ok", [4.0])]
    base = _problem(rows)
    p = S.Problem("min-errors", base.fits, ["a", "b", "c (k=2)"], "a", rivals=["c"])
    d = S.fastest_display(p)
    assert d.header[1:] == ["fastest rival (s)", "a / fastest rival", "b / fastest rival",
                            "c (k=2) / fastest rival"]
    assert d.rows[0][1:] == ["4 (c (k=2))", "0.25 vs c (k=2)", "0.125 vs c (k=2)", ""]
    assert "among c" in S.fastest_note(p)
    everyone = S.fastest_display(S.Problem("min-errors", base.fits, ["a", "b", "c (k=2)"], "a"))
    assert everyone.rows[0][2:] == ["2 vs b", "0.5 vs a", "8 vs b"]


def test_the_ratio_tables_summarise_each_depth_when_there_are_several():
    p = _problem([("a", "i1", 1.0, True, 10.0, "ok", [1.0]),
                  ("b", "i1", 2.0, True, 10.0, "ok", [2.0]),
                  ("a", "i2", 1.0, True, 10.0, "ok", [1.0]),
                  ("b", "i2", 8.0, True, 10.0, "ok", [8.0]),
                  ("a", "i3", 1.0, True, 10.0, "ok", [1.0]),
                  ("b", "i3", 0.5, True, 10.0, "ok", [0.5])])
    p.fits["depth"] = [2, 2, 3, 3, 3, 3]
    d = S.ratio_display(p)
    assert [r[0] for r in d.rows[3:]] == [
        "geometric mean (95 % bootstrap CI)",
        "largest ratio (how many of those in the mean are above 1)",
        "max_depth 2: geometric mean [95 % CI]; largest (fits)",
        "max_depth 3: geometric mean [95 % CI]; largest (fits)"]
    assert d.rows[5][2] == "2; 2 (1)" and d.rows[6][2] == "2; 8 (2)"
    assert d.group_starts == [3]
    p.fits["depth"] = 3
    assert len(S.ratio_display(p).rows) == 5  # one depth: no rows of its own


def test_an_unknown_rival_is_refused(tmp_path):
    r = CliRunner().invoke(app, ["run", str(_config(tmp_path, report={
        "rivals": ["peer", "ours2"]})), "--dry-run"])
    assert r.exit_code == 2 and "report.rivals names `ours2`" in r.output, r.output


def test_ratios_of_fits_under_the_floor_stay_in_the_rows_but_not_in_the_means():
    rows = [("a", "i1", 0.01, True, 10.0, "ok", [0.01]),
            ("b", "i1", 0.03, True, 10.0, "ok", [0.03]),
            ("c", "i1", 0.02, True, 10.0, "ok", [0.02]),
            ("a", "i2", 1.0, True, 10.0, "ok", [1.0]),
            ("b", "i2", 0.5, True, 10.0, "ok", [0.5]),
            ("c", "i2", 2.0, True, 10.0, "ok", [2.0])]
    d = S.fastest_display(_three_solvers(rows, min_seconds=0.05))
    assert d.rows[0][2:] == ["0.5 vs c", "3 vs a", "2 vs a"]  # shown all the same
    assert d.rows[2][2:] == ["2; 1 left out (reference under 0.05 s)",
                             "0.5; 1 left out (reference under 0.05 s)",
                             "4; 1 left out (reference under 0.05 s)"]
    assert d.rows[3][2:] == ["2 (1 of 1)", "0.5 (0 of 1)", "4 (1 of 1)"]
    r = S.ratio_display(_three_solvers(rows, min_seconds=0.05))
    assert r.rows[2][2:] == ["0.5; 1 left out (reference under 0.05 s)",
                             "2; 1 left out (reference under 0.05 s)"]
    assert S.ratio_display(_three_solvers(rows)).rows[2][2] == "1.22"  # no floor: both


def test_a_fit_that_ends_past_its_time_limit_is_a_timeout():
    """A search that looks at its clock now and then can prove its optimum a little after its
    limit (a 60 s fit of the Quant-BnB config had repeats of 57.8 to 60.04 s, median 60.005):
    the comparison counts it as a timeout, as the peers stopped at 60 s are, not as solved."""
    rows = pd.DataFrame({
        "algorithm_label": ["ours", "peer", "ours", "peer"], "dataset": ["d"] * 4,
        "param_max_depth": [3, 3, 2, 2], "status": ["ok", "timeout", "ok", "ok"],
        "optimal": [True, False, True, True], "fit_seconds": [60.005, 60.007, 0.5, 1.0],
        "fit_seconds_repeats": ["[57.8, 58.9, 60.005, 60.03, 60.04]", None, "[0.5]", "[1.0]"],
        "time_limit": [60.0] * 4, "algorithm_params": ["{}"] * 4, "problem_weight": [0.0] * 4,
        "cell_id": ["a", "b", "c", "d"], "finished_at": [""] * 4,
        "problem_objective": [3495.0, 3587.0, 10.0, 10.0]})
    fits = S._fits(rows).set_index(["solver", "label"])
    late = fits.loc[("ours", "d · d3")]
    assert not late["solved"] and late["status"] == "timeout" and pd.isna(late["time"])
    assert late["objective"] == 3495.0  # its tree still counts for the primal integral
    assert fits.loc[("ours", "d · d2"), "solved"] and fits.loc[("peer", "d · d2"), "solved"]
    p = S.Problem("min-errors", S._fits(rows), ["ours", "peer"], "peer")
    assert S.par2(p.fits[p.fits["solver"] == "ours"]) == pytest.approx((120.0 + 0.5) / 2)
    assert S.par2_display(p).rows[0][3] == "1"  # counted with the timeouts


def _loaded_rows(**cpu):
    """Two solvers on two instances, the first fit of ``ours`` slowed on the wall clock by
    a wait for a core (its CPU time is a quarter of its wall time), one over its limit."""
    return pd.DataFrame({
        "algorithm_label": ["ours", "peer", "ours", "peer"], "dataset": ["d"] * 4,
        "param_max_depth": [2, 2, 3, 3], "status": ["ok"] * 4, "optimal": [True] * 4,
        "fit_seconds": [2.0, 1.0, 12.0, 4.0],
        "fit_seconds_repeats": ["[2.0, 2.0, 3.0]", "[1.0, 1.0, 1.0]", "[12.0]", "[4.0]"],
        "time_limit": [10.0] * 4, "algorithm_params": ["{}"] * 4, "problem_weight": [0.0] * 4,
        "cell_id": ["a", "b", "c", "d"], "finished_at": [""] * 4,
        "problem_objective": [5.0, 5.0, 3.0, 3.0], **cpu})


def test_the_cpu_clock_compares_cpu_times_and_keeps_the_wall_limit():
    rows = _loaded_rows(fit_cpu_seconds=[0.5, 1.0, 3.0, 4.0],
                        fit_cpu_seconds_repeats=["[0.5, 0.5, 0.75]", "[1.0, 1.0, 1.0]", None,
                                                 None])
    wall, notes = S._clocked_fits(rows, "wall")
    assert notes == [] and wall.set_index("solver").loc["ours", "time"].tolist()[0] == 2.0
    fits, notes = S._clocked_fits(rows, "cpu")
    assert "CPU seconds" in notes[0]
    ours = fits[fits["solver"] == "ours"].set_index("label")
    assert ours.loc["d · d2", "time"] == 0.5 and ours.loc["d · d2", "repeats"] == [0.5, 0.5, 0.75]
    # 3 CPU seconds, but 12 s on the wall clock against a limit of 10: a timeout either way
    assert not ours.loc["d · d3", "solved"] and ours.loc["d · d3", "status"] == "timeout"
    p = S.Problem("min-errors", fits, ["ours", "peer"], "peer")
    r = S.ratio(*[p.fits[(p.fits["solver"] == s) & (p.fits["label"] == "d · d2")].iloc[0]
                  for s in ("ours", "peer")])
    assert r.value == pytest.approx(0.5) and r.high == pytest.approx(0.75)
    # the anytime measures keep the traces' clock: the fit ends at its wall time
    assert ours.loc["d · d2", "wall"] == 2.0 and ours.loc["d · d2", "seconds"] == 2.0
    curves = F.gap_curves(p, "d", np.array([1.0, 1.9, 2.5]))
    assert curves["ours"][0].tolist() == [1.0, 1.0, 0.0]
    # wall clock: the same pair is 2.0 [2, 3]
    w = S.ratio(*[wall[(wall["solver"] == s) & (wall["label"] == "d · d2")].iloc[0]
                  for s in ("ours", "peer")])
    assert w.value == pytest.approx(2.0)


def test_the_cpu_clock_falls_back_to_wall_times_without_them():
    for rows in (_loaded_rows(), _loaded_rows(fit_cpu_seconds=[0.5, None, 3.0, 4.0])):
        fits, notes = S._clocked_fits(rows, "cpu")
        assert "wall seconds" in notes[0] and "fit_cpu_seconds" in notes[0]
        assert fits.set_index("solver").loc["ours", "time"].tolist()[0] == 2.0


def test_ratio_spread_comes_from_the_repeats():
    r = S.ratio({"solved": True, "time": 2.0, "repeats": [1.0, 2.0, 3.0], "limit": None},
                {"solved": True, "time": 1.0, "repeats": [1.0, 1.0, 1.0], "limit": None})
    assert r.value == 2.0 and r.low == pytest.approx(1.0) and r.high == pytest.approx(3.0)
    assert r.text() == "2 [1, 3]"
    gm, lo, hi = S.geometric_mean([1.0, 2.0, 4.0, 2.0])
    assert gm == pytest.approx(2.0) and lo < gm < hi
    assert np.isfinite([lo, hi]).all()


def test_gap_curves_from_final_values_keep_unsolved_fits():
    p = _problem([("a", "i1", 1.0, True, 10.0, "ok", [1.0]),
                  ("b", "i1", None, False, 10.0, "timeout", [])])
    grid = np.array([0.5, 2.0, 20.0])
    curves = F.gap_curves(p, "d", grid)
    assert curves["a"].tolist() == [[1.0, 0.0, 0.0]]
    assert curves["b"].tolist() == [[1.0, 1.0, 1.0]]  # no bound: 100 % until and after


def test_solvers_follow_the_config_order_whatever_their_labels():
    """The first solver of a problem, the ratio table's reference by default, is the first of
    its algorithm entries in the config, not the first label in the table's (alphabetical)
    order: the DL8.5 suite's config lists STreeD first, and `dl85` sorted before it."""
    from types import SimpleNamespace

    cfg = {"algorithms": [{"name": "streed", "label": "streed-errors"},
                          {"name": "topk", "label": "topk-errors"}, {"name": "dl85"},
                          {"name": "cart", "label": "cart (raw)"}]}
    results = SimpleNamespace(manifest={"config": cfg})
    given = ["cart (raw) (max_depth=3)", "dl85", "other", "streed-errors", "topk-errors (k=2)",
             "topk-errors (k=1)"]
    assert S._in_config_order(given, results) == [
        "streed-errors", "topk-errors (k=2)", "topk-errors (k=1)", "dl85",
        "cart (raw) (max_depth=3)", "other"]
    assert S._in_config_order(["b", "a"], SimpleNamespace(manifest={})) == ["b", "a"]


def _timed_problem(rows, solvers=("a", "b")) -> S.Problem:
    """A problem whose fits end with a tree of ``objective`` at ``seconds`` (no trace unless
    ``trace_unit``), under a 10 s limit unless given."""
    fits = pd.DataFrame(rows, columns=["solver", "instance", "seconds", "objective", "status",
                                       "trace_unit", "limit"])
    fits["solved"] = fits["status"] == "ok"
    fits["time"] = fits["seconds"].where(fits["solved"])
    fits["repeats"] = [[t] if ok else [] for t, ok in zip(fits["seconds"], fits["solved"])]
    fits["label"], fits["dataset"] = fits["instance"], "d"
    fits["cell_id"] = fits["solver"] + "-" + fits["instance"]
    return S.Problem("min-errors", fits, list(solvers), solvers[0])


def test_primal_integrals_measure_against_the_best_any_solver_reached(tmp_path, monkeypatch):
    p = _timed_problem([("a", "i1", 2.0, 10.0, "ok", False, 10.0),
                        ("b", "i1", 1.0, 12.0, "timeout", False, 10.0),
                        ("a", "i2", 3.0, None, "error", False, 10.0),
                        ("b", "i2", 10.0, 40.0, "timeout", True, 10.0)])
    # b's trace on i2: 50 at 1 s, 40 at 5 s (and its final state)
    monkeypatch.setattr(S, "read_traces", lambda d, cells: {
        "b-i2": np.array([[1.0, 50.0, 0.0], [5.0, 40.0, 0.0], [10.0, 40.0, 0.0]])}
        if cells == ["b-i2"] else {})
    pis = S.primal_integrals(p, tmp_path)
    assert pis[("a", "i1")] == pytest.approx(0.2)  # gap 1 for 2 s of 10, then 0
    assert pis[("b", "i1")] == pytest.approx(0.1 + 0.9 * 2 / 12)  # then 12 against 10
    assert pis[("a", "i2")] == 1.0  # no tree: the gap stays 1
    assert pis[("b", "i2")] == pytest.approx(0.1 + 0.4 * 10 / 50)  # its trace, best 40
    d = S.primal_display(p, tmp_path)
    assert d.header == ["instance", "best objective", "a", "b"]
    assert d.rows[0] == ["i1", "10", "0.2000", "0.2500"]
    assert d.rows[-1][2:] == [f"{(0.2 + 1.0) / 2:.4f} (1)", f"{(0.25 + 0.18) / 2:.4f} (1)"]


def test_primal_means_compare_the_solvers_on_the_instances_each_of_them_ran(tmp_path):
    """A solver that ran an instance the others did not (a reference package that runs one
    file of two) is not averaged over a different set: the last row's means and counts cover
    the instances every solver ran, and say how many of all those are."""
    p = _timed_problem([("a", "i1", 1.0, 10.0, "ok", False, 10.0),
                        ("b", "i1", 5.0, 10.0, "ok", False, 10.0),
                        ("a", "i2", 9.0, 10.0, "ok", False, 10.0)])
    d = S.primal_display(p, tmp_path)
    assert d.rows[1] == ["i2", "10", "0.9000", ""]
    assert d.rows[-1] == ["mean over the 1 of 2 instances every solver ran (lowest on)", "",
                          "0.1000 (1)", "0.5000 (0)"]  # a's 0.9 on i2 is left out
    only = _timed_problem([("a", "i1", 1.0, 10.0, "ok", False, 10.0),
                           ("b", "i2", 5.0, 10.0, "ok", False, 10.0)])
    assert S.primal_display(only, tmp_path).rows[-1][2:] == ["", ""]  # nothing in common


def test_no_primal_integrals_without_a_time_limit(tmp_path):
    p = _timed_problem([("a", "i1", 2.0, 10.0, "ok", False, None),
                        ("b", "i1", 1.0, 12.0, "ok", False, None)])
    assert S.primal_integrals(p, tmp_path) is None and S.primal_display(p, tmp_path) is None
    assert [d.title for d in S._displays(p, tmp_path)] == [
        "par2_min-errors", "ratios_min-errors", "fastest_min-errors"]


def test_the_primal_table_reads_the_traces_once_for_its_three_pages(tmp_path, monkeypatch):
    """The tables, the HTML page and the Markdown page all show a problem's primal-integral
    table: its fits' cell files are read once, and a new problem (another report) is read
    again."""
    reads = []
    monkeypatch.setattr(S, "read_traces", lambda d, cells: reads.append(list(cells)) or {})
    rows = [("a", "i1", 2.0, 10.0, "ok", True, 10.0), ("b", "i1", 1.0, 12.0, "ok", True, 10.0)]
    p = _timed_problem(rows)
    first = S.primal_display(p, tmp_path)
    assert S.primal_display(p, tmp_path) is first and len(reads) == 1
    again = _timed_problem(rows)
    assert S.primal_display(again, tmp_path).rows == first.rows and len(reads) == 2
    S.primal_display(again, tmp_path / "elsewhere")
    assert len(reads) == 3


def _own_pair(tmp_path):
    """A run of two of treebench's solvers of one problem (no peer needed)."""
    algs = [{"name": "topk", "label": "a", "objective": "min-errors-then-nodes",
             "params": {"max_depth": 2}},
            {"name": "gosdt", "label": "b", "objective": "min-errors-then-nodes",
             "params": {"max_depth": 2}}]
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 2}, algorithms=algs,
                      binarization={"method": "quantile", "params": {"max_splits": 2}},
                      limits={"time": 30}, report={"figures": ["none"]})
    path = tmp_path / "pair.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    return path, out


def _headers(out):
    tables = out / "report" / "tables"
    return (list(pd.read_csv(tables / "solvers_ratios_min-errors-then-nodes.csv").columns),
            list(pd.read_csv(tables / "solvers_fastest_min-errors-then-nodes.csv").columns))


def test_the_report_command_overrides_the_solvers_options_for_one_report(tmp_path):
    """`treebench report --reference-solver/--rivals/--min-reference-seconds` replace the
    options the run recorded for that report; the next report without them, and the next run
    that has nothing to do, write the run's report again."""
    path, out = _own_pair(tmp_path)
    runs = CliRunner()
    assert _headers(out)[0] == ["instance", "a time (s)", "b / a"]
    r = runs.invoke(app, ["report", str(out), "--no-figures", "--reference-solver", "b",
                          "--rivals", "a", "--min-reference-seconds", "0.5"])
    assert r.exit_code == 0, r.output
    ratios, fastest = _headers(out)
    assert ratios == ["instance", "b time (s)", "a / b"]
    assert fastest == ["instance", "fastest rival (s)", "a / fastest rival",
                       "b / fastest rival"]
    mean = pd.read_csv(out / "report" / "tables" / "solvers_ratios_min-errors-then-nodes.csv")
    assert "left out (reference under 0.5 s)" in mean["a / b"].iloc[2]  # iris fits: < 0.5 s
    again = runs.invoke(app, ["report", str(out), "--no-figures", "--reference-solver", "b",
                              "--rivals", "a", "--min-reference-seconds", "0.5"])
    assert "unchanged" in again.output  # asked alike: kept
    r = runs.invoke(app, ["report", str(out), "--no-figures"])
    assert r.exit_code == 0 and "unchanged" not in r.output, r.output
    assert _headers(out)[0] == ["instance", "a time (s)", "b / a"]
    runs.invoke(app, ["report", str(out), "--no-figures", "--reference-solver", "b"])
    r = runs.invoke(app, ["run", str(path), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert _headers(out)[0] == ["instance", "a time (s)", "b / a"]  # the run's report again


@pytest.fixture(scope="module")
def refusing_pair(tmp_path_factory):
    """One run for every refused option below (a refusal changes nothing in the folder)."""
    tmp_path = tmp_path_factory.mktemp("refused")
    return tmp_path, _own_pair(tmp_path)[1]


@pytest.mark.parametrize("flags, words", [
    (["--reference-solver", "c"], "--reference-solver names `c`"),
    (["--reference-solver", " "], "--reference-solver has an empty label"),
    (["--rivals", "a,,b"], "--rivals has an empty label"),
    (["--rivals", "a,bb"], "--rivals names `bb`, no algorithm entry's label (did you mean"),
    (["--min-reference-seconds", "-0.5"], "finite number of seconds >= 0"),
    (["--min-reference-seconds", "inf"], "finite number of seconds >= 0"),
    (["--clock", "user"], "--clock is `wall` or `cpu` (got 'user')")])
def test_a_report_option_that_names_no_entry_is_refused(refusing_pair, flags, words):
    tmp_path, out = refusing_pair
    before = (out / "report" / "index.html").read_bytes()
    r = CliRunner().invoke(app, ["report", str(out), "--no-figures", *flags])
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output
    assert (out / "report" / "index.html").read_bytes() == before  # the report is kept
    folder = CliRunner().invoke(app, ["report", str(tmp_path), "--rivals", "a"])
    assert folder.exit_code == 2 and "give that experiment's results folder" in folder.output
