"""Per-cell result files and their consolidation into `results.parquet` / `results.csv`.

Layout of a results directory::

    manifest.json        resolved config, environment, and one entry per run or sweep
    cells/<id>.json      one file per finished cell, written atomically by the driver
    results.parquet      consolidated table (schema-checked), rebuilt from cells/ at the end
    results.csv          the same table as CSV

The cell files are the source of truth: killing the runner at any moment loses no finished
cell, and the tables are always rebuilt from *every* cell file of the directory, so a sweep
that adds cells to an experiment's directory never drops the experiment's own rows. A cell run
again (``--retry``) replaces its record and keeps the old outcome in the record's ``history``.

In ``results.parquet`` each ``param_*``/``bparam_*`` column has a type of its own: integer,
float or boolean where every value is one, else text (numbers in a text column, such as the
``1`` of ``k: [1, 2, "all"]``, come back as numbers when read).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# pandas loads only in the functions that build or read tables: a rerun with nothing to do
# reads cell statuses without it


_NUMBER = re.compile(r"^-?\d+(\.\d*)?([eE][-+]?\d+)?$")


def cells_dir(out: Path) -> Path:
    return Path(out) / "cells"


def _read(p: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a torn file cannot exist (atomic rename) but a hand-edited one might
    return rec if isinstance(rec, dict) else None


def write_cell(out: Path, record: dict[str, Any]) -> Path:
    """Write a cell record atomically (the driver does this, never a worker). A record that
    replaces an earlier one of the same cell keeps the earlier outcomes in ``history`` (the
    row's ``history`` column holds them as JSON)."""
    from treebench.results.rows import history_entry

    d = cells_dir(out)
    d.mkdir(parents=True, exist_ok=True)
    row = record["row"]
    p = d / f"{row['cell_id']}.json"
    old = _read(p) if p.is_file() else None
    history = list(record.get("history") or [])
    if old is not None:
        history = list(old.get("history") or []) + [history_entry(old)] + history
    if history:
        record["history"] = history
        row["history"] = json.dumps(history, sort_keys=True, default=str)
    tmp = d / f".{p.name}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        # json.dumps runs the C encoder; json.dump streams through the pure-Python one (most
        # of the driver's CPU per Top-k cell on a cluster, issue 15)
        fh.write(json.dumps(record, default=str, allow_nan=True))
    os.replace(tmp, p)
    return p


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
    """The results table of ``rows``; ``experiment`` names the rows that do not name one."""
    import pandas as pd

    from treebench.results import schema

    df = pd.DataFrame(rows)
    # parameter columns keep their Python values (a missing key must not turn 50 into 50.0)
    for c in schema.param_columns(df) + schema.bparam_columns(df):
        df[c] = pd.Series([r.get(c) for r in rows], dtype=object, index=df.index)
    if experiment is not None and len(df):
        if "experiment" in df:
            df["experiment"] = df["experiment"].where(df["experiment"].notna(), experiment)
        else:
            df["experiment"] = experiment
    df = schema.conform(df)
    sort = [c for c in ("dataset", "algorithm", "algorithm_params", "binarizer_params", "seed", "fold") if c in df]
    if len(df):
        df = df.sort_values(sort, kind="stable").reset_index(drop=True)
    return df


def write_tables(out: Path, df: pd.DataFrame) -> tuple[Path, Path]:
    """Validate and write results.parquet and results.csv atomically."""
    from treebench.results import schema

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


def param_dtype(values: list[Any]) -> str:
    """The parquet type of a parameter column: ``Int64``, ``Float64`` or ``boolean`` when every
    non-null value is one, else ``string``."""
    vals = [v for v in values if not _isnull(v)]
    if vals and all(isinstance(v, bool) for v in vals):
        return "boolean"
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return "Int64"
    if vals and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
        return "Float64"
    return "string"


def _isnull(v: Any) -> bool:
    if v is None or (isinstance(v, float) and v != v):
        return True
    return type(v).__name__ == "NAType"  # pandas.NA, without importing pandas


def _as_text(v: Any) -> Any:
    if _isnull(v):
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, list | dict | tuple):
        return json.dumps(v, sort_keys=True)
    return str(v)


def _for_parquet(df: pd.DataFrame) -> pd.DataFrame:
    """Each param_* column with its own type (issue 8, A12): no JSON-quoted strings."""
    import pandas as pd

    from treebench.results import schema

    out = df.copy()
    for c in schema.param_columns(out) + schema.bparam_columns(out):
        vals = list(out[c])
        dt = param_dtype(vals)
        if dt == "string":
            out[c] = pd.Series([_as_text(v) for v in vals], dtype="string", index=out.index)
        else:
            out[c] = pd.Series([None if _isnull(v) else v for v in vals], dtype=object,
                               index=out.index).astype(dt)
    return out


def read_table(path: Path) -> pd.DataFrame:
    """Read results.parquet (or .csv) back with schema dtypes, and check it."""
    import pandas as pd

    from treebench.results import schema

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
    """A parameter value read back: numbers stay numbers (integral floats of a float column
    stay floats), text that is a number or JSON (older tables quoted every value) is parsed."""
    if _isnull(v):
        return None
    if isinstance(v, str):
        if v[:1] in ('"', "[", "{"):
            try:
                return json.loads(v)
            except ValueError:
                return v
        if _NUMBER.match(v):
            return float(v) if any(ch in v for ch in ".eE") else int(v)
        return v
    if hasattr(v, "item"):
        return v.item()
    return v
