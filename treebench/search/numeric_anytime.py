"""The anytime schedule of the optimal search on numeric features under a time limit.

The exact search (`treebench.search._numeric_kernels.solve_node`) is depth first: at depth 4
its first tree better than a leaf comes only when the first root candidate's two depth-3
subtrees are solved exactly, which on ten thousand rows can take tens of seconds (avila: 22 s).
Under a time limit, from depth `MIN_DEPTH` on, a primal heuristic therefore runs first, as in
the anytime solvers (ConTree's limited discrepancy search, CA-DL8.5): *widened* searches that
try, at every node with three or more tests left, only the best Gini split of each of the
``w`` features of the best Gini scores, and solve the nodes with two tests left exactly. Each
is exact on a subset of the trees, so its tree is a valid incumbent; ``w`` = 1 is the greedy
(Gini) tree with optimal depth-2 subtrees, then ``w`` = 2, 3, 5, 8, ...
(`treebench.search.anytime.next_width`), each under the best incumbent's bound (it only looks
for better trees).

The steps:

1. widened searches, for at most `SHARE` of the time limit and at most `FIRST_RATIO` times
   the first one's time (the first, a handful of depth-2 solves, is about what the exact
   search spends on one candidate of a node with three tests left: so a fit the exact search
   proves in a fraction of a second pays little); a widened search that would not fit in
   what is left of that budget (its time grows about as ``w`` to the power of the restricted
   levels) is not started;
2. the exact search, with the best incumbent's value plus one half as the root's bound,
   until the deadline. In exact mode (integer costs) every value is a whole number, so a tree
   as good as the incumbent is still below the bound: the search returns the same optimum and
   the same tree as without a bound. When it stops at the deadline without a tree below the
   bound, the answer is the incumbent.

The search state is new for each search (the numeric search caches only nodes with two tests
left, by their rows, and a deadline stops it storing them). The trace (`treebench.search.
trace`) is the exact search's, with the widened searches' incumbents recorded first at the
time each was found and no bound of their own (theirs hold for their subset of trees only).
Every incumbent recorded is valued from its tree (`treebench.search.numeric.tree_cost`),
not from the search's sums.
"""

from __future__ import annotations

import time

import numpy as np

from treebench.search import _numeric_kernels as K
from treebench.search.anytime import next_width
from treebench.search.state import S_EXPANDED, S_SCORED, S_TIMED_OUT
from treebench.search.trace import N_HEAD, TRACE_CAPACITY

#: the widened searches' time, at most this share of the time limit
SHARE = 0.05
#: ... and at most this many times the first widened search's. On the nine Quant-BnB files
#: no solver finishes at depth 4 in 60 s, less time for them (2 %, 4 times) gave higher primal
#: integrals and more (15 %, 64 times) none clearly lower (`benchmarks/numeric_schedule.py`)
FIRST_RATIO = 16.0
#: the schedule runs from this depth on (at depth 3 the exact search's root already evaluates
#: every feature's best Gini split with exact depth-2 children first)
MIN_DEPTH = 4


def scheduled(max_depth: int, deadline: float | None, integer: bool) -> bool:
    """Whether a search runs the schedule: a time limit, integer costs (the root's bound
    then leaves the tree unchanged) and depth >= `MIN_DEPTH`."""
    return deadline is not None and integer and int(max_depth) >= MIN_DEPTH


def widened(X, y, w, n_classes: int, max_depth: int, par: tuple[float, float, bool],
            deadline: float, cost_of) -> tuple[list, int, int]:
    """The incumbents of the widened searches (step 1): ``(found, nodes expanded, splits
    scored)``, ``found`` a list of ``(time found, cost, heap features, heap thresholds)`` in
    the order found, each better than the one before, the first the root's leaf (``par``:
    eps, price per leaf, integer costs; ``deadline``: the fit's; ``cost_of(features,
    thresholds)``: a heap-layout tree's cost counted on the rows, `numeric.tree_cost`)."""
    eps, pen, integer = par
    t0 = time.perf_counter()
    budget = t0 + SHARE * max(deadline - t0, 0.0)
    leaf = (np.full(1, -1, dtype=np.int64), np.zeros(1))
    found = [(t0, cost_of(*leaf), *leaf)]
    expanded = scored = 0
    width, first = 1, 0.0
    while True:
        t = time.perf_counter()
        best = found[-1][1]
        st = K.new_state(X, y, w, n_classes, max_depth, eps, pen, integer, budget)
        st.par[K.P_WIDTH] = width
        if K.solve_node(st, 0, max_depth, best + eps, False, False, 0.0) <= best + eps:
            hf, ht = st.tf[0, 0].copy(), st.tt[0, 0].copy()
            cost = cost_of(hf, ht)
            if cost < best:
                found.append((time.perf_counter(), cost, hf, ht))
        expanded += int(st.stats[S_EXPANDED])
        scored += int(st.stats[S_SCORED])
        spent = time.perf_counter() - t
        first = first or spent
        nxt = next_width(width)
        grow = (nxt / width) ** (max_depth - 2)  # the restricted levels' candidates
        end = min(budget, t0 + FIRST_RATIO * first)
        if st.stats[S_TIMED_OUT] or width >= X.shape[1] or t + spent * (1 + grow) > end:
            return found, expanded, scored
        width = nxt


def seed_trace(clock: np.ndarray, found: list) -> None:
    """Write the widened searches' incumbents into the exact search's ``clock`` as its first
    records, with bound 0 (`treebench.search.trace`'s layout)."""
    n = min(len(found), TRACE_CAPACITY)
    for i, (t, cost, _, _) in enumerate(found[-n:]):
        at = N_HEAD + 3 * i
        clock[at], clock[at + 1], clock[at + 2] = t, cost, 0.0
    clock[1] = n
