"""Figures from the aggregated settings (matplotlib, Agg, PNG and SVG with fixed metadata).

Per dataset and sweep axis: each metric against the axis with one line per combination of the
algorithm's other swept values (Top-k paper, Figure 2: test accuracy against depth, one line
per k), train and test accuracy together (Figure 4: both against k at each depth), fit time on a
log scale; and per dataset, test accuracy against the number of leaves (one colour per
algorithm). Error bars are the 95 % confidence interval of the mean over folds, clipped to the
metric's range (`aggregate.error_bars`, said in each figure's note); lines are shifted sideways by
at most an eighth of the smallest gap between x values so that they do not hide one another.
A hollow marker means some cells of that setting failed; a cross on the bottom edge means all
of them did. Nothing here computes a metric: every number comes from `aggregate.aggregate`.
"""

from __future__ import annotations

import hashlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from treebench.utils.atomic import files_key, read_json_object, temp_path, write_text

from treebench.report.aggregate import (
    ERROR_BAR_NOTE,
    LINE_ONLY,
    Results,
    column_label,
    distinct,
    error_bars,
    fmt_value,
    is_number,
    report_option,
    sweep_axes,
    varying_columns,
)
from treebench.results.values import NA, sort_key, value_token
from treebench.report.tables import metric_label
from treebench.utils.text import slug
from treebench.execute.lifetime import forked_worker_init
from treebench.registry import FIGURES

AXIS_METRICS = ("test_accuracy", "train_accuracy", "test_r2", "train_r2", "n_leaves", "fit_seconds")
LOG_METRICS = frozenset({"fit_seconds", "binarize_seconds", "compile_seconds"})
FIGSIZE = (7.6, 4.4)
DPI = 110
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":")
RC = {
    "svg.hashsalt": "treebench-report",
    "svg.fonttype": "path",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    # every text as written: a label or dataset name with dollar signs (`cost $\x$`, `$5 and
    # $6`) was read as math (drawn as a formula, or a parse error that stopped the report);
    # log-axis ticks are plain text already (`treebench.report.ticks`)
    "text.parse_math": False,
}
PARTIAL_NOTE = "hollow marker: some cells of the setting failed (its mean is over fewer folds)"
ALL_NOTE = "× on the bottom edge: every cell of the setting failed"


def _fail_note(flags: int) -> str:
    """The legend of the failure marks present (bit 1: hollow markers, bit 2: crosses)."""
    return "; ".join([ERROR_BAR_NOTE] + [n for bit, n in ((1, PARTIAL_NOTE), (2, ALL_NOTE))
                                          if flags & bit])


@dataclass
class FigureInfo:
    """One written figure: where it is and what it shows."""

    dataset: str
    stem: str
    title: str
    paths: dict[str, Path] = field(default_factory=dict)  # "png"/"svg" -> path


def dataset_stems(datasets: list[str]) -> dict[str, str]:
    """A file-name stem per dataset, unique and stable: the slug of the name, plus a short hash
    of the full name where two names share a slug (``a b`` and ``a-b``) or differ only in case
    (case-insensitive file systems)."""
    import hashlib

    by_slug: dict[str, list[str]] = {}
    for d in datasets:
        by_slug.setdefault(slug(d).lower(), []).append(d)
    out = {}
    for group in by_slug.values():
        for d in group:
            if len(set(group)) > 1:
                out[d] = f"{slug(d)}-{hashlib.sha256(d.encode()).hexdigest()[:8]}"
            else:
                out[d] = slug(d)
    return out


def results_stems(results: Results) -> dict[str, str]:
    """`dataset_stems` over every dataset of the results, those with rows and those of the
    settings alone (a cell that never ran): the stems all figure kinds use, computed once per
    results (``Results.stems``)."""
    if results.stems is None:
        names = [str(d) for frame in (results.table, results.settings) if "dataset" in frame
                 for d in distinct(frame["dataset"])]
        results.stems = dataset_stems(list(dict.fromkeys(names)))
    return results.stems


def dataset_stem(results: Results, dataset: Any) -> str:
    """The file-name stem of ``dataset``'s figures of every kind (`results_stems`): two names
    with one slug get a stem each in all of them."""
    return results_stems(results).get(str(dataset)) or dataset_stems([str(dataset)])[str(dataset)]


def check_unique(infos: list[FigureInfo]) -> None:
    """Raise when two figures would be written to the same file (one would hide the other)."""
    seen: dict[str, str] = {}
    for info in infos:
        for p in info.paths.values():
            key = str(p).lower()
            if key in seen:
                raise RuntimeError(f"figures `{seen[key]}` and `{info.title}` share the file {p}")
            seen[key] = info.title


@dataclass
class _Line:
    label: str
    algorithm: str
    rows: pd.DataFrame  # settings of this line, sorted along the x axis


def _lines(s: pd.DataFrame, axis: str, axes: dict[str, list[str]]) -> list[_Line]:
    """Lines of a figure against ``axis`` for the settings ``s`` of one dataset."""
    out = []
    for alg in sorted(set(s["algorithm_label"])):
        sub = s[(s["algorithm_label"] == alg) & s[axis].map(lambda v: v is not NA)]
        if sub.empty:
            continue
        # split/binarizer make separate lines only where they vary on this dataset
        others = [c for c in LINE_ONLY if len(distinct(sub[c])) > 1]
        others += [c for c in axes.get(alg, []) if c != axis]
        groups: dict[str, list[int]] = {}
        for i, r in sub.iterrows():
            groups.setdefault("\x1f".join(value_token(r[c]) for c in others), []).append(i)
        ordered = sorted(groups.values(),
                         key=lambda ix: tuple(sort_key(sub.loc[ix[0], c]) for c in others))
        for ix in ordered:
            rows = sub.loc[ix]
            rows = rows.iloc[sorted(range(len(rows)), key=lambda j: sort_key(rows.iloc[j][axis]))]
            first = rows.iloc[0]
            parts = [f"{column_label(c)}={fmt_value(first[c])}" for c in others
                     if first[c] is not NA]
            out.append(_Line(alg + (f" ({', '.join(parts)})" if parts else ""), alg, rows))
    return out


