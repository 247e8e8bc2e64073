"""``index.html``: one self-contained page (inline CSS, figures as base64 PNG, no external
resources). It opens on what a reader came for: the reproduction table (the config's
expectations, checked) and the headline figures (comparisons over datasets), then the summary
and failures, every figure by dataset, per-metric tables; provenance folds away at the end."""

from __future__ import annotations

import base64
import html as _html
from pathlib import Path

from treebench.report.aggregate import Results
from treebench.utils.atomic import write_text as atomic_write_text
from treebench.report.figures import FigureInfo
from treebench.report.provenance import (
    FAILURE_HEADER,
    config_text,
    description,
    failure_rows,
    provenance_items,
)
from treebench.report.tables import Display, metric_display, metric_label, summary_display, to_html
from treebench.report.comparison import ALL_DATASETS
from treebench.report.reproduction import display, verification
from treebench.report.solvers import section_html

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222;line-height:1.4}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{padding:.2rem .55rem;border-bottom:1px solid #e4e4e4;vertical-align:top}
th{background:#f4f4f4;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.group td{border-top:2px solid #bbb}tr.failed td{background:#fff4f0}
table.prov td:first-child{color:#555;white-space:nowrap}
.note{color:#8a4b00}.figs{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;max-width:100%}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.8rem;color:#555}pre{background:#f7f7f7;padding:.6rem;overflow:auto;
font-size:.8rem}details{margin:.4rem 0}summary{cursor:pointer}
.wide{overflow-x:auto}
.verdict{font-weight:600;padding:.3rem .6rem;border-radius:4px;display:inline-block}
.verdict.pass{background:#e8f6ea;color:#1d6b2c}.verdict.fail{background:#fde8e4;color:#9b1c0c}
table.reproduction td:last-child{white-space:nowrap}nav.toc{font-size:.85rem;color:#555}
nav.toc a{margin-right:.8rem}
"""


def _esc(text: object) -> str:
    return _html.escape(str(text))


def _simple_table(header: list[str], rows: list[list[str]], css_class: str = "") -> str:
    d = Display("", header, rows, ["l"] * len(header), [])
    return to_html(d, css_class or "table")


def _figure_html(info: FigureInfo) -> str:
    png = info.paths.get("png")
    if png is None:
        return ""
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return (f'<figure><img alt="{_esc(info.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_esc(info.title)} ({_esc(info.stem)})</figcaption></figure>")


#: the figures that show what a learner buys against another: accuracy against size and time
TRADE_OFF_STEMS = ("__pareto_test_accuracy_vs_n_leaves", "__train_accuracy_vs_time")


def headline_figures(figures: list[FigureInfo], n_datasets: int,
                     n_algorithms: int = 1) -> list[FigureInfo]:
    """With several learners on at most four datasets, each dataset's accuracy-against-size
    (Pareto) and accuracy-against-time figures first; then cross-dataset comparisons; with at
    most four datasets, also each dataset's first figure (the sweep the experiment is about)."""
    out = []
    if n_algorithms >= 2 and n_datasets <= 4:
        out = [f for stem in TRADE_OFF_STEMS for f in figures if f.stem.endswith(stem)]
    out += [f for f in figures if f.dataset == ALL_DATASETS]
    if n_datasets <= 4:
        seen: set[str] = set()
        for f in figures:
            if f.dataset != ALL_DATASETS and f.dataset not in seen and "__pareto" not in f.stem:
                seen.add(f.dataset)
                out.append(f)
    return out


def _reproduction_html(results: Results) -> str:
    v = verification(results)
    parts = ["<h2 id=\"reproduction\">Reproduction</h2>"]
    if not v.verdicts:
        parts.append(f"<p>{_esc(v.note)}</p>")
        return "\n".join(parts)
    cls = "pass" if v.passed else "fail"
    parts.append(f'<p><span class="verdict {cls}">{_esc(v.headline())}</span></p>')
    parts += [f"<p class=\"note\">{_esc(n)}</p>" for n in v.note.split("; ") if n]
    parts.append(f'<div class="wide">{to_html(display(v), "table reproduction")}</div>')
    return "\n".join(parts)


def render_html(results: Results, figures: list[FigureInfo]) -> str:
    title = f"treebench report: {results.experiment}"
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>{_esc(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_esc(title)}</h1>"]
    if description(results):
        parts.append(f"<p>{_esc(description(results))}</p>")
    parts.append('<nav class="toc"><a href="#reproduction">Reproduction</a>'
                 '<a href="#headline">Headline figures</a><a href="#summary">Summary</a>'
                 '<a href="#failures">Failures</a><a href="#figures">All figures</a>'
                 '<a href="#tables">Tables</a><a href="#provenance">Provenance</a></nav>')
    for note in results.notes:
        parts.append(f'<p class="note">{_esc(note)}</p>')

    parts.append(_reproduction_html(results))
    parts.append(section_html(results, figures, _figure_html))

    n_datasets = results.settings["dataset"].nunique() if not results.settings.empty else 0
    n_algorithms = results.settings["algorithm_label"].nunique() if not results.settings.empty else 0
    head = headline_figures(figures, n_datasets, n_algorithms)
    if head:
        parts.append("<h2 id=\"headline\">Headline figures</h2><div class=\"figs\">")
        parts += [_figure_html(f) for f in head]
        parts.append("</div>")

    parts.append("<h2 id=\"summary\">Summary</h2>")
    if results.settings.empty:
        parts.append("<p>The results table has no rows.</p>")
    else:
        parts.append("<p>Mean ± standard deviation over the folds and seeds whose status is "
                     "<code>ok</code>; failed cells are counted in the last columns.</p>")
        parts.append(f'<div class="wide">{to_html(summary_display(results))}</div>')

    rows = failure_rows(results)
    parts.append(f"<h2 id=\"failures\">Failures ({len(rows)})</h2>")
    if rows:
        parts.append(f'<div class="wide">{_simple_table(FAILURE_HEADER, rows)}</div>')
    else:
        parts.append("<p>No failed cells.</p>")

    if figures:
        parts.append("<h2 id=\"figures\">All figures</h2>")
        current = None
        for info in figures:
            if info.dataset != current:
                if current is not None:
                    parts.append("</div>")
                parts.append(f"<h3>{_esc(info.dataset)}</h3><div class=\"figs\">")
                current = info.dataset
            parts.append(_figure_html(info))
        parts.append("</div>")

    if results.metrics:
        parts.append("<h2 id=\"tables\">Per-metric tables</h2>")
        for m in results.metrics:
            parts.append(f"<details><summary>{_esc(metric_label(m))}</summary>"
                         f'<div class="wide">{to_html(metric_display(results, m))}</div>'
                         "</details>")

    parts.append("<h2 id=\"provenance\">Provenance</h2>")
    prov = "".join(f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>"
                   for k, v in provenance_items(results))
    parts.append(f"<details><summary>Versions, host, manifest ({len(provenance_items(results))} "
                 f'entries)</summary><table class="prov"><tbody>{prov}</tbody></table></details>')
    cfg = config_text(results)
    if cfg:
        parts.append(f"<details><summary>Resolved configuration</summary><pre>{_esc(cfg)}"
                     "</pre></details>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_html(results: Results, out: Path, figures: list[FigureInfo]) -> Path:
    p = out / "index.html"
    atomic_write_text(p, render_html(results, figures))
    return p
