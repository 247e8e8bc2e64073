"""``summary.md``: the reproduction table, headline figures, the summary table, failures,
links to tables and figures, and provenance last (the order of ``index.html``)."""

from __future__ import annotations

from pathlib import Path

from treebench.report.aggregate import Results
from treebench.utils.atomic import write_text as atomic_write_text
from treebench.report.figures import FigureInfo
from treebench.report.provenance import (
    FAILURE_HEADER,
    description,
    failure_rows,
    provenance_items,
)
from treebench.report.tables import Display, md_link as _link, md_text, summary_display, to_markdown
from treebench.report.reproduction import display, verification
from treebench.report.html import headline_figures
from treebench.report.solvers import section_markdown


def render_markdown(results: Results, figures: list[FigureInfo], out: Path,
                    table_files: list[Path]) -> str:
    lines = [f"# treebench report: {md_text(results.experiment)}", ""]
    if description(results):
        lines += [md_text(description(results)), ""]
    lines += [f"> {md_text(note)}" for note in results.notes]
    lines += ["", "## Reproduction", ""]
    v = verification(results)
    if v.verdicts:
        lines += [f"**{md_text(v.headline())}**", ""]
        lines += [f"- {md_text(n)}" for n in v.note.split("; ") if n] + ([""] if v.note else [])
        lines += [to_markdown(display(v))]
    else:
        lines += [md_text(v.note), ""]
    lines += section_markdown(results, figures, out)
    n_datasets = results.settings["dataset"].nunique() if not results.settings.empty else 0
    n_algorithms = results.settings["algorithm_label"].nunique() if not results.settings.empty else 0
    head = headline_figures(figures, n_datasets, n_algorithms)
    if head:
        lines += ["## Headline figures", ""]
        for info in head:
            img = info.paths.get("png") or info.paths.get("svg")
            if img is not None:
                lines += [f"![{md_text(info.title)}]({_link(Path(img).relative_to(out).as_posix())})", ""]
    lines += ["## Summary", ""]
    if results.settings.empty:
        lines.append("The results table has no rows.")
    else:
        lines.append("Mean ± standard deviation over the folds and seeds whose status is `ok`; "
                     "failed cells are counted in the last columns.")
        lines += ["", to_markdown(summary_display(results))]
    rows = failure_rows(results)
    lines += [f"## Failures ({len(rows)})", ""]
    if rows:
        lines.append(to_markdown(Display("failures", FAILURE_HEADER, rows,
                                         ["l"] * len(FAILURE_HEADER), [])))
    else:
        lines += ["No failed cells.", ""]
    if table_files:
        lines += ["## Tables", ""]
        lines += [f"- [{md_text(p.name)}]({_link(p.relative_to(out).as_posix())})" for p in table_files]
        lines.append("")
    if figures:
        lines += ["## Figures", ""]
        current = None
        for info in figures:
            if info.dataset != current:
                lines += [f"### {md_text(info.dataset)}", ""]
                current = info.dataset
            img = info.paths.get("png") or info.paths.get("svg")
            if img is not None:
                lines += [f"![{md_text(info.title)}]({_link(Path(img).relative_to(out).as_posix())})", ""]
    lines += ["## Provenance", ""]
    lines += [f"- **{md_text(k)}**: {md_text(v)}" for k, v in provenance_items(results)]
    return "\n".join(lines).rstrip() + "\n"


def write_markdown(results: Results, out: Path, figures: list[FigureInfo],
                   table_files: list[Path]) -> Path:
    p = out / "summary.md"
    atomic_write_text(p, render_markdown(results, figures, out, table_files))
    return p