def _x_positions(values: list[Any]) -> tuple[dict[str, float], list[float], list[str], bool]:
    """Map axis values to x positions: numeric axes keep their values; mixed ones (numbers and
    "all" or None) become categorical with the strings after the numbers, and so do numbers
    that include 0 and span two decades or more (``0, 0.001, 0.01, 0.1``), which neither a
    linear nor a log axis shows well."""
    vals = distinct(values)
    numeric = all(is_number(v) for v in vals)
    positive = [float(v) for v in vals if is_number(v) and v > 0]
    if numeric and any(v == 0 for v in vals) and positive and max(positive) / min(positive) >= 100:
        numeric = False
    if numeric:
        pos = {value_token(v): float(v) for v in vals}
        return pos, [float(v) for v in vals], [fmt_value(v) for v in vals], True
    pos = {value_token(v): float(i) for i, v in enumerate(vals)}
    return pos, list(pos.values()), [fmt_value(v) for v in vals], False


def _dodge(ticks: list[float], n_lines: int, log_x: bool) -> np.ndarray:
    """Sideways offsets of the lines (additive, or in decades on a log axis) spreading them
    over a quarter of the smallest gap between x values, so that error bars stay visible."""
    if n_lines < 2:
        return np.zeros(max(n_lines, 1))
    t = np.unique(np.log10(ticks) if log_x else np.asarray(ticks, dtype=float))
    gap = float(np.diff(t).min()) if len(t) > 1 else 1.0
    return 0.25 * gap * (np.arange(n_lines) / (n_lines - 1) - 0.5)


def line_colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    if n <= 10:
        cmap = colormaps["tab10"]
        return [cmap(i) for i in range(n)]
    cmap = colormaps["viridis"]
    return [cmap(x) for x in np.linspace(0.0, 0.92, n)]


