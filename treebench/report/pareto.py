"""Accuracy against tree size as Pareto plots: one marker per algorithm setting.

Every comparison paper of this field (Top-k Fig. 3, GOSDT-guesses Fig. 4, DPDT Table 2) plots
test accuracy against a size measure, number of leaves or expected path length (the mean number
of tests on the path of a test example), and asks which settings no other beats on both. Here,
per dataset: one marker per setting (colour and shape per algorithm, mean over folds and seeds
of finished cells), the Pareto front (settings with no other at most as large and at least as
accurate, one strictly) drawn as a step line, its points numbered and named in the note (names
of settings at one spot would overlap; they share a number such as ``1-3``). Settings left out
are counted in the note: those with no finished cell, and those whose learners have no size
(a random forest has no leaf count). The leaves axis is logarithmic when the sizes span a
factor of 10 or more (`figures.wide_range`). Nothing is computed but means:
`aggregate.aggregate` did that.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from treebench.report.aggregate import Results, params_text, varying_columns
from treebench.report.figures import line_colors, finish_figure, new_figure, MARKERS, size_metric
from treebench.report.figures import place_labels, point_key, wide_range
from treebench.report.tables import metric_label

#: size measures: (column, axis label, figure stem suffix); ``n_leaves`` stands for the
#: effective count where the results record it (`size_column`)
SIZES = (("n_leaves", "leaves (mean over folds)", "n_leaves"),
         ("expected_tests_test", "expected path length on test (tests per example)",
          "expected_path_length"))
MAX_LABELS = 8


def size_column(settings: pd.DataFrame, size_col: str) -> tuple[str, str | None]:
    """The column a size measure is read from, and its axis label when it differs: leaves are
    ``n_leaves_effective`` (same-label sibling leaves merged) where recorded, as in the other
    size plots (`figures.size_metric`): raw ``n_leaves`` counts redundant leaves that some
    learners (CART, greedy, Top-k) keep and others merge, so it would favour the latter."""
    if size_col == "n_leaves" and size_metric(settings) == "n_leaves_effective":
        return "n_leaves_effective", "leaves, same-label siblings merged (mean over folds)"
    return size_col, None


def pareto_front(size: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated points (smaller size and higher accuracy are better),
    sorted by size. A point is dominated when another has size <= and accuracy >=, with one
    of the two strict."""
    idx = [i for i in range(len(size)) if np.isfinite(size[i]) and np.isfinite(acc[i])]
    front = []
    for i in idx:
        dominated = any(
            size[j] <= size[i] and acc[j] >= acc[i] and (size[j] < size[i] or acc[j] > acc[i])
            for j in idx if j != i
        )
        if not dominated:
            front.append(i)
    return np.array(sorted(front, key=lambda i: (size[i], -acc[i])), dtype=int)


def pareto_figure(results: Results, dataset: str, size_col: str, xlabel: str,
                  metric: str = "test_accuracy") -> Any | None:
    """``metric`` against ``size_col`` on ``dataset``; None when there is nothing to draw."""
    s = results.settings[results.settings["dataset"] == dataset]
    size_col, label = size_column(s, size_col)
    xlabel = label or xlabel
    mcol, scol = f"{metric}_mean", f"{size_col}_mean"
    if mcol not in s or scol not in s:
        return None
    everything = s
    s = s[(s[f"{metric}_n"] > 0) & (s[f"{size_col}_n"] > 0)]
    if len(s) < 2:
        return None
    algs = sorted(set(s["algorithm_label"]))
    colors = line_colors(len(algs))
    fig, ax = new_figure()
    for a, alg in enumerate(algs):
        rows = s[s["algorithm_label"] == alg]
        ax.scatter(rows[scol].to_numpy(float), rows[mcol].to_numpy(float), color=colors[a],
                   marker=MARKERS[a % len(MARKERS)], s=30, alpha=0.85, label=alg, zorder=3)
    size = s[scol].to_numpy(float)
    acc = s[mcol].to_numpy(float)
    front = pareto_front(size, acc)
    # constant parameters say nothing; two splits of the dataset are told apart
    shown = varying_columns(s, ["split_label"] + results.key_columns)
    if wide_range(size):
        ax.set_xscale("log")
    texts = []
    for i in front[:MAX_LABELS]:
        text = params_text(s.iloc[i], shown)
        texts.append(f"{s.iloc[i]['algorithm_label']}" + (f" ({text})" if text else ""))
    if len(front):
        ax.step(size[front], acc[front], where="post", color="0.25", linewidth=1.0,
                linestyle="--", zorder=2, label="Pareto front")
    # the front's points are numbered (their names in the note): names written beside
    # points at one spot would lie on top of one another
    key = point_key(ax, [(size[i], acc[i]) for i in front[:MAX_LABELS]], texts)
    note = "one marker per setting (mean over folds and seeds of finished cells)"
    note += "".join(f"; {n}" for n in hidden_notes(everything, s, size_col))
    if key.key:
        note += f"; Pareto front: {key.key}"
    finish_figure(fig, ax, f"{dataset}: {metric_label(metric)} vs {xlabel.split(' (')[0]}",
            metric_label(metric), xlabel, note, len(algs) + 1)
    place_labels(fig, ax, key)
    return fig


def hidden_notes(settings: pd.DataFrame, drawn: pd.DataFrame, size_col: str) -> list[str]:
    """Why settings of ``settings`` are not among the ``drawn`` ones: no finished cell, or
    finished cells without a size (a random forest has no single tree to count leaves of)."""
    hidden = settings[~settings.index.isin(drawn.index)]
    failed = hidden[hidden["n_ok"] == 0]
    sizeless = hidden[(hidden["n_ok"] > 0) & (hidden[f"{size_col}_n"] == 0)]
    out = []
    if len(failed):
        out.append(f"{len(failed)} setting(s) with no finished cell not shown")
    if len(sizeless):
        what = "leaf count" if size_col.startswith("n_leaves") else "value of " + size_col
        algs = ", ".join(sorted({str(a) for a in sizeless["algorithm_label"]}))
        out.append(f"{len(sizeless)} setting(s) of {algs} not shown: their learners have no "
                   f"{what} (an ensemble, such as a random forest, is no single tree)")
    return out


def pareto_table(results: Results, dataset: str, size_col: str,
                 metric: str = "test_accuracy") -> pd.DataFrame:
    """The Pareto-optimal settings of ``dataset`` (for tests and tables), by the same size
    column as `pareto_figure` (`size_column`)."""
    s = results.settings[results.settings["dataset"] == dataset]
    size_col, _ = size_column(s, size_col)
    s = s[(s[f"{metric}_n"] > 0) & (s[f"{size_col}_n"] > 0)]
    front = pareto_front(s[f"{size_col}_mean"].to_numpy(float), s[f"{metric}_mean"].to_numpy(float))
    return s.iloc[front]
