"""Which cells of a results directory belong to which experiment.

``manifest.json`` keeps one *experiment record* per config (and profile) that ran in the
directory, and one per sweep or variant of it (a ``treebench sweep``, overrides of the
config's keys given through the API, or ``--seed``): its kind, its resolved config, the ids of the cells it defines and, for each of
them, the identity columns of its results row (dataset, split, fold, seed, learner, parameters),
so that a defined cell with no usable result is still known by what it is.

A config's claims (``expect:``) are checked on exactly the cells of its ``run`` record: cells of
its sweeps and of other experiments in the same folder are left out and counted in a note, and a
defined cell without a usable result fails every claim that selects it (`claim_table`).
Running the same config again (edited, or with another grid) replaces its record; a different
config (another name or profile) writing into a folder that holds one is refused unless asked
(`check_other_experiments`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from treebench.results.cell import Cell, canonical_json
from treebench.errors import UserError
from treebench.results.defined import (  # noqa: F401 - the experiments' records: API
    MANIFEST, STALE, ManifestError, cell_ids, cell_ids_digest, read_manifest, records,
    stale_cells,
)
from treebench.results.rows import identity
from treebench.results.schema import RENAMED

if TYPE_CHECKING:
    import pandas as pd

    from treebench.config import Experiment

#: the status of a defined cell that has no usable result (never written to a cell file)
MISSING = "missing"
_IDENTITY = ("cell_id", "dataset", "data_fingerprint", "split", "split_params", "fold", "seed",
             "binarizer", "binarizer_params", "algorithm_label", "algorithm_params")


def record_key(exp: Experiment, variant: dict[str, Any] | None) -> str:
    """``name`` or ``name@profile`` for a run of the config as written; with a sweep, overrides
    or a seed (``variant``), that plus ``~`` and a hash of the variant."""
    key = exp.name + (f"@{exp.profile}" if exp.profile else "")
    if variant:
        key += "~" + hashlib.sha256(canonical_json(variant).encode()).hexdigest()[:10]
    return key


def identity_columns(cells: list[Cell], experiment: str) -> dict[str, list[Any]]:
    """The identity columns of each cell's results row, as columns (cell order)."""
    rows = [identity(c, experiment) for c in cells]
    names: list[str] = list(_IDENTITY)
    for r in rows:
        names += [k for k in r if k.startswith(("param_", "bparam_")) and k not in names]
    return {n: [r.get(n) for r in rows] for n in names}


def make_record(exp: Experiment, cells: list[Cell], variant: dict[str, Any] | None,
                command: str) -> dict[str, Any]:
    config = exp.model_dump(mode="json")
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return {
        "key": record_key(exp, variant),
        "name": exp.name,
        "profile": exp.profile,
        "kind": "variant" if variant else "run",
        "command": command,
        "variant": variant or None,
        "config_sha256": hashlib.sha256(canonical_json(config).encode()).hexdigest(),
        "config": config,
        "n_cells": len(cells),
        "data": data_of(cells),
        "cells_sha256": cell_ids_digest([c.id for c in cells]),
        "cells": identity_columns(cells, exp.name),
        "first_at": now,
        "last_at": now,
    }


def data_of(cells: list[Cell]) -> dict[str, str]:
    """dataset display name → the fingerprint of the data its cells read."""
    return {c.dataset: c.data for c in cells if c.data}


def data_changes(man: dict[str, Any] | None, key: str, data: dict[str, str]) -> list[str]:
    """One note per dataset whose fingerprint differs from the one the record ``key`` of
    ``man`` recorded when it last ran: its cells are new cells (their ids hash the data), and
    the cells of the old data are left out of the tables."""
    old = next((r for r in records(man) if r.get("key") == key), None)
    before = old.get("data") if isinstance(old, dict) else None
    if not isinstance(before, dict):
        return []
    notes = []
    for name, value in data.items():
        was = before.get(name)
        if isinstance(was, str) and was != value:
            notes.append(f"the {_which_file(was, value)} of dataset `{name}` changed since the "
                         f"last run ({_short(was)} -> {_short(value)}): its "
                         f"cells are new cells and run; "
                         f"the results of the old data stay in cells/ but are left out of "
                         f"results.parquet and results.csv (results-earlier.csv lists them)")
    return notes


def _short(fingerprint: str) -> str:
    """``kind:`` and the first 12 characters of each ``+``-joined part (a data file and its
    test file), so that the part that changed shows."""
    kind, _, rest = fingerprint.partition(":")
    return f"{kind}:" + "+".join(f"{p[:12]}…" if len(p) > 12 else p for p in rest.split("+"))


def _which_file(was: str, now: str) -> str:
    """``test file`` or ``training file`` when two fingerprints of a data file and its test
    file (``sha256:<file>+<test file>``) differ in that part only, else ``data``."""
    a, b = was.partition(":")[2].split("+"), now.partition(":")[2].split("+")
    if len(a) != 2 or len(b) != 2 or was.partition(":")[0] != now.partition(":")[0]:
        return "data"
    if a[0] == b[0]:
        return "test file"
    return "training file" if a[1] == b[1] else "data"