def agg_figure(figsize: tuple[float, float], dpi: int = DPI) -> Any:
    """A figure with the constrained layout, drawn by Agg from the start: its layout and its
    PNG then share one renderer, so each text is measured once (a figure made without a canvas
    is laid out on one renderer and saved on another, and every tick label, legend entry and
    title is measured again, a tenth of a figure's time). The pixels are the same."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def agg_renderer(fig: Any) -> Any:
    """The Agg renderer ``fig`` is saved with (its own canvas's, made by `agg_figure`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    return canvas.get_renderer()


def lay_out_once(fig: Any) -> None:
    """Run ``fig``'s layout engine now and keep what it computed (axes boxes, and so the
    transforms as the figure will be saved): texts can then be measured and placed against
    it, and `save` lays the figure out no more.

    The engine is removed, not set to ``"none"``: ``"none"`` leaves a placeholder engine, and
    with any engine in place `savefig` first draws the whole figure without rendering it (every
    text measured and every tick made once more: 13 % of the Python calls that draw the 25
    figures of a 120-cell CART grid). Without one it renders once. The pixels are the same."""
    import matplotlib

    from treebench.report.ticks import unicode_log_ticks

    unicode_log_ticks(fig)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    # `set_layout_engine(None)` reads these two settings and removes the engine when both are off
    with matplotlib.rc_context({"figure.autolayout": False,
                                "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def new_figure() -> Any:
    fig = agg_figure(FIGSIZE)
    return fig, fig.add_subplot(1, 1, 1)


def _plot_series(ax: Any, x: np.ndarray, rows: pd.DataFrame, metric: str, color: Any,
                 marker: str, ls: str, label: str | None, alpha: float = 1.0) -> int:
    """One line with error bars; failed settings marked. Return the marks drawn: 1 for hollow
    markers (some cells failed), 2 for crosses (every cell failed)."""
    from matplotlib.transforms import blended_transform_factory

    mean = rows[f"{metric}_mean"].to_numpy(dtype=float)
    bars = error_bars(rows, metric)
    failed = (rows["n_failed"].to_numpy() > 0) | _folds_differ(rows)
    ok = ~np.isnan(mean)
    ax.errorbar(x[ok], mean[ok], yerr=bars[:, ok], color=color, marker=marker, linestyle=ls,
                capsize=2.5, markersize=5, linewidth=1.3, label=label, alpha=alpha)
    part = failed & ok
    if part.any():
        ax.plot(x[part], mean[part], linestyle="none", marker=marker, markersize=7,
                markerfacecolor="white", markeredgecolor=color, markeredgewidth=1.5, zorder=5)
    # no value because no cell finished (a value missing from finished cells is just skipped)
    lost = ~ok & (rows["n_ok"].to_numpy() == 0)
    if lost.any():
        trans = blended_transform_factory(ax.transData, ax.transAxes)
        ax.plot(x[lost], np.full(lost.sum(), 0.02), linestyle="none", marker="x",
                markersize=8, color=color, transform=trans, clip_on=False, zorder=6)
    return (1 if part.any() else 0) | (2 if lost.any() else 0)


def _folds_differ(rows: pd.DataFrame) -> np.ndarray:
    if "folds_differ" not in rows:
        return np.zeros(len(rows), dtype=bool)
    return rows["folds_differ"].to_numpy(dtype=bool)


MAX_REFERENCES = 6
#: the line styles of reference lines (their colours come after the lines' own)
REFERENCE_STYLES = (":", "--", "-.", (0, (5, 2, 1, 2, 1, 2)))


def reference_label(r: pd.Series, columns: list[str]) -> str:
    params = ", ".join(f"{column_label(c)}={fmt_value(r[c])}" for c in columns
                       if r[c] is not NA)
    return f"{r['algorithm_label']}" + (f" ({params})" if params else "") + " [reference]"


def _reference_lines(ax: Any, s: pd.DataFrame, axis: str, metric: str,
                     key_columns: list[str], first_color: int = 0) -> tuple[int, int]:
    """Horizontal reference lines for the settings of algorithms that do not have ``axis``
    (CART or an optimal solver in a plot against k; an unlimited-depth learner against depth),
    so that a reader sees the gap at a glance. Each has a colour of its own (after the
    ``first_color`` colours of the figure's lines) and a name of its own: the parameters that
    vary among them, the binarizer too when they differ in it (CART on raw features and on a
    binarization are two references). At most `MAX_REFERENCES`; returns (drawn, left out)."""
    refs = s[s[axis].map(lambda v: v is NA) & (s[f"{metric}_n"] > 0)]
    if refs.empty:
        return 0, 0
    left_out = max(len(refs) - MAX_REFERENCES, 0)
    refs = refs.iloc[:MAX_REFERENCES]
    columns = [c for c in ["split_label", "binarizer"] if len(distinct(refs[c])) > 1]
    columns += [c for c in varying_columns(s, key_columns)
                if not column_label(c).startswith("bin.")]
    colors = line_colors(first_color + len(refs))[first_color:]
    for i in range(len(refs)):
        r = refs.iloc[i]
        ax.axhline(float(r[f"{metric}_mean"]), color=colors[i],
                   linestyle=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], linewidth=1.2,
                   label=reference_label(r, columns), zorder=1)
    return len(refs), left_out


#: characters of a legend label per line, and of the 7-point note under a figure per line (its
#: width); longer text is wrapped at spaces, so that neither pushes the axes out of the figure
LABEL_WIDTH = 36
NOTE_WIDTH = 128


def wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters at spaces (a longer word
    keeps its line)."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) if lines else text


def finish_figure(fig: Any, ax: Any, title: str, ylabel: str, xlabel: str, note: str,
            n_legend: int) -> None:
    # the title at the top of the axes, where matplotlib's automatic placement puts it anyway
    # (these figures have no ticks or labels above the axes); the automatic placement measures
    # every tick label again at each layout and draw, about 6 % of a figure, for the same pixels
    ax.set_title(title, y=1.0)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel)
    if n_legend:
        handles, labels = ax.get_legend_handles_labels()
        add_legend(fig, ax, handles, labels, n_legend)
    place_note(ax, xlabel, note)


def fits_inside(labels: list[str], n: int) -> bool:
    """Whether a legend of ``n`` entries with these labels goes inside the axes: at most three
    entries, none longer than a legend line (a long one would cover the data)."""
    return n <= 3 and all(len(t) <= LABEL_WIDTH for t in labels)


def add_legend(fig: Any, ax: Any, handles: list[Any], labels: list[str], n: int) -> None:
    """The legend of ``n`` entries: inside the axes at matplotlib's best place when it
    `fits_inside`, else outside, right of the axes, where it never hides data (the figure's
    constrained layout makes room), its labels wrapped at ``LABEL_WIDTH`` characters."""
    if fits_inside(labels, n):
        ax.legend(handles, labels, fontsize="small", loc="best")
    else:
        fig.legend(handles, [wrap(t, LABEL_WIDTH) for t in labels],
                   fontsize="small" if n <= 12 else "x-small", loc="outside right upper")


def place_note(ax: Any, xlabel: str, note: str) -> None:
    """``note`` along the figure's bottom edge, under ``ax`` (the lowest axes) and the legend:
    the x label's blank lines (one per line of the note) make the room; the note itself is left
    out of the constrained layout, which would otherwise narrow the axes to the note's width."""
    if not note:
        return
    note = wrap(note, NOTE_WIDTH)
    ax.set_xlabel(xlabel + "\n" * (note.count("\n") + 1), fontsize=9)
    ax.annotate(note, xy=(0.0, 0.0), xycoords="figure fraction", xytext=(4, 4),
                textcoords="offset points", fontsize=7, color="0.3", ha="left",
                va="bottom", annotation_clip=False).set_in_layout(False)


#: label offsets (points) tried around a marker, in order, with the text's alignment
LABEL_OFFSETS = ((5, 3, "left", "bottom"), (5, -3, "left", "top"), (-5, 3, "right", "bottom"),
                 (-5, -3, "right", "top"), (0, 7, "center", "bottom"),
                 (0, -7, "center", "top"), (12, 10, "left", "bottom"),
                 (12, -10, "left", "top"), (-12, 10, "right", "bottom"),
                 (-12, -10, "right", "top"))
#: markers nearer than this (fraction of the axes) share one number
SAME_SPOT = 0.02


def key_numbers(ax: Any, points: list[tuple[float, float]]) -> list[list[int]]:
    """Groups of ``points`` (indices) that sit at one spot of ``ax`` (within `SAME_SPOT` of
    the axes in both directions, after its scales and limits are set), in order of their
    first point: each group is labelled once."""
    ax.autoscale_view()
    frac = ax.transAxes.inverted().transform(ax.transData.transform(np.asarray(points, float)))
    groups: list[list[int]] = []
    for i, p in enumerate(frac):
        for g in groups:
            if np.all(np.abs(frac[g[0]] - p) <= SAME_SPOT):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def number_text(numbers: list[int]) -> str:
    """``1`` or ``1,2,4``, or ``3-6`` for a run of three or more."""
    if len(numbers) >= 3 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ",".join(str(n) for n in numbers)


@dataclass
class PointKey:
    """Numbers for labelled points: ``groups`` of point indices at one spot (`key_numbers`),
    each labelled once (``labels``, one per group); ``key`` lists ``[1] text; [2] text; ...``
    for the figure's note."""

    points: list[tuple[float, float]]
    groups: list[list[int]]
    labels: list[str]
    key: str


def point_key(ax: Any, points: list[tuple[float, float]], texts: list[str]) -> PointKey:
    """Number ``points`` (data coordinates of ``ax``, scales set) in order, points at one spot
    sharing a label (``3-5``): a figure labels its points with these numbers and lists what
    they stand for in its note, where long labels of points at one spot would overlap."""
    groups = key_numbers(ax, points) if points else []
    number = {}
    for g in groups:
        for i in g:
            number[i] = len(number) + 1
    key = "; ".join(f"[{number[i]}] {texts[i]}" for i in sorted(number, key=number.get))
    return PointKey(list(points), groups, [number_text([number[i] for i in g]) for g in groups],
                    key)


def place_labels(fig: Any, ax: Any, pk: PointKey) -> None:
    """Write the numbers of `point_key` beside their points: each takes the first place around
    its marker (`LABEL_OFFSETS`) that overlaps no label placed before and stays inside the
    axes, measured on the figure as laid out (call it after the legend and note are in place;
    the labels stay out of the layout)."""
    if not pk.groups:
        return
    renderer = agg_renderer(fig)  # the figures are saved with Agg
    lay_out_once(fig)
    inside = ax.get_window_extent(renderer)
    placed: list[Any] = []
    for g, text in zip(pk.groups, pk.labels):
        xy = pk.points[g[0]]
        best = None  # (outside the axes, labels overlapped, offset): the least bad place
        for k, (dx, dy, ha, va) in enumerate(LABEL_OFFSETS):
            ann = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points",
                              fontsize=7, color="0.15", ha=ha, va=va, fontweight="bold",
                              annotation_clip=False)
            box = ann.get_window_extent(renderer)
            ann.remove()
            out = not (box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0
                       and box.y1 <= inside.y1)
            score = (out, sum(box.overlaps(b) for b in placed), k)
            best = score if best is None or score < best else best
            if score[:2] == (False, 0):
                break
        dx, dy, ha, va = LABEL_OFFSETS[best[2]]
        ann = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", fontsize=7,
                          color="0.15", ha=ha, va=va, fontweight="bold", annotation_clip=False)
        ann.set_in_layout(False)
        placed.append(ann.get_window_extent(renderer))


