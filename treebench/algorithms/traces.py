"""The anytime trace an estimator exposes: ``trace_``, a list of (seconds since the fit's
start, incumbent, lower bound) in the unit of its ``solve_info_["objective"]``, one entry each
time either improved, the fit's final state last (the searches record their part,
`treebench.search.trace`).

`with_trace` is called by the learner base on every fit: a learner that hands a trace in its
info under `TRACE_KEY` (or sets ``trace_`` in its ``_fit_tree``) gets ``trace_`` and the
derived keys `time_to_best`, `time_to_proof` and `primal_integral` (results columns,
`treebench.algorithms.solve_info`); the trace itself stays in the cell file
(`treebench.results.traces`). This module imports numpy only, so the learner base stays
light.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: the ``solve_info_`` key of the trace (a list of ``[seconds, incumbent, bound]``)
TRACE_KEY = "anytime_trace"


def with_trace(info: dict[str, Any], trace: Any,
               time_limit: float | None) -> tuple[dict[str, Any], list | None]:
    """``(solve_info, trace_)`` of a fit: its learner hands its trace in ``info`` under
    `TRACE_KEY` (an (n, 3) array, `finish_trace`) or sets ``trace_`` itself (``trace``: rows of
    seconds, incumbent, bound). Without one, ``info`` as it is and None. With one, ``trace_``
    is the list of ``(seconds, incumbent, bound)`` tuples, and ``info`` holds it as a list JSON
    can hold with the derived keys: the primal integral over ``time_limit`` when there is one,
    else over the fit, against the fit's own final objective."""
    info = dict(info)
    raw = info.get(TRACE_KEY, trace)
    if raw is None:
        return info, None
    try:
        rows = np.asarray(raw, dtype=np.float64).reshape(-1, 3)
    except (TypeError, ValueError):
        return info, trace
    info[TRACE_KEY] = trace_list(rows)
    info["time_to_best"] = time_to_best(rows)
    info["time_to_proof"] = time_to_proof(rows)
    horizon = float(time_limit) if time_limit is not None else None
    info["primal_integral"] = primal_integral(rows, None, horizon)
    return info, [(float(t), float(v), float(b)) for t, v, b in rows]


def finish_trace(rows: np.ndarray, seconds: float, incumbent: float,
                 bound: float) -> np.ndarray:
    """A trace in its estimator's unit (rows of seconds, incumbent, bound) with the fit's final
    state appended at ``seconds`` (the end of the fit), made monotone: incumbents never rise
    and bounds never fall over time, and no bound is above its incumbent. A non-finite bound
    (none known) is read as minus infinity."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    end = np.array([[max(seconds, rows[-1, 0] if len(rows) else 0.0), incumbent,
                     bound if np.isfinite(bound) else -np.inf]])
    out = np.concatenate([rows, end])
    out[:, 0] = np.maximum.accumulate(out[:, 0])
    out[:, 1] = np.minimum.accumulate(out[:, 1])
    out[:, 2] = np.minimum(np.maximum.accumulate(np.where(np.isfinite(out[:, 2]), out[:, 2],
                                                          -np.inf)), out[:, 1])
    keep = np.ones(len(out), dtype=bool)  # a record that improves nothing says nothing
    keep[1:] = (out[1:, 1] < out[:-1, 1]) | (out[1:, 2] > out[:-1, 2])
    keep[-1] = True
    return out[keep]


def trace_list(rows: np.ndarray) -> list[list[float | None]]:
    """A trace as JSON can hold it: ``[seconds, incumbent, bound]`` per record, ``None`` for
    a bound that is not known."""
    return [[float(t), float(v), float(b) if np.isfinite(b) else None] for t, v, b in rows]


def time_to_best(rows: np.ndarray) -> float | None:
    """Seconds until the trace's final incumbent was first held (None without a trace)."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    if not len(rows):
        return None
    return float(rows[np.argmax(rows[:, 1] <= rows[-1, 1]), 0])


def time_to_proof(rows: np.ndarray) -> float | None:
    """Seconds until the bound met the incumbent (the incumbent proven optimal for the
    search's objective), None when it never did."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    closed = rows[:, 2] >= rows[:, 1]
    return float(rows[np.argmax(closed), 0]) if closed.any() else None


def primal_gap(value: float, reference: float) -> float:
    """The primal gap of an incumbent ``value`` against the ``reference`` objective (Berthold,
    "Measuring the impact of primal heuristics", Oper. Res. Lett. 2013, the primal gap): 0 when
    both are 0, 1 when they have opposite signs, else ``|reference - value| / max(|reference|,
    |value|)``, in [0, 1]."""
    if value == reference:
        return 0.0
    if value * reference < 0.0:
        return 1.0
    return min(abs(reference - value) / max(abs(reference), abs(value)), 1.0)


def primal_integral(rows: np.ndarray, reference: float | None = None,
                    horizon: float | None = None) -> float | None:
    """The primal integral of a trace over ``[0, horizon]`` divided by ``horizon`` (Berthold
    2013: the integral of the primal gap function, which is 1 until the first incumbent and
    then the primal gap of the incumbent held), in [0, 1]: 0 when the reference was held from
    the start, 1 when no incumbent came before the horizon.

    ``reference`` is the best objective known for the problem (default: the trace's own final
    incumbent, so the figure measures how soon the fit reached its own result; a comparison of
    solvers passes the best any of them found). ``horizon`` is the time limit (default: the
    trace's last time, the end of the fit). None without a trace or with a horizon <= 0."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    if not len(rows):
        return None
    ref = float(rows[-1, 1]) if reference is None else float(reference)
    end = float(rows[-1, 0]) if horizon is None else float(horizon)
    if not end > 0.0 or not math.isfinite(end):
        return None
    area = min(float(rows[0, 0]), end)  # gap 1 until the first incumbent
    for i, (t, value, _) in enumerate(rows):
        if t >= end:
            break
        nxt = end if i + 1 == len(rows) else min(float(rows[i + 1, 0]), end)
        area += (nxt - t) * primal_gap(float(value), ref)
    return float(area / end)


def fit_trace(rows: np.ndarray, info: dict[str, Any]) -> np.ndarray:
    """The trace a learner hands in its ``info`` under `TRACE_KEY`: its search's records
    ``rows`` (seconds since the fit's start, incumbent, bound, in the unit of
    ``info["objective"]``) with the fit's final state appended at ``info["seconds"]``: its
    objective, and as bound the objective when ``info["optimal"]``, else ``info["bound"]``
    when the learner reports one, else the search's last bound (0 without one: every
    objective here is non-negative)."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    objective = float(info["objective"])
    if info.get("optimal"):
        bound = objective
    elif info.get("bound") is not None:
        bound = float(info["bound"])
    else:
        bound = float(rows[-1, 2]) if len(rows) else 0.0
    return finish_trace(rows, float(info.get("seconds", 0.0)), objective, bound)
