"""The λ trade-off figure (NGI, Zhang & Gionis 2023, Fig. 2): lines for λ sweeps, markers for
entries that tune λ, nothing without a λ sweep."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from tests.report.conftest import synthetic_table, write_results
from treebench.report.aggregate import load_results
from treebench.report.tradeoff import tradeoff_lines, tuned_labels
from treebench.results import schema

LAMS = (100, 10, 1, 0.1, 0.01)
SEEDS = (0, 1)


def _row(dataset, label, lam, seed, alpha=None):
    params = {"theta": 0.005, "lam": lam}
    auc = 0.8 + 0.02 * np.log10(lam) + 0.01 * seed
    cost = 3.0 + 0.3 * np.log10(lam)
    return {
        "experiment": "ngi", "cell_id": f"{dataset}-{label}-{lam}-{seed}-{alpha}",
        "dataset": dataset, "split": "train-val-test", "fold": 0, "seed": seed,
        "binarizer": "kmeans", "binarizer_params": json.dumps({"n_bins": 5}),
        "algorithm": label, "algorithm_params": json.dumps(params, sort_keys=True),
        "n_train": 100, "n_val": 10, "n_test": 30, "n_features": 4, "n_binary_features": 20,
        "n_classes": 3, "val_roc_auc": auc, "test_roc_auc": auc - 0.01,
        "expected_cost_train": cost, "expected_cost_test": cost + 0.1,
        "status": "ok", "error": None, "param_lam": lam, "param_theta": 0.005,
        "param_ccp_alpha": alpha, "bparam_n_bins": 5,
    }


def _table() -> pd.DataFrame:
    rows = []
    for d in ("iris", "wine"):
        for seed in SEEDS:
            rows += [_row(d, "ECART-lam", lam, seed) for lam in LAMS]
            rows += [_row(d, "EC4.5-lam", lam, seed) for lam in LAMS]
            # the tuned entry: λ chosen per seed (1 then 10)
            rows.append(_row(d, "ECART", 1 if seed == 0 else 10, seed, alpha=1e-5))
            # a pruning sweep at one λ: not a λ line
            rows += [_row(d, "ECART-alpha", 1, seed, alpha=a) for a in (1e-5, 1e-3)]
    rows.append({**_row("car", "CART", 1, 0), "param_lam": None})  # no λ on car
    return schema.conform(pd.DataFrame(rows))


def _manifest():
    algs = [{"name": "ecart", "label": "ECART-lam"}, {"name": "ec4.5", "label": "EC4.5-lam"},
            {"name": "ecart", "label": "ECART", "tune": [
                {"param": "lam", "grid": list(LAMS)}, {"param": "ccp_alpha", "grid": [1e-5]}]},
            {"name": "ecart", "label": "ECART-alpha", "tune": None}]
    return {"experiment": "ngi", "config": {"name": "ngi", "algorithms": algs,
                                            "metrics": ["roc_auc", "expected_cost"]}}


def test_lines_are_sweeps_and_tuned_entries_are_markers(tmp_path):
    res = load_results(write_results(tmp_path / "r", _table(), _manifest()))
    assert tuned_labels(res) == {"ECART"}
    lines, tuned = tradeoff_lines(res, "iris")
    assert [label for label, _ in lines] == ["EC4.5-lam", "ECART-lam"]
    for _, rows in lines:
        assert rows["_lam"].tolist() == sorted(float(v) for v in LAMS)
        # the figure shows the aggregate's means: over the two seeds
        assert np.allclose(rows["val_roc_auc_mean"],
                           [0.805 + 0.02 * np.log10(v) for v in sorted(LAMS)])
    assert set(tuned["algorithm_label"]) == {"ECART"} and len(tuned) == 2
    car_lines, car_tuned = tradeoff_lines(res, "car")
    assert car_lines == [] and car_tuned.empty


def test_report_draws_one_tradeoff_figure_per_dataset_with_a_sweep(tmp_path):
    from treebench.report import write_report

    paths = write_report(write_results(tmp_path / "r", _table(), _manifest(),
                                       figures=["lambda_tradeoff"]),
                         tmp_path / "out", formats=["html"])
    names = sorted(p.name for p in paths["png"] if "lambda_tradeoff" in p.name)
    assert names == ["iris__lambda_tradeoff.png", "wine__lambda_tradeoff.png"]
    assert all(p.stat().st_size > 10_000 for p in paths["png"] if "lambda" in p.name)
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "lambda_tradeoff" in html


def test_no_tradeoff_figure_without_a_lambda_sweep(tmp_path):
    from treebench.report import write_report

    # a trade-off figure would match the pattern and be drawn; the other figure shows the
    # report drew what it was asked for
    res = write_results(tmp_path / "r", synthetic_table(),
                        figures=["lambda_tradeoff", "test_accuracy_vs_n_leaves"])
    paths = write_report(res, tmp_path / "out", formats=["html"])
    assert paths["png"]
    assert not [p for p in paths["png"] if "lambda_tradeoff" in p.name]


def test_tuned_entries_are_named_in_the_legend_not_in_overlapping_labels(tmp_path):
    from treebench.report.tradeoff import tradeoff_figure

    res = load_results(write_results(tmp_path / "r", _table(), _manifest()))
    fig = tradeoff_figure(res, "iris")
    ax_auc = fig.axes[0]
    assert not [t for t in ax_auc.texts if "(tuned)" in t.get_text()]  # no text beside stars
    legends = [leg for leg in [ax_auc.get_legend(), *fig.legends] if leg is not None]
    names = [t.get_text() for leg in legends for t in leg.get_texts()]
    assert "ECART (tuned)" in names
