"""Tests of the textbook greedy learner (`treebench.algorithms.greedy`)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import (
    naive_all_depth2_errors,
    naive_greedy,
    naive_mdl_prune,
    naive_tree_to_lists,
)
from sklearn.tree import DecisionTreeClassifier

from treebench.algorithms.greedy import (
    GreedyTreeClassifier,
    grow_tree,
    mdl_bound,
    prune_mdl,
    select_feature,
    split_scores,
)
from treebench.registry import ALGORITHMS
from treebench.tree.arrays import TreeBuilder, check_tree

CRITERIA = ("entropy", "gini", "error")


def random_problem(seed: int, *, weights: str = "none"):
    """Tiny random binary dataset with correlated labels, so trees have some structure."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    d = int(rng.integers(1, 7))
    k = int(rng.choice([2, 2, 3]))
    X = (rng.random((n, d)) < rng.uniform(0.2, 0.8, size=d)).astype(float)
    if rng.random() < 0.3 and d >= 2:  # duplicate a column: forces exact ties
        X[:, d - 1] = X[:, 0]
    noise = rng.integers(0, k, size=n)
    y = np.where(rng.random(n) < 0.6, (X[:, : min(d, 2)].sum(axis=1) % k).astype(int), noise)
    if weights == "none":
        w = None
    elif weights == "integer":
        w = rng.integers(0, 4, size=n).astype(float)
        w[0] = max(w[0], 1.0)
    else:
        w = rng.random(n) * (rng.random(n) < 0.85)
        w[0] = 0.5 + w[0]
    return X, y, w


def as_lists(tree):
    return tree.feature.tolist(), tree.left.tolist(), tree.right.tolist(), tree.label.tolist()


def assert_same_as_naive(est, naive_root, X, y_index):
    feat, left, right, value, label = naive_tree_to_lists(naive_root)
    assert as_lists(est.tree_) == (feat, left, right, label)
    np.testing.assert_allclose(est.tree_.value, np.array(value), rtol=1e-9, atol=1e-12)
    # predictions agree with the reference tree on every 0/1 input of this width
    d = X.shape[1]
    grid = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    from naive import naive_predict_one

    expected = [naive_predict_one(naive_root, x) for x in grid]
    assert est.tree_.predict_index(grid).tolist() == expected


# ---------------------------------------------------------------------------- vs naive reference
@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("weights", ["none", "integer", "float"])
def test_matches_naive_reference(criterion, weights):
    for seed in range(40):
        X, y, w = random_problem(seed, weights=weights)
        max_depth = [None, 0, 1, 2, 3][seed % 5]
        msl = 1 if seed % 3 else 2
        est = GreedyTreeClassifier(criterion=criterion, max_depth=max_depth, min_samples_leaf=msl)
        est.fit(X, y, sample_weight=w)
        y_index = np.searchsorted(est.classes_, y)
        root, n_scores = naive_greedy(
            X, y_index, len(est.classes_), sample_weight=w, criterion=criterion,
            max_depth=max_depth, min_samples_leaf=msl,
        )
        assert_same_as_naive(est, root, X, y_index)
        assert est.solve_info_["operations"] == n_scores
        check_tree(est.tree_, n_features=X.shape[1], max_depth=max_depth, X=X, y_index=y_index,
                   sample_weight=w)
        assert est.solve_info_["objective"] == pytest.approx(
            est.tree_.training_error(X, y_index, w), abs=1e-9
        )


