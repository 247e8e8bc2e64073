"""What a run will cost, said before it runs (``treebench run --dry-run``): the cells to run,
the worst case in CPU-hours (each cell at its time limit, one CPU per cell), and an estimate
from earlier results of the same cells in the results folder (their ``wall_seconds``, the
whole cell in its worker) where there are any."""

from __future__ import annotations

import statistics
from pathlib import Path

from treebench.results.cell import Cell
from treebench.results.store import load_rows


def worst_case_hours(cells: list[Cell]) -> float | None:
    """CPU-hours of ``cells`` if each ran to its time limit; None when one has no limit."""
    total = 0.0
    for c in cells:
        t = c.limits.get("time")
        if t is None:
            return None
        total += float(t) + float(c.limits.get("prepare") or 0.0)
    return total / 3600


def earlier_seconds(out: Path, cells: list[Cell]) -> list[float]:
    """``wall_seconds`` of the earlier results (any status) of ``cells`` found in ``out``."""
    if not (out / "cells").is_dir():
        return []
    rows = load_rows(out, [c.id for c in cells])
    return [float(r["wall_seconds"]) for r in rows if r.get("wall_seconds") is not None]


def cost_lines(cells: list[Cell], to_run: list[Cell], out: Path) -> list[str]:
    """The dry run's cost lines for ``to_run`` (of the experiment's ``cells``)."""
    n = len(to_run)
    worst = worst_case_hours(to_run)
    if worst is None:
        head = (f"cost: {n} cell(s) to run; worst case unbounded (a cell has no limits.time; "
                f"set one to bound it)")
    else:
        head = (f"cost: {n} cell(s) to run; worst case {worst:,.1f} CPU-hours (each cell at "
                f"its limits.time, one CPU per cell)")
    lines = [head]
    secs = earlier_seconds(out, cells)
    if secs and n:
        mean = statistics.fmean(secs)
        lines.append(f"estimate: earlier results of {len(secs)} of these cells in {out} took "
                     f"{mean:.2f} s each on average (median {statistics.median(secs):.2f} s): "
                     f"about {n * mean / 3600:,.2f} CPU-hours for the {n} to run")
    elif n:
        lines.append(f"estimate: no earlier results of these cells in {out}")
    return lines
