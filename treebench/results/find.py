"""Finding cells in a results folder by what they are: ``dataset=topk/car k=all fold=0``.

A condition is ``KEY=VALUE`` (several values: ``KEY=a,b``, or the key given again:
``KEY=a KEY=b``, either value matches). ``KEY`` is a results column
(``dataset``, ``algorithm_label`` (also ``algorithm`` or ``label``), ``fold, ``seed``, ``status``, ``param_max_depth``, …) or a
learner or binarizer parameter by its own name (``k`` means ``param_k``, ``max_depth`` means
``param_max_depth``, then ``bparam_*``). Values are compared as the verification compares them
(``4`` matches ``4.0``; ``all`` matches the text ``all``). Quotes keep spaces and commas inside
a value (``label='CART, deep'``), which is then text.

A cell is also found by its id, or a unique prefix of it (`cell_file`), as `treebench show`
names one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import glob
import re

from treebench.errors import UserError, did_you_mean
from treebench.results.cellfile import cells_dir
from treebench.results.defined import ManifestError, cell_ids, read_manifest, records
from treebench.results.index import refuse_foreign_tables, scan
from treebench.results.schema import ALIASES, STATUSES, SchemaError
from treebench.results.store import current_table
from treebench.results.values import select_rows
from treebench.utils.sweeps import parse_scalar

if TYPE_CHECKING:
    import pandas as pd

#: the columns `treebench cells` shows, when present
SHOWN = ("cell_id", "dataset", "algorithm_label", "algorithm_params", "binarizer", "fold", "seed",
         "status", "train_accuracy", "test_accuracy", "n_leaves", "depth", "fit_seconds")


def parse_where(items: list[str] | None) -> dict[str, Any]:
    """``["dataset=car", "k=1,2"]`` → ``{"dataset": "car", "k": [1, 2]}`` (keys unresolved).
    A key given twice means either value, as ``KEY=a,b`` does: ``algorithm=cart
    algorithm=dpdt`` is ``algorithm=cart,dpdt`` (both at once would match no cell).

    Quotes, as a shell reads them, keep spaces and commas inside one value:
    ``algorithm_label='Top-k (k=2)'`` or ``dataset="my data.csv",iris``. A quoted value is
    compared as text (``k='4'`` is the text 4); an unquoted one is read as a number, a
    boolean or ``none`` where it is one."""
    out: dict[str, Any] = {}
    for item in items or []:
        for part in _split(item, " \t\n", item):
            key, sep, text = part.partition("=")
            if not sep or not key or any(q in key for q in "'\""):
                hint = (" (a value with spaces goes in quotes: KEY='a b')"
                        if out and not sep else "")
                raise UserError(f"--where `{part[:60]}`: write conditions as KEY=VALUE, e.g. "
                                f"--where dataset=topk/car k=all fold=0{hint}.")
            vals = [_value(v) for v in _split(text, ",", item)] if text else [""]
            _add(out, key.strip(), vals)
    return out


def _split(text: str, separators: str, item: str) -> list[str]:
    """``text`` cut at the ``separators`` that no quote encloses, each piece keeping its
    quotes (`_value` reads them); empty pieces are dropped."""
    pieces, current, quote = [], [], None
    for ch in text:
        if quote is not None:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in separators:
            pieces.append("".join(current))
            current = []
            continue
        current.append(ch)
    if quote is not None:
        raise UserError(f"--where `{item[:60]}`: a quote ({quote}) is not closed.")
    pieces.append("".join(current))
    return [piece for piece in pieces if piece]


def _value(piece: str) -> Any:
    """A value as written: with quotes (quoted and unquoted parts joined, as a shell joins
    them) → the text without its quotes; without → `parse_scalar`."""
    if not any(q in piece for q in "'\""):
        return parse_scalar(piece)
    out, quote = [], None
    for ch in piece:
        if quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
        else:
            out.append(ch)
    return "".join(out)


def _add(where: dict[str, Any], key: str, vals: Any) -> None:
    """Put the values ``vals`` (one or a list) under ``key``; a key already there keeps its
    values and gains the new ones (either matches)."""
    vals = list(vals) if isinstance(vals, list) else [vals]
    if key in where:
        old = where[key] if isinstance(where[key], list) else [where[key]]
        vals = old + [v for v in vals if v not in old]
    where[key] = vals if len(vals) > 1 else vals[0]


def resolve(table: pd.DataFrame, where: dict[str, Any]) -> dict[str, Any]:
    """``where`` with each key turned into the table's column it names (two keys naming one
    column, such as ``algorithm`` and ``algorithm_label``, mean either value)."""

    out: dict[str, Any] = {}
    for key, val in where.items():
        for col in (ALIASES.get(key, key), f"param_{key}", f"bparam_{key}"):
            if col in table.columns:
                _add(out, col, val)
                break
        else:
            known = [c for c in table.columns] + [c.split("_", 1)[1] for c in table.columns
                                                  if c.startswith(("param_", "bparam_"))]
            known += [a for a, c in ALIASES.items() if c in table.columns]
            raise UserError(f"--where `{key}`: no such column or parameter in these results"
                            f"{did_you_mean(key, known)}.")
    return out


def find_cells(table: pd.DataFrame, where: dict[str, Any],
               status: list[str] | None = None) -> pd.DataFrame:
    """The rows of ``table`` matching ``where`` (and one of the ``status`` values)."""
    cond = resolve(table, where)
    if status:
        cond["status"] = list(status)
    return select_rows(table, cond) if cond else table


def folder_cells(results_dir: Path, where: dict[str, Any], status: list[str] | None = None, *,
                 all_cells: bool = False) -> pd.DataFrame:
    """The cells of the results folder ``results_dir`` matching ``where`` and ``status``:
    those of its tables (the cells its recorded experiments define), and with ``all_cells``
    also the cells of earlier definitions. ``experiment=NAME`` selects the cells that the
    experiment NAME defines (a cell shared by several experiments is found from each), by
    the manifest's records where they list their cells, else by the ``experiment`` column."""
    table, _, _ = current_table(Path(results_dir), earlier=all_cells)
    where = dict(where)
    wanted = where.pop("experiment", None)
    if wanted is not None:
        names = {str(w) for w in (wanted if isinstance(wanted, list) else [wanted])}
        try:
            recs = records(read_manifest(Path(results_dir)))
        except ManifestError:
            recs = []
        listed = [r for r in recs if cell_ids(r) is not None]
        if listed:
            known = sorted({str(r.get("name")) for r in listed} | {r["key"] for r in listed})
            if not names & set(known):
                raise UserError(f"--where experiment: no experiment {', '.join(sorted(names))} is "
                                f"recorded in this folder{did_you_mean(sorted(names)[0], known)}; "
                                f"it holds {', '.join(known)}.")
            ids = {c for r in listed if r.get("name") in names or r["key"] in names
                   for c in cell_ids(r) or []}
            table = table[table["cell_id"].astype(str).isin(ids)]
        else:
            where["experiment"] = wanted
    return find_cells(table, where, status)


