"""The deadline clock of the compiled searches (`treebench.search.clock`): the time compiled
code reads is ``time.perf_counter()``'s (Python computes the deadlines with it), and
`check_time` raises the timeout flag once the deadline has passed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from treebench.search.clock import check_time, now_seconds
from treebench.search.state import N_STATS, S_TIMED_OUT

pytestmark = pytest.mark.kernels


def test_compiled_time_is_perf_counters_time():
    now_seconds()  # compiled (or loaded) before the measurement
    for _ in range(5):
        before = time.perf_counter()
        t = now_seconds()
        after = time.perf_counter()
        assert before <= t <= after


def test_check_time_flags_a_passed_deadline_only():
    stats = np.zeros(N_STATS, dtype=np.int64)
    future = np.array([time.perf_counter() + 3600.0])
    for _ in range(1024):
        check_time(stats, future)
    assert stats[S_TIMED_OUT] == 0
    past = np.array([time.perf_counter() - 1.0])
    for _ in range(256):
        check_time(stats, past)
    assert stats[S_TIMED_OUT] == 1
    none = np.array([-1.0])
    stats[:] = 0
    for _ in range(1024):
        check_time(stats, none)
    assert stats[S_TIMED_OUT] == 0
