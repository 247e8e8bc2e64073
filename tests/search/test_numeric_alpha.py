"""The numeric search with a price per test (`solve_numeric_alpha`, DPDT's ``E + alpha * L``)
against the plain backward induction of `tests/naive.py` (`naive_dpdt_numeric`): the same
tree and the same float value, compiled and (``make test-nojit``) without compilation."""

from __future__ import annotations

import time

import numpy as np
import pytest

from treebench.search.numeric import solve_numeric_alpha
from treebench.tree.arrays import check_tree

from naive import naive_dpdt_numeric, naive_tree_tuple

pytestmark = pytest.mark.kernels


def _data(seed):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(6, 16)), int(rng.integers(1, 4))
    X = rng.integers(0, 3, size=(n, p)).astype(float) * 0.5
    y = rng.integers(0, int(rng.integers(2, 4)), size=n)
    w = rng.integers(0, 3, size=n).astype(float) if seed % 2 else None
    if w is not None:
        w[0] = 1.0
    return X, y, w


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("alpha", [0.01, 1 / 3, 7.0])
def test_solve_numeric_alpha_equals_the_plain_backward_induction(seed, alpha):
    X, y, w = _data(seed)
    for depth in (1, 2, 3):
        sol = solve_numeric_alpha(X, y, w, 3, depth, alpha)
        value, tree = naive_dpdt_numeric(X, y, 3, depth, alpha, w)
        check_tree(sol.tree)
        assert sol.objective == value
        assert naive_tree_tuple(sol.tree) == tree
        assert sol.optimal and not sol.timed_out


def test_solve_numeric_alpha_refuses_fractional_weights():
    X, y, _ = _data(0)
    with pytest.raises(ValueError, match="whole-number"):
        solve_numeric_alpha(X, y, np.full(len(y), 0.5), 3, 2, 0.1)


def test_a_timed_out_search_returns_a_valid_tree():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    sol = solve_numeric_alpha(X, y, None, 2, 3, 0.01, deadline=time.perf_counter() + 0.05)
    check_tree(sol.tree)
    assert sol.timed_out == (not sol.optimal)
