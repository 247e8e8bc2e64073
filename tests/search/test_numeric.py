"""The optimal solver on numeric features against its brute-force twin (`naive_numeric_optimal`):
the same objective and, under the documented tie rule, the same tree."""

from __future__ import annotations

import time

import numpy as np
import pytest
from naive import (naive_numeric_lexicographic, naive_numeric_midpoint, naive_numeric_optimal,
                   naive_tree_tuple)

from treebench.search import _numeric_kernels as K
from treebench.search.numeric import heap_to_tree, solve_numeric
from treebench.tree.arrays import check_tree

pytestmark = pytest.mark.kernels


def _data(seed, n, d, n_classes, levels):
    """Small data with many repeated values (ties between thresholds and between trees)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float) * 0.25
    y = rng.integers(0, n_classes, size=n)
    return rng, X, y


def _check(X, y, n_classes, depth, w=None, lam=0.0):
    sol = solve_numeric(X, y, w, n_classes, depth, lam=lam)
    cost, tree = naive_numeric_optimal(X, y, n_classes, depth, w, lam=lam)
    check_tree(sol.tree)
    assert sol.tree.depth <= depth
    total = float(np.sum(w)) if w is not None else float(len(y))
    # the solver's objective in the brute force's unit (errors + lam * W per leaf)
    assert sol.errors + lam * total * sol.tree.n_leaves == pytest.approx(cost, abs=1e-7)
    assert naive_tree_tuple(sol.tree) == tree
    assert not sol.timed_out
    # optimal unless the comparisons were not exact (random float weights: a tolerance)
    exact = w is None or np.all(np.asarray(w) == np.round(w))
    assert sol.optimal == (sol.unproven is None) and (sol.optimal or not exact)
    return sol


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_unit_weights_match_brute_force(seed, depth):
    _, X, y = _data(seed, 14 + seed, 3, 2 + seed % 3, 4)
    _check(X, y, 2 + seed % 3, depth)


@pytest.mark.parametrize("seed", range(8))
def test_integer_and_float_weights_match_brute_force(seed):
    rng, X, y = _data(100 + seed, 13, 3, 3, 4)
    w_int = rng.integers(0, 4, size=len(y)).astype(float)  # zeros too: those rows are ignored
    w_int[0] = 1.0
    _check(X, y, 3, 2, w_int)
    _check(X, y, 3, 3 if seed < 3 else 2, rng.random(len(y)) + 0.1)


@pytest.mark.parametrize("seed", range(6))
def test_leaf_penalty_matches_brute_force(seed):
    _, X, y = _data(200 + seed, 15, 3, 2, 5)
    for lam in (0.0, 0.02, 0.1):
        _check(X, y, 2, 3 if seed < 3 else 2, lam=lam)


def test_depth4_matches_brute_force_on_two_features():
    _, X, y = _data(7, 12, 2, 2, 4)
    _check(X, y, 2, 4)


@pytest.mark.parametrize("seed", range(10))
def test_lexicographic_matches_brute_force(seed):
    """Fewest errors, then fewest leaves, under the same tie rule: unit, whole-number (zeros
    too) and constant fractional weights, depths 0 to 3."""
    rng, X, y = _data(300 + seed, 13 + seed % 4, 3, 2 + seed % 2, 4)
    nc = 2 + seed % 2
    for w in (None, rng.integers(0, 4, size=len(y)).astype(float), np.full(len(y), 2.5)):
        if w is not None and w.sum() == 0:
            w[0] = 1.0
        for depth in (0, 1, 2, 3):
            sol = solve_numeric(X, y, w, nc, depth, lexicographic=True)
            (errors, leaves), tree = naive_numeric_lexicographic(X, y, nc, depth, w)
            check_tree(sol.tree)
            assert (sol.errors, sol.tree.n_leaves) == (errors, leaves)
            assert naive_tree_tuple(sol.tree) == tree
            assert sol.optimal and sol.objective == sol.errors


def test_lexicographic_keeps_the_errors_with_fewer_leaves():
    """Against the errors-only search on the same data: the same errors, never more leaves,
    and fewer on some of these problems (so the option changes the answer)."""
    fewer = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 4, size=(16, 3)).astype(float) * 0.25
        y = rng.integers(0, 3, size=16)
        plain = solve_numeric(X, y, None, 3, 3)
        lex = solve_numeric(X, y, None, 3, 3, lexicographic=True)
        assert lex.errors == plain.errors and lex.tree.n_leaves <= plain.tree.n_leaves
        fewer += lex.tree.n_leaves < plain.tree.n_leaves
    assert fewer >= 5


def test_lexicographic_refuses_fractional_weights():
    _, X, y = _data(5, 12, 2, 2, 4)
    w = np.linspace(0.5, 2.0, len(y))
    with pytest.raises(ValueError, match="one power of two turns into whole numbers"):
        solve_numeric(X, y, w, 2, 2, lexicographic=True)


def test_lexicographic_scale_outweighs_every_tree_and_stays_exact():
    """The factor an error is worth: a power of two above the most leaves a tree can have
    (2^depth, or the number of rows when fewer), at most four times that; scaled totals over
    2^52 are refused (there ``c + 0.5`` rounds: weights summing to just under 2^53 after
    scaling broke the tie rule), and just under 2^52 the search still matches brute force."""
    from treebench.search.numeric import lexicographic_scale

    for n in (1, 2, 3, 5, 8, 9, 100):
        for depth in (0, 1, 2, 3, 4, 10):
            factor = float(lexicographic_scale(np.ones(n), depth)[0])
            leaves = min(2**depth, n)
            assert factor > leaves and factor <= 4 * leaves and np.log2(factor).is_integer()
    X = np.array([[0, 2], [1, 2], [3, 2], [0, 2], [3, 1], [2, 3], [0, 3], [3, 0], [0, 2]], float)
    y = np.array([2, 1, 1, 1, 0, 2, 1, 2, 0])
    base = np.array([2, 2, 2, 4, 5, 2, 5, 1, 1], float)
    with pytest.raises(ValueError, match="2\\*\\*52"):  # an odd factor: no smaller unit
        solve_numeric(X, y, base * 46912496118441.0, 3, 2, lexicographic=True)
    # an even one: the weights are halved first (exactly), and the scaled total fits
    w = base * 46912496118442.0
    sol = solve_numeric(X, y, w, 3, 2, lexicographic=True)
    (errors, leaves), tree = naive_numeric_lexicographic(X, y, 3, 2, w)
    assert (sol.errors, sol.tree.n_leaves, naive_tree_tuple(sol.tree)) == (errors, leaves, tree)
    w = base * np.floor(2.0**52 / 8 / base.sum())  # the scaled total just under 2^52
    sol = solve_numeric(X, y, w, 3, 2, lexicographic=True)
    (errors, leaves), tree = naive_numeric_lexicographic(X, y, 3, 2, w)
    assert (sol.errors, sol.tree.n_leaves, naive_tree_tuple(sol.tree)) == (errors, leaves, tree)


def test_lexicographic_at_depth4_and_with_fewer_rows_than_leaves():
    """Depth 4 (the table of nodes' results is in use) against brute force, and data with
    fewer rows than 2^depth (the factor then comes from the number of rows)."""
    _, X, y = _data(17, 12, 2, 2, 4)
    sol = solve_numeric(X, y, None, 2, 4, lexicographic=True)
    (errors, leaves), tree = naive_numeric_lexicographic(X, y, 2, 4)
    assert (sol.errors, sol.tree.n_leaves, naive_tree_tuple(sol.tree)) == (errors, leaves, tree)
    for seed in range(6):
        _, X, y = _data(40 + seed, 5, 2, 3, 4)
        sol = solve_numeric(X, y, None, 3, 3, lexicographic=True)
        (errors, leaves), tree = naive_numeric_lexicographic(X, y, 3, 3)
        assert (sol.errors, sol.tree.n_leaves) == (errors, leaves)
        assert naive_tree_tuple(sol.tree) == tree


def test_constant_weights_equal_unit_weights_scaled():
    _, X, y = _data(3, 20, 3, 2, 5)
    a = solve_numeric(X, y, None, 2, 2)
    b = solve_numeric(X, y, np.full(len(y), 0.3), 2, 2)
    assert b.errors == pytest.approx(0.3 * a.errors)
    assert naive_tree_tuple(a.tree) == naive_tree_tuple(b.tree)


def test_pure_and_single_value_data_give_a_leaf():
    X = np.ones((5, 2))
    y = np.array([0, 1, 0, 1, 1])
    sol = solve_numeric(X, y, None, 2, 3)
    assert sol.tree.n_nodes == 1 and sol.errors == 2.0
    sol = solve_numeric(np.arange(6.0).reshape(3, 2), np.zeros(3, int), None, 1, 3)
    assert sol.tree.n_nodes == 1 and sol.errors == 0.0


def test_thresholds_are_midpoints_and_left_is_less_or_equal():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    sol = solve_numeric(X, y, None, 2, 1)
    assert sol.tree.threshold[0] == 1.5
    assert list(sol.tree.predict_index(X)) == [0, 0, 1, 1]


def test_midpoint_keeps_the_upper_value_right():
    a = 1.0
    b = np.nextafter(a, 2.0)
    assert K.midpoint(a, b) == naive_numeric_midpoint(a, b) == a
    assert K.midpoint(1.0, 2.0) == 1.5


def test_deadline_returns_the_best_tree_found():
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6))
    y = (X[:, 0] + 0.3 * rng.random(3000) > 0.6).astype(int)
    sol = solve_numeric(X, y, None, 2, 4, deadline=time.perf_counter())
    assert sol.timed_out and not sol.optimal
    check_tree(sol.tree)
    assert sol.tree.depth <= 4
    leaf_errors = min(np.bincount(y))
    assert sol.errors <= leaf_errors


def _state(X, y, n_classes, depth):
    """A search state over unit-weight rows, the root's class weights counted."""
    st = K.new_state(X, y, np.ones(len(y)), n_classes, depth, 0.5, 0.0, True, None)
    K.node_totals(st, 0)
    return st


def _sides_brute(X, y, n_classes, st, f, pos):
    """The brute force's best depth-1 cost of the rows left of position ``pos`` in feature
    ``f``'s order, and of the rows right of it."""
    rows = st.ord[0, f] & 0xFFFFFFFF
    return tuple(naive_numeric_optimal(X[r], y[r], n_classes, 1)[0]
                 for r in (rows[:pos], rows[pos:]))


def _two_class_floor(y_side, n_classes):
    """The weight of all but the two heaviest classes: what any tree of two leaves
    misclassifies at least (the class bound of a side of depth 1)."""
    counts = np.sort(np.bincount(y_side, minlength=n_classes))[::-1]
    return float(counts[2:].sum())


@pytest.mark.parametrize("seed", range(9))
def test_depth2_split_under_an_allowance_is_exact_or_bounds_it_out(seed):
    # each side looks only below the allowance minus the other side's lower bound (the one
    # given, raised by the class bound: with three classes or more two leaves misclassify
    # the lighter classes): either both costs are the brute force's, or they are lower
    # bounds whose sum is over the allowance (so that the split can be pruned)
    n_classes = 2 + seed % 3
    _, X, y = _data(300 + seed, 24, 3, n_classes, 5)
    st = _state(X, y, n_classes, 2)
    rows_of = st.ord[0] & 0xFFFFFFFF
    for f in range(3):
        for k in range(K.boundaries(st, 0, f)):
            pos = st.bpos[0, k]
            A, B = _sides_brute(X, y, n_classes, st, f, pos)
            floor0 = _two_class_floor(y[rows_of[f, :pos]], n_classes)
            floor1 = _two_class_floor(y[rows_of[f, pos:]], n_classes)
            for allow in (np.inf, A + B + 0.5, A + B - 0.5, A + B - 2.5, 1.5):
                for lb0, lb1 in ((0.0, 0.0), (max(A - 1.0, 0.0), max(B - 2.0, 0.0))):
                    a, b, exact = K.solve_depth2_split(st, 0, f, pos, lb0, lb1, allow)
                    if exact:
                        assert (a, b) == (A, B)
                    else:
                        assert a <= A and b <= B and a + b > allow
                    low0, low1 = max(lb0, floor0), max(lb1, floor1)
                    assert exact == (A + low1 < allow and B + low0 < allow)
            K.boundaries(st, 0, f)  # (the scans above do not change the boundaries)


@pytest.mark.parametrize("seed", range(8))
def test_class_floor_is_the_weight_beyond_the_heaviest_classes_and_bounds_the_optimum(seed):
    # the class bound: a tree of at most L leaves misclassifies at least the weight of all
    # but the L heaviest classes; it is at most the optimal cost at each depth (brute force)
    rng = np.random.default_rng(900 + seed)
    n_classes = 3 + seed % 5
    _, X, y = _data(900 + seed, 15, 3, n_classes, 4)
    w = rng.integers(1, 4, size=len(y)).astype(float) if seed % 2 else np.ones(len(y))
    t = np.bincount(y, weights=w, minlength=n_classes).astype(float)
    t[rng.integers(0, n_classes)] = t.max()  # (a tie between the heaviest classes)
    for leaves in range(1, n_classes + 2):
        want = float(np.sort(t)[::-1][leaves:].sum()) + 0.25
        stacked = np.concatenate([rng.random(3), t])  # (read at an offset)
        assert K.class_floor(stacked, 3, n_classes, leaves, 0.25) == want
    t = np.bincount(y, weights=w, minlength=n_classes).astype(float)
    for depth in (1, 2, 3):
        cost, _ = naive_numeric_optimal(X, y, n_classes, depth, w)
        assert K.class_floor(t, 0, n_classes, 2 ** depth, 0.0) <= cost


@pytest.mark.parametrize("seed", range(8))
def test_many_classes_match_brute_force(seed):
    # more classes than a depth-1 side or a depth-2 child has leaves: the class bound prunes
    # (depth 3: its children's and its depth-1 sides'), the optimum and tree are unchanged
    rng, X, y = _data(950 + seed, 16 + seed % 3, 3, 5 + seed % 3, 4)
    _check(X, y, 5 + seed % 3, 3 if seed < 5 else 2)
    _check(X, y, 5 + seed % 3, 2, rng.integers(1, 4, size=len(y)).astype(float))
    _check(X, y, 5 + seed % 3, 2, lam=0.05)


@pytest.mark.parametrize("seed", range(4))
def test_side_bounds_are_lower_bounds_of_both_sides(seed):
    _, X, y = _data(400 + seed, 22, 2, 2, 6)
    st = _state(X, y, 2, 3)
    for f in range(2):
        n_bound = K.boundaries(st, 0, f)
        exact = [_sides_brute(X, y, 2, st, f, st.bpos[0, k]) for k in range(n_bound)]
        for k in range(n_bound):
            st.rec[0, 0, k], st.rec[0, 1, k] = exact[k]
        for kl in range(-1, n_bound):
            for kr in list(range(kl + 2, n_bound)) + [-1]:
                for k in range(kl + 1, kr if kr >= 0 else n_bound):
                    lb0, lb1 = K.side_bounds(st, 0, k, kl, kr)
                    assert lb0 <= exact[k][0] and lb1 <= exact[k][1]


@pytest.mark.parametrize("seed", range(6))
def test_a_known_cost_gives_the_same_canonical_tree(seed):
    # the chosen split's children are re-solved knowing their cost: searched in index order
    # for the first split of that cost, the tree is the canonical one
    _, X, y = _data(500 + seed, 16, 3, 2, 4)
    cost, tree = naive_numeric_optimal(X, y, 2, 3)
    st = _state(X, y, 2, 3)
    assert K.solve_node(st, 0, 3, cost + 0.5, True, True, 0.0) == cost
    w = np.ones(len(y))
    got = heap_to_tree(st.tf[0, 0], st.tt[0, 0], X, y, w, 2, np.bincount(y, minlength=2))
    assert naive_tree_tuple(got) == tree
    # below the optimum there is nothing: a lower bound comes back
    st = _state(X, y, 2, 3)
    if cost > 0:
        assert K.solve_node(st, 0, 3, cost - 0.5, True, True, 0.0) > cost - 0.5


@pytest.mark.parametrize("seed", range(4))
def test_previous_row_is_the_last_row_of_the_same_side_before_a_position(seed):
    n_classes = 3
    rng, X, y = _data(500 + seed, 30, 2, n_classes, 6)
    st = _state(X, y, n_classes, 2)
    # sides interleaved at random in each feature's order (codes s * n_classes + class)
    st.side[0, :] = rng.integers(0, 2, size=30) * n_classes + y
    for f in range(2):
        rows = st.ord[0, f] & 0xFFFFFFFF
        sides = (st.side[0, rows] >= n_classes).astype(int)
        for i in range(30):
            for s in range(2):
                before = [j for j in range(i) if sides[j] == s]
                if before:
                    assert K.previous_row(st, 0, f, s, i) == rows[before[-1]]


def test_pack_ranks_matches_numpys_dense_ranks():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 6, size=(50, 4)).astype(float) * 0.5
    X[7, 2] = -0.0  # equal to 0.0: the same rank
    XT = np.ascontiguousarray(X.T)
    order = np.argsort(XT, axis=1)
    packed = K.pack_ranks(XT, order)
    for f in range(4):
        assert np.array_equal(packed[f] & 0xFFFFFFFF, order[f])
        dense = np.unique(XT[f], return_inverse=True)[1].ravel()
        assert np.array_equal(packed[f] >> 32, dense[order[f]])


