"""The lower-bound-guess rule of our GOSDT search (McTavish et al. AAAI 2022 §4.3):
a subproblem, "identified by (s_a, d)", has one value under the guess whoever asks for it.
Its children are solved on their own; the guessed bounds only omit features at the node
(step 2b) and stop it (step 2a). The search (with and without the depth-2 shortcut) against
the plain recursion of that rule in `tests/naive.py`, and every subtree of the returned tree
against the same subproblem solved alone."""

from __future__ import annotations

import numpy as np
import pytest

import naive
from treebench.search import gosdt as G
from treebench.search import engine as E
from treebench.search.bitset import pack_rows
from treebench.search.state import bitset_data


def _problem(rng, n, d, nc):
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = ((X[:, 0].astype(int) + X[:, 1].astype(int) * X[:, 2].astype(int)
          + (rng.random(n) < 0.3)) % nc).astype(np.int64)
    # a reference that errs on some rows, more often where a small tree errs too
    ref_wrong = rng.random(n) < np.where(X[:, 3] > 0, 0.35, 0.1)
    return X, y, ref_wrong


def _fit(X, yi, ref_wrong, lam_count, depth, shortcut=True):
    n, d = X.shape
    nc = int(yi.max()) + 1
    return E.fit_gosdt(G.gosdt_problem(bitset_data(X, yi, nc), depth, lam_count,
                                       max_entries=10**6, ref_wrong=pack_rows(ref_wrong),
                                       shortcut=shortcut))


@pytest.mark.parametrize("seed", range(16))
def test_guessed_search_is_the_naive_recursion(seed):
    """Objective and tree (pre-order features) equal the naive recursion of §4.3's steps, with
    the depth-2 shortcut and without it, on random data and references, several λ (in count
    units, also below 1 row) and depth budgets 1-3."""
    rng = np.random.default_rng(2400 + seed)
    nc = 2 + (seed % 4 == 3)
    n, d = int(rng.integers(30, 90)), int(rng.integers(4, 7))
    X, yi, ref_wrong = _problem(rng, n, d, nc)
    Xl, yl, rl = X.astype(int).tolist(), yi.tolist(), ref_wrong.tolist()
    for lam_count in (0.4, 1.0, 2.5, 0.01 * n):
        for depth in (1, 2, 3):
            want, tree = naive.naive_gosdt_guessed(Xl, yl, nc, rl, list(range(n)), lam_count,
                                                   depth)
            for shortcut in (True, False):
                obj, lb, feat = _fit(X, yi, ref_wrong, lam_count, depth, shortcut)[:3]
                assert obj == want, (lam_count, depth, shortcut)
                assert feat.tolist() == naive.naive_tree_preorder(tree), (lam_count, depth)


@pytest.mark.parametrize("seed", range(12))
def test_every_subtree_is_its_subproblem_solved_alone(seed):
    """For every internal node of the returned tree, the subtree's cost equals the value the
    search gives the node's rows with the remaining depth budget when they are the whole
    problem: no subproblem's answer depends on the search around it."""
    rng = np.random.default_rng(2500 + seed)
    n, d = int(rng.integers(60, 160)), int(rng.integers(5, 8))
    X, yi, ref_wrong = _problem(rng, n, d, 2)
    for lam_count in (0.7, 2.0):
        depth = 3 + seed % 2
        feat, left, right, value = _fit(X, yi, ref_wrong, lam_count, depth)[2:6]

        def walk(i, rows, lev):
            if feat[i] < 0:
                return
            cost = 0.0
            stack = [i]
            while stack:  # the subtree's cost from the counts at its leaves
                k = stack.pop()
                if feat[k] < 0:
                    cost += value[k].sum() - value[k].max() + lam_count
                else:
                    stack += [left[k], right[k]]
            alone = _fit(X[rows], yi[rows], ref_wrong[rows], lam_count, lev)[0]
            assert alone == pytest.approx(cost, abs=1e-9), (lam_count, i, lev)
            x = X[rows, feat[i]]
            walk(left[i], rows[x == 0], lev - 1)
            walk(right[i], rows[x == 1], lev - 1)

        walk(0, np.arange(n), depth)
