"""The conventions that decide a Rashomon-set count, each pinned on the smallest problem where it
matters, and the peers' counts explained by them (docs/rashomon.md, "Conventions, and the
peers'"; `treebench.algorithms.peers_rashomon`).

The definition (Xin et al., NeurIPS 2022, Definition 3.1): every tree of depth <= D whose
objective ``errors / n + lam * leaves`` is at most ``(1 + eps)`` times the least one. `exact_count`
applies it by brute force in rational arithmetic, independently of the search's whole units.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from naive import naive_rashomon_trees
from quantbnb import catalog_dataset
from treebench.algorithms.peers_rashomon import (
    arborenum_numeric_count,
    arborenum_price,
    global_threshold_columns,
    treefarms_count,
    treefarms_spec,
)
from treebench.search.rashomon import SetSpec, enumerate_set

BIG = 2**20  # brute-force costs errors * BIG + leaves, read back as (errors, leaves)


def exact_count(X, y, depth, lam, eps=None, bound=None, *, keep=False, ties="prior",
                binary=True):
    """Trees of the set by brute force: objectives in exact rationals, with ``lam``, ``eps``
    and ``bound`` the decimals they print as; ``eps`` gives the bound ``(1 + eps) * least``."""
    n = len(y)
    every = naive_rashomon_trees(np.asarray(X), np.asarray(y), np.ones(n, int), 2, depth, BIG,
                                 1, binary=binary, keep_redundant=keep, leaf_ties=ties)
    price = Fraction(repr(float(lam)))
    obj = [Fraction(c // BIG, n) + price * (c % BIG) for c, _ in every]
    limit = (min(obj) * (1 + Fraction(repr(float(eps)))) if bound is None
             else Fraction(repr(float(bound))))
    return sum(o <= limit for o in obj)


def count(X, y, spec):
    return enumerate_set(np.asarray(X), np.asarray(y), np.ones(len(y)), 2, spec).count


# --- a tied leaf: which class it predicts decides whether a split is redundant --------------

# x = 1 holds one row of each class (a tie), x = 0 one row of class 0; class 0 has the larger
# total. treebench labels the tied leaf 0, so the split's two leaves predict 0 and the split is
# redundant (left out); TreeFARMS labels it 1 (the highest index) and keeps the split.
TIE = dict(X=[[0], [1], [1]], y=[0, 0, 1], depth=1, lam=0.01, eps=0.1)


def test_a_tied_leaf_decides_whether_a_split_is_redundant():
    X, y, depth, lam, eps = TIE.values()
    prior = count(X, y, SetSpec(depth, lam, epsilon=eps))
    last = count(X, y, SetSpec(depth, lam, epsilon=eps, leaf_ties="last"))
    kept = count(X, y, SetSpec(depth, lam, epsilon=eps, keep_redundant=True))
    assert (prior, last, kept) == (1, 2, 2)
    assert prior == exact_count(X, y, depth, lam, eps)
    assert last == exact_count(X, y, depth, lam, eps, ties="last")
    assert kept == exact_count(X, y, depth, lam, eps, keep=True)
    # the trees are labelled by the same rule: the split of the "last" set predicts 0, then 1
    rset = enumerate_set(np.asarray(X), np.asarray(y), np.ones(3), 2,
                         SetSpec(depth, lam, epsilon=eps, leaf_ties="last"))
    split = rset.tree(1)
    assert split.n_leaves == 2 and list(split.predict_index(np.array([[0], [1]]))) == [0, 1]


def test_the_learner_takes_the_tie_rule():
    from treebench.algorithms.rashomon import RashomonClassifier

    X, y, depth, lam, eps = TIE.values()
    counts = [RashomonClassifier(regularization=lam, max_depth=depth, epsilon=eps,
                                 leaf_ties=rule).fit(np.asarray(X), np.asarray(y)).set_.count
              for rule in ("prior", "last")]
    assert counts == [1, 2]
    with pytest.raises(ValueError, match="leaf_ties"):
        RashomonClassifier(leaf_ties="first").fit(np.asarray(X), np.asarray(y))


def test_three_rows_are_the_fewest_where_the_tie_rule_changes_a_count():
    # a tied leaf needs two rows and its sibling a third: on at most two rows the rules agree
    for n, d, depth in itertools.product((1, 2), (1, 2), (0, 1, 2)):
        for bits in itertools.product((0, 1), repeat=n * d + n):
            X = np.asarray(bits[: n * d]).reshape(n, d)
            y = np.asarray(bits[n * d:])
            for lam, eps in ((0.01, 0.1), (0.3, 1.0)):
                a = count(X, y, SetSpec(depth, lam, epsilon=eps))
                b = count(X, y, SetSpec(depth, lam, epsilon=eps, leaf_ties="last"))
                assert a == b, (X.tolist(), y.tolist(), depth, lam, eps)


def test_an_unknown_tie_rule_is_refused():
    with pytest.raises(ValueError, match="leaf_ties must be one of"):
        count(TIE["X"], TIE["y"], SetSpec(1, 0.01, epsilon=0.1, leaf_ties="first"))


# --- the bound: a tree whose objective equals it is in the set -------------------------------

# seven rows of class 0 at x = 0, one of class 1 at x = 1: the split (no error, 2 leaves) costs
# 0.1, the lone leaf 1/8 + 0.05 = 0.175 = 1.75 * 0.1 exactly. A price per leaf rounded to a
# power-of-two grid (0.39999999999999858 errors for lam * n = 0.4) left the leaf out.
AT_BOUND = dict(X=[[0]] * 7 + [[1]], y=[0] * 7 + [1], depth=1, lam=0.05, eps=0.75)


def test_a_tree_whose_objective_equals_the_bound_is_in_the_set():
    X, y, depth, lam, eps = AT_BOUND.values()
    rset = enumerate_set(np.asarray(X), np.asarray(y), np.ones(8), 2,
                         SetSpec(depth, lam, epsilon=eps))
    assert rset.count == 2 == exact_count(X, y, depth, lam, eps)
    assert rset.objective(rset.bound) == 0.175
    assert count(X, y, SetSpec(depth, lam, bound=0.175)) == 2
    assert count(X, y, SetSpec(depth, lam, bound=0.174)) == 1


# --- treefarms ------------------------------------------------------------------------------

def treefarms_grouped_count(X, y, depth, lam, eps):
    """treefarms 0.2.4's filter, by brute force: a node's trees are grouped by objective, and a
    split's pair of groups is dropped whole when both groups hold a leaf of one label (a tied
    leaf: the highest class index), not only the pair of the two leaves."""
    X, y = np.asarray(X), np.asarray(y)
    n, price = len(y), Fraction(repr(float(lam)))

    def label(rows):
        w = np.bincount(y[rows], minlength=2)
        return 1 if w[1] >= w[0] else 0

    def groups(rows, d):  # objective -> [trees, the leaf's label or None]
        w = np.bincount(y[rows], minlength=2)
        out = {Fraction(int(w.sum() - w.max()), n) + price: [1, label(rows)]}
        if d == 0:
            return out
        for f in range(X.shape[1]):
            go = X[rows, f] == 0
            if go.all() or not go.any():
                continue
            left, right = groups(rows[go], d - 1), groups(rows[~go], d - 1)
            for (a, (ka, la)), (b, (kb, lb)) in itertools.product(left.items(), right.items()):
                if la is not None and la == lb:
                    continue
                out.setdefault(a + b, [0, None])[0] += ka * kb
        return out

    every = groups(np.arange(n), depth)
    limit = min(every) * (1 + Fraction(repr(float(eps))))
    return sum(k for v, (k, _) in every.items() if v <= limit)


def dyadic_problems(seed, wanted):
    """Small problems with ties (repeated rows, equal columns) on which every objective is a
    short binary fraction (n of 4 or 8, lam and eps dyadic): float32 decides them exactly."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < wanted:
        n = int(rng.choice([4, 8]))
        d = int(rng.integers(1, 4))
        X = rng.integers(0, 2, size=(n, d))
        if d > 1 and rng.random() < 0.3:
            X[:, -1] = X[:, 0]
        y = rng.integers(0, 2, size=n)
        if len(set(y.tolist())) < 2 or (X == X[0]).all():  # (constant data aborts treefarms)
            continue
        out.append((X, y, int(rng.integers(1, 4)), float(rng.choice([0.125, 0.25])),
                    float(rng.choice([0.5, 1.0]))))
    return out


