"""Synthetic results directories that follow `treebench.results.schema` (report tests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treebench.results import schema, store

DATASETS = ("car", "tic-tac-toe")
KS = (1, 2, 4, "all")
DEPTHS = (2, 3, 4)
FOLDS = (0, 1, 2)
# (dataset, k, depth) -> {fold: (status, error)} for the cells that did not finish
FAILED = {
    ("car", "all", 4): {1: ("error", "MemoryError: search & prune failed"),
                        2: ("timeout", "cell exceeded its time limit of 60 s")},
    ("tic-tac-toe", "all", 4): {f: ("timeout", "cell exceeded its time limit of 60 s")
                                for f in FOLDS},
}


def accuracy(dataset: str, algorithm: str, k, depth: int, fold: int, train: bool) -> float:
    """A made-up but deterministic accuracy, rising with depth and k, varying with the fold."""
    kk = 8 if k == "all" else (k or 1)
    base = 0.6 if dataset == "car" else 0.55
    gain = 0.05 * depth + (0.02 * np.log2(kk) if algorithm == "topk" else 0.0)
    noise = 0.01 * ((fold * 7 + depth * 3 + kk) % 5 - 2)
    return float(min(base + gain + noise + (0.05 if train else 0.0), 1.0))


def _row(experiment, dataset, algorithm, k, depth, fold, status, error):
    params = {"max_depth": depth} if algorithm == "cart" else {"k": k, "max_depth": depth}
    ok = status == "ok"
    cell = f"{dataset}-{algorithm}-k{k}-d{depth}-f{fold}"
    return {
        "experiment": experiment, "cell_id": cell, "dataset": dataset, "split": "cv3",
        "fold": fold, "seed": 0, "binarizer": "threshold",
        "binarizer_params": json.dumps({"n_thresholds": 8}, sort_keys=True),
        "algorithm": algorithm, "algorithm_params": json.dumps(params, sort_keys=True),
        "n_train": 100, "n_test": 50, "n_features": 6, "n_binary_features": 20,
        "n_classes": 2,
        "train_accuracy": accuracy(dataset, algorithm, k, depth, fold, True) if ok else None,
        "test_accuracy": accuracy(dataset, algorithm, k, depth, fold, False) if ok else None,
        "n_leaves": (2 ** depth - (fold % 2)) if ok else None,
        "depth": depth if ok else None,
        "fit_seconds": (0.001 * depth * (8 if k == "all" else (k or 1)) + 0.0001 * fold)
        if ok else None,
        "status": status, "error": error,
        # an anytime answer: the solver stopped at its own time limit but the cell finished
        "timed_out": ok and (dataset, algorithm, k, depth, fold) == ("car", "topk", 4, 4, 0),
        "param_k": k if algorithm == "topk" else None, "param_max_depth": depth,
        "bparam_n_thresholds": 8,
    }


def synthetic_table(experiment: str = "topk_fig2") -> pd.DataFrame:
    rows = []
    for d in DATASETS:
        for k in KS:
            for depth in DEPTHS:
                fails = FAILED.get((d, k, depth), {})
                for f in FOLDS:
                    st, err = fails.get(f, ("ok", None))
                    rows.append(_row(experiment, d, "topk", k, depth, f, st, err))
        for depth in DEPTHS:
            for f in FOLDS:
                rows.append(_row(experiment, d, "cart", None, depth, f, "ok", None))
    return schema.conform(pd.DataFrame(rows))


def write_results(directory: Path, table: pd.DataFrame, manifest: dict | None = None,
                  figures: list[str] | None = None) -> Path:
    """Write the table as the runner does (`treebench.results.store.write_tables`).
    ``figures``: the config's ``report: {figures: [...]}`` patterns, for tests that need a few
    of the figures only (a report's figures are most of its time)."""
    directory.mkdir(parents=True, exist_ok=True)
    store.write_tables(directory, table)
    if manifest is None:
        manifest = {"experiment": str(table["experiment"].iloc[0]),
                    "created_at": "2026-01-01T00:00:00Z",
                    "config": {"name": "topk_fig2", "description": "Top-k vs CART, depth sweep",
                               "metrics": ["accuracy", "n_leaves", "fit_seconds"]},
                    "environment": {"python": "3.11.2", "numpy": "2.4.6", "host": "test"}}
    if figures is not None:
        manifest = {**manifest, "config": {**manifest.get("config", {}),
                                           "report": {"figures": figures}}}
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return directory


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results", synthetic_table())


#: one figure of each kind the synthetic table has (axis, leaves, Pareto, critical difference)
ONE_OF_EACH_KIND = ["test_accuracy_vs_max_depth", "test_accuracy_vs_n_leaves",
                    "pareto_test_accuracy_vs_n_leaves", "critical_difference_max_depth-4"]


@pytest.fixture
def few_figures_dir(tmp_path: Path) -> Path:
    """`results_dir` whose config chooses `ONE_OF_EACH_KIND` (seven figures instead of 23),
    for tests of how figures are drawn rather than of what each shows."""
    return write_results(tmp_path / "results", synthetic_table(), figures=ONE_OF_EACH_KIND)


@pytest.fixture
def no_figures(monkeypatch):
    """Reports drawn without figures, for tests of the tables and pages only (a report's
    figures are most of its time; the figure tests draw them)."""
    from treebench.report import figures

    monkeypatch.setattr(figures, "figure_jobs", lambda results: [])
