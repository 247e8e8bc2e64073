"""The depth-2 shortcut of our GOSDT search under a lower-bound guess
(`treebench.search.depth2`, McTavish et al. AAAI 2022 §4.3): the kernel against its
naive twin, and whole searches with the shortcut against the recursion without it (same
objective and same tree) on random data with random references."""

from __future__ import annotations

import numpy as np
import pytest

import naive
from treebench.search import depth2 as D2
from treebench.search import gosdt as G
from treebench.search import engine as E
from treebench.algorithms.gosdt import equivalence_groups
from treebench.search.bitset import pack_classes, pack_columns, pack_rows
from treebench.search.depth2 import Depth2Node, StumpTables, depth2_regularized
from treebench.search.state import bitset_data

INF = float("inf")


def _node_inputs(X, y, nc, ref_wrong, rows):
    """The kernel's inputs for the node ``rows``: per-feature class counts, totals, the rank
    order (children's leaf errors, then index; valid features first), the valid features,
    the pair counts (both triangles), the reference's errors per feature and in the node."""
    d = X.shape[1]
    r, cnt1, tot = naive.node_class_counts(X, y, nc, rows)
    valid = [j for j in range(d) if 0 < cnt1[j].sum() < r.sum()]
    gain = {}
    for j in valid:
        e1 = cnt1[j].sum() - cnt1[j].max()
        e0 = (tot - cnt1[j]).sum() - (tot - cnt1[j]).max()
        gain[j] = e0 + e1
    ranked = sorted(valid, key=lambda j: (gain[j], j))
    order = np.array(ranked + [j for j in range(d) if j not in valid], np.int64)
    vs = np.array(valid + [0] * (d - len(valid)), np.int64)
    P = np.array(naive.naive_pair_counts(X.astype(int).tolist(), y.tolist(), rows, nc),
                 dtype=np.int32).reshape(nc, d, d)
    rw1 = X[r & ref_wrong].sum(axis=0).astype(float)
    b = float((r & ref_wrong).sum())
    return cnt1, tot, order, len(valid), vs, P, rw1, b


def _row_sets(rng, n, count, lowest):
    """Up to ``count`` random non-empty node row lists, each row kept with a probability drawn
    in [lowest, 1)."""
    for _ in range(count):
        rows = sorted(np.flatnonzero(rng.random(n) < rng.uniform(lowest, 1.0)).tolist())
        if rows:
            yield rows


def _random_problem(rng, n, d, nc):
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = ((X[:, 0].astype(int) + X[:, 1].astype(int) * X[:, 2].astype(int)
          + (rng.random(n) < 0.3)) % nc).astype(np.int64)
    ref_wrong = rng.random(n) < rng.choice([0.05, 0.15, 0.3])
    return X, y, ref_wrong