@pytest.mark.peers
def test_treefarms_counts_as_ours_under_its_tie_rule_on_the_smallest_problem():
    pytest.importorskip("treefarms")
    X, y, depth, lam, eps = TIE.values()
    X, y = np.asarray(X), np.asarray(y)
    assert treefarms_count(X, y, lam, eps, depth) == 2 == count(X, y, treefarms_spec(lam, eps,
                                                                                      depth))
    assert count(X, y, SetSpec(depth, lam, epsilon=eps)) == 1


@pytest.mark.peers
def test_treefarms_counts_are_its_grouped_filter_and_without_it_the_definition():
    pytest.importorskip("treefarms")
    lost = 0
    for X, y, depth, lam, eps in dyadic_problems(4, 40):
        tf = treefarms_count(X, y, lam, eps, depth)
        assert tf == treefarms_grouped_count(X, y, depth, lam, eps), (X.tolist(), y.tolist())
        ours = count(X, y, treefarms_spec(lam, eps, depth))
        assert ours == exact_count(X, y, depth, lam, eps, ties="last")
        lost += tf < ours
        kept = count(X, y, treefarms_spec(lam, eps, depth, keep_redundant=True))
        assert treefarms_count(X, y, lam, eps, depth, keep_redundant=True) == kept
        assert kept == exact_count(X, y, depth, lam, eps, keep=True)
    assert lost > 0  # the grouped filter loses trees on some of these problems


