"""The deadline clock of anytime searches: ``clock[0]`` holds an absolute
``time.perf_counter()`` deadline (<= 0: none). Reading the time from compiled code goes through
object mode, so `check_time` looks only every 256th call and raises ``S_TIMED_OUT``."""

from __future__ import annotations

import time

from numba import njit, objmode

from treebench.search.state import S_TICK, S_TIMED_OUT


@njit(cache=True)
def now_seconds():
    """time.perf_counter() from compiled code (object mode; call sparingly)."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def check_time(stats, clock):
    """Count a tick; every 256 ticks compare the time with the deadline."""
    stats[S_TICK] += 1
    if clock[0] > 0.0 and (stats[S_TICK] & 255) == 0:
        now = now_seconds()
        if now > clock[0]:
            stats[S_TIMED_OUT] = 1


@njit(cache=True)
def timed_out(stats):
    return stats[S_TIMED_OUT] != 0
