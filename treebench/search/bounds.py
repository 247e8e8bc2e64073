"""Lower bounds shared by the optimal searches.

* `cached_bound`: the best of a given bound and what the cache knows about a subproblem (an
  exact value or a lower bound);
* `cache_lookup`: the cache step of a search (an exact answer, a sufficient lower bound, or a
  lower bound to start from);
* similar support (GOSDT, Lin et al. ICML 2020, Theorem 3.10; DL8.5/MurTree's similarity
  bound): for any tree, the cost on rows S is at least its cost on a set S' minus |S' minus S|
  (each row only in S' adds at most one error), so the optimum on S is at least
  ``bound(S') - |S' minus S|``. `remember_similar` keeps the two sets solved last per depth
  budget, `similarity_bound` applies them (unweighted data).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from treebench.search.bitset import count_minus, row_hash
from treebench.search.cache import (
    ANYTIME, EXACT, LOWER, cache_feature, cache_find, cache_state, cache_value,
)


@njit(cache=True)
def similarity_bound(rows, h, lb, scale, add, sim_rows, sim_val):
    """Raise ``lb`` to ``(v - |S' minus rows|) * scale + add`` for each remembered set S' of
    level ``h`` with value ``v`` whenever that difference is positive."""
    for r in range(2):
        v = sim_val[h, r]
        if v <= 0.0:
            continue
        lb_e = v - count_minus(sim_rows[h, r], rows)
        if lb_e > 0.0 and lb_e * scale + add > lb:
            lb = lb_e * scale + add
    return lb


@njit(cache=True)
def remember_similar(rows, h, value, sim_rows, sim_val):
    """Remember ``rows`` (solved at level ``h``, optimum >= ``value``), replacing the older of
    the two remembered sets."""
    slot = np.int64(sim_val[h, 2])
    sim_val[h, 2] = 1 - slot
    sim_val[h, slot] = value
    rb = sim_rows[h, slot]
    for w in range(rows.shape[0]):
        rb[w] = rows[w]


@njit(cache=True)
def cached_bound(cache, rows, h, lb):
    """(max(lb, cached exact value or lower bound of (h, rows)), True when that is exact)."""
    hv = row_hash(rows, h)
    e = cache_find(cache, rows, h, hv)
    if e >= 0:
        st = cache_state(cache, e)
        if st == EXACT or st == LOWER:
            ov = cache_value(cache, e)
            if ov > lb:
                lb = ov
            if st == EXACT:
                return lb, True
    return lb, False


@njit(cache=True)
def cache_lookup(cache, rows, key, hv, ub, timed_out, feat, lev):
    """Cache step of a search: (answered, value, lower bound so far). An exact entry (or, after
    the deadline, an anytime one) answers, its feature into ``feat[lev]``; a lower bound >= ub
    answers; a smaller one is returned as the bound to start from."""
    e = cache_find(cache, rows, key, hv)
    if e >= 0:
        st = cache_state(cache, e)
        ov = cache_value(cache, e)
        if st == EXACT or (timed_out and st == ANYTIME):
            feat[lev] = cache_feature(cache, e)
            return True, ov, 0.0
        if st == LOWER and not timed_out:
            if ov >= ub:
                return True, ov, 0.0
            return False, 0.0, ov
    return False, 0.0, 0.0