@pytest.mark.peers
def test_treefarms_loses_trees_without_a_redundant_split_on_the_smallest_problem():
    # under x0 = 0 (one row of each class) the tied leaf, labelled 1, and the split on x1 (no
    # error, one leaf more) both have the objective 0.5; under x0 = 1 the leaf predicts 1. Both
    # groups hold a leaf of class 1, so treefarms drops every pair of them, also the tree with
    # the split on x1 (no error, 3 leaves: 0.75 <= 2 * 0.5, the lone leaf's)
    pytest.importorskip("treefarms")
    X = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    y = np.array([1, 1, 1, 0])
    assert treefarms_count(X, y, 0.25, 1.0, 2) == 1 == treefarms_grouped_count(X, y, 2, 0.25,
                                                                                1.0)
    assert count(X, y, treefarms_spec(0.25, 1.0, 2)) == 3 == exact_count(X, y, 2, 0.25, 1.0,
                                                                         ties="last")
    assert treefarms_count(X, y, 0.25, 1.0, 2, keep_redundant=True) == 9


@pytest.mark.peers
def test_treefarms_decides_trees_at_the_bound_in_float32():
    # lam = 0.15 on 4 rows: the lone leaf is optimal (1/4 + 0.15 = 0.4), and two trees of one
    # error and 3 leaves have the objective 0.7 = 1.75 * 0.4 of the bound exactly;
    # treefarms' float32 sums leave them out
    pytest.importorskip("treefarms")
    X = np.array([[0, 0], [0, 1], [1, 1], [0, 0]])
    y = np.array([1, 0, 0, 0])
    kept = count(X, y, SetSpec(2, 0.15, epsilon=0.75, keep_redundant=True))
    assert kept == 5 == exact_count(X, y, 2, 0.15, 0.75, keep=True)
    assert exact_count(X, y, 2, 0.15, bound=0.6999999, keep=True) == 3
    assert treefarms_count(X, y, 0.15, 0.75, 2, keep_redundant=True) == 3


@pytest.fixture(scope="module")
def compas():
    return catalog_dataset("compas-binary", np.int8)


@pytest.mark.peers
@pytest.mark.parametrize("depth, tf_count, ours, kept", [
    (3, 381, 376, 1011),
    pytest.param(4, 1105, 1098, 2313, marks=pytest.mark.slow),
])
def test_compas_counts_differ_only_by_the_tie_rule(compas, depth, tf_count, ours, kept):
    # configs/rashomon.yaml: lam 0.01, multiplier 0.05, every row
    pytest.importorskip("treefarms")
    X, y = compas
    assert treefarms_count(X, y, 0.01, 0.05, depth) == tf_count
    assert count(X, y, treefarms_spec(0.01, 0.05, depth)) == tf_count
    assert count(X, y, SetSpec(depth, 0.01, epsilon=0.05)) == ours
    assert treefarms_count(X, y, 0.01, 0.05, depth, keep_redundant=True) == kept
    assert count(X, y, SetSpec(depth, 0.01, epsilon=0.05, keep_redundant=True)) == kept