def _draw(seed, nc, rows, features):
    """A generator seeded ``seed`` and the `_random_problem` of ``nc`` classes it draws, its
    row and feature counts drawn first from the half-open ranges ``rows`` and ``features``:
    (generator, X, y, reference errors)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(*rows)), int(rng.integers(*features))
    return (rng, *_random_problem(rng, n, d, nc))


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(12))
def test_depth2_guessed_matches_naive_twin(seed):
    nc = 2 + seed % 2
    rng, X, y, ref_wrong = _draw(1200 + seed, nc, (20, 90), (3, 8))
    n = len(y)
    Xl, yl = X.astype(int).tolist(), y.tolist()
    for rows in _row_sets(rng, n, 12, 0.4):
        cnt1, tot, order, ncand, vs, P, rw1, b = _node_inputs(X, y, nc, ref_wrong, rows)
        lam = float(rng.choice([0.0, 0.3, 0.6, 1.0, 1.5, 2.5, 0.001 * n, 0.01 * n]))
        leaf = float(tot.sum() - tot.max()) + lam
        ub = float(rng.choice([INF, leaf, leaf * rng.uniform(0.5, 1.2)]))
        best = leaf if leaf < ub else ub
        floor = max(b + lam, 2.0 * lam) + float(rng.choice([0.0, 0.0, rng.uniform(0, 4)]))
        node = Depth2Node(cnt1, tot, order, ncand, vs, ncand, P)
        got = D2.depth2_guessed(node, rw1, b, lam, best, floor)
        want = naive.naive_depth2_guessed(Xl, yl, nc, ref_wrong.tolist(), rows, lam, best,
                                          floor)
        assert got[1] == want[1], (rows, lam, best, floor)
        assert got[0] == want[0]


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(6))
def test_guessed_child_value_matches_naive_twin(seed):
    """The budget-1 scan (only the best error class can improve, scanned in index order)
    against the explicit ranked scan, for every child of every root feature."""
    nc = 2 + seed % 2
    rng, X, y, ref_wrong = _draw(1300 + seed, nc, (20, 120), (3, 9))
    n, d = X.shape
    Xl, yl = X.astype(int).tolist(), y.tolist()
    rows = list(range(n))
    cnt1, tot, order, ncand, vs, P, rw1, b = _node_inputs(X, y, nc, ref_wrong, rows)
    cntT = np.ascontiguousarray(cnt1.T.astype(np.int32))
    qs, qm, rm = (np.empty(d, np.int32) for _ in range(3))
    for i in vs[:ncand]:
        allow = np.zeros(d, bool)
        allow[vs[:ncand]] = True
        allow[i] = False
        T = StumpTables(P, cntT, allow, qs, qm, rm)
        for side in (0, 1):
            ch = (cntT[:, i] if side == 1 else tot.astype(np.int32) - cntT[:, i]).astype(
                np.int32)
            child = [r for r in rows if int(X[r, i]) == side]
            e = float(ch.sum() - ch.max())
            npos = int((ch > 0).sum())
            bc = float(ref_wrong[child].sum())
            for lam in (0.0, 0.5, 1.0, 2.0, 0.0005 * n):
                for ub in (INF, e + lam, 3.0 * lam + 1.0):
                    got = D2.guessed_child_value(T, ch, np.int32(ch.sum()), e, npos, i, side,
                                                 bc, lam, ub)
                    want = naive.naive_guess_budget1(Xl, yl, nc, ref_wrong.tolist(), child,
                                                     lam, ub)
                    if want[0] < ub:
                        assert got == want, (i, side, lam, ub)
                    else:
                        assert got[0] >= ub


def _lazy_inputs(X, y, nc, rows):
    """`depth2_lazy`'s inputs for the node ``rows``: its packed rows and non-zero words, the
    packed features and classes, and its `LazyNode` (valid features in rank order, then the
    others)."""
    cnt1, tot, order, ncand, _, _, _, _ = _node_inputs(X, y, nc, np.zeros(len(y), bool), rows)
    mask = np.zeros(len(y), bool)
    mask[rows] = True
    packed = pack_rows(mask)
    nzw = np.flatnonzero(packed).astype(np.int64)
    valid = np.zeros(X.shape[1], bool)
    valid[order[:ncand]] = True
    node = D2.LazyNode(cnt1, tot, order, ncand, valid)
    return packed, nzw, pack_columns(X), pack_classes(y, nc), node


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(12))
def test_depth2_lazy_matches_naive_twin(seed):
    """The depth-2 solver with pair counts per needed root against direct enumeration: same
    objective and root for random nodes, penalties (the lexicographic 2^-k among them),
    starting bests and floors (the bounds that skip roots never change the answer)."""
    nc = 2 + seed % 3
    rng, X, y, _ = _draw(1500 + seed, nc, (20, 130), (3, 9))
    n = len(y)
    Xl, yl = X.astype(int).tolist(), y.tolist()
    for rows in _row_sets(rng, n, 10, 0.3):
        packed, nzw, F, C, node = _lazy_inputs(X, y, nc, rows)
        lam = float(rng.choice([0.0, 2.0 ** -7, 0.3, 1.0, 2.5, 0.01 * n]))
        leaf = float(node.tot.sum() - node.tot.max()) + lam
        best = float(rng.choice([INF, leaf, leaf * rng.uniform(0.3, 1.0), 3.0 * lam]))
        floor = float(rng.choice([-1.0, 2.0 * lam, rng.uniform(0.0, leaf)]))
        v, f, n_pairs = D2.depth2_lazy(packed, nzw, len(nzw), F, C, node, lam, best, floor)
        want = naive.naive_depth2_regularized(Xl, yl, nc, rows, node.order[:node.ncand].tolist(),
                                              node.order[:node.ncand].tolist(), lam, best,
                                              floor)
        assert f == want[1], (rows, lam, best, floor)
        assert v == pytest.approx(want[0], abs=1e-9)
        assert 0 <= n_pairs <= node.ncand * (node.ncand - 1)


@pytest.mark.kernels
@pytest.mark.parametrize("seed", range(4))
def test_partner_row_matches_naive_pair_counts(seed):
    """Rows of the pair counts over the node's partner features (`gather_partners`), every
    partner against every other."""
    nc = 2 + seed % 2
    rng, X, y, _ = _draw(1600 + seed, nc, (5, 200), (3, 9))
    n, d = X.shape
    rows = sorted(np.flatnonzero(rng.random(n) < 0.6).tolist())
    packed, nzw, F, C, _ = _lazy_inputs(X, y, nc, rows)
    valid = rng.random(d) < 0.7
    G, cw, vs, nv, pos = D2.gather_partners(packed, nzw, len(nzw), F, C, valid)
    assert vs[:nv].tolist() == np.flatnonzero(valid).tolist()
    assert all(pos[vs[b]] == b for b in range(nv)) and (pos[~valid] == -1).all()
    Xl, yl = X.astype(int).tolist(), y.tolist()
    out = np.full((nc, nv), -3, np.int32)
    for a in range(nv):
        D2.partner_row(G, cw, a, out)
        want = naive.naive_partner_row(Xl, yl, rows, nc, int(vs[a]))
        assert out.tolist() == [[row[j] for j in vs[:nv]] for row in want]


@pytest.mark.parametrize("seed", range(6))
def test_depth2_lazy_answers_as_depth2_regularized(seed):
    """The solver the GOSDT search used before, on the node's whole pair table: the same
    (objective, root) for every node, penalty, starting best and floor."""
    nc = 2 + seed % 3
    rng, X, y, _ = _draw(1700 + seed, nc, (30, 150), (3, 10))
    n, d = X.shape
    for rows in _row_sets(rng, n, 10, 0.3):
        packed, nzw, F, C, node = _lazy_inputs(X, y, nc, rows)
        vs = np.zeros(d, np.int64)
        vs[:node.ncand] = np.sort(node.order[:node.ncand])
        P = np.array(naive.naive_pair_counts(X.astype(int).tolist(), y.tolist(), rows, nc),
                     dtype=np.int32).reshape(nc, d, d)
        full = Depth2Node(node.cnt1, node.tot, node.order, node.ncand, vs, node.ncand, P)
        for lam in (2.0 ** -8, 0.5, 0.02 * n):
            leaf = float(node.tot.sum() - node.tot.max()) + lam
            for best, floor in ((leaf, 2.0 * lam), (INF, -1.0), (leaf / 2, 0.0)):
                got = D2.depth2_lazy(packed, nzw, len(nzw), F, C, node, lam, best, floor)
                assert got[:2] == depth2_regularized(full, lam, best, floor)

def _fit(X, yi, ref_wrong, lam_count, depth, shortcut, use_ref=True):
    n = len(yi)
    nc = int(yi.max()) + 1
    mask, grp, ng = equivalence_groups(X, yi)
    obj, lb, feat, left, right, value, stats = E.fit_gosdt(G.gosdt_problem(
        bitset_data(X, yi, nc), depth, lam_count, max_entries=10**6,
        ref_wrong=pack_rows(ref_wrong) if use_ref else None, groups=(pack_rows(mask), grp, ng),
        shortcut=shortcut))
    return obj, lb, feat, value


@pytest.mark.parametrize("seed", range(10))
def test_shortcut_gives_the_recursions_objective_and_tree(seed):
    """With a random reference, several λ and depth budgets: the search with the guessed
    depth-2 shortcut returns the objective and the tree of the recursion without it, and the
    objective is the returned tree's cost."""
    _, X, yi, ref_wrong = _draw(1400 + seed, 2 + (seed % 3 == 2), (40, 160), (4, 9))
    n = len(yi)
    for lam_count in (0.3, 1.0, 2.5, 0.001 * n, 0.01 * n):
        for depth in (2, 3, 4):
            o1, lb1, f1, v1 = _fit(X, yi, ref_wrong, lam_count, depth, True)
            o0, lb0, f0, v0 = _fit(X, yi, ref_wrong, lam_count, depth, False)
            assert o1 == o0, (lam_count, depth)
            np.testing.assert_array_equal(f1, f0)
            np.testing.assert_array_equal(v1, v0)
            leaves = f1 < 0
            cost = float(np.sum(v1[leaves].sum(1) - v1[leaves].max(1))
                         + lam_count * leaves.sum())
            assert o1 == pytest.approx(cost, abs=1e-9)
            assert lb1 == o1


