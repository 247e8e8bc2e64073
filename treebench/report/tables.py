"""Per-metric and summary tables (mean ± std over folds) as CSV, Markdown, LaTeX and HTML.

Numbers come from `aggregate.aggregate`; this module only formats them. CSV files keep full
precision and every parameter column; Markdown, LaTeX and HTML show the columns that vary and
round the numbers.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from treebench.report.aggregate import (
    FAILED_STATUSES,
    Results,
    column_label,
    distinct,
    failures,
    fmt_value,
    varying_columns,
)
from treebench.results.values import NA
from treebench.utils.atomic import write_text as atomic_write_text
from treebench.utils.text import fmt_seconds
from treebench.results import schema

METRIC_LABELS = {
    "train_accuracy": "train accuracy",
    "test_accuracy": "test accuracy",
    "train_balanced_accuracy": "train balanced accuracy",
    "test_balanced_accuracy": "test balanced accuracy",
    "train_roc_auc": "train ROC AUC",
    "test_roc_auc": "test ROC AUC",
    "n_leaves": "leaves",
    "n_nodes": "nodes",
    "depth": "depth",
    "expected_tests_train": "expected tests (train)",
    "expected_tests_test": "expected tests (test)",
    "fit_seconds": "fit time (s)",
    "fit_seconds_spread": "fit time spread over repeats (s, max - min)",
    "fit_cpu_seconds": "fit CPU time (s)",
    "binarize_seconds": "binarize time (s)",
    "n_leaves_effective": "leaves (same-label siblings merged)",
    "prepare_seconds": "data preparation time (s)",
    "peak_rss_mb": "peak RSS of the cell process incl. shared worker pages (MB)",
    "cell_rss_mb": "memory the fit added above the worker's resident pages (MB; 0 when it reused them)",
}
SUMMARY_METRICS = ("test_accuracy", "train_accuracy", "n_leaves", "depth", "fit_seconds")


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


def fmt_number(metric: str, x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if metric.endswith(("accuracy", "roc_auc")):
        return f"{x:.3f}"
    if metric in ("n_leaves", "n_nodes", "depth"):
        return f"{x:.1f}"
    if metric.endswith("seconds"):
        return fmt_seconds(x)
    if metric in ("peak_rss_mb", "cell_rss_mb"):
        return f"{x:.0f}"
    return f"{x:.2f}"


def mean_std(metric: str, mean: float, std: float) -> str:
    """``0.812 ± 0.014``; the mean alone when there is a single value; ``–`` when none."""
    if math.isnan(mean):
        return "–"
    if math.isnan(std):
        return fmt_number(metric, mean)
    return f"{fmt_number(metric, mean)} ± {fmt_number(metric, std)}"


def failures_text(row: Mapping[str, Any]) -> str:
    """``2 timeout, 1 error`` (empty when every cell is ok); ok cells whose solver stopped at
    its own time limit are added as ``1 ok at solver time limit``."""
    parts = [f"{int(row[f'n_{s}'])} {s}" for s in FAILED_STATUSES if row[f"n_{s}"]]
    if row.get("n_solver_timed_out", 0):
        parts.append(f"{int(row['n_solver_timed_out'])} ok at solver time limit")
    return ", ".join(parts)


FOLDS_MARK = "†"


def ok_total(row: Mapping[str, Any]) -> str:
    """``3/5``, with `FOLDS_MARK` when the setting's mean is over fewer folds than other
    settings of its dataset."""
    mark = FOLDS_MARK if bool(row.get("folds_differ", False)) else ""
    missing = int(row.get("n_missing", 0) or 0)
    gone = f" ({missing} missing)" if missing else ""
    return f"{int(row['n_ok'])}/{int(row['n_total'])}{mark}{gone}"


@dataclass
class Display:
    """A formatted table: header, rows of strings, alignment, and dataset group starts."""

    title: str
    header: list[str]
    rows: list[list[str]]
    align: list[str]  # "l" or "r" per column
    group_starts: list[int]  # row indices where a new dataset starts (for rules in LaTeX)
    failed_rows: list[int] = field(default_factory=list)  # rows with failed cells (HTML)


def _identity_columns(results: Results) -> tuple[list[str], list[str]]:
    """(identity columns shown, parameter columns shown) in displays: the ones that vary.
    Binarizer parameters show as ``bin.*`` columns; the binarizer column shows its raw JSON
    parameters only when no ``bparam_*`` column holds them."""
    s = results.settings
    params = varying_columns(s, results.key_columns)
    ident = ["dataset"]
    if len(distinct(s["split_label"])) > 1:  # kinds, or splits of one kind, differ
        ident.append("split_label")
    bparams_shown = any(c.startswith(schema.BPARAM_PREFIX) for c in params)
    names_vary = len(distinct(s["binarizer"])) > 1
    json_vary = len(distinct(s["binarizer_params"])) > 1
    if names_vary or (json_vary and not bparams_shown):
        ident.append("binarizer+params" if json_vary and not bparams_shown else "binarizer")
    ident.append("algorithm_label")
    return ident, params


def _identity_cells(row: Mapping[str, Any], ident: list[str], params: list[str]) -> list[str]:
    cells = []
    for c in ident:
        if c == "binarizer+params" and row["binarizer_params"] not in ("", "{}", "null"):
            cells.append(f"{row['binarizer']} {row['binarizer_params']}")
        elif c == "binarizer+params":
            cells.append(str(row["binarizer"]))
        else:
            cells.append(str(row[c]))
    return cells + [fmt_value(row[c]) for c in params]


def _header(ident: list[str]) -> list[str]:
    return [_SHOWN_AS.get(c, c) for c in ident]


#: the count columns `ok_total` and `failures_text` read
_COUNT_COLUMNS = ("n_ok", "n_total", "n_missing", "folds_differ", "n_solver_timed_out",
                  *(f"n_{s}" for s in FAILED_STATUSES))


def _setting_rows(settings: pd.DataFrame, ident: list[str], params: list[str],
                  values: list[str]) -> list[dict[str, Any]]:
    """The settings' rows as dicts of the columns a display reads (the identity shown, the
    parameters, ``values`` and the counts), in order."""
    wanted = {*ident, "binarizer", "binarizer_params", *params, *values, *_COUNT_COLUMNS}
    cols = [c for c in settings.columns if c in wanted]
    # lists of these columns zipped, not iterrows (a row Series per setting over every
    # metric's mean, std and n) nor to_dict (a Series per column): the values are the same
    # Python objects iterrows gave
    return [dict(zip(cols, vals)) for vals in zip(*(settings[c].tolist() for c in cols))]


#: identity columns under the header people read (the label is what the config calls the
#: algorithm)
_SHOWN_AS = {"binarizer+params": "binarizer", "algorithm_label": "algorithm",
             "split_label": "split"}


def _failed_rows(settings: pd.DataFrame) -> list[int]:
    return [i for i, n in enumerate(settings["n_failed"]) if n > 0]


def _group_starts(settings: pd.DataFrame) -> list[int]:
    d = list(settings["dataset"])
    return [i for i in range(1, len(d)) if d[i] != d[i - 1]]


def metric_display(results: Results, metric: str) -> Display:
    ident, params = _identity_columns(results)
    rows = []
    for r in _setting_rows(results.settings, ident, params, [f"{metric}_mean", f"{metric}_std"]):
        rows.append(_identity_cells(r, ident, params) + [
            mean_std(metric, r[f"{metric}_mean"], r[f"{metric}_std"]),
            ok_total(r), failures_text(r)])
    header = _header(ident) + [column_label(c) for c in params] + [
        f"{metric_label(metric)} (mean ± std)", "ok/total", "failed"]
    align = ["l"] * len(ident) + ["r"] * len(params) + ["r", "r", "l"]
    return Display(metric_label(metric), header, rows, align, _group_starts(results.settings),
                   _failed_rows(results.settings))


def summary_display(results: Results) -> Display:
    ident, params = _identity_columns(results)
    mets = [m for m in SUMMARY_METRICS if m in results.metrics]
    rows = []
    values = [f"{m}_{k}" for m in mets for k in ("mean", "std")]
    for r in _setting_rows(results.settings, ident, params, values):
        rows.append(_identity_cells(r, ident, params)
                    + [mean_std(m, r[f"{m}_mean"], r[f"{m}_std"]) for m in mets]
                    + [ok_total(r), failures_text(r)])
    header = _header(ident) + [column_label(c) for c in params] + [
        metric_label(m) for m in mets] + ["ok/total", "failed"]
    align = ["l"] * len(ident) + ["r"] * (len(params) + len(mets) + 1) + ["l"]
    return Display("summary", header, rows, align, _group_starts(results.settings),
                   _failed_rows(results.settings))


def _csv_identity_columns(results: Results) -> dict[str, Any]:
    """The identity columns of the CSV tables by name, in order."""
    s = results.settings
    # a dict, made into a frame at once: inserting a frame's columns one by one costs more
    cols: dict[str, Any] = {
        "algorithm" if c == "algorithm_label" else c: s[c]
        for c in ("dataset", "split", "split_params", "binarizer", "binarizer_params",
                  "algorithm_label")}
    for c in results.key_columns:
        cols[column_label(c)] = [fmt_value(v) if v is not NA else "" for v in s[c]]
    return cols


def _csv_identity(results: Results) -> pd.DataFrame:
    return pd.DataFrame(_csv_identity_columns(results), index=results.settings.index)


def _counts(results: Results) -> pd.DataFrame:
    s = results.settings
    cols = ["n_total", "n_missing"] + [f"n_{st}" for st in schema.STATUSES] + [
        "n_failed", "n_solver_timed_out"]
    out = {c: s[c].astype(int) for c in cols}
    out["folds_differ"] = s["folds_differ"].astype(bool)
    return pd.DataFrame(out, index=s.index)


def metric_frame(results: Results, metric: str) -> pd.DataFrame:
    """The CSV form of a per-metric table: identity, every parameter, mean, std, n, counts."""
    s = results.settings
    out = _csv_identity_columns(results)
    out["mean"] = s[f"{metric}_mean"].astype(float)
    out["std"] = s[f"{metric}_std"].astype(float)
    out["n"] = s[f"{metric}_n"].astype(int)
    return pd.concat([pd.DataFrame(out, index=s.index), _counts(results)], axis=1)


def summary_frame(results: Results) -> pd.DataFrame:
    s = results.settings
    out = pd.concat([_csv_identity(results), _counts(results)], axis=1)
    for m in SUMMARY_METRICS:
        if m in results.metrics:
            out[f"{m}_mean"] = s[f"{m}_mean"].astype(float)
            out[f"{m}_std"] = s[f"{m}_std"].astype(float)
    return out


# ---- renderers -------------------------------------------------------------------------------

class Markup(str):
    """Markdown written on purpose (a link whose text went through `md_text`): `to_markdown`
    keeps it as it is, but for the table's own ``|``."""