#: pixels kept free between a text and the figure's edge
TEXT_MARGIN = 8


def keep_texts_inside(fig: Any, ax: Any, rounds: int = 4) -> None:
    """Narrow ``ax`` until every text it holds lies inside ``fig``: texts drawn beside the
    data (a critical-difference diagram's names, outside the axes' limits) are no part of
    the constrained layout, and the longest ran past the figure's edge. The layout is
    computed once and then kept (the figure has no layout engine afterwards)."""
    renderer = agg_renderer(fig)
    lay_out_once(fig)
    width = fig.bbox.width
    for _ in range(rounds):
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
        if not boxes:
            return
        # a margin of TEXT_MARGIN pixels: the rendered glyphs reach a little past the box
        left = max(0.0, TEXT_MARGIN - min(b.x0 for b in boxes))
        right = max(0.0, max(b.x1 for b in boxes) - (width - TEXT_MARGIN))
        if left == 0 and right == 0:
            return
        pos = ax.get_position()
        ax.set_position([pos.x0 + left / width, pos.y0, pos.width - (left + right) / width,
                         pos.height])


def wide_range(values: Any, ratio: float = 10.0) -> bool:
    """Whether positive ``values`` span ``ratio`` or more (largest over smallest): a count
    such as leaves from 3 to 130 is then drawn on a log axis, where a linear one would squash
    all but the largest value into its left edge."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return bool(len(v) and v.min() > 0 and v.max() / v.min() >= ratio)


def axis_figure(results: Results, dataset: str, axis: str, metrics: tuple[str, ...],
                axes: dict[str, list[str]]) -> Any | None:
    """``metrics`` against ``axis`` on one dataset; two metrics share lines (first solid,
    second dashed). None when there is nothing to draw."""
    s = results.settings[results.settings["dataset"] == dataset]
    # a line with no value of these metrics and no setting that failed outright has nothing to
    # show (e.g. the leaves of an ensemble)
    lines = [ln for ln in _lines(s, axis, axes)
             if ln.rows[[f"{m}_n" for m in metrics]].to_numpy().sum() > 0
             or (ln.rows["n_ok"] == 0).any()]
    if not lines or all(ln.rows[[f"{m}_n" for m in metrics]].to_numpy().sum() == 0
                        for ln in lines):
        return None
    xs = [v for ln in lines for v in ln.rows[axis]]
    pos, ticks, labels, numeric = _x_positions(xs)
    log_x = numeric and min(ticks) > 0 and max(ticks) / min(ticks) >= 100
    shift = _dodge(ticks, len(lines), log_x)
    fig, ax = new_figure()
    colors = line_colors(len(lines))
    algs = sorted({ln.algorithm for ln in lines})
    flags = 0
    for i, ln in enumerate(lines):
        x = np.array([pos[value_token(v)] for v in ln.rows[axis]], dtype=float)
        x = x * 10 ** shift[i] if log_x else x + shift[i]
        a = algs.index(ln.algorithm)
        marker = MARKERS[a % len(MARKERS)]
        for j, m in enumerate(metrics):
            ls = LINESTYLES[(a + j) % len(LINESTYLES)] if len(metrics) == 1 else ("-", "--")[j]
            flags |= _plot_series(ax, x, ln.rows, m, colors[i], marker, ls,
                                       ln.label if j == 0 else None, 1.0 if j == 0 else 0.75)
    n_refs, refs_left_out = _reference_lines(ax, s, axis, metrics[0], results.key_columns,
                                             len(lines))
    if len(metrics) == 2:
        ax.plot([], [], color="0.3", linestyle="-", label=f"{metric_label(metrics[0])} (solid)")
        ax.plot([], [], color="0.3", linestyle="--", label=f"{metric_label(metrics[1])} (dashed)")
    # leaves: the lines' and the reference lines' values (an unlimited learner's 130 leaves)
    if any(m in LOG_METRICS for m in metrics) or (
            all(m.startswith("n_leaves") for m in metrics)
            and wide_range(s[[f"{m}_mean" for m in metrics]].to_numpy(float).ravel())):
        ax.set_yscale("log")
    if numeric:
        if log_x:
            ax.set_xscale("log")
        elif len(ticks) <= 12:
            ax.set_xticks(ticks, labels)
    else:
        ax.set_xticks(ticks, labels)
        ax.set_xlim(min(ticks) - 0.5, max(ticks) + 0.5)
    ylabel = " / ".join(metric_label(m) for m in metrics) if len(metrics) == 2 \
        else metric_label(metrics[0])
    title = f"{dataset}: {ylabel} vs {column_label(axis)}"
    note = _fail_note(flags) + (f"; {refs_left_out} more reference setting(s) not drawn"
                                if refs_left_out else "")
    finish_figure(fig, ax, title, ylabel, column_label(axis), note,
            len(lines) + n_refs + (2 if len(metrics) == 2 else 0))
    return fig


def size_metric(settings: pd.DataFrame) -> str:
    """``n_leaves_effective`` (same-label sibling leaves merged, comparable across learner
    families) where recorded, else ``n_leaves``."""
    if "n_leaves_effective_n" in settings and settings["n_leaves_effective_n"].sum() > 0:
        return "n_leaves_effective"
    return "n_leaves"


def leaves_figure(results: Results, dataset: str) -> Any | None:
    """Test accuracy against the number of leaves (after merging same-label siblings, where
    recorded), one colour per algorithm."""
    s = results.settings[results.settings["dataset"] == dataset]
    size = size_metric(s)
    if "test_accuracy_mean" not in s or f"{size}_mean" not in s:
        return None
    shown = (s["test_accuracy_n"] > 0) & (s[f"{size}_n"] > 0)
    algs = sorted(set(s.loc[shown, "algorithm_label"]))
    if not algs:
        return None
    fig, ax = new_figure()
    colors = line_colors(len(algs))
    partial = False
    for a, alg in enumerate(algs):
        rows = s[s["algorithm_label"] == alg]
        x = rows[f"{size}_mean"].to_numpy(dtype=float)
        y = rows["test_accuracy_mean"].to_numpy(dtype=float)
        xe = error_bars(rows, size)
        ye = error_bars(rows, "test_accuracy")
        ok = ~(np.isnan(x) | np.isnan(y))
        part = ((rows["n_failed"].to_numpy() > 0) | _folds_differ(rows)) & ok
        marker = MARKERS[a % len(MARKERS)]
        ax.errorbar(x[ok], y[ok], xerr=xe[:, ok], yerr=ye[:, ok], color=colors[a], marker=marker,
                    linestyle="none", capsize=2, markersize=5, alpha=0.9, label=alg)
        if part.any():
            partial = True
            ax.plot(x[part], y[part], linestyle="none", marker=marker, markersize=7,
                    markerfacecolor="white", markeredgecolor=colors[a], markeredgewidth=1.5)
    if wide_range(s[f"{size}_mean"]):
        ax.set_xscale("log")
    n_all_failed = int((s["n_ok"] == 0).sum())
    notes = [ERROR_BAR_NOTE] + ([PARTIAL_NOTE] if partial else [])
    if n_all_failed:
        notes.append(f"{n_all_failed} setting(s) where every cell failed are not shown")
    xlabel = ("leaves, same-label siblings merged (mean over folds)"
              if size == "n_leaves_effective" else "leaves (mean over folds)")
    finish_figure(fig, ax, f"{dataset}: test accuracy vs leaves", "test accuracy", xlabel,
            "; ".join(notes), len(algs))
    return fig


def save(fig: Any, base: Path, title: str, formats: tuple[str, ...] = ("png",)
         ) -> dict[str, Path]:
    """Save ``fig`` as ``base.png`` (and ``base.svg`` when asked) with metadata that does not
    change between runs (no date, no software version). Each file is written under a temporary
    name and renamed, so an interrupted report never leaves a half-written picture."""
    import os

    import matplotlib

    paths = {}
    with matplotlib.rc_context(RC):
        lay_out_once(fig)  # then saved without a layout engine: one draw per file
        for fmt in formats:
            # never `with_suffix`: a stem like ``x.csv__test_accuracy`` would lose everything
            # after the dataset name's dot
            p = base.parent / f"{base.name}.{fmt}"
            tmp = temp_path(p)
            extra: dict[str, Any] = {}
            if fmt == "svg":
                meta = {"Date": None, "Creator": "treebench report", "Title": title}
            else:
                meta = {"Software": None, "Title": title}
                # zlib's fastest level: a third of the time of the default (6) for files about
                # a tenth larger; encoding at 6 was a sixth of a figure's time
                extra["pil_kwargs"] = {"compress_level": 1}
            try:
                fig.savefig(tmp, format=fmt, dpi=DPI, metadata=meta, **extra)
                os.replace(tmp, p)
            finally:
                tmp.unlink(missing_ok=True)
            paths[fmt] = p
    return paths


def file_digest(path: Path) -> str | None:
    """The sha256 of a figure file (None when it cannot be read): a figure is reused only when
    its file is the one the report wrote, so that a truncated, damaged or replaced file is
    drawn again like a missing one."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


