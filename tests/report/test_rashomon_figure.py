"""The Rashomon-set figure: drawn only for datasets with Rashomon-set cells, with its note that
the set's best and worst trees by test accuracy are no selection on test data, a log size axis
when the sizes span a wide range, and the rows' values as they are."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.report.conftest import write_results
from treebench.report.aggregate import load_results
from treebench.report.figures import figure_jobs
from treebench.report.rashomon import (
    NOT_A_SELECTION,
    rashomon_figure,
    rashomon_jobs,
)
from treebench.results import schema

FOLDS = (0, 1)


def _curve(top: int, eps: float) -> str:
    grid = [e for e in (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1) if e < eps]
    sizes = np.linspace(1, top, len(grid) + 1).round().astype(int).tolist()
    return json.dumps(dict(zip([f"{e:g}" for e in grid] + [f"{eps:g}"], sizes)))


def _row(dataset, algorithm, depth, fold, top=25, sampled=False):
    rashomon = algorithm == "rashomon"
    params = {"max_depth": depth, **({"epsilon": 0.05} if rashomon else {})}
    acc = 0.7 + 0.01 * depth + 0.005 * fold
    row = {
        "experiment": "rs", "cell_id": f"{dataset}-{algorithm}-{depth}-{fold}",
        "dataset": dataset, "split": "kfold", "fold": fold, "seed": 0,
        "binarizer": "none", "binarizer_params": "{}",
        "algorithm": algorithm, "algorithm_name": algorithm,
        "algorithm_params": json.dumps(params, sort_keys=True),
        "n_train": 100, "n_test": 50, "n_features": 6, "n_binary_features": 6, "n_classes": 2,
        "train_accuracy": acc + 0.02, "test_accuracy": acc, "n_leaves": 2 ** depth,
        "fit_seconds": 0.01 * depth, "status": "ok", "error": None,
        "param_max_depth": depth, "param_epsilon": 0.05 if rashomon else None,
    }
    if rashomon:
        row.update({
            "rashomon_count": float(top), "rashomon_complete": True,
            "rashomon_count_by_epsilon": _curve(top, 0.05),
            "rashomon_trees_analysed": 10 if sampled else top, "rashomon_sampled": sampled,
            "rashomon_test_accuracy_min": acc - 0.03 - 0.01 * depth,
            "rashomon_test_accuracy_max": acc + 0.02,
            "rashomon_test_ambiguity": 0.2, "rashomon_test_discrepancy": 0.1,
        })
    return row


def _results(tmp_path, rows):
    table = schema.conform(pd.DataFrame(rows))
    manifest = {"experiment": "rs", "config": {"name": "rs", "metrics": ["accuracy"]}}
    return write_results(tmp_path / "r", table, manifest)


def _mixed(tops=(20, 400)):
    """Rashomon sets on `compas` (two depths, two folds), CART alone on `car`."""
    rows = [_row("compas", "rashomon", d, f, top=top, sampled=(d == 3))
            for d, top in zip((2, 3), tops) for f in FOLDS]
    rows += [_row("compas", "cart", d, f) for d in (2, 3) for f in FOLDS]
    rows += [_row("car", "cart", d, f) for d in (2, 3) for f in FOLDS]
    return rows


def _texts(fig) -> str:
    texts = [*fig.texts, *(t for ax in fig.axes for t in ax.texts)]
    return " ".join(" ".join(t.get_text().split()) for t in texts)


def test_the_figure_is_drawn_only_for_datasets_with_rashomon_cells(tmp_path, results_dir):
    from treebench.report import write_report

    res = load_results(_results(tmp_path, _mixed()))
    jobs = rashomon_jobs(res)
    assert [j.dataset for j in jobs] == ["compas"]
    assert rashomon_figure(res, "car") is None
    paths = write_report(res.directory, tmp_path / "out", formats=["html"])
    drawn = sorted(p.name for p in paths["png"] if "rashomon" in p.name)
    assert drawn == ["compas__rashomon_set.png"]
    assert "compas__rashomon_set" in (tmp_path / "out" / "index.html").read_text("utf-8")
    # results without any Rashomon-set cell (Top-k and CART): the report lists no such figure
    assert not [j for j in figure_jobs(load_results(results_dir)) if j.kind == "rashomon_set"]


def test_the_note_says_the_accuracy_range_is_no_selection_on_test_data(tmp_path):
    fig = rashomon_figure(load_results(_results(tmp_path, _mixed())), "compas")
    text = _texts(fig)
    assert " ".join(NOT_A_SELECTION.split()) in text
    assert "not a selection on test data" in text
    # the sampled setting (depth 3) is named with its sample size
    assert "rashomon (max_depth=3): 10 of 400 trees" in text


def test_the_size_axis_is_logarithmic_only_when_the_sizes_span_a_wide_range(tmp_path):
    wide = rashomon_figure(load_results(_results(tmp_path / "w", _mixed((20, 400)))), "compas")
    narrow = rashomon_figure(load_results(_results(tmp_path / "n", _mixed((3, 6)))), "compas")
    assert wide.axes[0].get_yscale() == "log"
    assert narrow.axes[0].get_yscale() == "linear"
    assert "log scale" in wide.axes[0].get_ylabel()
    assert "log scale" not in narrow.axes[0].get_ylabel()


def test_the_panels_draw_the_rows_values(tmp_path):
    rows = _mixed()
    fig = rashomon_figure(load_results(_results(tmp_path, rows)), "compas")
    ax_size, ax_acc = fig.axes[:2]
    ours = [r for r in rows if r["algorithm"] == "rashomon"]
    curves = sorted(tuple(line.get_ydata()) for line in ax_size.get_lines())
    want = sorted(tuple(float(v) for v in json.loads(r["rashomon_count_by_epsilon"]).values())
                  for r in ours)
    assert curves == want  # one line per cell, its sizes as recorded
    bars = sorted(tuple(np.round(seg[:, 1], 9)) for c in ax_acc.collections
                  for seg in c.get_segments())
    assert bars == sorted((round(r["rashomon_test_accuracy_min"], 9),
                           round(r["rashomon_test_accuracy_max"], 9)) for r in ours)
    best = sorted(float(line.get_ydata()[0]) for line in ax_acc.get_lines())
    assert best == pytest.approx(sorted(r["test_accuracy"] for r in ours))
