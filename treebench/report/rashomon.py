"""The Rashomon-set figure: for each dataset with cells of a Rashomon-set learner (`rashomon`),
the size of the set against epsilon and the spread of test accuracy over the trees of the set,
per setting.

Upper panel: the set's size against epsilon, read off ``rashomon_count_by_epsilon`` (the size
at 0, 0.001, 0.002, 0.005, ... below the setting's epsilon and at it), one line per cell (fold)
and one colour per setting, on a log y axis when the sizes span a factor of 10 or more. A
dashed line is a set whose search stopped at a limit (its sizes count the trees found).

Lower panel: per setting and cell, the range of test accuracy over the trees of the set
(``rashomon_test_accuracy_min`` to ``_max``) as a bar and the best-objective tree's test
accuracy (``test_accuracy``: the learner predicts with it) as a marker. The range describes
the set on the test rows; its ends are trees picked by test accuracy, which no user could pick
without the test labels, and the figure's note says so. A hollow marker is a cell whose
analyses read a sample of the set (``rashomon_sampled``).

The set's columns are the learner's own results columns, not metrics, so this figure reads the
finished rows of the results table (one line or bar per cell) instead of the aggregated
settings; it draws them as they are and computes nothing but positions.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

from treebench.report.aggregate import (
    Results,
    distinct,
    normalized_keys,
    params_text,
    varying_columns,
)
from treebench.report.figures import (
    LABEL_WIDTH,
    MARKERS,
    FigureJob,
    agg_figure,
    fits_inside,
    line_colors,
    make_job,
    place_note,
    register_figures,
    results_stems,
    wide_range,
    wrap,
)
from treebench.results.values import sort_key, value_token

KIND = "rashomon_set"
CURVE = "rashomon_count_by_epsilon"
ACC_MIN, ACC_MAX, ACC_BEST = ("rashomon_test_accuracy_min", "rashomon_test_accuracy_max",
                              "test_accuracy")
#: bump when the drawing code changes (the report then redraws the figure)
VERSION = "1"
#: the columns the figure draws (its cache digest covers them)
DRAWN = (CURVE, "rashomon_complete", "rashomon_sampled", "rashomon_trees_analysed",
         "rashomon_count", ACC_MIN, ACC_MAX, ACC_BEST, "fold", "seed")
#: the figure's note on the accuracy panel
NOT_A_SELECTION = ("the lowest and highest test accuracy over the set describe the set on the "
                   "test rows: the trees at those ends are picked by their test accuracy, "
                   "which is not a selection on test data that a user could make (the learner "
                   "predicts with the best-objective tree, ●)")


def title(dataset: str) -> str:
    return f"{dataset}: Rashomon set size against epsilon, test accuracy in the set"


def rashomon_rows(results: Results, dataset: str | None = None) -> pd.DataFrame:
    """The finished rows (of ``dataset``) that hold a Rashomon set's size curve."""
    t = results.table
    if CURVE not in t.columns:
        return t.iloc[:0]
    keep = (t["status"].astype(str) == "ok") & t[CURVE].notna()
    if dataset is not None:
        keep &= t["dataset"].astype(str) == str(dataset)
    return t[keep.to_numpy(dtype=bool)]


def curve(value: Any) -> tuple[np.ndarray, np.ndarray]:
    """The (epsilons, sizes) of one cell's ``rashomon_count_by_epsilon`` JSON, finite
    epsilons only, in increasing order."""
    try:
        d = json.loads(value)
    except (TypeError, ValueError):
        return np.zeros(0), np.zeros(0)
    pairs = sorted((float(k), float(v)) for k, v in d.items() if np.isfinite(float(k)))
    return (np.array([p[0] for p in pairs], dtype=float),
            np.array([p[1] for p in pairs], dtype=float))


