"""The report's "Reproduction" section: the config's expectations checked on this results table
(the same verdicts as `treebench verify`, from `treebench.verify`)."""

from __future__ import annotations

from pathlib import Path

from treebench.report.aggregate import Results
from treebench.report.tables import Display
from treebench.verify import HEADER, Verification, verify_dir
from treebench.errors import UserError
from treebench.report.tables import to_markdown

NO_EXPECTATIONS = ("The config states no expectations (`expect:`), so there is nothing to "
                   "check; docs/reproductions/index.md says how to add them.")


def verification(results: Results) -> Verification:
    """Verdicts of the claims of every config recorded in the run's manifest, each on exactly
    the cells that config defines (`treebench.verify.verify_dir`); one table for all of them
    (items prefixed by the experiment when the folder holds several). Computed once per
    `Results`: the tables, the HTML page and the Markdown summary show the same verdicts."""
    if results.claims is None:
        results.claims = _verification(results)
    return results.claims


def _verification(results: Results) -> Verification:
    cfg = results.manifest.get("config") or {}
    v = Verification(results.experiment, results.directory, cfg.get("profile"))
    try:
        found = verify_dir(results.directory, table=results.table)
    except UserError as exc:
        v.note = str(exc)
        return v
    found = [x for x in found if x.verdicts]
    if not found:
        v.note = NO_EXPECTATIONS
        return v
    for x in found:
        for verdict in x.verdicts:
            if len(found) > 1:
                verdict.item = f"[{x.experiment}{'@' + x.profile if x.profile else ''}] {verdict.item}"
            v.verdicts.append(verdict)
    v.note = "; ".join(dict.fromkeys(n for x in found for n in x.note.split("; ") if n))
    return v


def display(v: Verification) -> Display:
    rows = v.rows()
    failed = [i for i, x in enumerate(v.verdicts) if not x.passed]
    return Display("reproduction", list(HEADER), rows, ["l", "l", "r", "l", "r", "l"], [], failed)


def write_tables(v: Verification, out: Path, formats: set[str]) -> dict[str, list[Path]]:
    """``tables/reproduction.csv`` / ``.md`` when there are expectations."""
    if not v.verdicts:
        return {}
    import pandas as pd


    tdir = out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    written: dict[str, list[Path]] = {}
    if "csv" in formats:
        p = tdir / "reproduction.csv"
        pd.DataFrame(v.rows(), columns=HEADER).to_csv(p, index=False)
        written["csv"] = [p]
    if "md" in formats:
        p = tdir / "reproduction.md"
        p.write_text(to_markdown(display(v)) + "\n", encoding="utf-8")
        written["md"] = [p]
    return written