#: characters that Markdown reads as syntax anywhere in a line (emphasis, code, links, escapes,
#: strike-through, headings' closing marks, table cells)
_MD_SYNTAX = frozenset("\\`*[]~#|")


def md_text(text: object) -> str:
    """``text`` as Markdown that renders as the text itself: HTML tags and entities as text
    (a dataset named ``<script>`` is no script in a site built from the report), emphasis,
    code, link and table characters escaped, line breaks as spaces (a name with a blank line
    ended its heading). ``_`` is escaped where it could open or close emphasis, not inside a
    word (``max_depth`` stays readable in the raw file)."""
    s = " ".join(str(text).splitlines())
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = []
    for i, ch in enumerate(s):
        if ch in _MD_SYNTAX:
            out.append("\\" + ch)
        elif ch == "_" and not (0 < i < len(s) - 1 and s[i - 1].isalnum() and s[i + 1].isalnum()):
            out.append("\\_")
        else:
            out.append(ch)
    return "".join(out)


def md_link(target: str) -> str:
    """A relative path as a Markdown link target: spaces and parentheses percent-encoded (a
    figure of the dataset ``a (b)`` kept its link)."""
    return target.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _md_cell(text: str) -> str:
    if isinstance(text, Markup):
        return " ".join(text.splitlines()).replace("|", "\\|")
    return md_text(text)


