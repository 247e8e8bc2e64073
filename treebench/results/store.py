"""Per-cell result files and their consolidation into `results.parquet` / `results.csv`.

Layout of a results directory::

    manifest.json        resolved config, environment, and one entry per run or sweep
    cells/<id>.json      one file per finished cell, written atomically by the driver
    results.parquet      consolidated table (schema-checked), rebuilt from cells/ at the end
    results.csv          the same table as CSV
    results-earlier.*    the cells of earlier definitions (only when there are any)

The cell files are the source of truth: killing the runner at any moment loses no finished
cell. The tables hold every usable cell that an experiment recorded in ``manifest.json``
defines now (a sweep that adds cells to an experiment's directory never drops the experiment's
own rows); a usable cell that no record defines any more (its config was edited, say from
5 folds to 3, or its data changed: a cell's id hashes its data's fingerprint) is kept in
``cells/`` and goes to ``results-earlier.parquet``/``.csv`` instead, so a ``groupby`` on
``results.csv`` never pools two protocols of one experiment (`select`). A cell run
again (``--retry``) replaces its record and keeps the old outcome in the record's ``history``.

In ``results.parquet`` each ``param_*``/``bparam_*`` column has a type of its own: integer,
float or boolean where every value is one, else text (numbers in a text column, such as the
``1`` of ``k: [1, 2, "all"]``, come back as numbers when read).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from treebench.utils.atomic import temp_path, write_bytes
from treebench.errors import UserError
from treebench.results.rows import history_entry
from treebench.results.cellfile import CellFileError, cells_dir, encode_record, read_cell
from treebench.results.defined import ManifestError, read_manifest, stale_and_labels
from treebench.results.index import record_tables, remember_written, scan, Scan, tables_state
from treebench.results import schema

if TYPE_CHECKING:
    import pandas as pd

# pandas loads only in the functions that build or read tables: a rerun with nothing to do
# reads cell statuses without it


_NUMBER = re.compile(r"^-?\d+(\.\d*)?([eE][-+]?\d+)?$")


class ResultsWriteError(UserError):
    """A results file could not be written (disk full, permissions): the cells written before
    are kept, and the same command resumes once the cause is fixed."""


def _read(p: Path) -> dict[str, Any] | None:
    try:
        return read_cell(p)[0]
    except CellFileError:
        return None


def write_cell(out: Path, record: dict[str, Any]) -> Path:
    """Write a cell record atomically (the driver does this, never a worker), with its content
    hash. A record that replaces an earlier one of the same cell keeps the earlier outcomes in
    ``history`` (the row's ``history`` column holds them as JSON). Raise `ResultsWriteError`
    when the file cannot be written (disk full): nothing of the directory is lost."""
    d = cells_dir(out)
    row = record["row"]
    p = d / f"{row['cell_id']}.json"
    old = _read(p) if p.is_file() else None
    history = list(record.get("history") or [])
    if old is not None:
        history = list(old.get("history") or []) + [history_entry(old)] + history
    if history:
        record["history"] = history
        row["history"] = json.dumps(history, sort_keys=True, default=str)
    data, digest = encode_record(record)
    try:
        d.mkdir(parents=True, exist_ok=True)
        write_bytes(p, data)
    except OSError as exc:
        raise write_error(p, exc) from None
    if schema.check_row(row) is None:  # else the next scan reads it and sets it aside
        label = row.get("algorithm_label")
        remember_written(p, str(row["cell_id"]), digest, str(row["status"]),
                         None if label is None else str(label))
    return p


def write_error(p: Path, exc: OSError) -> ResultsWriteError:
    """The one sentence for a results file that could not be written."""
    reason = (exc.strerror or type(exc).__name__).lower()
    return ResultsWriteError(
        f"{p}: cannot write this file ({reason}); every result written before is kept: free "
        f"space or fix the permissions, then run the same command again to resume."
    )


def existing_status(out: Path) -> dict[str, str]:
    """cell id → status for every usable cell file in ``out`` (damaged ones count as absent)."""
    return {cid: e.status for cid, e in scan(out).cells.items()}


def load_rows(out: Path, cell_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows of the usable cell files of ``out`` (of ``cell_ids`` when given)."""
    d = cells_dir(out)
    if cell_ids is None:
        cell_ids = sorted(scan(out).cells)
    rows = []
    for cid in cell_ids:
        p = d / f"{cid}.json"
        if not p.is_file():
            continue
        try:
            rows.append(read_cell(p)[0]["row"])
        except CellFileError:
            continue
    return rows


def to_frame(rows: list[dict[str, Any]], experiment: str | None = None) -> pd.DataFrame:
    """The results table of ``rows``; ``experiment`` names the rows that do not name one."""
    import pandas as pd


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
    sort = [c for c in ("dataset", "algorithm_label", "algorithm_params", "binarizer_params", "seed", "fold") if c in df]
    if len(df):
        df = df.sort_values(sort, kind="stable").reset_index(drop=True)
    return df


def write_tables(out: Path, df: pd.DataFrame,
                 names: tuple[str, str] = ("results.parquet", "results.csv")) -> tuple[Path, Path]:
    """Validate and write results.parquet and results.csv (or the two ``names``) atomically."""
    schema.validate(df)
    out = Path(out)
    pq, csv = out / names[0], out / names[1]
    tmp_pq, tmp_csv = temp_path(pq), temp_path(csv)
    try:
        tmp_pq.unlink(missing_ok=True)  # pandas would write through a link left under the name
        tmp_csv.unlink(missing_ok=True)
        _for_parquet(df).to_parquet(tmp_pq, index=False)
        df.to_csv(tmp_csv, index=False)
        os.replace(tmp_pq, pq)
        os.replace(tmp_csv, csv)
    except OSError as exc:
        tmp_pq.unlink(missing_ok=True)
        tmp_csv.unlink(missing_ok=True)
        raise write_error(pq if not pq.exists() or tmp_pq.exists() else csv, exc) from None
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
    """Each param_* column with its own type: no JSON-quoted strings."""
    import pandas as pd


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


    path = Path(path)
    if path.suffix == ".csv":
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    else:
        df = pd.read_parquet(path)
    for c in schema.param_columns(df) + schema.bparam_columns(df):
        df[c] = pd.Series([_decode(v) for v in df[c]], dtype=object, index=df.index)
    if path.suffix == ".csv":
        df = df.rename(columns={o: n for o, n in schema.RENAMED.items()
                                if o in df.columns and n not in df.columns})
        for col, dt in {n: c.dtype for n, c in schema.table_columns(df).items()}.items():
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


#: the tables of the cells of earlier definitions (written only when there are any)
EARLIER = ("results-earlier.parquet", "results-earlier.csv")


class Selection:
    """The usable cells of a scan split by the manifest's records: ``cells`` (those some
    record defines: the tables' rows) and ``earlier`` (those none defines any more). Without a
    manifest, or with one that does not list its cells, every cell is in ``cells``. Its
    ``digest`` covers both parts, so moving a cell from one to the other rebuilds the tables.
    ``labels`` (cell id -> the entry label its current record gives it, `stale_and_labels`,
    where that differs from the label its file was written with) relabels the rows of
    ``cells``; the digest covers them, so a renamed entry rebuilds the tables too."""

    def __init__(self, current: Scan, stale: set[str], labels: dict[str, str] | None = None):
        self.scan = current
        self.cells = {c: e for c, e in current.cells.items() if c not in stale}
        self.earlier = {c: e for c, e in current.cells.items() if c in stale}
        self.labels = {c: lab for c, lab in (labels or {}).items()
                       if c in self.cells and self.cells[c].label != lab}
        self.problems = current.problems

    @property
    def digest(self) -> str:
        main = Scan(cells=self.cells).digest
        if self.labels:
            shown = json.dumps(sorted(self.labels.items()), ensure_ascii=False)
            main = hashlib.sha256(f"{main}\nlabels {shown}".encode()).hexdigest()
        if not self.earlier:
            return main
        return hashlib.sha256(f"{main}\nearlier {Scan(cells=self.earlier).digest}".encode()
                              ).hexdigest()


def select(out: Path, current: Scan) -> Selection:
    """`Selection` of the usable cells of ``current`` by the manifest of ``out`` (a damaged
    manifest selects every cell)."""
    try:
        stale, labels = stale_and_labels(read_manifest(out), current.cells)
    except ManifestError:
        stale, labels = set(), {}
    return Selection(current, stale, labels)


def _rows(out: Path, cells: dict[str, Any], current: Scan,
          labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The rows of the cell files of ``cells``, each under the entry label ``labels`` gives
    its cell (where it gives one)."""
    d = cells_dir(out)
    rows = []
    for cid in sorted(cells):
        entry = cells[cid]
        try:  # the scan checked this content against the schema: not again
            rec, digest = read_cell(d / entry.file, entry.hash if entry.hashed else None)
        except CellFileError as exc:  # changed since the scan: leave it to the next one
            current.problems[entry.file] = str(exc)
            continue
        row = rec["row"]
        label = (labels or {}).get(cid)
        if label is not None and row.get("algorithm_label") != label:
            row = {**row, "algorithm_label": label}
        rows.append(row)
    return rows


def build_table(out: Path, current: Any, experiment: str | None = None) -> pd.DataFrame:
    """The results table of the cells of ``current`` (a `Selection`, or a
    `treebench.results.index.Scan` for every usable cell)."""
    if isinstance(current, Selection):
        return to_frame(_rows(out, current.cells, current.scan, current.labels),
                        experiment=experiment)
    return to_frame(_rows(out, current.cells, current), experiment=experiment)


def earlier_state(out: Path, sel: Selection) -> str | None:
    have = [t for t in EARLIER if (Path(out) / t).is_file()]
    if sel.earlier and len(have) < len(EARLIER):
        return "the table of the cells of earlier definitions is missing"
    if not sel.earlier and have:
        return "the table of the cells of earlier definitions is out of date"
    return None


def _write_earlier(out: Path, sel: Selection, experiment: str | None) -> None:
    """results-earlier.parquet/.csv of the cells of earlier definitions, or neither."""
    out = Path(out)
    if not sel.earlier:
        for t in EARLIER:
            (out / t).unlink(missing_ok=True)
        return
    df = to_frame(_rows(out, sel.earlier, sel.scan), experiment=experiment)
    write_tables(out, df, names=EARLIER)


def refresh_tables(out: Path, experiment: str | None = None, *, write: bool = True,
                   current: Any = None) -> tuple[pd.DataFrame | None, str | None, Any]:
    """Make the tables of ``out`` a function of its usable cells and the cells its recorded
    experiments define (`select`): rebuild them when either changed or a table file is
    damaged. Returns (the table when it was rebuilt, else None; why it was rebuilt, else None;
    the scan). With ``write`` (the caller holds the lock) the tables and the index are
    written; else the table is only built. ``current`` is a scan the caller made already."""
    current = current if current is not None else scan(out, save=write)
    sel = select(out, current)
    why = tables_state(out, sel) or earlier_state(out, sel)
    if why is None:
        return None, None, current
    df = build_table(out, sel, experiment)
    if write:
        write_tables(out, df)
        _write_earlier(out, sel, experiment)
        record_tables(out, sel)
    return df, why, current


def current_table(out: Path, experiment: str | None = None, *, write: bool = False,
                  earlier: bool = False) -> tuple[pd.DataFrame, list[str], Any]:
    """The results table of ``out`` as its usable cells say it is (read from results.parquet
    when that is current, else rebuilt, and rewritten when ``write``), notes on what was found,
    and the scan. ``earlier`` adds the rows of the cells of earlier definitions."""
    import pandas as pd

    if not cells_dir(out).is_dir():  # a table exported without its cell files
        return read_table(Path(out) / "results.parquet"), [], Scan()
    df, why, current = refresh_tables(out, experiment, write=write)
    notes = current.problem_notes(out)
    if df is None:
        df = read_table(Path(out) / "results.parquet")
    else:
        notes.insert(0, f"the results tables were rebuilt from the cell files ({why})"
                     + ("" if write or not os.access(out, os.W_OK) else
                        "; run `treebench results check --repair` to rewrite them"))
    if earlier:
        sel = select(out, current)
        if sel.earlier:
            old = to_frame(_rows(out, sel.earlier, current), experiment=experiment)
            df = schema.conform(pd.concat([df.astype(object), old.astype(object)],
                                          ignore_index=True))
    return df, notes, current


def holds_results(p: Path) -> bool:
    """``p`` is a results directory: it has cell files, a manifest or a results table."""
    return (p / "results.parquet").is_file() or (p / "manifest.json").is_file() or \
        cells_dir(p).is_dir()


def results_dirs(root: Path) -> list[Path]:
    """The results directories strictly below ``root``, at any depth (``results/<name>/``,
    ``results/reproduce/<name>/``), sorted by path; one inside another is not counted."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = sorted({q.parent for name in ("manifest.json", "results.parquet")
                    for q in root.rglob(name) if q.parent != root and holds_results(q.parent)})
    return [d for d in found if not any(o != d and o in d.parents for o in found)]
