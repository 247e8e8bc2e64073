"""The one search engine of the optimal searches on 0/1 features (`_search_engine`): Top-k, the
GOSDT solver and DPDT's exhaustive generator run the same driver on one state record, compiled
once for all three (each record field has one type whatever the objective)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from treebench.algorithms import _dpdt_layer as L
from treebench.algorithms import _gosdt_kernels as G
from treebench.algorithms import _search_engine as E
from treebench.algorithms import _topk_kernels as K
from treebench.search.state import bitset_data, full_set

JIT = not numba.config.DISABLE_JIT


def _problems(weighted):
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(40, 5))
    y = (X[:, 0] ^ X[:, 2] ^ (rng.random(40) < 0.2)).astype(np.int64)
    sw = rng.integers(1, 4, size=40).astype(float) if weighted else None
    data = bitset_data(X, y, 2, sw)
    unit = bitset_data(X, y, 2)
    return (K.topk_problem(data, 3), G.gosdt_problem(data, 3, 0.5),
            L.layer_problem(unit, 3, 0.01))


@pytest.mark.skipif(not JIT, reason="record types are numba's")
@pytest.mark.parametrize("weighted", [False, True])
def test_the_three_objectives_build_one_record_type(weighted):
    tp, gp, lp = _problems(weighted)
    types = {numba.typeof(E.topk_state(tp)), numba.typeof(E.gosdt_state(gp)),
             numba.typeof(E.layer_state(lp))}
    assert len(types) == 1


@pytest.mark.skipif(not JIT, reason="compiled signatures are numba's")
def test_every_objective_runs_the_one_compiled_driver():
    sigs = set()
    for weighted in (False, True):
        tp, gp, lp = _problems(weighted)
        assert E.fit_topk(tp)[2].shape[0] >= 1
        assert E.fit_gosdt(gp)[2].shape[0] >= 1
        states = [E.topk_state(tp), E.gosdt_state(gp)]
        if not weighted:
            assert E.fit_layer_search(lp)[1].shape[0] >= 1
            states.append(E.layer_state(lp))
        # the driver asked directly: a fit loaded from numba's cache carries its own copy of
        # the driver and leaves the driver's dispatcher without signatures (and other tests
        # of the process may have compiled it for records of their own)
        for s in states:
            args = (s, full_set(s.data.n_rows, s.data.F.shape[0]), 3, np.inf, -1.0)
            assert E.solve(*args) >= 0
            sigs.add(tuple(numba.typeof(a) for a in args))
    # unweighted and weighted data share their record types too (`search.state.bitset_data`)
    assert len(sigs) == 1
    assert sigs <= set(E.solve.signatures)


@pytest.mark.parametrize("seed", range(4))
def test_the_objectives_answer_through_the_same_driver_as_their_fits(seed):
    """`solve_queries` on each objective's record (the driver's contract, one query with no
    bound) returns the root objective its fit returns."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(30, 4))
    y = rng.integers(0, 3, size=30)
    data = bitset_data(X, y, 3)
    root = full_set(30, data.F.shape[0])
    sets, hs, ubs = root[None, :], np.array([3]), np.array([np.inf])
    for problem, make, fit in (
            (K.topk_problem(data, 3), E.topk_state, E.fit_topk),
            (G.gosdt_problem(data, 3, 0.7), E.gosdt_state, E.fit_gosdt),
            (L.layer_problem(data, 3, 0.05), E.layer_state, E.fit_layer_search)):
        assert E.solve_queries(make(problem), sets, hs, ubs)[0] == fit(problem)[0]
