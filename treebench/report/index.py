"""A folder of experiments (``results/<experiment>/``): every experiment's report, a top-level
index and a cross-experiment summary.

The index has one row per experiment: name, cells by status, datasets, algorithms, last update
and a link to its report. When a dataset appears in several experiments, ``across.csv`` /
``across.md`` (and a section of ``index.html``) put their settings side by side: mean ± std test
accuracy and leaves per (dataset, experiment, algorithm, parameters). Nothing is computed here
beyond what `treebench.report.aggregate` gives.
"""

from __future__ import annotations

import html as _html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from treebench.report.aggregate import Results, load_results, params_text
from treebench.utils.atomic import write_text as atomic_write_text
from treebench.report.tables import Display, Markup, mean_std, md_link, md_text, to_html, to_markdown
from treebench.results import schema
from treebench.results.store import results_dirs
from treebench.report.reproduction import verification
from treebench.report import write_report


def experiment_dirs(root: Path) -> list[Path]:
    """The results directories below ``root`` (`treebench.results.store.results_dirs`)."""
    return results_dirs(root)


def _label(res: Results, root: Path) -> str:
    """The folder (relative to the index) and, when it says more, the experiment and profile."""
    rel = res.directory.resolve().relative_to(root.resolve()).as_posix()
    profile = (res.manifest.get("config") or {}).get("profile") if isinstance(
        res.manifest.get("config"), dict) else None
    what = res.experiment + (f", profile {profile}" if profile else "")
    return rel if what == rel else f"{rel} ({what})"


#: the verdict of an experiment that states no claims, in the words of `treebench verify`
NOTHING_TO_CHECK = "nothing to check"


def _verdict(res: Results) -> str:
    """The reproduction verdict of an experiment: claims held, failed, or nothing to check."""
    v = verification(res)
    if not v.verdicts:
        return NOTHING_TO_CHECK
    n = len(v.verdicts)
    return f"held ({n}/{n})" if v.passed else f"FAILED ({v.n_failed} of {n})"


def _last_update(res: Results) -> str:
    m = res.manifest.get("updated_at")
    if isinstance(m, str) and m:
        return m
    v = res.table["finished_at"].dropna()
    return str(v.max()) if len(v) else ""


def index_display(items: list[tuple[Results, str]], root: Path | None = None) -> Display:
    """One row per experiment: its cells (those it defines, run or not) by status, ``missing``
    counting the defined cells without a result (not run yet, or interrupted)."""
    header = ["experiment", "claims", "cells", *schema.STATUSES, "missing", "datasets",
              "algorithms", "last update", "report"]
    rows = []
    for res, link in items:
        st = res.table["status"].astype(str)
        s = res.settings  # every defined setting, also those without a row
        missing = int(s["n_missing"].sum()) if "n_missing" in s else 0
        name = _label(res, root) if root is not None else res.experiment
        rows.append([name, _verdict(res), str(len(res.table) + missing)]
                    + [str(int((st == x).sum())) for x in schema.STATUSES] + [str(missing)]
                    + [", ".join(sorted({str(d) for d in s.get("dataset", ()) if d})),
                       ", ".join(sorted({str(a) for a in s.get("algorithm_label", ()) if a})),
                       _last_update(res), link])
    align = ["l", "l"] + ["r"] * (2 + len(schema.STATUSES)) + ["l"] * 4
    return Display("experiments", header, rows, align, [])


def linked(idx: Display, fmt: str) -> Display:
    """``idx`` with its ``report`` column as Markdown links (``[report](<path>)``) and its
    ``claims`` column linking to the report's reproduction section, so that each row's links
    sit in the row (``fmt`` "md"; other formats keep the plain paths)."""
    if fmt != "md":
        return idx
    at, claims = idx.header.index("report"), idx.header.index("claims")
    rows = []
    for row in idx.rows:
        row = list(row)
        link = md_link(row[at])
        row[claims] = Markup(f"[{md_text(row[claims])}]({link}#reproduction)") if link \
            else row[claims]
        row[at] = Markup(f"[report]({link})") if link else ""
        rows.append(row)
    return Display(idx.title, idx.header, rows, idx.align, idx.group_starts)


def linked_html(idx: Display) -> str:
    """`to_html` of ``idx`` with each row's report and claims as links inside the table."""
    at, claims = idx.header.index("report"), idx.header.index("claims")
    shown = Display(idx.title, idx.header, [list(r) for r in idx.rows], idx.align,
                    idx.group_starts)
    marks = []
    for i, row in enumerate(shown.rows):  # unique placeholders, replaced after escaping
        marks.append((row[at], row[claims], f"\x00report{i}\x00", f"\x00claims{i}\x00"))
        row[at], row[claims] = marks[-1][2], marks[-1][3]
    page = to_html(shown)
    for link, verdict, rmark, cmark in marks:
        href = _html.escape(link)
        page = page.replace(rmark, f'<a href="{href}">report</a>')
        page = page.replace(cmark, f'<a href="{href}#reproduction">{_html.escape(verdict)}</a>')
    return page


