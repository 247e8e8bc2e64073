"""Reports from a results directory: tables, figures and a self-contained ``index.html``.

The report is the last step of the pipeline, downstream of the results table. It reads ``results.parquet`` (and the optional
``manifest.json``), groups rows into settings (dataset × binarizer × algorithm × parameter
values), and shows mean ± std over folds of the metrics the workers computed; it computes no
metric itself. Timed-out and failed cells are counted, marked in figures and listed.

Importing this package is cheap; pandas and matplotlib load when `write_report` runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from treebench.errors import UserError, did_you_mean
from treebench.utils.atomic import read_json_object, write_json

FORMATS = ("html", "md", "csv", "latex")
#: the report options `treebench report` can give over those the run recorded (the config's
#: ``report:`` keys), with their flags (`treebench.report.aggregate.check_report_options`)
OPTION_FLAGS = {"reference_solver": "--reference-solver", "rivals": "--rivals",
                "min_reference_seconds": "--min-reference-seconds", "clock": "--clock"}
#: formats chosen only on request: figures are PNG, and also SVG when ``svg`` is asked for
EXTRA_FORMATS = ("svg",)
_ALIASES = {"tex": "latex", "markdown": "md", "htm": "html"}

__all__ = ["FORMATS", "parse_formats", "write_report"]


def parse_formats(formats: str | Sequence[str]) -> list[str]:
    """Normalise ``"html,md"`` or ``["html", "md"]`` to known format names, in `FORMATS` order.
    Raise `UserError` for an unknown name."""
    items = [formats] if isinstance(formats, str) else list(formats)
    names: set[str] = set()
    for item in items:
        for part in str(item).split(","):
            name = part.strip().lower()
            if not name:
                continue
            name = _ALIASES.get(name, name)
            if name not in FORMATS + EXTRA_FORMATS:
                known = FORMATS + EXTRA_FORMATS
                raise UserError(
                    f"Unknown report format `{part.strip()}`{did_you_mean(name, known)}; "
                    f"choose from {', '.join(known)}."
                )
            names.add(name)
    if not names:
        raise UserError(f"No report format given; choose from {', '.join(FORMATS)}.")
    return [f for f in FORMATS + EXTRA_FORMATS if f in names]


def write_report(
    results_dir: Path,
    out: Path | None = None,
    formats: Sequence[str] = FORMATS,
    figures: bool = True,
    options: Mapping[str, Any] | None = None,
) -> dict[str, list[Path]]:
    """Write the report of ``results_dir`` into ``out`` (default ``results_dir / "report"``).

    ``formats`` picks among ``html`` (``index.html``), ``md`` (``summary.md`` and
    ``tables/*.md``), ``csv`` (``tables/*.csv``, including ``failures.csv``) and ``latex``
    (``tables/*.tex``); ``figures`` adds ``figures/*.png`` (and ``figures/*.svg`` when
    ``svg`` is among the formats). Files are written atomically; unchanged figures are kept.
    Return the written paths by kind: ``html``, ``md``, ``csv``, ``latex``, ``png``, ``svg``
    (kinds with no file are left out). ``options`` (``reference_solver``, ``rivals``,
    ``min_reference_seconds``, ``clock``; None: not given) replace the report options the
    run recorded.
    Raise `UserError` when ``results.parquet`` is missing or unreadable, a format is unknown or
    an option names no algorithm entry of the experiment.
    """
    fmts = parse_formats(formats)
    from treebench.report.aggregate import check_report_options, load_results

    results = load_results(Path(results_dir))
    results.options = check_report_options(results, options or {})
    out_dir = Path(out) if out is not None else results.directory / "report"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"Cannot create the report directory {out_dir} ({exc.strerror}).") \
            from None

    pending = None
    if figures:  # drawn in forked workers while this process writes the tables
        from treebench.report.figures import start_figures

        pending = start_figures(results, out_dir, ("png", "svg") if "svg" in fmts else ("png",))
    try:
        from treebench.report.tables import write_tables

        written: dict[str, list[Path]] = {}
        written.update(write_tables(results, out_dir, set(fmts)))
        from treebench.report.reproduction import verification
        from treebench.report.reproduction import write_tables as write_reproduction

        for kind, paths in write_reproduction(verification(results), out_dir, set(fmts)).items():
            written[kind] = paths + written.get(kind, [])
        from treebench.report.solvers import write_tables as write_solvers

        for kind, paths in write_solvers(results, out_dir, set(fmts)).items():
            written[kind] = written.get(kind, []) + paths
    except BaseException:
        if pending is not None:
            pending.close()
        raise
    infos = []
    if pending is not None:
        infos = pending.finish()
        for kind in ("png", "svg"):
            paths = [i.paths[kind] for i in infos if kind in i.paths]
            if paths:
                written[kind] = paths
    if "md" in fmts:
        from treebench.report.markdown import write_markdown

        tables = [p for k in ("csv", "md", "latex") for p in written.get(k, [])]
        written["md"] = [write_markdown(results, out_dir, infos, tables)] + written.get("md", [])
    if "html" in fmts:
        from treebench.report.html import write_html

        written["html"] = [write_html(results, out_dir, infos)]
    remove_stale(out_dir, [p for paths in written.values() for p in paths])
    return {k: written[k] for k in ("html", "md", "csv", "latex", "png", "svg") if k in written}


#: the list of pages and tables the last report wrote into its folder (what `remove_stale` may
#: remove: a file the report never wrote, a user's own page in an --out folder, is never touched)
WRITTEN_RECORD = ".report-files.json"
#: the suffixes of the files `remove_stale` removes (pages and tables; figures are pruned where
#: they are drawn)
STALE_SUFFIXES = (".html", ".md", ".csv", ".tex")


def remove_stale(out_dir: Path, written: list[Path]) -> None:
    """Remove the pages and tables the previous report wrote into ``out_dir`` and this one did
    not (a format not asked for now, a claim since removed, another results folder reported
    into the same ``--out``): they would sit beside the new ones and say other things. Only
    files listed in `WRITTEN_RECORD` by a report are removed; a link is removed, never its
    target. Then records what this report wrote."""
    import os

    root = os.path.abspath(out_dir)
    keep = sorted({os.path.relpath(os.path.abspath(p), root) for p in written})
    before = read_json_object(out_dir / WRITTEN_RECORD).get("files")
    for rel in before if isinstance(before, list) else []:
        parts = Path(str(rel)).parts
        if (not isinstance(rel, str) or rel in keep or Path(rel).is_absolute() or ".." in parts
                or Path(rel).suffix not in STALE_SUFFIXES):
            continue
        p = out_dir / rel
        if p.is_symlink() or p.is_file():
            p.unlink()
    write_json(out_dir / WRITTEN_RECORD, {"files": keep})