def matching_cells(results_dir: Path, where: list[str] | None, status: list[str] | None = None,
                   *, all_cells: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """The cells of the results folder ``results_dir`` matching the ``--where`` conditions
    ``where`` (unparsed, as typed) and ``status``, and a note for each unusable cell file (its
    cell is left out). Raise `UserError` for a folder without results or with tables
    treebench did not write."""
    results_dir = Path(results_dir)
    for s in status or []:
        if s not in STATUSES:
            raise UserError(f"--status `{s}` is no cell status{did_you_mean(s, STATUSES)}; "
                            f"choose from {', '.join(STATUSES)}.")
    if not (results_dir / "cells").is_dir() and not (results_dir / "results.parquet").is_file():
        raise UserError(f"{results_dir}: no results here; give a directory written by "
                        f"`treebench run`.")
    refuse_foreign_tables(results_dir, "give a directory written by `treebench run`.")
    notes = [f"{note}; its cell is left out (`treebench results check {results_dir} --repair` "
             f"sets the file aside)" for note in scan(results_dir).problem_notes(results_dir)]
    try:
        rows = folder_cells(results_dir, parse_where(where), status, all_cells=all_cells)
        if rows.empty:
            notes += _label_hint(results_dir, where or [], status, all_cells)
    except SchemaError as exc:
        raise UserError(f"{results_dir}: its results table cannot be read ({exc}).") from None
    return rows, notes


def _label_hint(results_dir: Path, where: list[str], status: list[str] | None,
                all_cells: bool) -> list[str]:
    """A note when ``algorithm=NAME`` matched no cell while ``algorithm_name=NAME`` would:
    ``algorithm`` is an entry's label, which a labelled entry sets apart from its learner."""
    values = [m.group(1) for w in where for m in re.finditer(r"(?:^|\s)algorithm=([^\s'\"]+)", w)]
    if not values:
        return []
    alt = [re.sub(r"(^|\s)algorithm=", r"\1algorithm_name=", w) for w in where]
    if folder_cells(results_dir, parse_where(alt), status, all_cells=all_cells).empty:
        return []
    return [f"no cell's `algorithm` (its entry's label) is {', '.join(values)}, but cells of "
            f"that learner are here under other labels: `--where algorithm_name="
            f"{values[0]}` selects by learner"]


def one_cell_id(rows: pd.DataFrame, results_dir: Path, where: list[str]) -> str:
    """The id of the one cell of ``rows`` (the cells matching ``where``); raise `UserError`
    when none matches, or several do (naming the first five)."""
    if len(rows) == 1:
        return str(rows["cell_id"].iloc[0])
    if rows.empty:
        raise UserError(f"{results_dir}: no cell matches {' '.join(where)}; "
                        f"`treebench cells {results_dir}` lists them all.")
    listed = "; ".join(f"{r.cell_id} ({r.dataset}, {r.algorithm_label} {r.algorithm_params}, "
                       f"fold {r.fold}, seed {r.seed})" for r in rows.head(5).itertuples())
    raise UserError(f"{results_dir}: {len(rows)} cells match {' '.join(where)}, show takes "
                    f"one: {listed}{' …' if len(rows) > 5 else ''}; add conditions (fold=0, "
                    f"seed=0) or give an id.")


def cell_file(results_dir: Path, cell_id: str) -> Path:
    """The cell file of the cell whose id is ``cell_id`` or starts with it; raise `UserError`
    for a text that is no id, an id no cell has, or a prefix of several cells' ids."""
    if not cell_id or not all(ch.isalnum() or ch in "-_" for ch in cell_id):
        raise UserError(f"cell id {cell_id[:40]!r} is not an id: ids are the hexadecimal "
                        f"strings of the cell_id column of results.csv (a unique prefix is "
                        f"enough).")
    d = cells_dir(results_dir)
    matches = sorted(p for p in d.glob(f"{glob.escape(cell_id)}*.json")
                     if not p.name.startswith(".")) if d.is_dir() else []
    if not matches:
        raise UserError(f"{results_dir}: no cell with id `{cell_id}`; ids are in the cell_id "
                        f"column of results.csv.")
    if len(matches) > 1:
        raise UserError(f"{results_dir}: cell id prefix `{cell_id}` matches {len(matches)} "
                        f"cells; give more characters.")
    return matches[0]
