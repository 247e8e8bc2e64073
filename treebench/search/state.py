"""Records a solver carries through its recursion (plain namedtuples of arrays, so numba's
``cache=True`` keeps working; a jitclass would not be cached).

* `Data`: the training set as bitsets (``F[w, j]`` word ``w`` of feature ``j``'s column,
  ``C[c, w]`` word ``w`` of the rows of class ``c``) plus, for weighted data, the dense 0/1
  matrix ``Xd``, the class index ``y`` and the weights ``sw`` (walked bit by bit); built in
  Python by `bitset_data`, the one place its field types are fixed (a kernel is compiled once
  per combination of field types, so fits and warm-ups must build it alike);
* `Scratch`: per-level buffers, indexed by the remaining depth budget ``h`` (a level is live
  in exactly one frame of the recursion, so no allocation happens while searching);
* ``stats``: an int64 vector with the slots below, shared by the cache and the clock.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.bitset import pack_classes, pack_columns

# stats slots (int64); S_WIDTH is a setting, not a count: the width of Top-k's widened search
# (`treebench.search.anytime`; 0 for every other search)
S_EXPANDED, S_SCORED, S_ENTRIES, S_PEAK_BYTES, S_TIMED_OUT, S_TICK, S_CAP_HIT, S_BYTES, S_HITS, \
    S_WIDTH = range(10)
N_STATS = 10

Data = namedtuple("Data", ["F", "C", "Xd", "y", "sw", "weighted", "n_rows"])

Scratch = namedtuple(
    "Scratch",
    [
        "child",  # (L, 2, W) uint64: the two children of the node being branched at level h
        "cnt",  # (L, d, nc) float: class counts among rows with x_j = 1
        "rc",  # (L, d) float: number of rows with x_j = 1
        "tot",  # (L, nc) float: class totals of the node
        "tmp",  # (L, nc) float
        "gain",  # (L, d) float: split scores
        "valid",  # (L, d) bool: features that split the node
        "order",  # (L, d) int64: features in rank order
        "nzw",  # (L, W) int64: non-zero words of the node's row set
        "feat",  # (L,) int64: chosen feature per level (-1 = leaf)
        "sim_rows",  # (L, 2, W) uint64: the two sets solved last per level (similar support)
        "sim_val",  # (L, 3) float: their bounds, and which slot is replaced next
        "acc",  # (nc, d) int64: popcount accumulator
        "pair",  # (nc, d, d) int32: pairwise counts of the depth-2 solver (or (1, 1, 1))
        "pbuf",  # (d, W) uint64: gather buffer of `counts.pair_counts_buf` (or (1, 1))
        "p_last",  # (nc, d, d) int32: pair counts of the last child 0 of a split (or (1,1,1))
        "p_par",  # (nc, d, d) int32: pair counts of that split's parent (or (1, 1, 1))
        "prow",  # (3, W) uint64: rows of p_last, of p_par, of the last derivation chance
        "pmask",  # (2, d) bool: features whose pairs p_last / p_par hold
        "pflag",  # (3,) int64: p_last valid, p_par valid, chances seen at prow[2]
        "plist",  # (d,) int64 feature list; (W,) int64 non-zero words of a parent set
        "pnzw",
    ],
)


def bitset_data(X, y_index, n_classes, sw=None):
    """The training set as a `Data` record: 0/1 matrix ``X`` (n, d), class indices, and the
    sample weights ``sw`` (None: unweighted; the dense matrix and the weights are then
    placeholders, and counting uses popcounts)."""
    n, d = X.shape
    weighted = sw is not None
    Xd = np.ascontiguousarray(X, dtype=np.uint8) if weighted else np.zeros((1, d), np.uint8)
    return Data(pack_columns(X), pack_classes(np.asarray(y_index), n_classes), Xd,
                np.ascontiguousarray(y_index, dtype=np.int64),
                np.ascontiguousarray(sw if weighted else np.ones(n), dtype=np.float64),
                weighted, int(n))


@njit(cache=True)
def full_set(n_rows, W):
    """Bitset of rows 0..n_rows-1."""
    root = np.zeros(W, dtype=np.uint64)
    for i in range(n_rows):
        root[i // 64] |= np.uint64(1) << np.uint64(i % 64)
    return root


@njit(cache=True)
def new_scratch(L, W, d, nc, with_pairs):
    """Per-level buffers for a search of at most ``L - 1`` levels; ``with_pairs`` allocates the
    (nc, d, d) pairwise-count buffer of the depth-2 solver."""
    if with_pairs:
        pair = np.zeros((nc, d, d), dtype=np.int32)
        pbuf = np.zeros((d, W), dtype=np.uint64)
        p_last = np.zeros((nc, d, d), dtype=np.int32)
        p_par = np.zeros((nc, d, d), dtype=np.int32)
    else:
        pair = np.zeros((1, 1, 1), dtype=np.int32)
        pbuf = np.zeros((1, 1), dtype=np.uint64)
        p_last = np.zeros((1, 1, 1), dtype=np.int32)
        p_par = np.zeros((1, 1, 1), dtype=np.int32)
    return Scratch(
        np.zeros((L, 2, W), dtype=np.uint64),
        np.zeros((L, d, nc)),
        np.zeros((L, d)),
        np.zeros((L, nc)),
        np.zeros((L, nc)),
        np.zeros((L, d)),
        np.zeros((L, d), dtype=np.bool_),
        np.zeros((L, d), dtype=np.int64),
        np.zeros((L, W), dtype=np.int64),
        np.full(L, -1, dtype=np.int64),
        np.zeros((L, 2, W), dtype=np.uint64),
        np.zeros((L, 3)),
        np.zeros((nc, d), dtype=np.int64),
        pair,
        pbuf,
        p_last,
        p_par,
        np.zeros((3, W), dtype=np.uint64),
        np.zeros((2, d), dtype=np.bool_),
        np.zeros(3, dtype=np.int64),
        np.zeros(d, dtype=np.int64),
        np.zeros(W, dtype=np.int64),
    )


#: what opening a node found, for the engine's candidate loop and for closing the node
#: (`treebench.search.engine`): its level ``h`` (the depth budget searched; the
#: GOSDT solver may lower it from ``lev0``), cache key and hash, the caller's bound ``ub``, the
#: node's lower bound ``lbk`` and floor (no tree here is below it), the bound its splits must
#: beat (``split_ub``), the leaf's value, the node's total weight, the candidates
#: (``order[h][:kk]``, ``ncand`` before a k-best cut), the deadline state, the base bound ``b``
#: (GOSDT), the split cost, the best tree so far (value, root feature, found below ``ub``), the
#: similar-support switch and whether a failed search may raise the node's bound (``complete``)
Node = namedtuple(
    "Node",
    ["h", "lev0", "key", "hv", "ub", "lbk", "floor", "split_ub", "leaf", "total", "kk",
     "ncand", "timed_out", "b", "cost", "best", "best_f", "found", "sim", "complete"],
)


@njit(cache=True)
def closed_node():
    """The `Node` a node-opening step returns with its answer (the fields are not read)."""
    return Node(np.int64(0), np.int64(0), np.int64(0), np.uint64(0), 0.0, 0.0, 0.0, 0.0, 0.0,
                0.0, np.int64(0), np.int64(0), False, -1.0, 0.0, 0.0, np.int64(-1), False, False,
                False)
