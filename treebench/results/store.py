"""Per-cell result files and their consolidation into `results.parquet` / `results.csv`.

Layout of a results directory::

    manifest.json        resolved config + environment (written before cells run)
    cells/<id>.json      one file per finished cell, written atomically (temporary name, then
                         rename) by the process that supervised it (`treebench.execute.supervise`)
    results.parquet      consolidated table (schema-checked), rebuilt from cells/ after a run
    results.csv          the same table as CSV

The cell files are the source of truth: killing the runner at any moment loses no finished
cell, and `treebench.api.consolidate` can always rebuild the tables from them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from treebench.results import schema


def cells_dir(out: Path) -> Path:
    return Path(out) / "cells"


def existing_status(out: Path) -> dict[str, str]:
    """cell id → status for every readable cell file in ``out``."""
    d = cells_dir(out)
    found: dict[str, str] = {}
    if not d.is_dir():
        return found
    for p in d.glob("*.json"):
        if p.name.startswith("."):
            continue
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
            found[p.stem] = rec["row"]["status"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def load_rows(out: Path, cell_ids: list[str] | None = None) -> list[dict[str, Any]]:
    d = cells_dir(out)
    paths = (
        [d / f"{cid}.json" for cid in cell_ids]
        if cell_ids is not None
        else sorted(p for p in d.glob("*.json") if not p.name.startswith("."))
    )
    rows = []
    for p in paths:
        if not p.is_file():
            continue
        try:
            rows.append(json.loads(p.read_text(encoding="utf-8"))["row"])
        except (OSError, ValueError, KeyError):
            continue
    return rows


def to_frame(rows: list[dict[str, Any]], experiment: str | None = None) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    # parameter columns keep their Python values (a missing key must not turn 50 into 50.0)
    for c in schema.param_columns(df) + schema.bparam_columns(df):
        df[c] = pd.Series([r.get(c) for r in rows], dtype=object, index=df.index)
    if experiment is not None and len(df):
        df["experiment"] = experiment
    df = schema.conform(df)
    sort = [c for c in ("dataset", "algorithm", "algorithm_params", "binarizer_params", "seed", "fold") if c in df]
    if len(df):
        df = df.sort_values(sort, kind="stable").reset_index(drop=True)
    return df


def write_tables(out: Path, df: pd.DataFrame) -> tuple[Path, Path]:
    """Validate and write results.parquet and results.csv atomically."""
    schema.validate(df)
    out = Path(out)
    pq, csv = out / "results.parquet", out / "results.csv"
    tmp_pq = out / f".results.parquet.{os.getpid()}.tmp"
    tmp_csv = out / f".results.csv.{os.getpid()}.tmp"
    _for_parquet(df).to_parquet(tmp_pq, index=False)
    df.to_csv(tmp_csv, index=False)
    os.replace(tmp_pq, pq)
    os.replace(tmp_csv, csv)
    return pq, csv


def _for_parquet(df: pd.DataFrame) -> pd.DataFrame:
    """param_* columns mix ints, floats, strings and None; store them as JSON strings so the
    parquet schema is stable, and decode them on read."""
    out = df.copy()
    for c in schema.param_columns(out) + schema.bparam_columns(out):
        out[c] = out[c].map(lambda v: None if v is None else json.dumps(v)).astype("string")
    return out


def read_table(path: Path) -> pd.DataFrame:
    """Read results.parquet (or .csv) back with schema dtypes, and check it."""
    path = Path(path)
    if path.suffix == ".csv":
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    else:
        df = pd.read_parquet(path)
    for c in schema.param_columns(df) + schema.bparam_columns(df):
        df[c] = pd.Series([_decode(v) for v in df[c]], dtype=object, index=df.index)
    if path.suffix == ".csv":
        for col, dt in schema.COLUMNS.items():
            if col in df and dt in ("Int64", "Float64"):
                df[col] = pd.to_numeric(df[col])
            elif col in df and dt == "boolean":
                df[col] = df[col].map({"True": True, "False": False}).astype("boolean")
    df = schema.conform(df)
    schema.validate(df)
    return df


def _decode(v: Any) -> Any:
    if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
        return None
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v
