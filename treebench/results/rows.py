"""The one place a results row and a cell record are built.

A *row* is one line of the results table (`treebench.results.schema`): the cell's identity, its
parameters as ``param_*``/``bparam_*`` columns, what the fit measured, what the runner measured
(times, memory, limits), the outcome and provenance. A *record* is the content of the cell file
``cells/<id>.json``: the row plus the fitted tree, class labels, binarized columns and solver
information. The worker builds the record (`build_record`) and returns it; the driver writes it
(`treebench.results.store.write_cell`), so workers need no shared file system.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from treebench.cell import Cell, canonical_json, cell_spec

RECORD_VERSION = 2


def identity(cell: Cell, experiment: str | None) -> dict[str, Any]:
    """Identity columns, parameter columns and the execution limits of ``cell``."""
    row: dict[str, Any] = {
        "experiment": experiment,
        "cell_id": cell.id,
        "dataset": cell.dataset,
        "split": cell.split.get("kind"),
        "fold": cell.fold,
        "seed": cell.seed,
        "binarizer": cell.binarizer,
        "binarizer_params": canonical_json(cell.binarizer_params),
        "algorithm": cell.algorithm_label,
        "algorithm_params": canonical_json(cell.algorithm_params),
        "time_limit": (cell.limits or {}).get("time"),
        "memory_limit": (cell.limits or {}).get("memory"),
    }
    for k, v in cell.algorithm_params.items():
        row[f"param_{k}"] = v
    for k, v in cell.binarizer_params.items():
        row[f"bparam_{k}"] = v
    return row


def build_record(
    cell: Cell,
    context: dict[str, Any],
    *,
    status: str,
    error: str | None,
    measured: dict[str, Any] | None = None,
    runner: dict[str, Any] | None = None,
    payload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The cell record: ``measured`` holds what the fit and the metrics gave (from the cell's
    child), ``runner`` what the supervising worker measured (wall, preparation and warm-up
    seconds, memory), ``payload`` the tree, classes, columns, solver info and traceback."""
    row = identity(cell, context.get("experiment"))
    row.update(measured or {})
    row.update(runner or {})
    row["status"] = status
    row["error"] = error
    row["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    row.update(context.get("provenance", {}))
    record: dict[str, Any] = {
        "version": RECORD_VERSION,
        "cell": cell_spec(cell),
        "limits": dict(cell.limits or {}),
        "algorithm_name": cell.algorithm,
    }
    record.update(payload or {})
    record["row"] = row
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