@pytest.mark.parametrize("seed", range(5))
def test_whole_weights_too_large_for_exact_sums_still_give_the_optimum(seed):
    """Whole-number weights of about 1e17: their sums round (past 2^53), so costs are not
    exact integers and the integer tolerance of 0.5 must not be used (it made the search
    return trees up to twice the optimal error)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(40, 3)).astype(float)
    y = rng.integers(0, 3, size=40)
    w = rng.integers(1, 4, size=40) * 1e17 + rng.integers(0, 3, size=40)
    sol = solve_numeric(X, y, w, 3, 3)
    cost, _ = naive_numeric_optimal(X, y, 3, 3, w)
    assert sol.errors == pytest.approx(cost, rel=1e-12)
    assert sol.optimal


@pytest.mark.parametrize("seed", range(6))
def test_gini_seed_matches_its_naive_twin(seed):
    # the first split evaluated on a feature, found in one pass without listing boundaries
    from naive import naive_gini_seed

    n_classes = 2 + seed % 3
    rng, X, y = _data(600 + seed, 40, 3, n_classes, 6)
    w = np.ones(len(y)) if seed % 2 == 0 else rng.integers(1, 4, len(y)).astype(float)
    st = K.new_state(X, y, w, n_classes, 2, 0.5, 0.0, True, None)
    K.node_totals(st, 0)
    for f in range(X.shape[1]):
        k = K.gini_seed(st, 0, f)
        want_k, want_pos, want_w = naive_gini_seed(X[:, f], y, w, n_classes)
        assert k == want_k
        assert (st.bpos[0, k], st.bw[0, k]) == (want_pos, want_w)
        # the same boundary as in the full list of the feature's boundaries
        K.boundaries(st, 0, f)
        assert (st.bpos[0, k], st.bw[0, k]) == (want_pos, want_w)
    X[:, 0] = 1.5  # a single value: no boundary
    st = K.new_state(X, y, w, n_classes, 2, 0.5, 0.0, True, None)
    K.node_totals(st, 0)
    assert K.gini_seed(st, 0, 0) == -1


@pytest.mark.parametrize("seed", range(6))
def test_a_lower_bound_of_the_node_keeps_its_cost_and_canonical_tree(seed):
    # a node told a lower bound of its cost stops once a tree reaches it: the cost is still
    # the optimum, and with the tie rule the tree is still the canonical one
    _, X, y = _data(700 + seed, 18, 3, 2, 4)
    cost, tree = naive_numeric_optimal(X, y, 2, 3)
    w = np.ones(len(y))
    for lb in (0.0, max(cost - 1.0, 0.0), cost):
        st = _state(X, y, 2, 3)
        assert K.solve_node(st, 0, 3, np.inf, False, False, lb) == cost
        st = _state(X, y, 2, 3)
        assert K.solve_node(st, 0, 3, np.inf, True, False, lb) == cost
        got = heap_to_tree(st.tf[0, 0], st.tt[0, 0], X, y, w, 2, np.bincount(y, minlength=2))
        assert naive_tree_tuple(got) == tree


@pytest.mark.parametrize("seed", [70, 126, 176, 182, 196, 198, 205, 284])
def test_children_bounded_by_their_neighbours_records_keep_the_canonical_tree(seed):
    # a candidate's child takes lower bounds for its splits from the records of the same
    # side's child of the neighbouring candidates (minus the rows it lacks); on these data a
    # Gini seed that those bounds excluded once kept a stale cost and changed the tree
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 70))
    X = rng.integers(0, 8, size=(n, 3)).astype(float) * 0.25
    y = rng.integers(0, 2, size=n)
    _check(X, y, 2, 3)


@pytest.mark.parametrize("seed", range(6))
def test_gini_ranks_match_their_naive_twin(seed):
    # the features whose best Gini split is evaluated first, and the order of the others
    from naive import naive_gini_order

    n_classes = 2 + seed % 3
    rng, X, y = _data(800 + seed, 40, 5, n_classes, 6 + seed)
    X[:, 3] = 0.5  # a single value: ranked last
    w = np.ones(len(y)) if seed % 2 == 0 else rng.integers(1, 4, len(y)).astype(float)
    st = K.new_state(X, y, w, n_classes, 2, 0.5, 0.0, True, None)
    K.node_totals(st, 0)
    K.rank_seeds(st, 0)
    rank = -1 - st.prek[0]
    want = naive_gini_order(X, y, w, n_classes)
    assert sorted(rank.tolist()) == list(range(X.shape[1]))
    assert rank[3] == X.shape[1] - 1
    for (sa, fa), (sb, fb) in zip(want, want[1:]):
        if sa > sb + 1e-9 * max(1.0, abs(sa)):  # (equal scores may round either way)
            assert rank[fa] < rank[fb]


def _solve_with_table(X, y, n_classes, depth, table_bytes, monkeypatch):
    """The canonical tree of a search whose table of nodes' results takes at most
    ``table_bytes``, and the search's record (for its counters)."""
    monkeypatch.setattr(K, "CACHE_BYTES", table_bytes)
    st = K.new_state(X, y, np.ones(len(y)), n_classes, depth, 0.5, 0.0, True, None)
    cost = K.solve_node(st, 0, depth, np.inf, True, False, 0.0)
    tree = heap_to_tree(st.tf[0, 0], st.tt[0, 0], X, y, np.ones(len(y)), n_classes,
                        np.bincount(y, minlength=n_classes))
    return cost, tree, st