@pytest.mark.parametrize("seed", range(4))
def test_shortcut_without_guess_is_exact(seed):
    """Without a guess both searches are exact: equal objectives (ties may pick other trees)."""
    rng = np.random.default_rng(1500 + seed)
    X, yi, ref_wrong = _random_problem(rng, 80, 6, 2)
    for lam_count in (0.5, 2.0):
        for depth in (2, 3):
            o1 = _fit(X, yi, ref_wrong, lam_count, depth, True, use_ref=False)[0]
            o0 = _fit(X, yi, ref_wrong, lam_count, depth, False, use_ref=False)[0]
            assert o1 == pytest.approx(o0, abs=1e-9)


def test_perfect_reference_gives_the_exact_optimum_with_the_shortcut():
    """A reference that errs nowhere: lb_guess(S) = λ, step 1 makes a leaf only where the leaf
    errs at most λ·N, which no split can beat, and lb_curr = 2λ bounds every split: the guessed
    bounds are valid, so the optimum is the true one."""
    rng = np.random.default_rng(16)
    X, yi, _ = _random_problem(rng, 100, 6, 2)
    none = np.zeros(len(yi), bool)
    for lam_count in (0.5, 1.5):
        for depth in (2, 3):
            exact = _fit(X, yi, none, lam_count, depth, True, use_ref=False)[0]
            guessed = _fit(X, yi, none, lam_count, depth, True)[0]
            assert guessed == pytest.approx(exact, abs=1e-9)
