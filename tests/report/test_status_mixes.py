"""The report on results tables of every mix of cell statuses.

A run whose cells all failed or timed out still writes ``results.parquet``, and its report must
follow: tables, figures, the failures list and the HTML page, with zero finished cells as well
as with some. The tables here hold every status a cell can end with (``ok``, ``timeout``,
``error``, ``crashed``, ``oom``) and ``missing`` (a cell the manifest defines with no row), over
algorithm entries whose parameters vary between entries (``candidates`` and ``search`` exist
for one learner only), with metric columns that are empty in every row. Each mix goes through
every part of the report; the counts the report shows are checked against the table.
"""

from __future__ import annotations

import itertools
import json
import random
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from treebench.cli import app
from treebench.report import write_report
from treebench.report.aggregate import failures, load_results, status_counts
from treebench.report.critical_difference import rankings
from treebench.report.figures import FIGURES, figure_jobs
from treebench.report.html import render_html
from treebench.report.index import write_tree
from treebench.report.markdown import render_markdown
from treebench.report.pareto import SIZES, pareto_table
from treebench.report.reproduction import verification
from treebench.report.reproduction import write_tables as write_reproduction
from treebench.report.tables import write_tables
from treebench.results import schema

from .conftest import write_results

STATUSES = (*schema.STATUSES, "missing")
FAILED = tuple(s for s in STATUSES if s not in ("ok", "missing"))
DATASETS = ("alpha", "beta")
FOLDS = (0, 1)
# (label, learner, parameters): max_depth varies between entries, candidates and search exist
# for dpdt only, regularization (the time-accuracy figure) for gosdt, lam (the λ trade-off
# figure) for ngi; `ngi-tuned` chooses lam inside each cell
ENTRIES = (
    ("optimal-numeric", "optimal-numeric", {"max_depth": 4}),
    ("dpdt", "dpdt", {"max_depth": 3, "candidates": "exhaustive", "search": "dp"}),
    ("cart", "cart", {"max_depth": 2}),
    ("cart", "cart", {"max_depth": 3}),
    ("topk", "topk", {"k": 2, "max_depth": 3}),
    ("gosdt", "gosdt", {"regularization": 0.001, "max_depth": 3}),
    ("gosdt", "gosdt", {"regularization": 0.01, "max_depth": 3}),
    ("ngi", "ngi", {"lam": 0.1}),
    ("ngi", "ngi", {"lam": 1.0}),
    ("ngi-tuned", "ngi", {}),
)
METRICS = ("train_accuracy", "test_accuracy", "n_leaves", "depth", "fit_seconds",
           "test_roc_auc", "expected_cost_train")
ERRORS = {"timeout": "cell exceeded its time limit of 2 s",
          "error": "ValueError: the search found no split",
          "crashed": "the cell's process died (signal 11)",
          "oom": "cell exceeded its memory limit of 1024 MB"}
CELLS = [(d, e, f) for d in DATASETS for e in range(len(ENTRIES)) for f in FOLDS]
CONFIG = {
    "name": "mix", "description": "every status mix",
    "metrics": ["accuracy", "n_leaves", "depth", "fit_seconds", "roc_auc", "expected_cost"],
    "algorithms": [{"name": learner, "label": label, "params": params,
                    "tune": {"param": "lam", "values": [0.1, 1.0]} if label == "ngi-tuned"
                    else None} for label, learner, params in ENTRIES],
    "expect": [{"name": "dpdt at least as accurate as cart", "source": "this test",
                "where": {"algorithm_label": "dpdt"}, "metric": "test_accuracy",
                "compare": {"where": {"algorithm_label": "cart"}, "op": "ge"}}],
}


def _cell_id(dataset: str, entry: int, fold: int) -> str:
    return f"{dataset}-e{entry}-f{fold}"


def _identity(dataset: str, entry: int, fold: int, status: str) -> dict:
    label, learner, params = ENTRIES[entry]
    if label == "ngi-tuned" and status == "ok":  # the value the tuning chose in this cell
        params = {"lam": (0.1, 1.0)[fold]}
    row = {"cell_id": _cell_id(dataset, entry, fold), "dataset": dataset, "split": "kfold",
           "split_params": json.dumps({"n_splits": len(FOLDS)}), "fold": fold, "seed": 0,
           "binarizer": "raw", "binarizer_params": "{}", "algorithm_label": label,
           "algorithm_params": json.dumps(params, sort_keys=True)}
    row.update({f"param_{k}": v for k, v in params.items()})
    return row


