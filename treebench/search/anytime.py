"""The anytime schedule of Top-k's exact search (k = all) under a time limit.

The exact search is depth first: its first complete tree at the root comes only when the first
root candidate's subtrees are solved, which on a hard fit (thousands of rows and hundreds of
features at depth 5) can take longer than the time limit. Under a time limit the search
therefore runs a primal heuristic beside it, in the manner of the anytime solvers
(limited-discrepancy and restarting DL8.5, CA-DL8.5's Top-k mode): *widened* searches that try
only the ``w`` best ranked features at every node with a depth budget of 3 or more, and every
feature below it (the exact depth-2 solver). Each widened search is exact on a subset of the
trees, so its tree is a valid incumbent of the whole problem; with ``w`` = 1 it is the greedy
tree with optimal depth-2 subtrees.

The schedule runs in `treebench.search.engine`'s entry, every search on one search state:
the exact search resumes where it stopped (its cache keeps every set it solved or bounded),
and the widened searches cache their restricted levels under keys of their own (the width is
part of the key, `treebench.search.topk._key`) while sharing the exact depth-2 entries with
the exact search and with each other. The steps:

1. the widened search with ``w`` = 1, the first incumbent (a few depth-2 solves);
2. the exact search with the best incumbent as its root's bound, for a slice of time: the
   first ``SLICE`` of the time limit, each later one twice the one before. A search that
   finishes is done: the fit is proven optimal;
3. otherwise widened searches, ``w`` = 2, 3, 5, 8, ... (`next_width`), for as long as the
   widened searches' time stays below ``SHARE`` of the exact search's; a widened search cut
   off by that budget gives its tree and is run again with the next budget (what it had
   solved before the cut is in the cache);
4. back to step 2 until the deadline; then the answer is the best of the incumbents and the
   exact search's own tree at the deadline (ties to the incumbent found first).

So a fit that finishes within the first slice costs the schedule step 1 alone, and a longer
one at most ``SHARE`` more (plus the re-entry of the exact search at each slice: its open
frames restart, their solved children are cache hits).

Exactness. The root's bound is the best incumbent's value plus one half: in exact mode every
value of the search is a whole number (errors in whole weight units times a power of two, plus
nodes), so a tree as good as the incumbent is still below the bound, and the search returns
the same optimum and the same tree as without a bound (a split's subtree does not depend on the
bound it is searched under; `treebench.search.topk`). What a search caches after a deadline is
marked as anytime (`treebench.search.cache`), never read as exact by the resumed search.

The trace (`treebench.search.trace`) is the exact search's: the incumbents the widened
searches find are recorded there too, with no bound of their own (theirs hold for their subset
of trees only). Every recorded incumbent is a tree the fit can return: after a deadline the
read-back solves depth-1 nodes exactly, as the depth-2 solver that valued them did.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: the exact search's first slice, as a share of the time limit (later slices double)
SLICE = 0.01
#: the widened searches' time, at most this share of the exact search's
SHARE = 0.25


@njit(cache=True, inline="always")
def next_width(w):
    """The widened search after the one of width ``w``: about 1.5 times wider."""
    return max(w + 1, np.int64(np.ceil(w * 1.5)))


@njit(cache=True, inline="always")
def tree_value(feat, value, M, nu):
    """The value ``errors * M + nu * nodes`` of a tree in pre-order (``feat`` < 0 at leaves,
    ``value`` its nodes' class totals): the search's objective, recomputed from the tree."""
    errors = 0.0
    for i in range(feat.shape[0]):
        if feat[i] < 0:
            top = 0.0
            tot = 0.0
            for c in range(value.shape[1]):
                tot += value[i, c]
                if value[i, c] > top:
                    top = value[i, c]
            errors += tot - top
    return errors * M + nu * feat.shape[0]
