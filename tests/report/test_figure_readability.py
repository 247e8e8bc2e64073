"""Figures a reader can read: point labels never lie on top of one another nor leave the
axes (settings at one spot share a number, named in the note), a wide range of leaves is drawn
on a log axis, reference lines have names and looks of their own, a Pareto plot says why
settings are missing, and a critical-difference diagram keeps a learner's settings on
different binarizations apart."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pandas as pd

from tests.report.conftest import write_results
from treebench.report.aggregate import load_results
from treebench.report.critical_difference import score_matrix
from treebench.report.figures import RC, axis_figure, leaves_figure, save
from treebench.report.pareto import pareto_figure
from treebench.report.time_accuracy import time_accuracy_figure
from treebench.report.aggregate import sweep_axes
from treebench.results import schema


def _row(dataset, label, binarizer, params, fold, acc, leaves, secs=0.1, status="ok"):
    ok = status == "ok"
    return {
        "experiment": "e", "cell_id": f"{dataset}-{label}-{binarizer}-{params}-{fold}",
        "dataset": dataset, "split": "kfold", "fold": fold, "seed": 0,
        "binarizer": binarizer, "binarizer_params": json.dumps({}),
        "algorithm": label, "algorithm_params": json.dumps(params, sort_keys=True),
        "n_train": 100, "n_test": 30, "n_features": 4, "n_binary_features": 20, "n_classes": 2,
        "train_accuracy": acc if ok else None, "test_accuracy": acc - 0.01 if ok else None,
        "fit_seconds": secs if ok else None, "n_leaves": leaves if ok else None,
        "status": status, "error": None if ok else "boom", "timed_out": False,
        **{f"param_{k}": v for k, v in params.items()},
    }


def _crowded() -> pd.DataFrame:
    """Six regularised settings at one accuracy and nearly one time and size, two apart."""
    rows = []
    for fold in (0, 1):
        for j, (label, depth) in enumerate([("gosdt", 2), ("gosdt", 3), ("gosdt-lb-guess", 2),
                                            ("gosdt-lb-guess", 3), ("gosdt-ref", 2),
                                            ("gosdt-ref", 3)]):
            for binarizer in ("threshold-guess", "quantile"):
                rows.append(_row("wine", label, binarizer,
                                 {"regularization": 0.01, "max_depth": depth}, fold, 0.95,
                                 5, secs=0.05 * (1 + 0.01 * j)))
        rows.append(_row("wine", "cart", "raw", {"max_depth": 1}, fold, 0.7, 2, secs=0.001))
        rows.append(_row("wine", "cart", "raw", {"max_depth": 6}, fold, 0.97, 30, secs=0.002))
    return schema.conform(pd.DataFrame(rows))


def _labels(fig):
    """The point labels of a figure's axes: its texts but the note (placed on the figure)."""
    return [t for t in fig.axes[0].texts if t.xycoords != "figure fraction"]


def _note(fig) -> str:
    return next(t for t in fig.axes[0].texts if t.xycoords == "figure fraction"
                ).get_text().replace("\n", " ")


def _check_labels(fig, tmp_path):
    with matplotlib.rc_context(RC):
        save(fig, tmp_path / "f", "t", ("png",))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    labels = _labels(fig)
    assert labels
    boxes = [t.get_window_extent(renderer) for t in labels]
    inside = fig.axes[0].get_window_extent(renderer)
    for t, b in zip(labels, boxes):
        assert inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 \
            and b.y1 <= inside.y1, (t.get_text(), b, inside)
    for i in range(len(boxes)):
        for j in range(i):
            assert not boxes[i].overlaps(boxes[j]), (labels[i].get_text(), labels[j].get_text())
    return [t.get_text() for t in labels]


def test_time_accuracy_labels_are_numbers_that_never_overlap(tmp_path):
    res = load_results(write_results(tmp_path / "r", _crowded()))
    fig = time_accuracy_figure(res, "wine")
    texts = _check_labels(fig, tmp_path)
    # the twelve settings at one spot share one label; each number is named in the note
    assert "3-14" in texts
    note = _note(fig)
    for n in range(1, 15):
        assert f"[{n}] " in note
    assert "gosdt-lb-guess · quantile (max_depth=3" in note


def test_pareto_labels_are_numbers_that_never_overlap(tmp_path):
    res = load_results(write_results(tmp_path / "r", _crowded()))
    fig = pareto_figure(res, "wine", "n_leaves", "leaves (mean over folds)")
    texts = _check_labels(fig, tmp_path)
    assert len(texts) == len(set(texts))
    note = _note(fig)
    assert "Pareto front: [1] " in note


def _versus_k() -> pd.DataFrame:
    """Top-k against k beside CART at two depths on raw features and on a binarization."""
    rows = []
    for fold in (0, 1):
        for k in (1, 4):
            rows.append(_row("wine", "topk", "threshold-guess", {"k": k, "max_depth": 2}, fold,
                             0.9 + 0.01 * k, 4))
        for depth in (2, 4):
            for j, binarizer in enumerate(("raw", "threshold-guess")):
                rows.append(_row("wine", "cart", binarizer, {"max_depth": depth}, fold,
                                 0.8 + 0.02 * depth + 0.01 * j, 2 ** depth))
    return schema.conform(pd.DataFrame(rows))


