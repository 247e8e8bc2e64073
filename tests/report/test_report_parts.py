"""Unit tests of the report's parts: value ordering, sweep axes, figure contents, escaping."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.results import schema
from treebench.report.aggregate import load_results, sweep_axes
from treebench.results.values import NA, normalize_value, sort_key
from treebench.report.figures import axis_figure, leaves_figure
from treebench.report.tables import Display, latex_escape, to_latex, to_markdown

from .conftest import synthetic_table, write_results


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return load_results(write_results(tmp_path_factory.mktemp("parts") / "r", synthetic_table()))


def test_values_sort_numbers_then_strings_then_none():
    vals = ["all", None, 16, 2.5, 1, "best", NA]
    assert sorted(vals, key=sort_key) == [1, 2.5, 16, "all", "best", None, NA]
    assert normalize_value(np.int64(3)) == 3 and isinstance(normalize_value(np.int64(3)), int)
    assert normalize_value(4.0) == 4 and isinstance(normalize_value(4.0), int)
    assert normalize_value(float("nan")) is None
    assert normalize_value("all") == "all"
    assert normalize_value(0.25) == 0.25


def test_sweep_axes_are_params_with_several_values(results):
    axes = sweep_axes(results.settings, results.key_columns)
    assert axes == {"cart": ["param_max_depth"], "topk": ["param_k", "param_max_depth"]}
    # CART has no `k`: it is not applicable, which differs from a None value
    cart = results.settings[results.settings["algorithm_label"] == "cart"]
    assert all(v is NA for v in cart["param_k"])
    assert len(results.settings) == 2 * (4 + 1) * 3


def test_accuracy_vs_depth_has_one_line_per_k_plus_cart(results):
    fig = axis_figure(results, "car", "param_max_depth", ("test_accuracy",),
                      sweep_axes(results.settings, results.key_columns))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["cart", "topk (k=1)", "topk (k=2)", "topk (k=4)", "topk (k=all)"]
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "3", "4"]
    # the car k=all depth-4 setting lost 2 of 3 folds: drawn with a hollow marker at x=4
    hollow = [ln for ln in ax.get_lines() if ln.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and len(hollow[0].get_xdata()) == 1
    assert abs(hollow[0].get_xdata()[0] - 4.0) <= 0.125


def test_k_axis_is_categorical_with_all_last_and_excludes_cart(results):
    axes = sweep_axes(results.settings, results.key_columns)
    fig = axis_figure(results, "tic-tac-toe", "param_k", ("test_accuracy", "train_accuracy"),
                      axes)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "all"]
    labels = [t.get_text().replace("\n", " ") for t in fig.legends[0].get_texts()]  # wrapped
    # CART has no k: it is no line of its own, only a horizontal reference
    assert not any(lb.startswith("cart") and "[reference]" not in lb for lb in labels)
    assert "cart (max_depth=3) [reference]" in labels
    assert "topk (max_depth=3)" in labels and "train accuracy (dashed)" in labels
    # every tic-tac-toe k=all depth-4 cell timed out: a cross on the bottom edge at x = 3
    crosses = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
    assert crosses and all(len(ln.get_xdata()) == 1 and abs(ln.get_xdata()[0] - 3.0) <= 0.125
                           for ln in crosses)
    assert any("every cell of the setting failed" in t.get_text().replace("\n", " ")
               for t in ax.texts)


def test_fit_time_is_on_a_log_scale(results):
    fig = axis_figure(results, "car", "param_k", ("fit_seconds",),
                      sweep_axes(results.settings, results.key_columns))
    assert fig.axes[0].get_yscale() == "log"


def test_leaves_scatter_has_one_colour_per_algorithm(results):
    fig = leaves_figure(results, "car")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["cart", "topk"]
    assert ax.get_xlabel().startswith("leaves")


def test_latex_escapes_special_characters():
    assert latex_escape("a_b & 50% #1 $x$ {y} ~ ^") == (
        r"a\_b \& 50\% \#1 \$x\$ \{y\} \textasciitilde{} \textasciicircum{}")
    d = Display("t", ["data_set", "acc"], [["iris_50%", "0.9 ± 0.1"], ["x&y#", "–"]],
                ["l", "r"], [1])
    tex = to_latex(d)
    assert "data\\_set & acc \\\\" in tex
    assert "iris\\_50\\% & 0.9 $\\pm$ 0.1 \\\\" in tex
    assert "x\\&y\\# & -- \\\\" in tex
    lines = tex.splitlines()
    assert lines.index("\\midrule", lines.index("\\midrule") + 1) < lines.index(
        "x\\&y\\# & -- \\\\")  # a rule between datasets
    md = to_markdown(Display("t", ["a|b"], [["c|d"]], ["l"], []))
    assert "a\\|b" in md and "c\\|d" in md


def test_special_characters_in_names_reach_latex_escaped(tmp_path):
    t = synthetic_table().head(9).copy()
    t["dataset"] = "my_data#1&2%"
    res = write_results(tmp_path / "r", schema.conform(t.reset_index(drop=True)))
    from treebench.report import write_report

    paths = write_report(res, formats=["latex"], figures=False)
    tex = next(p for p in paths["latex"] if p.name == "test_accuracy.tex").read_text()
    assert "my\\_data\\#1\\&2\\%" in tex and "my_data#" not in tex


def test_none_is_a_value_and_absent_params_are_not_applicable(tmp_path):
    import json

    import pandas as pd

    from treebench.report import write_report

    from .conftest import _row

    rows = []
    for alg, params in [("cart", {"max_depth": 2}), ("cart", {"max_depth": None}),
                        ("random-forest", {"max_depth": 4, "n_estimators": 50})]:
        for f in (0, 1):
            r = _row("x", "wine", "cart", None, 2, f, "ok", None)
            r.pop("param_k")
            r.update(algorithm=alg, algorithm_params=json.dumps(params),
                     cell_id=f"{alg}-{params['max_depth']}-{f}",
                     param_max_depth=params["max_depth"],
                     param_n_estimators=params.get("n_estimators"))
            rows.append(r)
    res = write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows)))
    s = load_results(res).settings
    assert [repr(v) for v in s["param_max_depth"]] == ["2", "None", "4"]
    assert [repr(v) for v in s["param_n_estimators"]] == ["NA", "NA", "50"]
    paths = write_report(res, formats=["md"], figures=False)
    md = next(p for p in paths["md"] if p.name == "test_accuracy.md").read_text()
    assert "| wine | cart | None |  |" in md and "| wine | random-forest | 4 | 50 |" in md
    assert "nan" not in md.lower()


def test_failure_note_names_only_the_marks_drawn(results):
    axes = sweep_axes(results.settings, results.key_columns)
    car = axis_figure(results, "car", "param_max_depth", ("test_accuracy",), axes)
    notes = [t.get_text().replace("\n", " ") for t in car.axes[0].texts]  # wrapped lines
    assert any("hollow marker" in n and "every cell" not in n for n in notes)
    wine_like = axis_figure(results, "car", "param_k", ("n_leaves",), axes)
    assert not any("every cell" in t.get_text().replace("\n", " ")
                   for t in wine_like.axes[0].texts)
    leaves = leaves_figure(results, "tic-tac-toe")
    notes = [t.get_text().replace("\n", " ") for t in leaves.axes[0].texts]
    assert any("1 setting(s) where every cell failed are not shown" in n for n in notes)


def test_binarizers_make_separate_lines_and_table_columns(tmp_path):
    import json

    import pandas as pd

    from treebench.report.tables import summary_display

    from .conftest import _row

    rows = []
    for b in ("raw", "midpoints"):
        for depth in (2, 3):
            for f in (0, 1):
                r = _row("x", "wine", "cart", None, depth, f, "ok", None)
                r.pop("param_k")
                r.pop("bparam_n_thresholds")
                r.update(binarizer=b, binarizer_params=json.dumps({}),
                         cell_id=f"{b}-{depth}-{f}")
                rows.append(r)
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    fig = axis_figure(res, "wine", "param_max_depth", ("test_accuracy",),
                      sweep_axes(res.settings, res.key_columns))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["cart (binarizer=midpoints)", "cart (binarizer=raw)"]
    d = summary_display(res)
    assert d.header[:4] == ["dataset", "binarizer", "algorithm", "max_depth"]
    assert [r[1] for r in d.rows] == ["midpoints", "midpoints", "raw", "raw"]


def test_x_positions_numeric_mixed_and_zero_with_decades():
    from treebench.report.figures import _x_positions

    pos, ticks, labels, numeric = _x_positions([3, 1, 2, 1])
    assert numeric and ticks == [1.0, 2.0, 3.0] and labels == ["1", "2", "3"]
    pos, ticks, labels, numeric = _x_positions([None, 2, "all", 8])
    assert not numeric and labels == ["2", "8", "all", "None"] and ticks == [0, 1, 2, 3]
    pos, ticks, labels, numeric = _x_positions([0.0, 0.001, 0.1, 0.01])
    assert not numeric and labels == ["0", "0.001", "0.01", "0.1"]


def test_config_metrics_choose_the_tables():
    from treebench.report.aggregate import select_metrics

    recorded = ["train_accuracy", "test_accuracy", "test_roc_auc", "n_leaves", "depth",
                "expected_tests_test", "fit_seconds", "peak_rss_mb"]
    assert select_metrics(recorded, {}) == recorded
    cfg = {"config": {"metrics": ["accuracy", "expected_tests", "roc_auc"]}}
    assert select_metrics(recorded, cfg) == [
        "train_accuracy", "test_accuracy", "test_roc_auc", "expected_tests_test", "fit_seconds",
        "peak_rss_mb"]


def test_binarizer_params_show_as_bin_columns(tmp_path):
    import json

    import pandas as pd

    from treebench.report.tables import summary_display

    from .conftest import _row

    rows = []
    for n in (4, 8):
        for f in (0, 1):
            r = _row("x", "wine", "cart", None, 2, f, "ok", None)
            r.pop("param_k")
            r.update(binarizer="quantile", binarizer_params=json.dumps({"n_thresholds": n}),
                     bparam_n_thresholds=n, cell_id=f"q{n}-{f}")
            rows.append(r)
    res = load_results(write_results(tmp_path / "r", schema.conform(pd.DataFrame(rows))))
    d = summary_display(res)
    assert d.header[:3] == ["dataset", "algorithm", "bin.n_thresholds"]
    assert [r[2] for r in d.rows] == ["4", "8"]
    fig = axis_figure(res, "wine", "bparam_n_thresholds", ("test_accuracy",),
                      sweep_axes(res.settings, res.key_columns))
    assert fig.axes[0].get_xlabel().startswith("bin.n_thresholds")


def test_missing_metric_in_finished_cells_is_not_drawn_as_failure(tmp_path):
    import pandas as pd

    from treebench.report.aggregate import ERROR_BAR_NOTE

    t = synthetic_table()
    t = t[(t["dataset"] == "car") & (t["algorithm_label"] == "cart")].copy()
    t["n_leaves"] = pd.array([None] * len(t), dtype="Int64")  # e.g. an ensemble: no leaves
    res = load_results(write_results(tmp_path / "r", schema.conform(t.reset_index(drop=True))))
    axes = sweep_axes(res.settings, res.key_columns)
    assert axis_figure(res, "car", "param_max_depth", ("n_leaves",), axes) is None
    fig = axis_figure(res, "car", "param_max_depth", ("test_accuracy",), axes)
    notes = [t.get_text() for t in fig.axes[0].texts]
    assert notes == [ERROR_BAR_NOTE]  # nothing failed: no failure note, only what bars are
    assert leaves_figure(res, "car") is None


def test_error_bars_are_a_confidence_interval_that_stays_in_the_metrics_range():
    import numpy as np
    import pandas as pd

    from treebench.report.aggregate import error_bars

    rows = pd.DataFrame({"test_roc_auc_mean": [0.99, 0.5, 0.7], "test_roc_auc_std": [0.05, 0.1, 0.2],
                         "test_roc_auc_n": [5, 5, 1], "fit_seconds_mean": [0.01, 1, 1],
                         "fit_seconds_std": [0.5, 0, 0], "fit_seconds_n": [3, 3, 3]})
    lo, hi = error_bars(rows, "test_roc_auc")
    assert hi[0] == pytest.approx(0.01) and lo[0] > 0.05  # t(0.975, 4) * 0.05 / sqrt(5) = 0.062
    assert lo[1] == hi[1] == pytest.approx(2.776445 * 0.1 / np.sqrt(5), rel=1e-5)
    assert lo[2] == hi[2] == 0  # one value: no interval
    lo, hi = error_bars(rows, "fit_seconds")
    assert lo[0] == pytest.approx(0.01) and hi[0] > 0.5  # a time never goes below 0


def test_error_bars_use_student_t_quantiles_exactly():
    """The bars' quantile comes from scipy.special (lighter to import); it is the very number
    `scipy.stats.t.ppf` gives, for every count of folds."""
    import numpy as np
    import pandas as pd
    from scipy.stats import t

    from treebench.report.aggregate import error_bars

    n = np.arange(2, 300)
    rows = pd.DataFrame({"x_mean": np.zeros(len(n)), "x_std": np.ones(len(n)), "x_n": n})
    lo, hi = error_bars(rows, "x")
    want = t.ppf(0.975, n - 1) / np.sqrt(n)
    assert np.array_equal(lo, want) and np.array_equal(hi, want)


def test_a_report_comparing_learners_opens_on_accuracy_against_size_and_time():
    from pathlib import Path

    from treebench.report.figures import FigureInfo
    from treebench.report.html import headline_figures

    figs = [FigureInfo(d, f"{d}__{s}", s, {"png": Path(f"{d}__{s}.png")})
            for d in ("a", "b") for s in ("test_accuracy_vs_max_depth",
                                          "pareto_test_accuracy_vs_n_leaves",
                                          "train_accuracy_vs_time")]
    head = [f.stem for f in headline_figures(figs, 2, n_algorithms=3)]
    assert head[:4] == ["a__pareto_test_accuracy_vs_n_leaves", "b__pareto_test_accuracy_vs_n_leaves",
                        "a__train_accuracy_vs_time", "b__train_accuracy_vs_time"]
    assert [f.stem for f in headline_figures(figs, 2, n_algorithms=1)] == [
        "a__test_accuracy_vs_max_depth", "b__test_accuracy_vs_max_depth"]
