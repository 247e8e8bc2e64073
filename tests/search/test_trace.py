"""Anytime traces (`treebench.search.trace`, `treebench.algorithms.traces`): the record kernel
keeps a monotone, bounded trace; every optimal search hands its estimator a monotone trace
that ends at the fit's own objective; the derived figures follow their definitions."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from treebench.algorithms.dpdt import DPDTClassifier
from treebench.algorithms.gosdt import GOSDTClassifier
from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
from treebench.algorithms.topk import TopKClassifier
from treebench.algorithms.traces import (
    TRACE_KEY, finish_trace, primal_gap, primal_integral, time_to_best, time_to_proof,
    with_trace,
)
from treebench.search.trace import N_HEAD, TRACE_CAPACITY, new_clock, read_trace, record

pytestmark = pytest.mark.kernels


def _monotone(trace, objective, proven):
    """Times non-decreasing from 0, incumbents never rise, bounds never fall, bound <=
    incumbent; the last incumbent is the fit's objective, its bound equal to it when the fit
    is proven optimal."""
    assert trace, "a fit of an optimal search records at least its final state"
    t = np.array([r[0] for r in trace])
    inc = np.array([r[1] for r in trace])
    bnd = np.array([r[2] for r in trace])
    assert t[0] >= 0 and np.all(np.diff(t) >= 0)
    assert np.all(np.diff(inc) <= 0), "incumbents never rise"
    assert np.all(np.diff(bnd) >= 0), "bounds never fall"
    assert np.all(bnd <= inc), "bound <= incumbent"
    assert inc[-1] == pytest.approx(objective, rel=1e-12, abs=1e-12)
    assert (bnd[-1] == pytest.approx(inc[-1], rel=1e-12, abs=1e-12)) == proven


def test_record_keeps_improvements_only_and_stays_monotone():
    clock = new_clock(-1.0)
    for inc, bound in [(10.0, 1.0), (10.0, 1.0), (9.0, 0.5), (9.5, 2.0), (np.inf, 3.0),
                       (8.0, 9.0)]:
        record(clock, inc, bound)
    rows = read_trace(clock, 0.0)
    # (10, 1); (9, 1): the bound never falls; (9, 2): the incumbent never rises; (8, 8): the
    # bound is capped by the incumbent; no record without an incumbent
    assert rows[:, 1:].tolist() == [[10.0, 1.0], [9.0, 1.0], [9.0, 2.0], [8.0, 8.0]]
    assert np.all(np.diff(rows[:, 0]) >= 0)


def test_a_full_trace_is_thinned_keeping_its_first_and_latest_records():
    clock = new_clock(-1.0)
    n = 5 * TRACE_CAPACITY
    for i in range(n):
        record(clock, float(n - i), float(i) / n)
    rows = read_trace(clock, 0.0)
    assert len(rows) <= TRACE_CAPACITY and clock.shape[0] == N_HEAD + 3 * TRACE_CAPACITY
    assert rows[0, 1] == n and rows[-1, 1] == 1.0  # the first and the latest
    assert np.all(np.diff(rows[:, 1]) < 0) and np.all(np.diff(rows[:, 2]) > 0)


def test_a_clock_without_room_records_nothing():
    clock = np.array([-1.0])
    record(clock, 1.0, 0.0)
    assert clock.tolist() == [-1.0]


def test_derived_figures_by_hand():
    rows = finish_trace(np.array([[0.1, 10.0, 2.0], [0.2, 8.0, 2.0], [0.3, 8.0, 3.0]]),
                        0.5, 7.0, 7.0)
    assert rows.tolist() == [[0.1, 10.0, 2.0], [0.2, 8.0, 2.0], [0.3, 8.0, 3.0],
                             [0.5, 7.0, 7.0]]
    assert time_to_best(rows) == 0.5 and time_to_proof(rows) == 0.5
    # gap 1 until 0.1, 3/10 until 0.2, 1/8 until 0.5, then 0
    area = 0.1 + 0.1 * 0.3 + 0.3 * 0.125
    assert primal_integral(rows) == pytest.approx(area / 0.5)
    assert primal_integral(rows, horizon=2.0) == pytest.approx(area / 2.0)
    # against a better objective found elsewhere: the gap of 7 against 5 stays after 0.5
    assert primal_integral(rows, 5.0, 1.0) == pytest.approx(
        0.1 + 0.1 * 0.5 + 0.3 * 3 / 8 + 0.5 * 2 / 7)
    assert primal_gap(0.0, 0.0) == 0.0 and primal_gap(-1.0, 1.0) == 1.0
    unproven = finish_trace(rows[:2], 1.0, 8.0, 2.0)
    assert time_to_proof(unproven) is None and time_to_best(unproven) == 0.2


def test_with_trace_derives_the_columns_and_keeps_a_learners_own_trace():
    rows = finish_trace(np.array([[0.0, 4.0, 0.0]]), 2.0, 3.0, 3.0)
    info, trace = with_trace({"objective": 3.0, TRACE_KEY: rows}, None, 4.0)
    assert trace == [(0.0, 4.0, 0.0), (2.0, 3.0, 3.0)]
    assert info[TRACE_KEY] == [[0.0, 4.0, 0.0], [2.0, 3.0, 3.0]]
    assert info["time_to_best"] == 2.0 and info["time_to_proof"] == 2.0
    assert info["primal_integral"] == pytest.approx(2.0 * 0.25 / 4.0)
    assert with_trace({"objective": 1.0}, None, None) == ({"objective": 1.0}, None)
    info, trace = with_trace({"objective": 1.0}, [(0.0, 1.0, 1.0)], None)
    assert trace == [(0.0, 1.0, 1.0)] and info["time_to_proof"] == 0.0


def _binary(seed, n=120, d=9, classes=3):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.float64)
    y = (X[:, 0] + 2 * X[:, 1] * X[:, 2] + rng.integers(0, 2, n)) % classes
    return X, y


#: rows of the numeric problems: the numeric searches as plain Python (make test-nojit) take
#: half a minute a fit at 90 rows
N_NUMERIC = 40 if numba.config.DISABLE_JIT else 90


def _numeric(seed, n=N_NUMERIC, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(2)
    y = ((X[:, 0] > 0.1) ^ (X[:, 1] * X[:, 2] > 0) ^ (rng.random(n) < 0.2)).astype(int)
    return X, y


BINARY = [
    ("topk k=all", lambda: TopKClassifier(k="all", max_depth=3)),
    ("topk smaller", lambda: TopKClassifier(k="all", max_depth=3, tie_break="smaller",
                                            min_improvement=0.0)),
    ("topk k=2", lambda: TopKClassifier(k=2, max_depth=3)),
    ("gosdt", lambda: GOSDTClassifier(max_depth=3, regularization=0.01)),
    ("gosdt lexicographic", lambda: GOSDTClassifier(max_depth=3, lexicographic=True)),
    ("dpdt layer", lambda: DPDTClassifier(max_depth=3, candidates="exhaustive", alpha=0.01,
                                          search="layer")),
]
NUMERIC = [
    ("optimal-numeric", lambda: OptimalNumericClassifier(max_depth=3)),
    ("optimal-numeric lam", lambda: OptimalNumericClassifier(
        max_depth=3, objective="error_rate+lambda*leaves", lam=0.02)),
    ("optimal-numeric lexicographic", lambda: OptimalNumericClassifier(max_depth=3,
                                                                       lexicographic=True)),
    ("dpdt numeric alpha", lambda: DPDTClassifier(max_depth=3, candidates="exhaustive",
                                                  alpha=0.01, search="numeric")),
    ("dpdt numeric", lambda: DPDTClassifier(max_depth=2, candidates="exhaustive", alpha=0.0,
                                            search="numeric")),
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name,make", BINARY + NUMERIC, ids=[n for n, _ in BINARY + NUMERIC])
def test_every_search_hands_a_monotone_trace(name, make, seed):
    X, y = (_binary if (name, make) in BINARY else _numeric)(seed)
    est = make().fit(X, y)
    info = est.solve_info_
    proven = bool(info["optimal"])
    _monotone(est.trace_, info["objective"], proven)
    assert info[TRACE_KEY] == [list(r) for r in est.trace_]
    assert est.trace_[-1][0] == pytest.approx(info["seconds"], abs=1e-9)
    assert 0.0 <= info["time_to_best"] <= info["seconds"] + 1e-9
    assert (info["time_to_proof"] is not None) == proven


@pytest.mark.parametrize("name,make", [
    ("topk", lambda: TopKClassifier(k="all", max_depth=6, time_limit=0.05)),
    ("gosdt", lambda: GOSDTClassifier(max_depth=6, regularization=0.001, time_limit=0.05)),
    ("optimal-numeric", lambda: OptimalNumericClassifier(max_depth=4, time_limit=0.05)),
])
def test_a_timed_out_search_keeps_a_monotone_unproven_trace(name, make):
    X, y = _binary(7, n=600, d=30, classes=4) if name != "optimal-numeric" else _numeric(
        7, n=2000, d=10)
    est = make().fit(X, y)
    info = est.solve_info_
    if not info["timed_out"]:
        pytest.skip("the search finished within its limit on this machine")
    _monotone(est.trace_, info["objective"], False)
    assert info["time_to_proof"] is None
    assert 0.0 <= info["primal_integral"] <= 1.0