def test_depth4_with_the_table_of_results_matches_brute_force(monkeypatch):
    # nodes with two tests left met again with the same rows take their result from the
    # table (a hit); a full table stores no more: the trees stay those of the brute force
    from treebench.search.state import S_CAP_HIT, S_HITS

    hits = capped = 0
    for seed in range(4):
        _, X, y = _data(900 + seed, 11, 3, 2, 3)
        cost, tree = naive_numeric_optimal(X, y, 2, 4)
        for table_bytes in (1 << 20, 1 << 9):
            got_cost, got, st = _solve_with_table(X, y, 2, 4, table_bytes, monkeypatch)
            check_tree(got)
            assert got_cost == cost
            assert naive_tree_tuple(got) == tree
            hits += int(st.stats[S_HITS])
            capped += int(st.stats[S_CAP_HIT])
    assert hits > 0 and capped > 0


def test_the_table_holds_a_node_by_its_row_set(monkeypatch):
    # a node is found again whatever the order of its rows, and only with the same rows
    _, X, y = _data(950, 30, 3, 2, 6)
    monkeypatch.setattr(K, "CACHE_BYTES", 1 << 16)
    st = K.new_state(X, y, np.ones(len(y)), 2, 4, 0.5, 0.0, True, None)

    def put(rows):
        st.m[1] = len(rows)
        st.ord[1, 0, :len(rows)] = rows
        return K.cache_slot(st, 1, 2, False)

    slot, key = put(np.array([3, 7, 8, 20]))
    assert slot <= -2
    st.tf[1, 0, :3] = [1, -1, 0]
    st.tt[1, 0, :3] = [0.5, 0.0, 1.25]
    K.cache_store(st, 1, slot, key, 4.0, 10.0)  # its cost: 4
    assert K.cache_slot(st, 1, 3, False)[0] == -1  # three tests left: not kept
    assert K.cache_slot(st, 1, 2, True)[0] == -1  # canonical: not kept
    assert put(np.array([3, 7, 8]))[0] <= -2
    assert put(np.array([3, 7, 8, 21]))[0] <= -2
    found, _ = put(np.array([20, 8, 3, 7]))
    assert found >= 0
    st.tf[1, 0, :] = 5
    assert K.cache_answer(st, 1, found, 2.0) == 4.0  # above the bound: a lower bound
    assert K.cache_answer(st, 1, found, 10.0) == 4.0
    assert st.tf[1, 0, :3].tolist() == [1, -1, 0] and st.tf[1, 0, 3:7].tolist() == [-1] * 4
    assert st.tt[1, 0, 2] == 1.25
    # a lower bound not above the bound asks for a search; one above it answers
    slot, key = put(np.array([1, 2]))
    K.cache_store(st, 1, slot, key, 6.0, 5.0)  # no tree under 5: at least 6
    found, _ = put(np.array([2, 1]))
    assert K.cache_answer(st, 1, found, 5.5) == 6.0
    assert K.cache_answer(st, 1, found, 6.0) == -1.0
