"""The one place a results row and a cell record are built.

A *row* is one line of the results table (`treebench.results.schema`), built by `build_row`
from its parts in order: the cell's identity and settings (its parameters as
``param_*``/``bparam_*`` columns), the fold's data sizes, the parameters a tuning chose, the
metrics, the solver's status, the cost (what the fit and the runner measured: times, memory),
the outcome and provenance. Every column of the row is declared
(`treebench.results.schema.declared`); an undeclared one is a programming error, raised here. A *record* is the content of the cell file
``cells/<id>.json``: the row plus the fitted tree, class labels, binarized columns and solver
information. The worker builds the record (`build_record`) and returns it; the driver writes it
(`treebench.results.store.write_cell`), so workers need no shared file system.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from treebench.algorithms.objectives import problem_of
from treebench.results.cell import Cell, canonical_json, cell_spec
from treebench.registry import ALGORITHMS
from treebench.results.schema import declared, is_param, upgrade_row

RECORD_VERSION = 2


def identity(cell: Cell, experiment: str | None) -> dict[str, Any]:
    """Identity columns, parameter columns and the execution limits of ``cell``."""
    row: dict[str, Any] = {
        "experiment": experiment,
        "cell_id": cell.id,
        "dataset": cell.dataset,
        "data_fingerprint": cell.data or None,
        "split": cell.split.get("kind"),
        "split_params": split_params(cell.split),
        "fold": cell.fold,
        "seed": cell.seed,
        "binarizer": cell.binarizer,
        "binarizer_params": canonical_json(cell.binarizer_params),
        "algorithm_label": cell.algorithm_label,
        "algorithm_name": cell.algorithm,
        "algorithm_params": canonical_json(cell.algorithm_params),
        "time_limit": (cell.limits or {}).get("time"),
        "memory_limit": (cell.limits or {}).get("memory"),
        "problem": cell_problem(cell),
    }
    for k, v in cell.algorithm_params.items():
        row[f"param_{k}"] = v
    for k, v in cell.binarizer_params.items():
        row[f"bparam_{k}"] = v
    return row


def split_params(split: dict[str, Any]) -> str:
    """The ``split_params`` column of a cell's split spec: its parameters besides the kind,
    as canonical JSON (the cell's id hashes the same spec)."""
    return canonical_json({k: v for k, v in split.items() if k != "kind"})


def cell_problem(cell: Cell) -> str:
    """The problem the cell's learner solves with its parameters on top of its defaults
    (`treebench.algorithms.objectives.problem_of`); "unstated" for a learner that is not
    registered here (a plug-in no longer installed)."""

    if cell.algorithm not in ALGORITHMS:
        return "unstated"
    entry = ALGORITHMS.get(cell.algorithm)
    return problem_of(cell.algorithm, {**entry.parameters(), **cell.algorithm_params},
                      tuple(entry.tags))


#: the parts of a row that the fit measures, in the order `build_row` applies them
MEASURED_PARTS = ("data", "tuned", "metrics", "solver", "cost")


def build_row(cell: Cell, context: dict[str, Any], *, status: str, error: str | None,
              measured: dict[str, dict[str, Any]] | None = None,
              runner: dict[str, Any] | None = None) -> dict[str, Any]:
    """The results row of ``cell``: identity and settings, then the ``measured`` parts (a
    dict by `MEASURED_PARTS`, from the cell's child: data sizes, tuned parameters, metrics,
    solver info, fit cost), the ``runner``'s cost (wall, preparation and warm-up seconds,
    memory), the outcome and the provenance of ``context``."""
    row = identity(cell, context.get("experiment"))
    measured = measured or {}
    unknown = sorted(set(measured) - set(MEASURED_PARTS))
    if unknown:
        raise ValueError(f"unknown part(s) of a results row: {', '.join(unknown)}")
    for part in MEASURED_PARTS:
        row.update(measured.get(part) or {})
    row.update(runner or {})
    row["status"] = status
    row["error"] = error
    row["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    row.update(context.get("provenance", {}))
    _check_declared(row, cell.algorithm)
    return row


def _check_declared(row: dict[str, Any], algorithm: str) -> None:

    cols = declared([algorithm])
    stray = [k for k in row if k not in cols and not is_param(k)]
    if stray:
        raise ValueError(f"results column(s) {', '.join(stray)} of learner `{algorithm}` are "
                         f"declared nowhere (declare them where they are produced)")


def build_record(
    cell: Cell,
    context: dict[str, Any],
    *,
    status: str,
    error: str | None,
    measured: dict[str, dict[str, Any]] | None = None,
    runner: dict[str, Any] | None = None,
    payload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The cell record: its row (`build_row`) and ``payload`` (the tree, classes, columns,
    solver info beyond the row's and traceback)."""
    row = build_row(cell, context, status=status, error=error, measured=measured,
                    runner=runner)
    record: dict[str, Any] = {
        "version": RECORD_VERSION,
        "cell": cell_spec(cell),
        "limits": dict(cell.limits or {}),
        "algorithm_name": cell.algorithm,
    }
    record.update(payload or {})
    record["row"] = row
    return record


def upgrade_record(record: dict[str, Any]) -> dict[str, Any]:
    """A cell record of an older layout in the current one, in place: its row's renamed
    columns take their new names, a row without the learner's registry name gets it from
    the record, and a row without ``split_params`` gets it from the record's cell spec."""

    row = record.get("row")
    if isinstance(row, dict):
        upgrade_row(row)
        cell = record.get("cell") if isinstance(record.get("cell"), dict) else {}
        split = cell.get("split")
        if row.get("split_params") is None and isinstance(split, dict):
            row["split_params"] = split_params(split)
        if row.get("algorithm_name") is None:
            spec = cell.get("algorithm") or {}
            name = record.get("algorithm_name") or (spec.get("name") if isinstance(spec, dict)
                                                    else None)
            if isinstance(name, str):
                row["algorithm_name"] = name
    return record


def history_entry(record: dict[str, Any]) -> dict[str, Any]:
    """What a replaced record leaves in its successor's history."""
    row = record.get("row", {}) or {}
    limits = record.get("limits")
    if limits is None:  # version-1 records kept the limits in the cell spec
        limits = (record.get("cell") or {}).get("limits") or {}
    return {
        "status": row.get("status"),
        "error": row.get("error"),
        "finished_at": row.get("finished_at"),
        "time_limit": limits.get("time"),
        "memory_limit": limits.get("memory"),
    }