def test_reference_lines_have_names_and_looks_of_their_own(tmp_path):
    res = load_results(write_results(tmp_path / "r", _versus_k()))
    sub = res.settings[res.settings["dataset"] == "wine"]
    fig = axis_figure(res, "wine", "param_k", ("test_accuracy",),
                      sweep_axes(sub, res.key_columns))
    ax = fig.axes[0]
    refs = [ln for ln in ax.get_lines() if ln.get_label().endswith("[reference]")]
    names = [ln.get_label() for ln in refs]
    assert len(refs) == 4 and len(set(names)) == 4, names
    assert "cart (binarizer=raw, max_depth=2) [reference]" in names, names
    looks = {(matplotlib.colors.to_hex(ln.get_color()), str(ln.get_linestyle())) for ln in refs}
    assert len(looks) == 4
    colors = {matplotlib.colors.to_hex(ln.get_color()) for ln in refs}
    assert len(colors) == 4  # not shades of grey told apart by a dotted or dashed line
    legend = [t.get_text().replace("\n", " ") for t in fig.legends[0].get_texts()]
    assert len(legend) == len(set(legend))


def test_a_wide_range_of_leaves_is_drawn_on_a_log_axis(tmp_path):
    rows = []
    for fold in (0, 1):
        rows.append(_row("wine", "cart", "raw", {"max_depth": 2}, fold, 0.85, 3))
        rows.append(_row("wine", "cart", "raw", {"max_depth": 3}, fold, 0.88, 6))
        rows.append(_row("wine", "ecart", "raw", {"max_depth": 3}, fold, 0.9, 130))
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    assert leaves_figure(res, "wine").axes[0].get_xscale() == "log"
    fig = pareto_figure(res, "wine", "n_leaves", "leaves (mean over folds)")
    assert fig.axes[0].get_xscale() == "log"
    # a narrow range stays linear
    narrow = [r for r in rows if r["algorithm"] == "cart"]
    res = load_results(write_results(tmp_path / "n", schema.conform(pd.DataFrame(narrow))))
    assert leaves_figure(res, "wine").axes[0].get_xscale() == "linear"


def test_a_pareto_plot_says_which_settings_have_no_leaf_count(tmp_path):
    rows = []
    for fold in (0, 1):
        rows.append(_row("wine", "cart", "raw", {"max_depth": 2}, fold, 0.85, 3))
        rows.append(_row("wine", "cart", "raw", {"max_depth": 3}, fold, 0.88, 6))
        rows.append(_row("wine", "random-forest", "raw", {"max_depth": 4}, fold, 0.95, None))
        rows.append(_row("wine", "random-forest", "raw", {"max_depth": 5}, fold, 0.96, None))
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    note = _note(pareto_figure(res, "wine", "n_leaves", "leaves (mean over folds)"))
    assert "no finished cell" not in note  # every cell finished
    assert "2 setting(s) of random-forest not shown: their learners have no leaf count" in note


def test_critical_difference_keeps_a_learners_binarizations_apart(tmp_path):
    rows = []
    for dataset in ("wine", "iris", "car"):
        for fold in (0, 1):
            for binarizer, acc in (("raw", 0.9), ("threshold-guess", 0.8)):
                rows.append(_row(dataset, "cart", binarizer, {"max_depth": 2}, fold, acc, 4))
            rows.append(_row(dataset, "topk", "threshold-guess", {"max_depth": 2}, fold, 0.85,
                             4))
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    scores, left_out = score_matrix(res)
    assert sorted(scores.columns) == ["cart · raw", "cart · threshold-guess", "topk"]
    assert not left_out
    assert np.allclose(scores["cart · raw"], 0.89)  # its own mean, not one over both


def test_critical_difference_names_stay_inside_the_figure(tmp_path):
    from treebench.report.critical_difference import cd_figure, ranking

    rows = []
    for d, dataset in enumerate(("wine", "iris", "car", "zoo")):
        for fold in (0, 1):
            for k, label in enumerate(("topk", "gosdt-lb-guess", "dpdt", "cart")):
                for depth in (2, 3):
                    rows.append(_row(dataset, label, "threshold-guess",
                                     {"max_depth": depth, "min_samples_leaf": 1}, fold,
                                     0.7 + 0.02 * ((k + d) % 4) + 0.01 * depth, 4))
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    fig = cd_figure(ranking(res, "test_accuracy", {}, "all settings"))
    with matplotlib.rc_context(RC):
        save(fig, tmp_path / "cd", "t", ("png",))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    texts = [t for t in fig.axes[0].texts if t.get_text()]
    assert len(texts) >= 8
    for t in texts:
        box = t.get_window_extent(renderer)
        assert 4 <= box.x0 and box.x1 <= fig.bbox.width - 4, (t.get_text(), box, fig.bbox.width)


def test_leaves_against_depth_go_on_a_log_axis_when_a_reference_is_far_above(tmp_path):
    rows = []
    for fold in (0, 1):
        for depth in (2, 3):
            rows.append(_row("wine", "cart", "raw", {"max_depth": depth}, fold, 0.85, 2 ** depth))
        rows.append(_row("wine", "ecart", "raw", {}, fold, 0.9, 130))
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    sub = res.settings[res.settings["dataset"] == "wine"]
    fig = axis_figure(res, "wine", "param_max_depth", ("n_leaves",),
                      sweep_axes(sub, res.key_columns))
    assert any(ln.get_label() == "ecart [reference]" for ln in fig.axes[0].get_lines())
    assert fig.axes[0].get_yscale() == "log"