def settings_of(results: Results, rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """``[(label, rows)]``: the rows grouped into settings (dataset, split, binarizer,
    algorithm label and parameters), in the report's order, each labelled by its algorithm
    label and the parameters (and split or binarizer) that vary among them."""
    keys = normalized_keys(rows, results.key_columns)
    ident = list(keys.columns)
    token = ["\x1f".join(value_token(keys.at[i, c]) for c in ident) for i in keys.index]
    groups: dict[str, list[Any]] = {}
    for i, tok in zip(keys.index, token):
        groups.setdefault(tok, []).append(i)
    varying = [c for c in ("split", "binarizer") if len(distinct(keys[c])) > 1]
    varying += varying_columns(keys, results.key_columns)

    def order(ix: list[Any]) -> tuple:
        first = keys.loc[ix[0]]
        return (str(first["algorithm_label"]),
                tuple(sort_key(first[c]) for c in ["split", "binarizer"] + results.key_columns))

    out = []
    for ix in sorted(groups.values(), key=order):
        first = keys.loc[ix[0]]
        params = params_text(first, varying)
        label = str(first["algorithm_label"]) + (f" ({params})" if params else "")
        sub = rows.loc[ix]
        if "fold" in sub:
            sub = sub.iloc[sorted(range(len(sub)), key=lambda j: sort_key(sub["fold"].iloc[j]))]
        out.append((label, sub))
    return out


def rashomon_figure(results: Results, dataset: str) -> Any | None:
    """The two-panel figure of ``dataset``; None when it has no finished Rashomon-set cell."""
    from matplotlib.lines import Line2D

    rows = rashomon_rows(results, dataset)
    if rows.empty:
        return None
    groups = settings_of(results, rows)
    fig = agg_figure((7.6, 6.4))
    ax_size, ax_acc = fig.subplots(2, 1)
    colors = line_colors(len(groups))
    sizes: list[float] = []
    eps: list[float] = []
    incomplete = False
    sampled: list[str] = []  # "label: analysed of count trees" of the sampled cells
    for g, (label, sub) in enumerate(groups):
        named = False
        for _, r in sub.iterrows():
            x, y = curve(r[CURVE])
            if not len(x):
                continue
            done = r.get("rashomon_complete")
            partial = done is not None and done is not pd.NA and not bool(done)
            incomplete |= partial
            ax_size.plot(x, y, color=colors[g], marker=MARKERS[g % len(MARKERS)],
                         markersize=4, linewidth=1.2, linestyle="--" if partial else "-",
                         label=None if named else label)
            named = True
            sizes += y.tolist()
            eps += x.tolist()
    log_y = wide_range([v for v in sizes if v > 0])
    if log_y:
        ax_size.set_yscale("log")
    _count_ticks(ax_size, sizes, log_y)
    _epsilon_axis(ax_size, eps)
    fig.suptitle(title(dataset), fontsize="medium")
    ax_size.set_xlabel("epsilon (bound = (1 + epsilon) × optimal objective)")
    ax_size.set_ylabel("trees in the set" + (" (log scale)" if log_y else ""))

    ticks, tick_labels = [], []
    for g, (label, sub) in enumerate(groups):
        n = len(sub)
        offsets = (np.arange(n) - (n - 1) / 2) * (0.5 / max(n, 1)) if n > 1 else np.zeros(1)
        for k, (_, r) in enumerate(sub.iterrows()):
            x = g + float(offsets[k])
            lo, hi, best = (_number(r.get(c)) for c in (ACC_MIN, ACC_MAX, ACC_BEST))
            if lo is not None and hi is not None:
                ax_acc.vlines(x, lo, hi, color=colors[g], linewidth=3, alpha=0.55)
            was_sampled = _true(r.get("rashomon_sampled"))
            if was_sampled:
                sampled.append(f"{label}: {_count(r.get('rashomon_trees_analysed'))} of "
                               f"{_count(r.get('rashomon_count'))} trees")
            if best is not None:
                ax_acc.plot([x], [best], linestyle="none", marker="o", markersize=6,
                            color=colors[g], markeredgecolor=colors[g],
                            markerfacecolor="white" if was_sampled else colors[g], zorder=4)
        ticks.append(g)
        tick_labels.append(wrap(label, 18))
    # five settings' labels at "small" run into each other (their slots are ~14 characters)
    ax_acc.set_xticks(ticks, tick_labels, fontsize="small" if len(groups) <= 4 else "x-small")
    ax_acc.set_xlim(-0.6, len(groups) - 0.4)
    ax_acc.set_ylabel("test accuracy")
    handles = [Line2D([], [], color="0.35", linewidth=3, alpha=0.55,
                      label="range over the trees of the set"),
               Line2D([], [], color="0.35", marker="o", linestyle="none",
                      label="best-objective tree")]
    ax_acc.legend(handles=handles, fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    h, lab = ax_size.get_legend_handles_labels()
    if fits_inside(lab, len(groups)):
        ax_size.legend(fontsize="small", loc="best")
    else:  # beside the upper panel, under the title (a figure legend would reach the title)
        ax_size.legend(h, [wrap(t, LABEL_WIDTH) for t in lab],
                       fontsize="small" if len(groups) <= 12 else "x-small",
                       loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    notes = ["one line and one bar per cell (fold)", NOT_A_SELECTION]
    if incomplete:
        notes.append("dashed: the search stopped at a limit, sizes count the trees found")
    if sampled:
        which = "; ".join(dict.fromkeys(sampled)) if len(set(sampled)) <= 3 \
            else f"{len(sampled)} cells"
        notes.append(f"hollow marker: the analyses read a uniform sample of the set ({which}), "
                     "so the range drawn lies within the set's")
    if (rows["split"].astype(str) == "full").any():
        notes.append("split full: the test rows are the training rows")
    place_note(ax_acc, "setting", "; ".join(notes))
    return fig


def _count_ticks(ax: Any, sizes: list[float], log_y: bool) -> None:
    """Counts as plain numbers (``20``, ``1,098``), not powers of ten; on a log axis the
    ticks between the powers of ten are labelled too while the sizes span under two
    decades."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    def plain(v: float, _: Any = None) -> str:
        return f"{v:,.0f}" if v >= 1 else f"{v:g}"

    def two_three_five(v: float, _: Any = None) -> str:  # 2, 3, 5, 20, 30, 50, ...
        lead = round(v / 10 ** np.floor(np.log10(v))) if v > 0 else 0
        return plain(v) if lead in (2, 3, 5) else ""

    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    if log_y:
        pos = [v for v in sizes if v > 0]
        few = bool(pos) and max(pos) / min(pos) < 100
        ax.yaxis.set_minor_formatter(FuncFormatter(two_three_five) if few else NullFormatter())


def _epsilon_axis(ax: Any, eps: list[float]) -> None:
    """The epsilon axis: symmetric-log (linear around 0, which the curves start at) when the
    positive epsilons span a factor of 20 or more, else linear; ticks at the epsilons drawn
    when there are at most 12 of them."""
    from matplotlib.ticker import NullFormatter

    values = sorted(set(eps))
    pos = [e for e in values if e > 0]
    if pos and pos[-1] / pos[0] >= 20:
        if values[0] == 0:
            ax.set_xscale("symlog", linthresh=pos[0], linscale=0.5)
            ax.set_xlim(-0.25 * pos[0], pos[-1] * 1.3)
        else:
            ax.set_xscale("log")
    if 0 < len(values) <= 12:
        ax.set_xticks(values, [f"{e:g}" for e in values])
        ax.xaxis.set_minor_formatter(NullFormatter())


def _number(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if np.isfinite(x) else None


def _count(v: Any) -> str:
    x = _number(v)
    return "?" if x is None else f"{x:,.0f}"


def _true(v: Any) -> bool:
    return v is not None and v is not pd.NA and bool(v)


def rashomon_jobs(results: Results) -> list[FigureJob]:
    """``figures/<dataset>__rashomon_set.*`` for every dataset with a finished Rashomon-set
    cell; each job carries a digest of the rows it draws, so the figure is redrawn when they
    change (the report's cache otherwise follows the aggregated settings only)."""
    rows = rashomon_rows(results)
    if rows.empty:
        return []
    datasets = distinct(rows["dataset"])
    stems = results_stems(results)
    jobs = []
    for d in datasets:
        sub = rows[rows["dataset"].astype(str) == str(d)]
        cols = [c for c in ("cell_id", *DRAWN) if c in sub.columns]
        digest = hashlib.sha256(sub[cols].to_csv(index=False).encode()).hexdigest()[:16]
        jobs.append(make_job(f"{stems[str(d)]}__{KIND}", d, KIND, (digest, VERSION)))
    return jobs


def _draw(results: Results, job: FigureJob):
    """The size of each Rashomon set against epsilon and the test accuracy over its trees."""
    fig = rashomon_figure(results, job.dataset)
    return None if fig is None else (fig, title(job.dataset))


register_figures(KIND, rashomon_jobs, _draw)
