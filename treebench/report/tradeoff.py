"""The λ trade-off figure of NGI (Zhang & Gionis, DMKD 2023, §6, Fig. 2): ROC AUC and expected
test cost against the regularisation weight λ, one line per method, per dataset.

Fig. 2 of the paper shows, for EC4.5 and ECART, how λ trades discrimination for complexity:
"ROC AUC is on validation data, and expected tree height or tree size on training data"; large
λ approaches C4.5/CART, λ = 0 is the ASR greedy rule. Here the upper panel is the mean ROC AUC
(validation AUC when the cells have validation rows, as in the paper, otherwise test AUC) and the
lower panel the mean expected cost on the training rows (tests per row under unit costs), both
over folds and seeds with one standard deviation as error bars.

A line is an algorithm setting (label and every other parameter fixed) seen at two or more
values of ``param_lam``. Entries that *choose* λ per cell (a ``tune`` step on ``lam`` in the
manifest's config) are not lines: their λ differs from seed to seed, so a line through them
would mix seeds; they appear as single markers at the mean chosen λ, which is where the tuning
protocol lands on the curve (geometric mean: λ grids are powers of ten). Nothing is computed but means: `aggregate.aggregate` did that.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from treebench.report.aggregate import (
    ERROR_BAR_NOTE,
    Results,
    distinct,
    error_bars,
    params_text,
    varying_columns,
)
from treebench.results.values import NA
from treebench.report.figures import FigureJob, dataset_stem, make_job, register_figures
from treebench.report.figures import line_colors, wrap, add_legend, agg_figure, MARKERS, NOTE_WIDTH
from treebench.report.tables import metric_label

LAM = "param_lam"
COST = "expected_cost_train"
AUCS = ("val_roc_auc", "test_roc_auc")


def tuned_labels(results: Results, param: str = "lam") -> set[str]:
    """Labels of the config's algorithm entries that tune ``param`` inside each cell."""
    config = (results.manifest or {}).get("config") or {}
    out = set()
    for entry in config.get("algorithms") or []:
        if not isinstance(entry, dict):
            continue
        steps = entry.get("tune") or []
        steps = [steps] if isinstance(steps, dict) else steps
        if any(isinstance(s, dict) and s.get("param") == param for s in steps):
            out.add(str(entry.get("label") or entry.get("name")))
    return out


def _has_values(s: pd.DataFrame, metric: str) -> bool:
    return f"{metric}_n" in s and int(s[f"{metric}_n"].sum()) > 0


def tradeoff_lines(results: Results, dataset: str) -> tuple[list[tuple[str, pd.DataFrame]],
                                                             pd.DataFrame]:
    """``([(line label, settings sorted by λ)], tuned settings)`` of ``dataset``: the λ sweeps
    (two or more λ values, other parameters fixed) and the settings of entries tuning λ."""
    s = results.settings
    if LAM not in s:
        return [], s.iloc[:0]
    s = s[(s["dataset"] == dataset) & s[LAM].map(lambda v: v is not NA and v is not None)]
    tuned = tuned_labels(results)
    is_tuned = s["algorithm_label"].isin(tuned)
    sweeps, tuned_rows = s[~is_tuned], s[is_tuned]
    others = [c for c in varying_columns(sweeps, results.key_columns) if c != LAM] \
        if len(sweeps) else []
    lines = []
    group_cols = ["algorithm_label"] + others
    for _, rows in sweeps.groupby(
            [sweeps[c].map(str) for c in group_cols], sort=True):
        if rows[LAM].map(float).nunique() < 2:
            continue
        rows = rows.assign(_lam=rows[LAM].map(float)).sort_values("_lam")
        text = params_text(rows.iloc[0], others)
        lines.append((f"{rows.iloc[0]['algorithm_label']}" + (f" ({text})" if text else ""), rows))
    return lines, tuned_rows


