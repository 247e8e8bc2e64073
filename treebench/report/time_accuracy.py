"""Training accuracy against fit time, one marker per setting: the accuracy-vs-time figure of
GOSDT with guesses (McTavish et al., AAAI 2022, Figure 1).

Figure 1 of the paper plots, for COMPAS at λ = 0.001, the training accuracy of GOSDT and DL8.5
against their run time, with no guess, the threshold guess, and threshold + lower-bound guesses
at several depth limits: guessing moves a setting left (faster) at about the same height (same
accuracy). Here, per dataset: the mean ``fit_seconds`` over finished cells on a log x axis, the
mean ``train_accuracy`` on the y axis, one marker per setting: colour per algorithm label,
shape per binarizer (the threshold guess is a binarizer), each numbered and named with its
varying parameters (depth limit, λ, ...) in the note: settings of one accuracy at about one
time sit at one spot, where names would overlap, and share a number (``1-3``). Settings where the solver stopped at its own time limit in
some cell get hollow markers (their time is the limit, their tree an anytime tree).

Drawn only for datasets with settings of a regularised optimal solver (a ``param_regularization``
column: `gosdt`, `gosdt-ref`), the solvers the guesses are for. Nothing is computed but means:
`aggregate.aggregate` did that.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from treebench.report.aggregate import Results, distinct, params_text, varying_columns
from treebench.results.values import NA
from treebench.report.figures import FigureJob, dataset_stem, make_job, register_figures
from treebench.report.figures import line_colors, finish_figure, new_figure, MARKERS
from treebench.report.figures import add_legend, place_labels, point_key

X, Y = "fit_seconds", "train_accuracy"
GUESS_PARAM = "param_regularization"


def time_accuracy_settings(results: Results, dataset: str) -> pd.DataFrame:
    """The settings of ``dataset`` the figure draws: those with a mean fit time > 0 and a mean
    training accuracy, when any setting of the dataset has a regularisation parameter."""
    s = results.settings
    if s.empty or GUESS_PARAM not in s or f"{X}_mean" not in s or f"{Y}_mean" not in s:
        return s.iloc[:0]
    s = s[s["dataset"] == dataset]
    has_reg = s[GUESS_PARAM].map(lambda v: v is not NA and v is not None and v == v)
    if not bool(has_reg.any()):
        return s.iloc[:0]
    x = pd.to_numeric(s[f"{X}_mean"], errors="coerce")
    y = pd.to_numeric(s[f"{Y}_mean"], errors="coerce")
    return s[np.isfinite(x) & (x > 0) & np.isfinite(y)]


def time_accuracy_figure(results: Results, dataset: str) -> Any | None:
    """The figure for ``dataset``; None when fewer than two settings can be drawn."""
    s = time_accuracy_settings(results, dataset)
    if len(s) < 2:
        return None
    algs = distinct(s["algorithm_label"])
    bins = distinct(s["binarizer"])
    colors = line_colors(len(algs))
    fig, ax = new_figure()
    shown = varying_columns(s, results.key_columns)
    points, texts = [], []
    for i in range(len(s)):
        row = s.iloc[i]
        a = algs.index(row["algorithm_label"])
        b = bins.index(row["binarizer"])
        hollow = int(row.get("n_solver_timed_out", 0) or 0) > 0
        ax.scatter([float(row[f"{X}_mean"])], [float(row[f"{Y}_mean"])],
                   marker=MARKERS[b % len(MARKERS)], s=34, zorder=3,
                   facecolors="none" if hollow else colors[a], edgecolors=colors[a],
                   label=f"{row['algorithm_label']} · {row['binarizer']}")
        text = params_text(row, [c for c in shown if c.startswith("param_")])
        points.append((float(row[f"{X}_mean"]), float(row[f"{Y}_mean"])))
        texts.append(f"{row['algorithm_label']} · {row['binarizer']}"
                     + (f" ({text})" if text else ""))
    ax.set_xscale("log")
    # numbered points, their settings in the note: settings of one accuracy and similar times
    # sit at one spot, where their names would be written over one another
    key = point_key(ax, points, texts)
    handles, labels = ax.get_legend_handles_labels()
    uniq: dict[str, Any] = {}  # one legend entry per (algorithm, binarizer): the first marker
    for label, handle in zip(labels, handles):
        uniq.setdefault(label, handle)
    note = ("one marker per setting (mean over folds of finished cells); colour = algorithm, "
            "shape = binarizer; hollow = stopped at its time limit in some cell; "
            f"settings: {key.key}")
    finish_figure(fig, ax, f"{dataset}: training accuracy vs fit time",
            "train accuracy", "fit time (s, log scale)", note, 0)
    add_legend(fig, ax, list(uniq.values()), list(uniq.keys()), len(uniq))
    place_labels(fig, ax, key)
    return fig


def time_accuracy_jobs(results: Results) -> list[FigureJob]:
    """``figures/<dataset>__train_accuracy_vs_time.*`` for every dataset (drawn when it has
    regularised optimal-tree settings)."""
    if results.settings.empty or GUESS_PARAM not in results.settings:
        return []
    return [make_job(f"{dataset_stem(results, d)}__train_accuracy_vs_time", d, "train_accuracy_vs_time")
            for d in distinct(results.settings["dataset"])]


def _draw_time_accuracy(results: Results, job: FigureJob):
    fig = time_accuracy_figure(results, job.dataset)
    return None if fig is None else (fig, fig.axes[0].get_title())


register_figures("train_accuracy_vs_time", time_accuracy_jobs, _draw_time_accuracy)