def _row(dataset: str, entry: int, fold: int, status: str, empty: frozenset[str],
         solver_timed_out: bool) -> dict:
    ok = status == "ok"
    # a cell stopped at its time limit may still hold the solver's best tree and its metrics
    # (fold 0 here), which no mean includes
    tree = ok or (status == "timeout" and fold == 0)
    value = 0.5 + 0.04 * entry + 0.1 * DATASETS.index(dataset) + 0.01 * fold
    metrics = {"train_accuracy": min(value + 0.05, 1.0), "test_accuracy": value,
               "n_leaves": 2 + entry, "depth": 1 + entry % 4, "fit_seconds": 0.01 * (entry + 1),
               "test_roc_auc": value, "expected_cost_train": 1.0 + entry / 4}
    row = {**_identity(dataset, entry, fold, status),
           "n_train": 80, "n_test": 20, "n_features": 4, "n_classes": 2,
           "status": status, "error": ERRORS.get(status),
           "timed_out": (ok and solver_timed_out) or (tree and not ok),
           "tuned_params": "lam" if ok and ENTRIES[entry][0] == "ngi-tuned" else None}
    row.update({m: (metrics[m] if tree and m not in empty else None) for m in METRICS})
    return row


def write_mix(directory: Path, statuses: list[str], empty: frozenset[str] = frozenset(),
              solver_timed_out: frozenset[int] = frozenset(), name: str = "mix") -> Path:
    """A results directory whose cell ``i`` (of `CELLS`) ended with ``statuses[i]``; the
    metrics in ``empty`` are null in every row; ok cells in ``solver_timed_out`` stopped at
    their solver's own time limit. The manifest records every cell, so a ``missing`` cell is
    one without a row."""
    rows = [_row(*cell, st, empty, i in solver_timed_out)
            for i, (cell, st) in enumerate(zip(CELLS, statuses, strict=True)) if st != "missing"]
    columns = list(_row(*CELLS[0], "ok", frozenset(), False))
    for _, _, params in ENTRIES:
        columns += [f"param_{k}" for k in params if f"param_{k}" not in columns]
    table = schema.conform(pd.DataFrame(rows, columns=columns).assign(experiment=name))
    idents = [_identity(*cell, st) for cell, st in zip(CELLS, statuses, strict=True)]
    names = list(dict.fromkeys(k for r in idents for k in r))
    config = {**CONFIG, "name": name}
    record = {"key": name, "name": name, "profile": None, "kind": "run", "command": "run",
              "config": config, "n_cells": len(CELLS),
              "cells": {k: [r.get(k) for r in idents] for k in names}}
    manifest = {"experiment": name, "config": config, "experiments": [record],
                "created_at": "2026-01-01T00:00:00Z", "environment": {"host": "test"}}
    return write_results(directory, table, manifest)


def _expected_counts(statuses: list[str]) -> dict[str, int]:
    return {s: statuses.count(s) for s in STATUSES}


def check_every_part(directory: Path, statuses: list[str], empty: frozenset[str]) -> None:
    """Every part of the report on ``directory`` (written by `write_mix`): what it shows
    agrees with the table, and nothing raises."""
    want = _expected_counts(statuses)
    res = load_results(directory)
    # the settings count every defined cell by status, finished or not
    s = res.settings
    assert int(s["n_total"].sum()) == len(CELLS)
    for st_ in STATUSES:
        assert int(s[f"n_{st_}"].sum()) == want[st_], st_
    assert int(s["n_failed"].sum()) == sum(want[f] for f in FAILED)
    assert set(s["dataset"]) == set(DATASETS)
    assert status_counts(res.table) == {k: want[k] for k in schema.STATUSES}
    # means are over finished cells only; an empty column has no mean and is no metric
    for m in METRICS:
        n_values = 0 if m in empty else want["ok"]
        assert int(s[f"{m}_n"].sum()) == n_values, m
        assert (m in res.metrics) == (n_values > 0), m
        finite = s[f"{m}_mean"].dropna()
        assert len(finite) == int((s[f"{m}_n"] > 0).sum()), m
    # the failures list: exactly the cells that ran and did not finish
    f = failures(res)
    bad = {_cell_id(*c) for c, st_ in zip(CELLS, statuses, strict=True) if st_ in FAILED}
    assert set(f["cell_id"]) == bad and len(f) == len(bad)
    assert all(e for e in f["error"])

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        written = write_tables(res, out, {"csv", "md", "latex"})
        summary = pd.read_csv(out / "tables" / "summary.csv", keep_default_na=False)
        assert len(summary) == len(s)
        fails = pd.read_csv(out / "tables" / "failures.csv", keep_default_na=False)
        assert set(fails["cell_id"]) == bad
        assert {p.stem for p in written["csv"]} == {"summary", "failures", *res.metrics}
        # the config's claim is checked whatever the statuses; with nothing finished it fails
        claims = verification(res)
        assert len(claims.verdicts) == 1 and (want["ok"] > 0 or not claims.passed)
        write_reproduction(claims, out, {"csv", "md", "latex"})
        assert (out / "tables" / "reproduction.csv").is_file()

        # rankings and Pareto fronts are over finished settings only
        for metric in ("test_accuracy", "test_roc_auc"):
            ranked = rankings(res, metric)
            assert want["ok"] > 0 or ranked == []
            for r in ranked:
                assert r.scores.notna().all().all() and r.scores.shape[0] >= 2
        for dataset in DATASETS:
            for col, _, _ in SIZES:
                front = pareto_table(res, dataset, col)
                assert (front["n_ok"] > 0).all() and (want["ok"] > 0 or front.empty)

        page = render_html(res, [])
        assert f"Failures ({len(bad)})" in page
        render_markdown(res, [], out, [])