def to_markdown(d: Display) -> str:
    """A GitHub pipe table."""
    lines = ["| " + " | ".join(_md_cell(h) for h in d.header) + " |",
             "|" + "|".join(":---" if a == "l" else "---:" for a in d.align) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in d.rows]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "–": "--",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def to_latex(d: Display, caption: str | None = None) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), to be ``\\input`` in a table."""
    out = [f"% {latex_escape(caption or d.title)}; generated by treebench report",
           "% requires \\usepackage{booktabs}",
           "\\begin{tabular}{" + "".join(d.align) + "}", "\\toprule",
           " & ".join(latex_escape(h) for h in d.header) + " \\\\", "\\midrule"]
    groups = set(d.group_starts)
    for i, row in enumerate(d.rows):
        if i in groups:
            out.append("\\midrule")
        out.append(" & ".join(latex_escape(c) for c in row) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(out) + "\n"


def to_html(d: Display, css_class: str = "table") -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in d.header)
    body = []
    groups, failed = set(d.group_starts), set(d.failed_rows)
    for i, row in enumerate(d.rows):
        cls = ' class="group"' if i in groups else ""
        if i in failed:
            cls = ' class="failed group"' if cls else ' class="failed"'
        tds = "".join(f'<td class="{"num" if a == "r" else "txt"}">{esc(c)}</td>'
                      for c, a in zip(row, d.align))
        body.append(f"<tr{cls}>{tds}</tr>")
    return (f'<table class="{css_class}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def write_tables(results: Results, out: Path, formats: set[str]) -> dict[str, list[Path]]:
    """Write ``tables/<metric>.{csv,md,tex}``, ``tables/summary.*`` and ``tables/failures.csv``
    for the requested formats; return the paths by format."""
    tdir = out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    written: dict[str, list[Path]] = {"csv": [], "md": [], "latex": []}
    items: list[tuple[str, pd.DataFrame | None, Display]] = [
        ("summary", summary_frame(results) if "csv" in formats else None,
         summary_display(results))]
    for m in results.metrics:
        items.append((m, metric_frame(results, m) if "csv" in formats else None,
                      metric_display(results, m)))
    for name, frame, disp in items:
        if "csv" in formats and frame is not None:
            p = tdir / f"{name}.csv"
            atomic_write_text(p, frame.to_csv(index=False, lineterminator="\n"))
            written["csv"].append(p)
        if "md" in formats:
            p = tdir / f"{name}.md"
            atomic_write_text(p, f"## {disp.title}\n\n" + to_markdown(disp))
            written["md"].append(p)
        if "latex" in formats:
            p = tdir / f"{name}.tex"
            atomic_write_text(p, to_latex(disp))
            written["latex"].append(p)
    if "csv" in formats:
        p = tdir / "failures.csv"
        atomic_write_text(p, failures(results).to_csv(index=False, lineterminator="\n"))
        written["csv"].append(p)
    return {k: v for k, v in written.items() if v}