CACHE_FILE = ".figures.json"


@dataclass(frozen=True)
class FigureJob:
    """One figure file to draw: ``kind`` names its figure kind (`FigureKind` in
    `treebench.registry.FIGURES`); ``dataset`` is the
    dataset whose settings it shows, or `ALL_DATASETS` for figures over every dataset (its
    cache signature then covers every setting); ``extra`` is what its drawer needs besides."""

    stem: str
    dataset: str
    axis: str | None  # None: the leaves figure
    metrics: tuple[str, ...]
    kind: str = "axis"
    extra: tuple = ()


#: the dataset label of figures drawn over every dataset (critical-difference diagrams)
ALL_DATASETS = "all datasets"


@dataclass(frozen=True)
class FigureKind:
    """A kind of figure: ``jobs(results)`` lists the files to draw (`make_job`), ``draw(results,
    job)`` draws one and returns (figure, title), or None (no figure for these inputs).
    ``order`` is when the drawing workers take its figures: lower first (the dearest kinds go
    first, so that no worker starts a long figure when the others are done)."""

    jobs: Callable[[Results], list[FigureJob]]
    draw: Callable[[Results, FigureJob], tuple[Any, str] | None]
    order: int = 1


def register_figures(kind: str, jobs: Callable[[Results], list[FigureJob]],
                     draw: Callable[[Results, FigureJob], tuple[Any, str] | None],
                     description: str = "", order: int = 1) -> FigureKind:
    """Add a kind of figure to every report, in the figure registry
    (`treebench.registry.FIGURES`; a plug-in package calls this in the module its
    ``treebench.figures`` entry point names): ``jobs(results)`` lists its files and
    ``draw(results, job)`` draws one; `write_figures` caches and parallelises them as it does
    the per-dataset figures. Two kinds may share one ``jobs`` function (it is called once).
    ``order``: see `FigureKind`."""

    fk = FigureKind(jobs, draw, order)
    FIGURES.register(kind, description=description or (inspect.getdoc(draw) or ""))(fk)
    return fk


