"""The accuracy-vs-time figure of GOSDT with guesses (McTavish et al. 2022, Figure 1): one
marker per setting, drawn only for regularised optimal-tree settings."""

from __future__ import annotations

import json

import pandas as pd

from tests.report.conftest import write_results
from treebench.report.aggregate import load_results
from treebench.report.time_accuracy import time_accuracy_figure, time_accuracy_settings
from treebench.results import schema

DEPTHS = (2, 3, 5)


def _row(dataset, label, binarizer, depth, fold, secs, acc, timed_out=False):
    params = {"regularization": 0.001, "max_depth": depth}
    return {
        "experiment": "gosdt-figure1", "cell_id": f"{dataset}-{label}-{binarizer}-{depth}-{fold}",
        "dataset": dataset, "split": "kfold", "fold": fold, "seed": 2021,
        "binarizer": binarizer, "binarizer_params": json.dumps({}),
        "algorithm": label, "algorithm_params": json.dumps(params, sort_keys=True),
        "n_train": 100, "n_test": 30, "n_features": 4, "n_binary_features": 20,
        "n_classes": 2, "train_accuracy": acc, "test_accuracy": acc - 0.01,
        "fit_seconds": secs, "n_leaves": depth + 2, "status": "ok", "error": None,
        "timed_out": timed_out, "param_regularization": 0.001, "param_max_depth": depth,
    }


def _table() -> pd.DataFrame:
    rows = []
    for fold in (0, 1):
        for depth in DEPTHS:
            rows.append(_row("compas", "gosdt", "midpoints", depth, fold, 2.0 * depth, 0.68,
                             timed_out=depth == 5))
            rows.append(_row("compas", "gosdt", "threshold-guess", depth, fold, 0.2 * depth,
                             0.68))
            rows.append(_row("compas", "gosdt-lb-guess", "threshold-guess", depth, fold,
                             0.1 * depth, 0.679))
    rows.append({**_row("iris", "cart", "quantile", 3, 0, 0.01, 0.9),
                 "param_regularization": None})
    rows.append({**_row("iris", "cart", "quantile", 4, 0, 0.02, 0.95),
                 "param_regularization": None})
    return schema.conform(pd.DataFrame(rows))


def test_one_marker_per_setting_on_a_log_time_axis(tmp_path):
    res = load_results(write_results(tmp_path / "r", _table()))
    s = time_accuracy_settings(res, "compas")
    assert len(s) == 3 * len(DEPTHS)
    fig = time_accuracy_figure(res, "compas")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    offsets = [c.get_offsets() for c in ax.collections]
    assert sum(len(o) for o in offsets) == 3 * len(DEPTHS)  # one marker per setting
    xs = sorted(float(o[0][0]) for o in offsets)
    assert xs[0] == 0.1 * 2 and xs[-1] == 2.0 * 5  # means over the two folds
    # no figure where no setting has a regularisation parameter
    assert time_accuracy_figure(res, "iris") is None


def test_report_writes_the_figure_file(tmp_path):
    from treebench.report import write_report

    paths = write_report(write_results(tmp_path / "r", _table(), figures=["train_accuracy_vs_time"]),
                         tmp_path / "out", formats=["html"])
    names = [p.name for p in paths["png"] if "train_accuracy_vs_time" in p.name]
    assert names == ["compas__train_accuracy_vs_time.png"]
    assert (tmp_path / "out" / "figures" / names[0]).stat().st_size > 10_000
    assert "train_accuracy_vs_time" in (tmp_path / "out" / "index.html").read_text("utf-8")
