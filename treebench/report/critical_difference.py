"""Critical-difference diagrams: algorithm settings ranked over datasets (Demšar 2006).

Each dataset is a block: the settings are ranked by a metric's mean over its folds and seeds
(rank 1 is best, ties share the mean rank; higher is better for accuracy and AUC, lower for
expected test cost, `LOWER_IS_BETTER`). The Friedman test (`scipy.stats.friedmanchisquare`)
asks whether the mean ranks differ at all; the Nemenyi post-hoc test
(`scikit_posthocs.posthoc_nemenyi_friedman`) gives pairwise p-values, and
`scikit_posthocs.critical_difference_diagram` draws the mean ranks with bars joining settings
that the test cannot tell apart (p >= alpha). The statistics are the packages', not ours.

Settings compared: every (algorithm, parameter values) that has a finished value on every
dataset (a complete block design); a learner run on several binarizations (raw features and a
threshold guess) is one setting per binarization, its name followed by `` · <binarizer>``. A
parameter chosen inside the cell by ``tune:`` (the row's ``tuned_params``) does not name a
setting: a tuned entry is one setting whatever values its cells chose, as in the NGI paper's
comparison of tuned methods; settings missing on some dataset are left out and counted in the
note. When the experiment sweeps ``max_depth``, settings are compared within each depth, one
diagram per depth (a depth-6 tree against a depth-2 tree is no comparison of algorithms).
At least 2 datasets and 3 settings are needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from treebench.report.aggregate import (
    SETTING_KEYS,
    normalized_keys,
    with_not_applicable,
    Results,
    distinct,
    fmt_value,
    params_text,
    varying_columns,
)
from treebench.report.figures import agg_figure, keep_texts_inside
from treebench.results.values import NA, normalize_value

ALPHA = 0.05
DEPTH = "param_max_depth"
#: metrics ranked with the smallest value first
LOWER_IS_BETTER = frozenset({"expected_cost_test", "expected_cost_train", "test_mse",
                             "train_mse", "test_log_loss", "train_log_loss"})


@dataclass
class Ranking:
    """The inputs and outcome of one diagram."""

    title: str
    scores: pd.DataFrame  # datasets x settings, mean metric
    ranks: pd.Series  # mean rank per setting (1 = best)
    pvalues: pd.DataFrame | None = None  # Nemenyi p-values, settings x settings
    friedman_p: float = float("nan")
    left_out: list[str] = field(default_factory=list)


def _setting_label(row: Mapping[str, Any], columns: list[str]) -> str:
    text = params_text(row, columns)
    return f"{row['algorithm_label']}" + (f" ({text})" if text else "")


def _split_names(results: Results, t: pd.DataFrame) -> list[str]:
    """`` [kfold n_splits=3]`` per row of ``t`` when a dataset's settings hold several splits
    (two splits of a dataset never make one setting), else empty strings (each dataset may
    have a split of its own)."""
    s = results.settings
    if not s.empty and _most_values(s["dataset"], s["split_label"]) < 2:
        return [""] * len(t)
    name = {(str(a), str(b)): str(c)
            for a, b, c in zip(s["split"], s["split_params"], s["split_label"])}
    keys = normalized_keys(t, [])
    return [f" [{name.get((str(a), str(b)), a)}]"
            for a, b in zip(keys["split"], keys["split_params"])]


def _values_by_key(keys: pd.Series, values: pd.Series) -> dict[Any, set[Any]]:
    """The distinct values of ``values`` by key of ``keys`` (pairwise), missing keys and
    values left out as `DataFrame.groupby` and `nunique` leave them out."""
    # a dict of sets: a groupby per call cost more than the rows it counts
    out: dict[Any, set[Any]] = {}
    for k, v in zip(keys, values):
        if not pd.isna(k):
            seen = out.setdefault(k, set())
            if not pd.isna(v):
                seen.add(v)
    return out


def _most_values(keys: pd.Series, values: pd.Series) -> int:
    """The most distinct values that one key has (``groupby(keys)[values].nunique().max()``:
    NaN without keys)."""
    return max((len(v) for v in _values_by_key(keys, values).values()), default=float("nan"))


def _several_values(keys: pd.Series, values: pd.Series) -> set[Any]:
    """The keys with more than one distinct value."""
    return {k for k, v in _values_by_key(keys, values).items() if len(v) > 1}


def _binarizer_names(t: pd.DataFrame) -> list[str]:
    """`` · <binarizer>`` per row of ``t`` whose algorithm ran on several binarizations (CART
    on raw features and on a binarization are two settings, never averaged into one), else
    empty strings."""
    if "binarizer" not in t.columns:
        return [""] * len(t)
    several = _several_values(t["algorithm_label"], t["binarizer"])
    return [f" · {b}" if a in several else ""
            for a, b in zip(t["algorithm_label"], t["binarizer"])]


def _finished_rows(t: pd.DataFrame, where: dict[str, Any]) -> np.ndarray:
    """The positions of the rows of ``t`` whose status is ``ok`` (every row when there is no
    status column) and whose normalised values equal ``where``'s (none when a column of
    ``where`` is absent)."""
    if "status" in t.columns:
        keep = (t["status"] == "ok").to_numpy(dtype=bool, na_value=False)
    else:
        keep = np.ones(len(t), dtype=bool)
    for col, val in where.items():
        if col not in t.columns:
            keep[:] = False
            continue
        # only the rows still kept are compared
        keep &= np.array([bool(k) and normalize_value(v) == val for v, k in zip(t[col], keep)],
                         dtype=bool)
    return np.flatnonzero(keep)


def score_matrix(results: Results, metric: str = "test_accuracy",
                 where: dict[str, Any] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Datasets × settings of mean ``metric`` over the finished cells; the settings lacking a
    value on some dataset are dropped and returned by label."""
    t = results.table
    if metric not in t.columns:
        return pd.DataFrame(), []
    # algorithm parameters name a setting; a dataset-level binarizer budget does not, nor does
    # a parameter the cell tuned
    cols = [c for c in varying_columns(results.settings, results.key_columns)
            if c.startswith("param_") and c not in (where or {})]
    # the rows kept and the columns read below, taken at once: the table may have a hundred
    # columns, and each filter took every one of them
    used = {metric, "tuned_params", "algorithm_params", *SETTING_KEYS, *cols}
    t = t.iloc[_finished_rows(t, where or {}), [i for i, c in enumerate(t.columns) if c in used]]
    # NA where the row's algorithm has no such parameter (None stays None: set to None)
    values = [list(t["algorithm_label"])] + [list(with_not_applicable(t, c, t[c]))
                                                for c in cols]
    tuned = t["tuned_params"] if "tuned_params" in t.columns else pd.Series([None] * len(t),
                                                                              index=t.index)
    splits = _split_names(results, t)
    binarized = _binarizer_names(t)
    labels = []
    # the label's values by row (a row Series per cell built every column)
    rows = [dict(zip(["algorithm_label", *cols], r)) for r in zip(*values)]
    for r, tp, sp, b in zip(rows, tuned, splits, binarized, strict=True):
        skip = {f"param_{p}" for p in str(tp).split(",")} if isinstance(tp, str) and tp else set()
        labels.append(_setting_label(r, [c for c in cols if c not in skip]) + b + sp)
    frame = pd.DataFrame({"dataset": t["dataset"].astype(str).to_numpy(), "setting": labels,
                          "v": pd.to_numeric(t[metric], errors="coerce").to_numpy(dtype=float)})
    if frame.empty:
        return pd.DataFrame(), []
    # `frame.pivot_table(index="dataset", columns="setting", values="v", aggfunc="mean")`, the
    # same frame (groups without a value left out, columns sorted) at a third of its cost
    means = frame.groupby(["dataset", "setting"], sort=True)["v"].mean().dropna()
    m = means.unstack("setting").sort_index(axis=1)
    incomplete = [c for c in m.columns if m[c].isna().any()]
    return m.drop(columns=incomplete), incomplete