def upsert(man: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    """``man`` with ``rec`` replacing the record of the same key (keeping its first date)."""
    recs = [r for r in records(man) if r.get("kind") != "legacy"]
    for i, old in enumerate(recs):
        if old["key"] == rec["key"]:
            rec["first_at"] = old.get("first_at") or rec["first_at"]
            recs[i] = rec
            break
    else:
        recs.append(rec)
    man["experiments"] = recs
    return man


def check_other_experiments(man: dict[str, Any] | None, exp: Experiment, out: Path,
                            allow: bool) -> None:
    """Refuse a config whose name or profile differs from the experiment(s) already recorded in
    ``out``, unless ``allow``."""
    if allow:
        return
    mine = (exp.name, exp.profile)
    others = sorted({(r.get("name"), r.get("profile")) for r in records(man)} - {mine},
                    key=str)
    if others:
        name, profile = others[0]
        what = f"`{name}`" + (f" (profile {profile})" if profile else "")
        raise UserError(
            f"{out}: this folder holds the results of experiment {what}; writing "
            f"`{exp.name}`{f' (profile {exp.profile})' if exp.profile else ''} into it would mix "
            f"two experiments' cells in one table; give another --out, or add "
            f"--add-experiment to keep both here (each config's claims are still checked on its "
            f"own cells)."
        )


def claim_records(man: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The records whose config's claims apply: runs of a config as written (and legacy)."""
    return [r for r in records(man) if r.get("kind") in ("run", "legacy")]


def absent_cells(rec: dict[str, Any], absent: set[str]) -> pd.DataFrame:
    """The cells of the record ``rec`` whose ids are in ``absent`` (defined, without a usable
    result), one row each of status `MISSING` with the identity and parameter columns the
    record lists."""
    import pandas as pd

    cols = rec["cells"]
    pos = [i for i, c in enumerate(cols["cell_id"]) if str(c) in absent]
    extra = pd.DataFrame({k: [v[i] for i in pos] for k, v in cols.items() if isinstance(v, list)})
    # a manifest written with older column names
    extra = extra.rename(columns={o: n for o, n in RENAMED.items() if n not in extra.columns})
    extra["experiment"] = rec.get("name")
    extra["status"] = MISSING
    return extra


def _labels_of(rows: pd.DataFrame, rec: dict[str, Any]) -> pd.DataFrame:
    """``rows`` with the entry labels ``rec`` gives their cells: a label is no part of a
    cell's id, so a cell keeps the label it was written with when a config renames its entry,
    or when another experiment shares the cell under its own label; the claims of ``rec``
    select by the labels of its config."""
    cells = rec.get("cells") if isinstance(rec.get("cells"), dict) else {}
    if "algorithm_label" not in cells or "algorithm_label" not in rows.columns or rows.empty:
        return rows
    labels = dict(zip(cells["cell_id"], cells["algorithm_label"], strict=False))
    new = rows["cell_id"].astype(str).map(labels)
    differs = (new.notna() & (new.astype(object) != rows["algorithm_label"].astype(object))).to_numpy()
    if not differs.any():
        return rows
    rows = rows.copy()
    rows.loc[differs, "algorithm_label"] = new[differs].astype(str).to_numpy()
    return rows


def claim_table(table: pd.DataFrame, rec: dict[str, Any],
                unusable: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``table`` that ``rec`` defines, plus one row of status `MISSING` (identity
    columns only) for every defined cell without a usable result; and the notes saying what was
    left out or missing. ``unusable`` maps cell ids to why their file could not be used."""
    import pandas as pd

    ids = cell_ids(rec)
    if ids is None:  # legacy: every cell of the folder
        return table, [f"this folder was written by a treebench that did not record which cells "
                       f"belong to `{rec['name']}`, so all {len(table)} cells are used (run the "
                       f"config again to record them)"]
    wanted = set(ids)
    have = table["cell_id"].astype(str)
    mine = _labels_of(table[have.isin(wanted)], rec)
    notes = []
    n_other = int((~have.isin(wanted)).sum())
    if n_other:
        notes.append(f"{n_other} other cell(s) in this folder (sweeps, other experiments) are "
                     f"left out of these claims (--all-cells pools them)")
    absent = wanted - set(mine["cell_id"].astype(str))
    if not absent:
        return mine, notes
    extra = absent_cells(rec, absent)
    damaged = sorted(c for c in absent if c in unusable)
    notes.append(f"{len(absent)} of the {len(ids)} cell(s) this config defines have no usable "
                 f"result (not run yet, interrupted, or unreadable), so the claims that select "
                 f"them fail"
                 + (f", unreadable: {', '.join(damaged[:5])}"
                    + (f" and {len(damaged) - 5} more" if len(damaged) > 5 else "")
                    if damaged else ""))
    return pd.concat([mine.astype(object), extra], ignore_index=True), notes