# --- arborenum's exact mode on numeric features -----------------------------------------------

def numeric_problems(seed, wanted):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < wanted:
        n = int(rng.integers(4, 12))
        X = rng.integers(0, int(rng.integers(3, 6)), size=(n, int(rng.integers(1, 3))))
        y = rng.integers(0, 2, size=n)
        if len(set(y.tolist())) < 2:
            continue
        out.append((X.astype(float), y, int(rng.integers(1, 3)),
                    float(rng.choice([0.05, 0.1, 0.2])), float(rng.choice([0.1, 0.3, 0.6, 1.0]))))
    return out


@pytest.mark.peers
def test_arborenum_numeric_counts_are_ours_on_its_global_thresholds():
    pytest.importorskip("arborenum")
    fewer = 0
    for X, y, depth, lam, mult in numeric_problems(3, 25):
        arb, bound = arborenum_numeric_count(X, y, lam, mult, depth)
        price = arborenum_price(lam, len(y))
        cols = global_threshold_columns(X)
        spec = SetSpec(depth, price, bound=bound, keep_redundant=True)
        assert arb == count(cols, y, spec), (X.tolist(), y.tolist(), depth, lam, mult)
        assert arb == exact_count(cols, y, depth, price, bound=bound, keep=True)
        per_node = count(X, y, SetSpec(depth, price, bound=bound, binary=False,
                                       keep_redundant=True))
        assert per_node == exact_count(X, y, depth, price, bound=bound, keep=True, binary=False)
        assert per_node <= arb
        fewer += per_node < arb
    assert fewer > 0  # thresholds that split a node's rows alike are one tree for treebench


@pytest.mark.peers
def test_arborenum_numeric_counts_on_spiral():
    # gosdt/spiral: 100 rows, 2 numeric features of 93 and 89 values; depth 2, lam 0.02, x1.1
    pytest.importorskip("arborenum")
    X, y = catalog_dataset("gosdt/spiral", float)
    arb, bound = arborenum_numeric_count(X, y, 0.02, 0.1, 2)
    price = arborenum_price(0.02, len(y))
    assert arb == 5826
    assert count(global_threshold_columns(X), y,
                 SetSpec(2, price, bound=bound, keep_redundant=True)) == arb
    assert count(X, y, SetSpec(2, price, bound=bound, binary=False, keep_redundant=True)) == 3960


# --- treefarms' count holds trees above its bound on MONK 1 -----------------------------------

def _shape(t, i=0):
    """A tree's splits as nested tuples (column, rows with x = 0, rows with x = 1): a set's
    leaves are majority-labelled, so the splits name the tree."""
    if t.left[i] < 0:
        return "leaf"
    return (int(t.feature[i]), _shape(t, int(t.left[i])), _shape(t, int(t.right[i])))


@pytest.mark.peers
def test_treefarms_counts_trees_above_its_bound_on_monk1():
    # gosdt/monk1 (124 rows, 17 one-hot columns), depth 4, lam 0.02, x1.1: treefarms counts 88
    # trees, but only 12 have an objective within 1.1 times the optimum 0.14 (72 have 8 leaves
    # and no error, 0.16; 4 have 8 leaves and one error); those 12 are exactly ours
    pytest.importorskip("treefarms")
    from treebench.algorithms.peers_rashomon import treefarms_trees

    X, y = catalog_dataset("gosdt/monk1", np.int8)
    n = len(y)
    count, theirs = treefarms_trees(X, y, 0.02, 0.1, 4)
    lam = Fraction("0.02")
    objective = {_shape(t): Fraction(round(t.training_error(X, y, np.ones(n))), n)
                 + lam * t.n_leaves for t in theirs}
    bound = min(objective.values()) * Fraction(11, 10)
    got = enumerate_set(X, y, np.ones(n), 2, treefarms_spec(0.02, 0.1, 4))
    ours = {_shape(got.tree(i)) for i in range(got.count)}
    assert (count, len(objective), got.count) == (88, 88, 12)
    assert min(objective.values()) == Fraction(14, 100) == got.exact_objective(got.optimum)
    assert {s for s, o in objective.items() if o <= bound} == ours