def across_frame(items: list[tuple[Results, str]]) -> pd.DataFrame:
    """Settings of the datasets that appear in two experiments or more, side by side."""
    seen: dict[str, set[str]] = {}
    for res, _ in items:
        for d in res.settings.get("dataset", []):
            seen.setdefault(str(d), set()).add(res.experiment)
    shared = {d for d, exps in seen.items() if len(exps) > 1}
    rows = []
    for res, _ in items:
        s = res.settings
        for i in range(len(s)):
            r = s.iloc[i]
            if str(r["dataset"]) not in shared:
                continue
            rows.append({
                "dataset": str(r["dataset"]), "experiment": res.experiment,
                "split": str(r["split_label"]),
                "algorithm_label": str(r["algorithm_label"]), "binarizer": str(r["binarizer"]),
                "params": params_text(r, res.key_columns),
                "test_accuracy_mean": r.get("test_accuracy_mean"),
                "test_accuracy_std": r.get("test_accuracy_std"),
                "n_leaves_mean": r.get("n_leaves_mean"),
                "n_ok": int(r["n_ok"]), "n_total": int(r["n_total"]),
            })
    cols = ["dataset", "experiment", "split", "algorithm_label", "binarizer", "params",
            "test_accuracy_mean",
            "test_accuracy_std", "n_leaves_mean", "n_ok", "n_total"]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(["dataset", "algorithm_label", "params", "experiment"], kind="stable"
                          ).reset_index(drop=True)


def across_display(df: pd.DataFrame) -> Display:
    header = ["dataset", "experiment", "split", "algorithm", "binarizer", "parameters",
              "test accuracy (mean ± std)", "leaves", "ok/total"]
    rows = []
    for r in df.itertuples():
        rows.append([r.dataset, r.experiment, r.split, r.algorithm_label, r.binarizer, r.params,
                     mean_std("test_accuracy", float(r.test_accuracy_mean), float(r.test_accuracy_std)),
                     mean_std("n_leaves", float(r.n_leaves_mean), float("nan")),
                     f"{r.n_ok}/{r.n_total}"])
    d = list(df["dataset"])
    starts = [i for i in range(1, len(d)) if d[i] != d[i - 1]]
    return Display("across experiments", header, rows, ["l"] * 6 + ["r"] * 3, starts)


def write_tree(root: Path, out: Path | None = None, formats: Sequence[str] = ("html", "md", "csv", "latex"),
               figures: bool = True) -> Path:
    """Write each experiment's report (``<experiment>/report/`` or ``out/<experiment>/``; with
    its figures unless ``figures`` is False), then ``index.html``, ``index.md`` and, when
    datasets repeat, ``across.csv``/``across.md`` in ``out`` (default ``root``). Returns the
    index folder."""
    root = Path(root)
    out = Path(out) if out is not None else root
    out.mkdir(parents=True, exist_ok=True)
    items: list[tuple[Results, str]] = []
    for d in experiment_dirs(root):
        rel = d.resolve().relative_to(root.resolve())
        target = (out / rel) if out != root else d / "report"
        write_report(d, target, formats=formats, figures=figures)
        link = (target / "index.html").resolve().relative_to(out.resolve()).as_posix() \
            if "html" in formats else target.resolve().relative_to(out.resolve()).as_posix()
        items.append((load_results(d), link))
    idx = index_display(items, root)
    across = across_frame(items)
    md = ["# treebench: experiments", "", to_markdown(linked(idx, "md"))]
    if len(across):
        md += ["## Datasets in several experiments", "", to_markdown(across_display(across))]
        atomic_write_text(out / "across.csv", across.to_csv(index=False, lineterminator="\n"))
        atomic_write_text(out / "across.md", to_markdown(across_display(across)))
    atomic_write_text(out / "index.md", "\n".join(md))
    body = [f"<h1>treebench: {len(items)} experiment(s)</h1>", linked_html(idx)]
    if len(across):
        body += ["<h2>Datasets in several experiments</h2>", to_html(across_display(across))]
    page = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>treebench '
            'experiments</title><style>body{font-family:system-ui,sans-serif;margin:2rem auto;'
            'max-width:1200px}table{border-collapse:collapse;font-size:.85rem}th,td{padding:.2rem'
            ' .5rem;border-bottom:1px solid #ddd}td.num{text-align:right}</style></head><body>'
            + "\n".join(body) + "</body></html>\n")
    atomic_write_text(out / "index.html", page)
    return out
