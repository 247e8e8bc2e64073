"""The report's "Reproduction" section: the config's expectations checked on this results table
(the same verdicts as `treebench verify`, from `treebench.verify`)."""

from __future__ import annotations

from pathlib import Path

from treebench.report.aggregate import Results
from treebench.report.tables import Display
from treebench.verify import HEADER, Verification, parse_expectations, verify_table

NO_EXPECTATIONS = ("The config states no expectations (`expect:`), so there is nothing to "
                   "check; see the README's \"Paper reproductions\" for how to add them.")


def verification(results: Results) -> Verification:
    """Verdicts of the expectations recorded in the run's manifest (its resolved config)."""
    cfg = results.manifest.get("config") or {}
    v = Verification(results.experiment, results.directory, cfg.get("profile"))
    items = parse_expectations(cfg.get("expect") or [], str(results.directory / "manifest.json"))
    if not items:
        v.note = NO_EXPECTATIONS
        return v
    v.verdicts = verify_table(results.table, items)
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

    from treebench.report.tables import to_markdown

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