def figure_jobs(results: Results) -> list[FigureJob]:
    """The files of every registered figure kind (built-in, then plug-ins) for ``results``."""

    jobs: list[FigureJob] = []
    seen: list[Callable] = []
    for entry in FIGURES.in_order():
        if entry.obj.jobs not in seen:
            seen.append(entry.obj.jobs)
            jobs += entry.obj.jobs(results)
    return jobs


def figure_name(stem: str, prefix: str | None = None) -> str:
    """A figure's name: its file stem without the dataset prefix (``<dataset>__``), e.g.
    ``test_accuracy_vs_k`` or ``critical_difference_all-settings``. ``prefix`` is the stem of
    the figure's dataset when known: a dataset's stem may itself hold ``__`` (``a__b``) or end
    in ``_``, where the first ``__`` of the file stem is not where the name starts."""
    if prefix and stem.startswith(f"{prefix}__"):
        return stem[len(prefix) + 2:]
    return stem.split("__", 1)[-1]


def figure_patterns(results: Results) -> list[str]:
    """The experiment's ``report: {figures: [...]}`` patterns (every figure when absent)."""
    pats = report_option(results, "figures")
    if isinstance(pats, list) and pats and all(isinstance(p, str) for p in pats):
        return pats
    return ["*"]


def chosen_jobs(results: Results, jobs: list[FigureJob]) -> list[FigureJob]:
    """The ``jobs`` whose figure name (`figure_name`) one of the experiment's figure patterns
    matches (shell-style, case-sensitive). A pattern that matches no figure (a misspelt name)
    is a note of the report."""
    pats = figure_patterns(results)
    if pats == ["*"]:
        return jobs
    stems = results_stems(results)
    names = [figure_name(j.stem, stems.get(str(j.dataset))) for j in jobs]
    hits = {p: [fnmatchcase(n, p) for n in names] for p in pats}
    for p, matched in hits.items():
        if not any(matched):
            results.notes.append(f"`report: figures:` the pattern `{p}` matches no figure of "
                                 f"this experiment")
    return [j for i, j in enumerate(jobs) if any(m[i] for m in hits.values())]


def make_job(stem: str, dataset: str, kind: str, extra: tuple = ()) -> FigureJob:
    return FigureJob(stem, dataset, None, (), kind, extra)


def _jobs(results: Results) -> list[FigureJob]:
    """The per-dataset figures: each metric against each sweep axis, and accuracy against
    leaves."""
    size = size_metric(results.settings)
    metrics = [size if m == "n_leaves" else m for m in AXIS_METRICS
               if m in results.metrics]
    plans: list[tuple[str, tuple[str, ...]]] = [(m, (m,)) for m in metrics]
    # train and test together (train dashed); the training metric then has no figure of its
    # own, its lines being those of the pair, while the test metric keeps one (its axis spans
    # the test values alone)
    for test, train in (("test_accuracy", "train_accuracy"), ("test_r2", "train_r2")):
        if test in metrics and train in metrics:
            plans.remove((train, (train,)))
            plans.insert(0, (f"train_{test}", (test, train)))
    datasets = distinct(results.settings["dataset"])
    stems = results_stems(results)
    jobs = []
    for dataset in datasets:
        sub = results.settings[results.settings["dataset"] == dataset]
        # axes swept on this dataset (a dataset-level binarization, e.g. avila's budget of
        # 100 beside everyone else's 200, is no axis of any single dataset)
        axes = sweep_axes(sub, results.key_columns)
        all_axes = [c for c in results.key_columns if any(c in v for v in axes.values())]
        ds = stems[str(dataset)]
        for axis in all_axes:
            for name, mets in plans:
                jobs.append(FigureJob(f"{ds}__{name}_vs_{slug(column_label(axis))}", dataset, axis, mets))
        jobs.append(FigureJob(f"{ds}__test_accuracy_vs_n_leaves", dataset, None, (), "leaves"))
    return jobs


