"""One cell's life, written once: warm → prepare → preparation budget → fit under limits →
record.

A `CellRun` runs the steps every backend shares: the learner's warm-up (`fit.warm`), the
fold's preparation (`fold.prepare`), the check of ``limits.prepare``, and the building of the
cell's record (`treebench.results.rows.build_record`) from the fit's outcome. *Where* the fit
runs is the caller's choice, passed to `CellRun.run` as a callable: the fork pool fits in its
long-lived worker (`treebench.execute.pool`), the joblib and cluster backends in a child forked
per cell (`treebench.execute.supervise`). Either way the fitting process calls `CellRun.fit`
under `Limits.address_space`, and a watcher outside it applies `Limits.verdict`. Every outcome
is a row: ``ok``, ``timeout``, ``oom``, ``error`` (something raised) or ``crashed`` (the
process died).
"""

from __future__ import annotations

import contextlib
import json
import time
import traceback
from collections.abc import Callable
from typing import Any

from treebench.results.cell import Cell
from treebench.execute import fit, fold
from treebench.execute.limits import Limits
from treebench.results.rows import build_record


def _one_line(exc: BaseException) -> str:
    """``Type: message``, first line, at most 500 characters: a row's ``error``."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500]


def stopped_message(cell: Cell) -> str:
    """A row's ``error`` when the learner itself stopped at its time budget (``timed_out`` in
    its solve info): it returned the best tree it had, so the cell has a tree and metrics. The
    learner is named by its config entry's label (the learner's name unless the entry gives
    one), so two entries of one learner (e.g. with and without an anytime mode) are told
    apart in the run's summary."""
    budgets = []
    if cell.limits.get("time") is not None:
        budgets.append(f"limits.time {float(cell.limits['time']):g} s")
    if cell.algorithm_params.get("time_limit") is not None:
        budgets.append(f"time_limit {float(cell.algorithm_params['time_limit']):g} s")
    given = f" ({', '.join(budgets)})" if budgets else ""
    return (f"`{cell.algorithm_label or cell.algorithm}` stopped at its time budget{given} "
            f"and returned the best tree "
            f"it had then; the metrics are that tree's")


class CellRun:
    """One cell run in this process up to its fit; the fit runs wherever `run` is told."""

    def __init__(self, cell: Cell, data_dirs: list[str] | None, context: dict[str, Any]):
        self.cell = cell
        self.data_dirs = data_dirs
        self.context = context
        self.limits = Limits.of(cell.limits)
        self.runner: dict[str, Any] = {}  # warm-up, preparation, wall time, peak memory
        self.prep: fold.Prepared | None = None
        self.retire = False  # the process ran out of memory: it should not run another cell
        self.started = time.perf_counter()

    def run(self, fit_where: Callable[[CellRun], dict[str, Any] | None],
            lock: Any = None) -> dict[str, Any] | None:
        """The cell's record, or None when it was interrupted (Ctrl-C). ``fit_where(self)``
        fits the prepared fold (in this process or another) and returns the outcome: the
        payload of `fit` (``status``, ``error``, ``row``, ...), or None when interrupted.
        ``lock`` (a context manager) is held through the warm-up and the preparation."""
        try:
            with lock if lock is not None else contextlib.nullcontext():
                failed = self._prepare()
        except KeyboardInterrupt:
            return None
        if failed is not None:
            return failed
        outcome = fit_where(self)
        if outcome is None:
            return None
        return self.finish(outcome.pop("status"), outcome.pop("error", None),
                           outcome.pop("parts", {}) or {}, outcome)

    def _prepare(self) -> dict[str, Any] | None:
        """Warm the learner and prepare the fold; None when the fit may run, else the
        cell's record (preparation failed or went over its budget)."""
        try:
            self.runner["warmup_seconds"] = fit.warm(self.cell.algorithm)
            t0 = time.perf_counter()
            self.prep = fold.prepare(self.cell, self.data_dirs)
            self.runner["prepare_seconds"] = time.perf_counter() - t0
        except MemoryError as exc:
            self.retire = True
            return self.finish("oom", f"MemoryError while preparing data: {exc}")
        except Exception as exc:
            return self.finish("error", _one_line(exc),
                               payload={"traceback": traceback.format_exc(limit=20)})
        over = self.limits.prepare_verdict(self.runner["prepare_seconds"])
        return None if over is None else self.finish("timeout", over)

    def fit(self) -> dict[str, Any]:
        """Fit and score the prepared fold in this process (an estimator's own ``n_jobs`` on
        threads: never a nested process pool, nor a dask or ray backend inherited from the
        worker). Returns the outcome with JSON types (``status``, ``error``, ``row``, tree,
        ...); a ``MemoryError`` is an ``oom`` outcome and marks the process to retire."""
        from joblib import parallel_config

        try:
            with parallel_config(backend="threading"):
                payload = fit.fit_and_score(self.cell, self.prep)
            timed_out = bool(payload["parts"]["solver"].get("timed_out"))
            payload["status"] = "timeout" if timed_out else "ok"
            if timed_out and not payload.get("error"):
                payload["error"] = stopped_message(self.cell)
            # the same JSON types whichever process fitted (rows identical across backends)
            return json.loads(json.dumps(payload, default=str))
        except MemoryError as exc:
            self.retire = True
            return {"status": "oom", "error": f"MemoryError: {exc}".rstrip(": ")}
        except Exception as exc:
            return {"status": "error", "error": _one_line(exc),
                    "traceback": traceback.format_exc(limit=20)}

    def note_peak(self, peak_kb: int, base_kb: int) -> None:
        """Record the fitting process's peak resident set (``peak_kb``) and what the cell
        added on top of ``base_kb``, its resident set when the fit started."""
        note_peak(self.runner, peak_kb, base_kb)

    def finish(self, status: str, error: str | None, measured: dict[str, Any] | None = None,
               payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """The cell's record, with its wall time so far."""
        return finished_record(self.cell, self.context, self.runner, self.started,
                               status, error, measured, payload)


def note_peak(runner: dict[str, Any], peak_kb: int, base_kb: int) -> None:
    """``peak_rss_mb`` and ``cell_rss_mb`` of ``runner`` from a peak of ``peak_kb`` over a
    resident set of ``base_kb`` at the start of the fit (nothing when the peak is unknown)."""
    if peak_kb:
        runner["peak_rss_mb"] = peak_kb / 1024.0
        runner["cell_rss_mb"] = max(peak_kb - base_kb, 0) / 1024.0


def finished_record(cell: Cell, context: dict[str, Any], runner: dict[str, Any], started: float,
                    status: str, error: str | None, measured: dict[str, Any] | None = None,
                    payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of ``cell`` (`build_record`), its wall time counted from ``started``: the
    one way a record is made, whether the cell finished or its process was killed."""
    runner = dict(runner)
    runner["wall_seconds"] = time.perf_counter() - started
    return build_record(cell, context, status=status, error=error, measured=measured,
                        runner=runner, payload=payload)
