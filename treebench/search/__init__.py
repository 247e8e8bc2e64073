"""The search layer: shared machinery of treebench's non-greedy (branch-and-bound) learners.

One concept per module, every hot function a numba ``@njit(cache=True)`` kernel over plain
arrays or records of arrays:

* `bitset`: row sets as uint64 bitsets (packing, popcount, hashing, splitting a set);
* `counts`: (weighted) class counts of a row set, per feature and per feature pair;
* `criteria`: every impurity and split criterion by named code (Top-k's, greedy/NGI's and
  scikit-learn's float forms), split scores, the feature ranking and its tie rule;
* `cache`: the memo of solved subproblems keyed by (depth budget, row set), with a byte cap
  (when full, new entries are not stored: slower, never wrong);
* `bounds`: lower bounds shared by the optimal searches (cached bounds, similar support);
* `depth2`: the specialised depth-2 solvers from pairwise counts (DL8.5/MurTree; GOSDT's
  shortcuts with and without a lower-bound guess);
* `equiv`: features equal or complementary on a node (searched once by exhaustive searches);
* `clock`: the deadline clock of anytime searches;
* `state`: the records a solver carries through its recursion (data, per-level scratch,
  statistics slots);
* `readback`: the read-back of a solved search into pre-order tree arrays.

The searches themselves live here too, the estimators of `treebench.algorithms` call them:

* `engine`: the one search engine of the optimal searches on 0/1 features, dispatching to
  its objectives `topk` (Top-k, Blanc et al.), `gosdt` (GOSDT's regularised objective) and
  `dpdt_layer` (DPDT's exhaustive generator);
* `numeric`: the optimal search on raw numeric features (kernels in `_numeric_kernels` and
  `_numeric_alpha_kernels`);
* `dpdt`: the kernels of DPDT's dynamic programme; `ngi`: the kernels of the NGI family.

This package imports nothing of treebench but itself and `treebench.tree` (an import contract
in ``pyproject.toml``).
Importing this package first drops compiled kernels cached against an older version of these
modules (`_cache_stamp`: numba's cache does not see a change in a module a kernel imports), then
makes numba load treebench's cached kernels without refreshing its whole compiler context
(`_cache_load`: about 11 MB less peak memory).
"""

from treebench.search._cache_load import install as install_short_cache_loads
from treebench.search._cache_stamp import drop_stale_kernels

drop_stale_kernels()
install_short_cache_loads()