def rank_settings(scores: pd.DataFrame, title: str = "", left_out: list[str] | None = None,
                  lower_is_better: bool = False) -> Ranking | None:
    """Mean ranks, Friedman p-value and Nemenyi p-values; None below 2 datasets or 3 settings."""
    if scores.shape[0] < 2 or scores.shape[1] < 3:
        return None
    from scipy.stats import friedmanchisquare
    import scikit_posthocs as sp

    ranks = scores.rank(axis=1, ascending=lower_is_better, method="average").mean(axis=0)
    with np.errstate(all="ignore"):
        try:
            fp = float(friedmanchisquare(*[scores[c].to_numpy() for c in scores.columns]).pvalue)
        except ValueError:
            fp = float("nan")
        pv = sp.posthoc_nemenyi_friedman(scores.to_numpy())
    pv.index = pv.columns = list(scores.columns)
    pv = pv.fillna(1.0)
    return Ranking(title, scores, ranks.sort_values(), pv, fp, list(left_out or []))


def rankings(results: Results, metric: str = "test_accuracy") -> list[Ranking]:
    """One `Ranking` per depth when ``max_depth`` is swept, else one over all settings."""
    if metric not in results.table.columns or results.settings.empty:
        return []
    out = []
    for where, what in ranking_groups(results):
        r = ranking(results, metric, where, what)
        if r is not None:
            out.append(r)
    return out


def ranking_groups(results: Results) -> list[tuple[dict[str, Any], str]]:
    """The groups settings are ranked within: one per ``max_depth`` when it is swept, else
    one over all settings; (row filter, title) each."""
    depths = [d for d in distinct(results.settings[DEPTH]) if d is not NA and d is not None] \
        if DEPTH in results.settings else []
    return [({DEPTH: d}, f"max_depth={fmt_value(d)}") for d in depths] if len(depths) > 1 \
        else [({}, "all settings")]


def ranking(results: Results, metric: str, where: dict[str, Any], what: str) -> Ranking | None:
    """The `Ranking` of one group (None when too few datasets or settings)."""
    if metric not in results.table.columns or results.settings.empty:
        return None
    scores, left = score_matrix(results, metric, where)
    return rank_settings(scores, what, left, lower_is_better=metric in LOWER_IS_BETTER)


def cd_figure(r: Ranking, metric_label: str = "test accuracy") -> Any:
    """The critical-difference diagram of ``r`` (scikit-posthocs draws it)."""
    import scikit_posthocs as sp

    n = len(r.ranks)
    fig = agg_figure((7.6, max(3.0, 1.6 + 0.22 * n)))
    ax = fig.add_subplot(1, 1, 1)
    sp.critical_difference_diagram(r.ranks, r.pvalues, alpha=ALPHA, ax=ax,
                                   label_props={"fontsize": 7})
    fp = "n/a" if np.isnan(r.friedman_p) else f"{r.friedman_p:.3g}"
    ax.set_title(f"Mean rank of {metric_label} over {r.scores.shape[0]} datasets, {r.title} "
                 f"(Friedman p = {fp}; bars: Nemenyi p ≥ {ALPHA})", fontsize=8)
    if r.left_out:
        fig.text(0.01, 0.01, f"{len(r.left_out)} setting(s) without a value on every dataset "
                 "left out", fontsize=6.5, color="0.3")
    keep_texts_inside(fig, ax)  # the names beside the diagram, whole
    return fig