def tradeoff_figure(results: Results, dataset: str) -> Any | None:
    """The two-panel figure of ``dataset``; None when it has no λ sweep."""
    lines, tuned = tradeoff_lines(results, dataset)
    if not lines:
        return None
    allrows = pd.concat([r for _, r in lines])
    auc = next((m for m in AUCS if _has_values(allrows, m)), None)
    if auc is None and not _has_values(allrows, COST):
        return None
    fig = agg_figure((7.6, 6.0))
    ax_auc, ax_cost = fig.subplots(2, 1, sharex=True)
    n_tuned = tuned["algorithm_label"].nunique() if len(tuned) else 0
    colors = line_colors(len(lines) + n_tuned)
    lams = allrows["_lam"].to_numpy(float)
    for i, (label, rows) in enumerate(lines):
        x = rows["_lam"].to_numpy(float)
        named = False  # the legend names a line on the first panel it is drawn on
        for ax, metric in ((ax_auc, auc), (ax_cost, COST)):
            if metric is None or not _has_values(rows, metric):
                continue
            mean = rows[f"{metric}_mean"].to_numpy(float)
            bars = error_bars(rows, metric)
            ok = np.isfinite(mean)
            ax.errorbar(x[ok], mean[ok], yerr=bars[:, ok], color=colors[i],
                        marker=MARKERS[i % len(MARKERS)], capsize=2.5, markersize=5,
                        linewidth=1.3, label=None if named else label)
            named = True
    if len(tuned):
        # one marker per tuned entry: its cells' mean chosen λ and mean metrics
        for j, (alg, rows) in enumerate(tuned.groupby("algorithm_label", sort=True)):
            w = rows["n_ok"].to_numpy(float)
            if w.sum() == 0:
                continue
            chosen = rows[LAM].map(float).to_numpy(float)
            # geometric mean on a log axis (λ grids are powers of ten), arithmetic with a 0
            x = float(np.exp(np.average(np.log(chosen), weights=w))) if (chosen > 0).all() \
                else float(np.average(chosen, weights=w))
            named = False
            for ax, metric in ((ax_auc, auc), (ax_cost, COST)):
                if metric is None or not _has_values(rows, metric):
                    continue
                vals = rows[f"{metric}_mean"].to_numpy(float)
                n = rows[f"{metric}_n"].to_numpy(float)
                y = float(np.nansum(vals * n) / n.sum())
                # a colour and a legend entry of its own: names in the legend never overlap
                ax.plot([x], [y], linestyle="none", marker="*", markersize=11,
                        color=colors[len(lines) + j], markeredgecolor="0.1", zorder=6,
                        label=None if named else f"{alg} (tuned)")
                named = True
    pos = lams[lams > 0]
    if len(pos) and (lams == 0).any():
        ax_cost.set_xscale("symlog", linthresh=float(pos.min()))
    elif len(pos) and pos.max() / pos.min() >= 20:
        ax_cost.set_xscale("log")
    ax_auc.set_title(f"{dataset}: ROC AUC and expected cost against λ")
    ax_auc.set_ylabel(metric_label(auc) if auc else "ROC AUC")
    ax_cost.set_ylabel("expected cost on train\n(tests per row, weighted by cost)")
    # a line without AUC values is named on the cost panel (the AUC panel may be empty)
    (h_auc, l_auc), (h_cost, l_cost) = (ax.get_legend_handles_labels() for ax in (ax_auc, ax_cost))
    handles, labels = h_auc + h_cost, l_auc + l_cost
    add_legend(fig, ax_auc if h_auc else ax_cost, handles, labels, len(lines) + n_tuned)
    note = f"mean over folds and seeds, {ERROR_BAR_NOTE}" + (
        "; ★: entries that tune λ, at their mean chosen λ" if len(tuned) else "")
    note = wrap(note + " (Zhang & Gionis 2023, Fig. 2)", NOTE_WIDTH)
    ax_cost.set_xlabel("λ (weight of the impurity term)" + "\n" * (note.count("\n") + 1))
    fig.text(0.01, 0.005, note, fontsize=7, color="0.3")
    return fig


def tradeoff_jobs(results: Results) -> list[FigureJob]:
    """``figures/<dataset>__lambda_tradeoff.*`` for every dataset (drawn when it sweeps λ)."""
    if LAM not in results.settings:
        return []
    return [make_job(f"{dataset_stem(results, d)}__lambda_tradeoff", d, "lambda_tradeoff")
            for d in distinct(results.settings["dataset"])]


def _draw_tradeoff(results: Results, job: FigureJob):
    fig = tradeoff_figure(results, job.dataset)
    return None if fig is None else (fig, f"{job.dataset}: ROC AUC and expected cost against λ")


register_figures("lambda_tradeoff", tradeoff_jobs, _draw_tradeoff, order=0)
