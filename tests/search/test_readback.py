"""The shared read-back (`treebench.search.readback`) against the recursive pre-order walk of
`naive.naive_read_back`, for any rule choosing a node's feature."""

from __future__ import annotations

import numpy as np
import pytest

import naive
from treebench.search.readback import emit, new_readback, next_node, tree_arrays
from treebench.search.state import bitset_data, full_set

pytestmark = pytest.mark.kernels  # also run under NUMBA_DISABLE_JIT=1 (make test-nojit)


def _rule(X, seed):
    """A feature choice that depends on the rows and the budget, as a solver's would: the
    ``(seed + h + |rows|) % d``-th feature that splits the rows, or a leaf."""

    def choose(rows, h):
        if h == 0 or len(rows) < 2 or (seed + len(rows)) % 5 == 0:
            return -1
        splitting = [j for j in range(X.shape[1]) if 0 < X[rows, j].sum() < len(rows)]
        return splitting[(seed + h + len(rows)) % len(splitting)] if splitting else -1

    return choose


@pytest.mark.parametrize("seed", range(8))
def test_read_back_is_the_recursive_pre_order_walk(seed):
    rng = np.random.default_rng(seed)
    n, d, nc, depth = int(rng.integers(1, 140)), 6, 2 + seed % 2, 1 + seed % 5
    X = rng.integers(0, 2, size=(n, d)).astype(np.float64)
    y = rng.integers(0, nc, size=n)
    sw = rng.random(n) + 0.5 if seed % 2 else None
    data = bitset_data(X, y, nc, sw)
    choose = _rule(X, seed)
    t = new_readback(full_set(n, data.F.shape[0]), depth, data)
    h = next_node(t)
    while h >= 0:
        bits = np.unpackbits(t.cur.view(np.uint8), bitorder="little")[:n]
        h = emit(t, choose(np.flatnonzero(bits).tolist(), h), data)
    feat, left, right, value = tree_arrays(t)
    want = naive.naive_read_back(X.tolist(), y.tolist(), np.ones(n) if sw is None else sw, nc,
                                 choose, depth)
    assert feat.tolist() == want[0]
    assert left.tolist() == want[1] and right.tolist() == want[2]
    assert np.allclose(value, np.array(want[3]), rtol=1e-12, atol=0)