@pytest.mark.parametrize("criterion", CRITERIA)
def test_min_improvement_matches_naive(criterion):
    for seed in range(30):
        X, y, w = random_problem(100 + seed, weights="float")
        est = GreedyTreeClassifier(criterion=criterion, min_improvement=0.05).fit(X, y, w)
        y_index = np.searchsorted(est.classes_, y)
        root, _ = naive_greedy(X, y_index, len(est.classes_), sample_weight=w,
                               criterion=criterion, min_improvement=0.05)
        assert_same_as_naive(est, root, X, y_index)


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("weights", ["none", "float"])
def test_mdl_pruning_matches_naive(criterion, weights):
    n_pruned_total = 0
    for seed in range(25):
        X, y, w = random_problem(200 + seed, weights=weights)
        delta = [0.05, 0.5, 0.9][seed % 3]
        est = GreedyTreeClassifier(criterion=criterion, prune="mdl", mdl_delta=delta)
        est.fit(X, y, sample_weight=w)
        y_index = np.searchsorted(est.classes_, y)
        root, _ = naive_greedy(X, y_index, len(est.classes_), sample_weight=w, criterion=criterion)
        naive_mdl_prune(root, X, y_index, len(est.classes_), sample_weight=w, delta=delta)
        assert_same_as_naive(est, root, X, y_index)
        check_tree(est.tree_, X=X, y_index=y_index, sample_weight=w)
        info = est.solve_info_
        assert info["n_pruned"] == info["n_nodes_grown"] - est.tree_.n_nodes
        n_pruned_total += info["n_pruned"]
    assert n_pruned_total > 0  # the comparison exercised actual pruning


# ---------------------------------------------------------------------------- textbook facts
def exercise_18_2():
    X = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=float)
    y = np.array([1, 1, 0, 0])
    return X, y


def test_exercise_18_2_id3_is_suboptimal_at_depth_2():
    """Exercise 18.2: depth-2 ID3 with information gain errs on ≥ 1/4 of the four examples,
    whichever way its ties are broken, while some depth-2 tree has zero training error."""
    X, y = exercise_18_2()
    # every tie-breaking order: present the features in every order (ties go to lowest index)
    for perm in itertools.permutations(range(3)):
        est = GreedyTreeClassifier(criterion="entropy", max_depth=2).fit(X[:, perm], y)
        assert perm[est.tree_.feature[0]] == 0  # ID3's root is x1 (the first feature)
        assert 1 - est.score(X[:, perm], y) >= 0.25
    errors = list(naive_all_depth2_errors(X, y))
    assert len(errors) == 1 + 3 + 3 * 4 * 4
    assert min(e for e, _ in errors) == 0
    assert (0, "x1? (0: x2, 1: x2)") in errors  # 0-based names: x2 then x3 in the text's
    # an explicit zero-error depth-2 tree: test x2 (index 1) then x3 (index 2) on both sides
    pred = np.where(X[:, 1] == 1, X[:, 2] == 1, X[:, 2] == 0).astype(int)
    assert np.array_equal(pred, y)
    # and unlimited ID3 does fit the sample (it is only the depth budget that hurts)
    assert GreedyTreeClassifier(criterion="entropy").fit(X, y).score(X, y) == 1.0


