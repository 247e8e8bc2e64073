"""Anytime traces: how a search's incumbent and lower bound moved during a fit.

A search records ``(time, incumbent, lower bound)`` at its root each time either improves, in
the tail of its clock vector (`new_clock`): ``clock[0]`` is the deadline
(`treebench.search.clock`), ``clock[1]`` the number of records, then up to `TRACE_CAPACITY`
records of three floats (the time is ``time.perf_counter()``'s clock). The vector is the one
the search already carries, so the search's records gain no field; a record is written only
when the root's incumbent falls or its bound rises (a few per fit), so the search's speed does
not change. When the vector is full every second record is dropped (the first and the latest
are kept) and recording goes on: a trace of any length keeps its shape in bounded memory.

`record` keeps a trace monotone whatever it is handed: an incumbent never rises, a bound never
falls, and a bound is never above the incumbent (a node whose lower bound reaches its best tree
has that tree as its optimum). The estimators turn a search's values into their objective's
unit and add the fit's final state (`treebench.algorithms.traces`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from treebench.search.clock import now_seconds

#: records a clock vector holds before it thins them
TRACE_CAPACITY = 256
#: the clock vector's head: the deadline, the number of records
N_HEAD = 2


@njit(cache=True)
def new_clock(deadline):
    """A clock vector with the absolute ``deadline`` (<= 0: none) and room for a trace."""
    clock = np.zeros(N_HEAD + 3 * TRACE_CAPACITY)
    clock[0] = deadline
    return clock


@njit(cache=True)
def _thin(clock, n):
    """Keep the records 0, 2, 4, ... and the latest of the ``n`` records; returns how many
    are left."""
    kept = 0
    for i in range(n):
        if i % 2 == 0 or i == n - 1:
            src = N_HEAD + 3 * i
            dst = N_HEAD + 3 * kept
            clock[dst] = clock[src]
            clock[dst + 1] = clock[src + 1]
            clock[dst + 2] = clock[src + 2]
            kept += 1
    return kept


@njit(cache=True)
def record(clock, incumbent, bound):
    """Record the root's ``incumbent`` and lower ``bound`` now, when either improves on the
    latest record (monotone: see the module's docstring)."""
    if clock.shape[0] < N_HEAD + 6 or incumbent == np.inf:
        return  # no room for a trace (the deadline alone), or no tree yet
    n = int(clock[1])
    if n > 0:
        at = N_HEAD + 3 * (n - 1)
        if incumbent >= clock[at + 1] and bound <= clock[at + 2]:
            return
        incumbent = min(incumbent, clock[at + 1])
        bound = max(bound, clock[at + 2])
    bound = min(bound, incumbent)
    if N_HEAD + 3 * (n + 1) > clock.shape[0]:
        n = _thin(clock, n)
    at = N_HEAD + 3 * n
    clock[at] = now_seconds()
    clock[at + 1] = incumbent
    clock[at + 2] = bound
    clock[1] = n + 1


def read_trace(clock: np.ndarray, t0: float) -> np.ndarray:
    """The records of a clock vector as an (n, 3) array: seconds since ``t0`` (a
    ``time.perf_counter()`` time: the fit's start), incumbent, bound, in the search's unit."""
    n = int(clock[1]) if clock.shape[0] > 1 else 0
    rows = np.array(clock[N_HEAD:N_HEAD + 3 * n], dtype=np.float64).reshape(n, 3)
    rows[:, 0] = np.maximum(rows[:, 0] - t0, 0.0)
    return rows