def draw_every_figure(directory: Path) -> list[str]:
    """Draw every figure the report lists for ``directory`` (without saving it); the stems of
    those drawn (a figure with nothing to show is not drawn)."""
    res = load_results(directory)
    drawn = []
    for job in figure_jobs(res):
        if FIGURES.get(job.kind).obj.draw(res, job) is not None:
            drawn.append(job.stem)
    return drawn


def _mix(subset: tuple[str, ...], rng: random.Random) -> list[str]:
    """A status per cell: every status of ``subset`` at least once, the rest drawn from it."""
    statuses = list(subset) + [rng.choice(subset) for _ in range(len(CELLS) - len(subset))]
    rng.shuffle(statuses)
    return statuses


SUBSETS = [c for n in range(1, len(STATUSES) + 1) for c in itertools.combinations(STATUSES, n)]
#: the fixed mixes: each status alone, every pair, every mix without one status, and all six
#: (28 of the 63; the property test below draws from all 63)
FIXED = [c for c in SUBSETS if len(c) <= 2 or len(c) >= len(STATUSES) - 1]


@pytest.mark.parametrize("subset", FIXED, ids=["+".join(c) for c in FIXED])
def test_every_status_mix_goes_through_every_part_of_the_report(tmp_path, subset):
    """Each status alone, every pair of statuses, every mix without one of them and all six
    (each present at least once), with 0 to 3 metric columns empty in every row (seeded by
    the mix)."""
    rng = random.Random("+".join(subset))
    statuses = _mix(subset, rng)
    empty = frozenset(rng.sample(METRICS, rng.randint(0, 3)))
    directory = write_mix(tmp_path / "r", statuses, empty)
    check_every_part(directory, statuses, empty)
    if "ok" not in subset:  # nothing finished: nothing to plot (and drawing is quick)
        assert draw_every_figure(directory) == []


FIGURE_MIXES = {"ok": (("ok",), frozenset()),
                "ok+timeout": (("ok", "timeout"), frozenset({"n_leaves", "test_roc_auc"})),
                "ok+missing": (("ok", "missing"), frozenset()),
                "all": (STATUSES, frozenset({"n_leaves", "test_roc_auc"}))}


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("subset, empty", FIGURE_MIXES.values(), ids=FIGURE_MIXES)
def test_every_figure_of_a_partly_finished_run_is_drawn(tmp_path, subset, empty):
    """Runs with finished cells: every figure is drawn or skipped without error, and the
    accuracy-vs-leaves figure of a dataset exists exactly when one of its settings has both."""
    statuses = _mix(subset, random.Random(len(subset)))
    drawn = draw_every_figure(write_mix(tmp_path / "r", statuses, empty))
    for dataset in DATASETS:
        has_ok = any(st_ == "ok" for (d, _, _), st_ in zip(CELLS, statuses, strict=True)
                     if d == dataset)
        assert (f"{dataset}__test_accuracy_vs_n_leaves" in drawn) == (
            has_ok and "n_leaves" not in empty), dataset


