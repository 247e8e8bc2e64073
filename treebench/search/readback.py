"""Reading a solved search back as a tree: pre-order arrays (feature, left, right, class totals)
in the layout of `treebench.tree.arrays.TreeArrays`.

Every solver stores, with each state it solves (in its cache entry, and in ``scr.feat[h]`` of
the frame that asked), the feature it chose (-1 for a leaf). The read-back walks the chosen tree
from the root in pre-order with an explicit stack of row sets; for each node it asks the solver
for the state's feature, which is a cache hit in the normal case (the state is searched again
only when it was not stored: the cache full, or a state a solver does not cache because it is
cheap to value), records the node with its class totals and pushes its two children (left =
``x_f = 0``). The walk is the same for every solver; the one solver-specific step, asking its
``solve``, is a three-line loop in each solver (numba's cached kernels take no function
arguments)::

    t = new_readback(root, H, data)
    h = next_node(t)
    while h >= 0:
        solve(s, t.cur, h, INF)
        h = emit(t, s.scr.feat[h], data)

States are asked in the same order as a recursive pre-order walk (node, left subtree, right
subtree), so any search the read-back triggers sees the cache in the same state.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from treebench.search.bitset import split_rows
from treebench.search.counts import node_totals
from treebench.tree.arrays import TreeArrays
from treebench.tree.labels import majority_label

Readback = namedtuple(
    "Readback",
    [
        "feat",  # (nmax,) int64: feature of each node, -1 at leaves
        "left",  # (nmax,) int64: left child (x_f = 0), -1 at leaves
        "right",  # (nmax,) int64: right child (x_f = 1), -1 at leaves
        "value",  # (nmax, nc) float: class totals of each node
        "rows",  # (H + 2, W) uint64: stack of row sets still to visit
        "lev",  # (H + 2,) int64: their depth budgets
        "parent",  # (H + 2,) int64: their parents (-1: the root)
        "side",  # (H + 2,) int64: 0 = left child, 1 = right child
        "cur",  # (W,) uint64: rows of the node being visited
        "nzw",  # (W,) int64: scratch of `counts.node_totals`
        "top",  # (4,) int64: stack size, nodes emitted, id and depth budget of the node visited
    ],
)


@njit(cache=True)
def max_nodes(depth, n_rows):
    """Largest number of nodes of a tree of depth <= ``depth`` whose leaves hold a row each."""
    nmax = 2 * n_rows + 1
    if depth < 40 and 2 ** (depth + 1) < nmax:
        nmax = 2 ** (depth + 1)
    return nmax


@njit(cache=True)
def new_readback(root, depth, data):
    """A read-back of the tree rooted at the row set ``root`` with depth budget ``depth``."""
    W = root.shape[0]
    nmax = max_nodes(depth, data.n_rows)
    t = Readback(
        np.full(nmax, -1, dtype=np.int64), np.full(nmax, -1, dtype=np.int64),
        np.full(nmax, -1, dtype=np.int64), np.zeros((nmax, data.C.shape[0])),
        np.zeros((depth + 2, W), dtype=np.uint64), np.zeros(depth + 2, dtype=np.int64),
        np.full(depth + 2, -1, dtype=np.int64), np.zeros(depth + 2, dtype=np.int64),
        np.zeros(W, dtype=np.uint64), np.zeros(W, dtype=np.int64), np.zeros(4, dtype=np.int64),
    )
    t.rows[0, :] = root
    t.lev[0] = depth
    t.top[0] = 1
    return t


@njit(cache=True)
def next_node(t):
    """Visit the next node in pre-order: its rows into ``t.cur``; returns its depth budget, or
    -1 when the whole tree has been read."""
    k = t.top[0] - 1
    if k < 0:
        return -1
    t.top[0] = k
    t.cur[:] = t.rows[k]
    node = t.top[1]
    t.top[1] = node + 1
    t.top[2] = node
    t.top[3] = t.lev[k]
    p = t.parent[k]
    if p >= 0:
        if t.side[k] == 0:
            t.left[p] = node
        else:
            t.right[p] = node
    return t.lev[k]


@njit(cache=True)
def emit(t, f, data):
    """Record the node being visited with feature ``f`` (-1: a leaf) and its class totals, push
    its children, and visit the next node (`next_node`)."""
    node = t.top[2]
    node_totals(t.cur, data.C, data.y, data.sw, data.weighted, t.value[node], t.nzw)
    t.feat[node] = f
    if f >= 0:
        k = t.top[0]
        h = t.top[3] - 1
        # the right child below the left one, so that the left subtree is read first
        split_rows(t.cur, data.F, f, t.rows[k + 1], t.rows[k])
        for a in range(2):
            t.lev[k + a] = h
            t.parent[k + a] = node
            t.side[k + a] = 1 - a
        t.top[0] = k + 2
    return next_node(t)


@njit(cache=True)
def tree_arrays(t):
    """(feature, left, right, value) of the tree read, trimmed to its nodes."""
    n = t.top[1]
    return t.feat[:n].copy(), t.left[:n].copy(), t.right[:n].copy(), t.value[:n].copy()


def to_tree(feat, left, right, value, unit, prior):
    """The `TreeArrays` of a tree read back (class totals in count units, multiplied by
    ``unit``; 0/1 thresholds; leaves labelled by `majority_label` with ``prior``) and its
    training error in weight units."""
    value = value * unit
    label = np.array([majority_label(value[i], prior) for i in range(feat.shape[0])],
                     dtype=np.int64)
    tree = TreeArrays(feat, np.where(feat >= 0, 0.5, -2.0), left, right, value, label)
    return tree, tree.leaf_errors
