"""The one search engine of the optimal searches on 0/1 features (`search.engine`): Top-k, the
GOSDT solver and DPDT's exhaustive generator run the same driver on one state record, compiled
once for all three (each record field has one type whatever the objective)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from treebench.search import dpdt_layer as L
from treebench.search import gosdt as G
from treebench.search import engine as E
from treebench.search import topk as K
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
    """The fits and `solve_queries` of every objective, weighted or not, run the driver on one
    record type: the driver's dispatcher holds at most one signature (a fit or a query loaded
    from numba's cache carries its own copy of the driver; one compiled in this process asks
    the dispatcher, which then loads or compiles it). A record made in Python and passed back would be a second type (its lists
    reflected), compiled for minutes: no caller does that."""
    for weighted in (False, True):
        tp, gp, lp = _problems(weighted)
        assert E.fit_topk(tp)[2].shape[0] >= 1
        assert E.fit_gosdt(gp)[2].shape[0] >= 1
        problems = [tp, gp]
        if not weighted:
            assert E.fit_layer_search(lp)[1].shape[0] >= 1
            problems.append(lp)
        for p in problems:
            root = full_set(p.data.n_rows, p.data.F.shape[0])
            assert E.solve_queries(p, root[None, :], np.array([3]), np.array([np.inf]))[0] >= 0
    # none when every caller came from the cache with its copy, one when this process asked
    assert len(E.solve.signatures) <= 1, E.solve.signatures


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
        assert E.solve_queries(problem, sets, hs, ubs)[0] == fit(problem)[0]


def test_fits_from_several_threads_at_once_agree():
    """The placeholder problems of the engine's one entry are made on first use; threads that
    make the first fits at once (a dask worker's threads) each get a correct fit."""
    import threading

    tp, gp, lp = _problems(False)
    want = E.fit_topk(tp)[0], E.fit_gosdt(gp)[0], E.fit_layer_search(lp)[0]
    E._SPARE.clear()
    start = threading.Barrier(6)
    got, errors = [], []

    def work(fit, p):
        start.wait()
        try:
            got.append((fit.__name__, fit(p)[0]))
        except Exception as e:  # noqa: BLE001 (reported by the assertion below)
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=fp) for fp in
               [(E.fit_topk, tp), (E.fit_gosdt, gp), (E.fit_layer_search, lp)] * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(E._SPARE) == 1
    names = ["fit_topk", "fit_gosdt", "fit_layer_search"]
    assert sorted(got) == sorted((n, w) for n, w in zip(names * 2, want * 2))
