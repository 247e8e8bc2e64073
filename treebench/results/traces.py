"""A cell's anytime trace: how its search's incumbent and lower bound moved during the fit.

A learner that records one exposes it as ``trace_`` and in its ``solve_info_`` under
`TRACE_KEY` (`treebench.search.trace`); the runner keeps it in the cell file's ``solve_info``,
not in the results table, whose columns hold what is derived from it (``time_to_best``,
``time_to_proof``, ``primal_integral``). `record_trace` reads it from a cell record,
`cell_trace` from a results directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from treebench.results.cellfile import cells_dir, read_cell

#: the ``solve_info`` key of a cell record that holds its anytime trace
TRACE_KEY = "anytime_trace"


def record_trace(rec: dict[str, Any]) -> np.ndarray | None:
    """The anytime trace of a cell record as an (n, 3) float array (seconds since the fit's
    start, incumbent, lower bound; NaN for a bound not known), or None when the record holds
    none or holds something else."""
    info = rec.get("solve_info")
    raw = info.get(TRACE_KEY) if isinstance(info, dict) else None
    if not isinstance(raw, list) or not raw:
        return None
    try:
        arr = np.array([[np.nan if v is None else v for v in r] for r in raw], dtype=float)
    except (TypeError, ValueError):
        return None
    return arr if arr.ndim == 2 and arr.shape[1] == 3 else None


def cell_trace(results_dir: Path, cell_id: str) -> np.ndarray | None:
    """The anytime trace of the cell ``cell_id`` of ``results_dir`` (`record_trace`); None
    when its learner recorded none. Raises `treebench.results.cellfile.CellFileError` when the
    cell file cannot be used."""
    rec, _ = read_cell(cells_dir(Path(results_dir)) / f"{cell_id}.json")
    return record_trace(rec)