def test_the_lambda_figure_names_its_lines_when_no_cell_recorded_an_auc(tmp_path):
    """Without any AUC value the upper panel is empty; the λ lines are still named (on the
    cost panel), with the tuned entry's marker."""
    from treebench.report.tradeoff import tradeoff_figure

    empty = frozenset({"test_roc_auc"})
    res = load_results(write_mix(tmp_path / "r", ["ok"] * len(CELLS), empty))
    fig = tradeoff_figure(res, "alpha")
    legends = [lg for ax in fig.axes for lg in [ax.get_legend()] if lg is not None]
    assert len(legends) == 1 and legends[0].axes is fig.axes[1]
    assert sorted(t.get_text() for t in legends[0].get_texts()) == ["ngi", "ngi-tuned (tuned)"]


# eight random draws a run (about 2 s each) from all 63 mixes: they add the mixes of three and
# four statuses, random empty metric columns and solver time limits to the fixed mixes above
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(subset=st.sampled_from(SUBSETS), seed=st.integers(0, 2**16),
       empty=st.frozensets(st.sampled_from(METRICS)),
       solver_timed_out=st.frozensets(st.integers(0, len(CELLS) - 1), max_size=4))
def test_the_report_of_any_status_mix_agrees_with_its_table(subset, seed, empty,
                                                            solver_timed_out):
    """Random mixes: which cell has which status, which metric columns are empty and which
    finished cells stopped at their solver's own time limit."""
    statuses = _mix(subset, random.Random(seed))
    with tempfile.TemporaryDirectory() as tmp:
        directory = write_mix(Path(tmp) / "r", statuses, empty, solver_timed_out)
        check_every_part(directory, statuses, empty)


runner = CliRunner()


@pytest.mark.parametrize("status", FAILED + ("missing",))
def test_treebench_report_when_no_cell_finished(tmp_path, status):
    """Every cell failed one way (or has no row): `treebench report` writes the whole report,
    lists each failed cell and draws nothing."""
    statuses = [status] * len(CELLS)
    if status == "missing":  # an interrupted run: one cell failed, the others never ran
        statuses[0] = "timeout"
    d = write_mix(tmp_path / "r", statuses)
    r = runner.invoke(app, ["report", str(d), "--format", "html,md,csv,latex,svg"])
    assert r.exit_code == 0, r.output
    out = d / "report"
    n_failed = sum(s in FAILED for s in statuses)
    assert f"Failures ({n_failed})" in (out / "index.html").read_text(encoding="utf-8")
    fails = pd.read_csv(out / "tables" / "failures.csv", keep_default_na=False)
    assert len(fails) == n_failed and set(fails["status"]) == {s for s in statuses if s in FAILED}
    assert (out / "summary.md").is_file() and (out / "tables" / "summary.tex").is_file()
    assert not list((out / "figures").glob("*.png"))
    summary = pd.read_csv(out / "tables" / "summary.csv")
    assert len(summary) == len(DATASETS) * len(ENTRIES) and (summary["n_ok"] == 0).all()


def test_treebench_report_on_a_folder_of_runs_without_a_finished_cell(tmp_path):
    """A folder of runs none of which finished a cell (all timed out, all crashed, no row at
    all): each gets its report, the index counts each run's cells by status, and the settings
    of the datasets they share are put side by side with 0 finished."""
    root = tmp_path / "all"
    runs = {"timeouts": "timeout", "crashes": "crashed", "empty": "missing"}
    for name, status in runs.items():
        write_mix(root / name, [status] * len(CELLS), name=name)
    r = runner.invoke(app, ["report", str(root), "--format", "html,md,csv"])
    assert r.exit_code == 0, r.output
    first = (root / "index.md").read_text(encoding="utf-8").split("\n## ")[0]  # the index
    lines = [ln.strip("|").split("|") for ln in first.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0]]
    index = {c[0].strip().split()[0]: dict(zip(header, (x.strip() for x in c), strict=True))
             for c in lines[2:]}
    assert set(index) == set(runs)
    for name, status in runs.items():
        assert (root / name / "report" / "index.html").is_file()
        # every defined cell is counted, under its status or as missing when it has no row
        assert index[name]["cells"] == str(len(CELLS))
        assert {k: index[name][k] for k in STATUSES} == {
            k: str(len(CELLS) if k == status else 0) for k in STATUSES}
        assert index[name]["datasets"] == ", ".join(DATASETS)
    across = pd.read_csv(root / "across.csv")
    assert set(across["experiment"]) == set(runs) and (across["n_ok"] == 0).all()
    assert across["test_accuracy_mean"].isna().all()