def drawing_code_key(kinds: set[str]) -> str:
    """A key of the code that draws figures of ``kinds``: treebench's own modules (size and
    modification time of each, `treebench.utils.atomic.files_key`: an edited or upgraded treebench
    draws every figure again) and, for a figure kind registered by a plug-in, the file of its
    drawing function."""
    package = Path(__file__).resolve().parents[1]
    parts = [files_key(package)]
    for kind in sorted(kinds):
        src = inspect.getsourcefile(FIGURES.get(kind).obj.draw)
        if src and not Path(src).resolve().is_relative_to(package):
            try:
                st = Path(src).stat()
                parts.append(f"{kind}:{src}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                parts.append(f"{kind}:{src}:absent")
    return ";".join(parts)


def _signature(results: Results, job: FigureJob, formats: tuple[str, ...], code: str) -> str:
    """A hash of everything a figure is drawn from: its dataset's settings, the job, the
    formats and the drawing code (``code``: `drawing_code_key`)."""
    import hashlib

    if job.dataset == ALL_DATASETS:
        sub = results.settings
    else:
        sub = results.settings[results.settings["dataset"] == job.dataset]
    h = hashlib.sha256()
    h.update(repr((code, job, formats, results.key_columns, results.metrics)).encode())
    h.update(sub.to_csv(index=False).encode())
    return h.hexdigest()


def _draw(results: Results, job: FigureJob, fdir: Path, formats: tuple[str, ...]
          ) -> tuple[str, dict[str, Path]] | None:
    import matplotlib


    with matplotlib.rc_context(RC):
        drawn = FIGURES.get(job.kind).obj.draw(results, job)
        if drawn is None:
            return None
        fig, title = drawn
        return title, save(fig, fdir / job.stem, title, formats)


def _titled(fig: Any) -> tuple[Any, str] | None:
    return None if fig is None else (fig, fig.axes[0].get_title())


def _draw_axis(results: Results, job: FigureJob) -> tuple[Any, str] | None:
    """A metric (or train and test together) against a sweep axis, one line per setting."""
    axes = sweep_axes(results.settings[results.settings["dataset"] == job.dataset],
                      results.key_columns)
    return _titled(axis_figure(results, job.dataset, job.axis, job.metrics, axes))


def _draw_leaves(results: Results, job: FigureJob) -> tuple[Any, str] | None:
    """Test accuracy against the number of leaves, one colour per algorithm."""
    return _titled(leaves_figure(results, job.dataset))


def _no_jobs(results: Results) -> list[FigureJob]:
    return []  # the leaves figures are listed with the axis figures (`_jobs`)


register_figures("axis", _jobs, _draw_axis)
register_figures("leaves", _no_jobs, _draw_leaves, order=0)  # a point per setting and fold


def _warm_matplotlib() -> None:
    """Import matplotlib's figure and Agg modules and render one glyph, once per process: done
    in the report's process before it forks the drawing workers, every worker starts with
    them loaded instead of paying for them (about 0.6 CPU s each) itself."""
    global _WARM
    if _WARM:
        return
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with __import__("matplotlib").rc_context(RC):
        fig = Figure(figsize=(0.5, 0.5), dpi=20)
        fig.text(0.1, 0.1, "0.9")
        FigureCanvasAgg(fig).print_png(io.BytesIO())
    _WARM = True


_WARM = False


def _workers(n_jobs: int, n_items: int) -> int:
    """Drawing processes for ``n_items`` figures: one per core (``n_jobs`` > 0 caps it), none
    when there are fewer than two figures."""
    import os

    n = min(n_jobs if n_jobs > 0 else (os.cpu_count() or 1), n_items)
    return n if n >= 2 and hasattr(os, "fork") else 0


class _Drawing:
    """Figures being drawn: in forked workers (the caller goes on with other work, e.g. the
    tables, until `result`), or here, at `result`, when a pool does not pay off."""

    def __init__(self, results: Results, jobs: list[FigureJob], fdir: Path,
                 formats: tuple[str, ...], n_jobs: int):
        self.args = (results, jobs, fdir, formats)
        self.pool = None
        self.pending: Any = None
        if not jobs:
            return
        _warm_matplotlib()
        n = _workers(n_jobs, len(jobs))
        if not n:
            return
        import multiprocessing as mp
        import os
        from concurrent.futures import ProcessPoolExecutor


        global _POOL_STATE
        _POOL_STATE = (results, fdir, formats)  # inherited by the forked workers, never pickled
        # workers die with this process (a killed run leaves no drawing process behind) and
        # never hold its results folder's lock (`treebench.execute.lock` closes it at fork)
        self.pool = ProcessPoolExecutor(n, mp_context=mp.get_context("fork"),
                                        initializer=forked_worker_init, initargs=(os.getpid(),))
        try:
            # workers fork at submission; each takes jobs one at a time (their costs differ):
            # the dearest kinds go first, so that no worker starts one when the others are done
            first = sorted(range(len(jobs)), key=lambda i: draw_order(jobs[i].kind))
            futures = {i: self.pool.submit(_draw_in_child, jobs[i]) for i in first}
            self.pending = [futures[i] for i in range(len(jobs))]
        except BaseException:
            self.close(kill=True)
            raise

    def result(self) -> list[tuple[str, dict[str, Path]] | None]:
        results, jobs, fdir, formats = self.args
        if self.pool is None:
            return [_draw(results, j, fdir, formats) for j in jobs]
        try:
            out = [f.result() for f in self.pending]
        except BaseException:
            self.close(kill=True)
            raise
        self.close()
        return out

    def close(self, kill: bool = False) -> None:
        """Stop the workers: let them finish the figure in hand, or (``kill``: an error or an
        interrupt) kill them at once."""
        global _POOL_STATE
        if self.pool is not None:
            if kill:
                for p in list((getattr(self.pool, "_processes", None) or {}).values()):
                    p.kill()
            # an interrupt can land inside the first `submit`, after the pool made its
            # manager thread and before it started it: waiting would join a thread that never
            # ran (a RuntimeError that hid the interrupt); its workers are killed above
            manager = getattr(self.pool, "_executor_manager_thread", None)
            started = manager is None or manager.ident is not None
            self.pool.shutdown(wait=started, cancel_futures=True)
            self.pool = None
        _POOL_STATE = None


def _draw_many(results: Results, jobs: list[FigureJob], fdir: Path, formats: tuple[str, ...],
               n_jobs: int) -> list[tuple[str, dict[str, Path]] | None]:
    """Draw ``jobs``, in forked worker processes when there are two or more."""
    return _Drawing(results, jobs, fdir, formats, n_jobs).result()


_POOL_STATE: Any = None


def draw_order(kind: str) -> int:
    """When the drawing workers take figures of ``kind`` (its `FigureKind.order`)."""
    return FIGURES.get(kind).obj.order


def _draw_in_child(job: FigureJob):
    results, fdir, formats = _POOL_STATE
    return _draw(results, job, fdir, formats)


def write_figures(results: Results, out: Path, formats: tuple[str, ...] = ("png",),
                  n_jobs: int = -1) -> list[FigureInfo]:
    """Draw and save every figure under ``out / "figures"``.

    A figure whose inputs (its dataset's settings, the formats, the drawing code: every module
    of treebench and a plug-in kind's drawing file, `drawing_code_key`) did not change since
    the last report, and whose files are still there, is not drawn again; the
    others are drawn in parallel (forked processes). Files of figures that no longer exist are
    removed."""
    return start_figures(results, out, formats, n_jobs).finish()


def start_figures(results: Results, out: Path, formats: tuple[str, ...] = ("png",),
                  n_jobs: int = -1) -> PendingFigures:
    """`write_figures` in two steps: start drawing the figures that changed (in forked
    workers) and return at once; `PendingFigures.finish` waits for them and returns what
    `write_figures` returns. The report writes its tables in between."""
    return PendingFigures(results, out, formats, n_jobs)


class PendingFigures:
    """The figures `start_figures` set drawing; `finish` collects them."""

    def __init__(self, results: Results, out: Path, formats: tuple[str, ...], n_jobs: int):
        self.fdir = fdir = out / "figures"
        fdir.mkdir(parents=True, exist_ok=True)
        self.formats = formats
        cache_path = fdir / CACHE_FILE
        self.cache = cache = read_json_object(cache_path)
        jobs = [] if results.settings.empty else chosen_jobs(results, figure_jobs(results))
        self.jobs = jobs
        code = drawing_code_key({j.kind for j in jobs}) if jobs else ""
        self.sigs = sigs = {j.stem: _signature(results, j, formats, code) for j in jobs}
        self.done: dict[str, tuple[str, dict[str, Path]] | None] = {}
        todo = []
        for j in jobs:
            c = cache.get(j.stem)
            if isinstance(c, dict) and c.get("signature") == sigs[j.stem]:
                if c.get("title") is None:
                    self.done[j.stem] = None
                    continue
                paths = {fmt: fdir / f"{j.stem}.{fmt}" for fmt in formats}
                files = c.get("files")
                if isinstance(files, dict) and all(
                        file_digest(p) == files.get(fmt) for fmt, p in paths.items()):
                    self.done[j.stem] = (c["title"], paths)
                    continue
            todo.append(j)
        self.todo = todo
        self.drawing = _Drawing(results, todo, fdir, formats, n_jobs)

    def finish(self) -> list[FigureInfo]:
        import json
        import os

        for j, res in zip(self.todo, self.drawing.result(), strict=True):
            self.done[j.stem] = res
        done, jobs, fdir = self.done, self.jobs, self.fdir
        infos = [FigureInfo(j.dataset, j.stem, done[j.stem][0], done[j.stem][1])
                 for j in jobs if done[j.stem] is not None]
        check_unique(infos)
        keep = {p.name for i in infos for p in i.paths.values()}
        for old in [*fdir.glob("*.png"), *fdir.glob("*.svg")]:
            if old.name not in keep and self._wrote(old):  # a stale figure of an earlier report
                old.unlink()
        new_cache = {j.stem: {"signature": self.sigs[j.stem],
                              "title": None if done[j.stem] is None else done[j.stem][0],
                              "files": {} if done[j.stem] is None else {
                                  fmt: file_digest(p) for fmt, p in done[j.stem][1].items()}}
                     for j in jobs}
        write_text(fdir / CACHE_FILE, json.dumps(new_cache, sort_keys=True, indent=0))
        return infos

    def _wrote(self, path: Path) -> bool:
        """Whether an earlier report wrote the figure file ``path`` (its cache lists the stem
        with that format): a file no report wrote, a user's own image in an ``--out`` folder,
        is never removed."""
        entry = self.cache.get(path.stem)
        files = entry.get("files") if isinstance(entry, dict) else None
        return isinstance(files, dict) and path.suffix[1:] in files

    def close(self) -> None:
        """Stop drawing at once (an error or an interrupt elsewhere in the report)."""
        self.drawing.close(kill=True)