def test_zero_gain_splits_are_taken():
    """XOR: every feature has zero gain at the root, yet the greedy recursion splits (like ID3
    and Top-k's Figure 1) and fits the data at depth 2."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 1, 1, 0])
    for criterion in CRITERIA:
        est = GreedyTreeClassifier(criterion=criterion, max_depth=2).fit(X, y)
        assert est.tree_.feature[0] == 0
        assert est.score(X, y) == 1.0
        # with a positive min_improvement the root gain 0 is not enough
        est = GreedyTreeClassifier(criterion=criterion, min_improvement=1e-9).fit(X, y)
        assert est.tree_.n_nodes == 1


def test_ties_go_to_the_lowest_feature_index():
    X = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0]], dtype=float)
    y = np.array([0, 0, 1, 1])
    est = GreedyTreeClassifier().fit(X, y)
    assert est.tree_.feature[0] == 0
    assert est.fit(X[:, ::-1], y).tree_.feature[0] == 0
    # float noise far below the tolerance is a tie
    scores = np.array([0.3 + 1e-15, 0.3, 0.5])
    assert select_feature(scores, np.array([True, True, True])) == 0
    assert select_feature(np.array([0.3 + 1e-9, 0.3]), np.array([True, True])) == 1
    assert select_feature(scores, np.array([False, True, True])) == 1
    assert select_feature(scores, np.zeros(3, bool)) == -1


def test_split_scores_are_weighted_child_impurities():
    node = np.array([6.0, 2.0])
    ones = np.array([[6.0, 0.0], [3.0, 1.0], [0.0, 0.0]])
    s = split_scores(ones, node, "error")
    assert s == pytest.approx([0.0, 2 / 8, 2 / 8])
    s = split_scores(ones, node, "gini")
    assert s[0] == pytest.approx(0.0)
    assert s[1] == pytest.approx(0.5 * (1 - (0.75**2 + 0.25**2)) * 2)
    s = split_scores(ones, node, "entropy")
    h = -(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25))
    assert s[1] == pytest.approx(h)
    assert s[2] == pytest.approx(h)  # constant feature: child impurity = parent impurity


def test_mdl_bound_formula():
    # two classes: (n+1) log2(d+3) bits, as in the text
    v = mdl_bound(0.1, 5, n_features=5, n_classes=2, m=100, delta=0.05)
    assert v == pytest.approx(0.1 + np.sqrt((6 * 3 + np.log(40)) / 200))


def test_mdl_pruning_replaces_a_node_by_its_child_subtree():
    """§18.2.2's candidate "replace node j with its left subtree": a useless root test x0 above
    two copies of the useful test x1 collapses to a single x1 test."""
    X = np.array([[a, b] for a in (0, 1) for b in (0, 1)] * 5, dtype=float)
    y = X[:, 1].astype(np.int64)
    b = TreeBuilder(n_classes=2)
    root = b.add_split(0, 0.5, [10, 10])
    for side in (0, 1):
        node = b.add_split(1, 0.5, [5, 5])
        b.set_children(node, b.add_leaf([5, 0], 0), b.add_leaf([0, 5], 1))
        if side == 0:
            left = node
        else:
            b.set_children(root, left, node)
    grown = b.build()
    check_tree(grown, X=X, y_index=y)
    pruned, info = prune_mdl(grown, X, y, np.ones(20), delta=0.05, prior=np.array([10.0, 10.0]))
    assert pruned.feature.tolist() == [1, -1, -1]
    assert pruned.label.tolist()[1:] == [0, 1]
    assert info == {"n_pruned": 4, "n_replacements": 1, "n_replaced_by_child": 1,
                    "mdl_bound": pytest.approx(mdl_bound(0.0, 3, n_features=2, n_classes=2,
                                                         m=20, delta=0.05))}
    check_tree(pruned, X=X, y_index=y)


def test_mdl_pruning_never_increases_the_bound_and_shrinks_noise():
    rng = np.random.default_rng(7)
    X = (rng.random((300, 12)) < 0.5).astype(float)
    y = ((X[:, 0] + X[:, 1] >= 1) ^ (rng.random(300) < 0.1)).astype(int)
    full = GreedyTreeClassifier().fit(X, y)
    pruned = GreedyTreeClassifier(prune="mdl").fit(X, y)

    def f(est):
        err = est.solve_info_["objective"] / len(y)
        return mdl_bound(err, est.tree_.n_nodes, n_features=12, n_classes=2, m=300, delta=0.05)

    assert f(pruned) <= f(full) + 1e-12
    assert pruned.solve_info_["mdl_bound"] == pytest.approx(f(pruned))
    assert pruned.tree_.n_nodes < full.tree_.n_nodes
    assert pruned.solve_info_["n_pruned"] == full.tree_.n_nodes - pruned.tree_.n_nodes
    # the signal (x0 or x1) survives: the pruned tree still tests x0 at the root
    assert pruned.tree_.feature[0] in (0, 1)


# ---------------------------------------------------------------------------- weights & labels
def test_integer_weights_equal_repeated_rows():
    for seed in range(20):
        X, y, w = random_problem(300 + seed, weights="integer")
        rep = np.repeat(np.arange(len(y)), w.astype(int))
        for criterion in CRITERIA:
            a = GreedyTreeClassifier(criterion=criterion, max_depth=3).fit(X, y, w)
            b = GreedyTreeClassifier(criterion=criterion, max_depth=3).fit(X[rep], y[rep])
            # (a class of zero total weight stays in classes_ of `a` only: compare class labels)
            assert as_lists(a.tree_)[:3] == as_lists(b.tree_)[:3]
            assert np.array_equal(a.classes_[a.tree_.label], b.classes_[b.tree_.label])
            present = np.searchsorted(a.classes_, b.classes_)
            np.testing.assert_allclose(a.tree_.value[:, present], b.tree_.value)


def test_zero_weight_rows_are_ignored():
    X, y, _ = random_problem(11)
    X = np.vstack([X, np.ones((3, X.shape[1]))])
    y = np.concatenate([y, [1, 0, 1]])
    w = np.r_[np.ones(len(y) - 3), 0.0, 0.0, 0.0]
    a = GreedyTreeClassifier().fit(X, y, w)
    b = GreedyTreeClassifier().fit(X[:-3], y[:-3])
    assert as_lists(a.tree_) == as_lists(b.tree_)


def test_string_labels_and_multiclass():
    X, y, _ = random_problem(5)
    while len(np.unique(y)) < 2:
        X, y, _ = random_problem(int(y.sum()) + 50)
    labels = np.array(["ant", "bee", "cat"])[y]
    est = GreedyTreeClassifier(criterion="gini").fit(X, labels)
    assert set(est.predict(X)) <= set(labels)
    ref = GreedyTreeClassifier(criterion="gini").fit(X, y)
    assert np.array_equal(np.searchsorted(est.classes_, est.predict(X)), ref.predict(X))


def test_leaf_labels_use_the_training_prior_on_ties():
    # the leaf under x0 = 1 has one row of each class; class 1 is more frequent overall
    X = np.array([[1], [1], [0], [0], [0]], dtype=float)
    y = np.array([0, 1, 1, 1, 1])
    est = GreedyTreeClassifier(max_depth=1).fit(X, y)
    assert est.predict(np.array([[1.0]]))[0] == 1


# ---------------------------------------------------------------------------- input checks
def test_rejects_non_binary_features_and_bad_weights():
    X = np.array([[0.0, 0.3], [1.0, 0.0]])
    with pytest.raises(ValueError, match="0/1 features"):
        GreedyTreeClassifier().fit(X, [0, 1])
    Xb = np.array([[0.0], [1.0]])
    with pytest.raises(ValueError, match="Negative values"):
        GreedyTreeClassifier().fit(Xb, [0, 1], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="zero"):
        GreedyTreeClassifier().fit(Xb, [0, 1], sample_weight=[0.0, 0.0])
    with pytest.raises(ValueError):
        GreedyTreeClassifier(criterion="log_loss").fit(Xb, [0, 1])
    with pytest.raises(ValueError):
        GreedyTreeClassifier(mdl_delta=1.0).fit(Xb, [0, 1])


def test_registered_with_defaults():
    entry = ALGORITHMS.get("greedy")
    assert entry.obj is GreedyTreeClassifier
    assert {"greedy", "baseline"} <= set(entry.tags)
    est = entry.create(max_depth=2, criterion="gini")
    assert est.get_params()["prune"] == "none"


# ---------------------------------------------------------------------------- independent oracle
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_training_predictions_agree_with_sklearn_cart(criterion):
    """On binary features with continuous random weights (no score ties between different
    partitions) CART makes the same choices, so training predictions coincide."""
    rng = np.random.default_rng(3)
    for rep in range(6):
        X = (rng.random((150, 8)) < 0.5).astype(float)
        y = ((X[:, 0] * 2 + X[:, 3] + rng.random(150) * 1.5) > 1.6).astype(int)
        w = rng.random(150) + 0.1
        for depth in (1, 2, 4):
            ours = GreedyTreeClassifier(criterion=criterion, max_depth=depth).fit(X, y, w)
            cart = DecisionTreeClassifier(criterion=criterion, max_depth=depth, random_state=rep)
            cart.fit(X, y, sample_weight=w)
            assert np.array_equal(ours.predict(X), cart.predict(X))
            assert ours.tree_.feature[0] == cart.tree_.feature[0]


# ---------------------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(0, 1), min_size=4, max_size=4), min_size=n, max_size=n),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
        )
    ),
    st.sampled_from(CRITERIA),
    st.integers(0, 4),
)
def test_depth_monotone_training_error_and_invariants(data, criterion, depth):
    rows, labels = data
    X = np.array(rows, dtype=float)
    y = np.array(labels)
    shallow = GreedyTreeClassifier(criterion=criterion, max_depth=depth).fit(X, y)
    deeper = GreedyTreeClassifier(criterion=criterion, max_depth=depth + 1).fit(X, y)
    y_index = np.searchsorted(shallow.classes_, y)
    check_tree(shallow.tree_, max_depth=depth, X=X, y_index=y_index)
    # a greedy tree one level deeper extends the shallower one, so it cannot err more
    assert deeper.solve_info_["objective"] <= shallow.solve_info_["objective"] + 1e-9
    a, b = shallow.tree_, deeper.tree_
    stack = [(0, 0, 0)]
    while stack:
        i, j, level = stack.pop()
        if a.feature[i] >= 0:
            assert b.feature[j] == a.feature[i]
            stack += [(a.left[i], b.left[j], level + 1), (a.right[i], b.right[j], level + 1)]
        elif level < depth:  # a leaf that the budget did not force stays a leaf
            assert b.feature[j] < 0
    # unlimited depth fits every consistent sample (no two equal rows with different labels)
    full = GreedyTreeClassifier(criterion=criterion).fit(X, y)
    _, inv = np.unique(X, axis=0, return_inverse=True)
    consistent = all(len(set(y[inv.ravel() == g])) == 1 for g in np.unique(inv))
    if consistent:
        assert full.score(X, y) == 1.0


def test_grow_tree_scales():
    """8000 × 120 at depth 6 is a few vectorised products per level (time reported, not asserted
    beyond a very loose sanity bound)."""
    import time

    rng = np.random.default_rng(0)
    X = (rng.random((8000, 120)) < 0.3).astype(float)
    y = (X[:, :5].sum(axis=1) + rng.random(8000) * 2 > 2.5).astype(np.int64)
    t = time.perf_counter()
    tree, ops = grow_tree(X, y, np.ones(8000), 2, criterion="entropy", max_depth=6)
    elapsed = time.perf_counter() - t
    check_tree(tree, max_depth=6, X=X, y_index=y)
    assert tree.depth == 6 and ops > 0
    assert elapsed < 20.0


def test_blocked_counting_gives_the_same_tree(monkeypatch):
    """Counts are accumulated over blocks of rows to bound memory; tiny blocks change nothing."""
    import treebench.algorithms.greedy as greedy_module

    rng = np.random.default_rng(5)
    X = (rng.random((500, 9)) < 0.4).astype(float)
    y = (X[:, 1] + X[:, 4] + (rng.random(500) < 0.3) >= 2).astype(int)
    w = rng.random(500)
    ref = GreedyTreeClassifier(criterion="gini").fit(X, y, w)
    monkeypatch.setattr(greedy_module, "_BLOCK_ELEMENTS", 9 * 7)  # 7 rows per block
    small = GreedyTreeClassifier(criterion="gini").fit(X, y, w)
    assert as_lists(small.tree_) == as_lists(ref.tree_)
    np.testing.assert_allclose(small.tree_.value, ref.tree_.value)
    assert ref.tree_.n_nodes > 15
