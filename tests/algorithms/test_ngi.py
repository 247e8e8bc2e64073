"""NGI family (Zhang & Gionis, DMKD 2023): kernel vs the naive twin, fixtures from the authors' code,
coalescing, stopping, costs, pruning, expected cost and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import label_binarize

from tests import naive
from treebench import metrics
from treebench.search import ngi as K
from treebench.algorithms.context import FitContext
from treebench.algorithms.ngi import (
    METHODS,
    PRUNE_IMPURITY,
    REGISTRY_NAMES,
    NGIClassifier,
    coalesce,
)
from treebench.registry import ALGORITHMS
from treebench.tree.arrays import check_tree

# the 10-row toy of 8 objects after coalescing, φ = 21
TOY_ROWS = ["0010", "0110", "1001", "1101", "1110", "0101", "1011", "0000"]
TOY_X = np.array([[int(c) for c in r] for r in TOY_ROWS], dtype=np.uint8)
TOY_Y = np.array([0, 1, 2, 2, 1, 1, 2, 0])
TOY_W = np.array([0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2])
TOY_MULT = [2, 1, 1, 1, 1, 1, 1, 2]


def toy_rows():
    return np.repeat(TOY_X, TOY_MULT, axis=0).astype(float), np.repeat(TOY_Y, TOY_MULT)


def scores(X, y, w, S, theta=0.005, avail=None, d_paper=True, n_classes=None):
    idx = np.array(list(S) + [i for i in range(len(y)) if i not in set(S)], dtype=np.int64)
    m = X.shape[1]
    avail = np.ones(m, dtype=bool) if avail is None else avail
    k = int(y.max()) + 1 if n_classes is None else n_classes
    return K.node_scores(np.ascontiguousarray(X, dtype=np.uint8), idx, 0, len(S),
                         y.astype(np.int64), w, theta, avail, k, d_paper)


# ---------------------------------------------------------------------------- fixtures
def test_toy_fixture_root_terms():
    split, B, E, De, Dg, *_ = scores(TOY_X, TOY_Y, TOY_W, range(8))
    assert split.all()
    assert naive.naive_ngi_pairs(list(range(8)), list(TOY_Y)) == 21
    for j in (0, 1, 3):
        assert B[j] == pytest.approx(0.4, abs=1e-12)
        assert E[j] == pytest.approx(0.921693, abs=1e-6)
        assert De[j] == pytest.approx(0.695462, abs=1e-6)
    assert B[2] == pytest.approx(0.5, abs=1e-12)
    assert E[2] == pytest.approx(0.900794, abs=1e-6)
    assert De[2] == pytest.approx(0.049022, abs=1e-6)


@pytest.mark.parametrize("lam, root", [(0.0, 2), (1.0, 0)])
def test_toy_fixture_choice(lam, root):
    X, y = toy_rows()
    est = NGIClassifier(method="ec4.5", lam=lam).fit(X, y)
    assert est.tree_.feature[0] == root
    assert est.n_objects_ == 8


# ---------------------------------------------------------------------------- kernel vs naive
def random_objects(rng, n, m, k):
    """n distinct 0/1 rows with random labels and probabilities summing to 1."""
    rows = set()
    while len(rows) < n:
        rows.add(tuple(rng.integers(0, 2, m)))
    X = np.array(sorted(rows), dtype=np.uint8)
    y = rng.integers(0, k, n)
    w = rng.integers(1, 5, n).astype(float)
    return X, y, w / w.sum()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("d_term", ["paper", "authors"])
def test_node_scores_equal_naive(seed, d_term):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    m = int(rng.integers(3, 7))
    X, y, w = random_objects(rng, int(rng.integers(6, min(14, 2**m + 1))), m, k)
    theta = float(rng.choice([0.005, 0.05, 0.2]))
    root = list(range(len(y)))
    for _ in range(4):
        S = sorted(rng.choice(len(y), size=int(rng.integers(2, len(y) + 1)), replace=False))
        if len({int(y[i]) for i in S}) < 2 or w[S].sum() <= theta:
            continue
        avail = rng.random(X.shape[1]) < 0.8
        split, B, E, De, Dg, IP, BAL, Ge, Gg = scores(X, y, w, S, theta, avail,
                                                      d_term == "paper", k)
        for j in range(X.shape[1]):
            if not avail[j]:
                assert not split[j]
                continue
            t = naive.naive_ngi_terms(S, root, X.tolist(), y.tolist(), w.tolist(), j, theta,
                                      d_term)
            assert split[j] == t["splits"]
            got = dict(B=B[j], E=E[j], D_entropy=De[j], D_gini=Dg[j], IP=IP[j], BAL=BAL[j],
                       gain_entropy=Ge[j], gain_gini=Gg[j])
            for name, v in got.items():
                assert v == pytest.approx(t[name], abs=1e-12), (name, j)


def tree_preorder(tree):
    return [(int(f), list(v)) for f, v in zip(tree.feature, tree.value)]


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("seed", range(6))
def test_trees_equal_naive(method, seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(2, 4))
    n, m = int(rng.integers(8, 20)), int(rng.integers(3, 6))
    X = rng.integers(0, 2, (n, m)).astype(float)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    costs = rng.integers(1, 5, m).astype(float)
    lam = float(rng.choice([0.0, 0.1, 1.0, 10.0]))
    theta = float(rng.choice([0.005, 0.1]))
    min_objects = int(rng.choice([1, 2]))
    d_term = str(rng.choice(["paper", "authors"]))
    est = NGIClassifier(method=method, lam=lam, theta=theta, min_objects=min_objects,
                        d_term=d_term, test_costs=costs).fit(X, y)
    rows, labels, probs = naive.naive_ngi_coalesce(X.tolist(), y.tolist())
    ref = naive.naive_ngi_tree(rows, labels, probs, k, method,
                               lam=0.0 if method == "asr" else lam, theta=theta,
                               min_objects=min_objects, d_term=d_term, costs=costs)
    got = tree_preorder(est.tree_)
    exp = naive.naive_ngi_preorder(ref)
    assert [f for f, _ in got] == [f for f, _ in exp]
    np.testing.assert_allclose([v for _, v in got], [v for _, v in exp], atol=1e-12)
    check_tree(est.tree_, n_features=m)


# ---------------------------------------------------------------------------- objects
def test_coalescing_duplicates_conflicts_and_ties():
    X = np.array([[0, 1], [0, 1], [0, 1], [1, 0], [1, 0], [1, 1]], dtype=float)
    y = np.array([2, 1, 1, 0, 1, 2])
    Xc, yc, wc, inv = coalesce(X, y, np.ones(6), 3)
    assert Xc.tolist() == [[0, 1], [1, 0], [1, 1]]
    assert yc.tolist() == [1, 0, 2]  # majority 1; tie 0 vs 1 → smallest label
    np.testing.assert_allclose(wc, [3 / 6, 2 / 6, 1 / 6])
    assert inv.tolist() == [0, 0, 0, 1, 1, 2]
    rows, labels, probs = naive.naive_ngi_coalesce(X.tolist(), y.tolist())
    assert (rows, labels) == (Xc.tolist(), yc.tolist())
    np.testing.assert_allclose(probs, wc)


def test_fit_on_duplicates_equals_fit_on_weighted_objects():
    X, y = toy_rows()
    a = NGIClassifier(method="ecart").fit(X, y)
    b = NGIClassifier(method="ecart").fit(TOY_X.astype(float), TOY_Y, sample_weight=TOY_MULT)
    assert a.tree_ == b.tree_
    # a leaf's distribution is that of its coalesced objects (labels relabelled to majority)
    Xd = np.vstack([X, X[:1]])
    yd = np.concatenate([y, [1]])  # the object 0010 now has labels 0, 0, 1 → label 0
    c = NGIClassifier(method="ecart").fit(Xd, yd)
    np.testing.assert_allclose(c.tree_.value[0], [5 / 11, 3 / 11, 3 / 11])
    leaf = c.tree_.apply(X[:1])[0]
    assert c.tree_.value[leaf, 1] == 0.0


# ---------------------------------------------------------------------------- stopping
def test_stopping_rules():
    X, y = toy_rows()
    # θ just below the root mass 1: one split, then both children (p ≤ θ) are leaves
    assert NGIClassifier(theta=0.999).fit(X, y).tree_.n_nodes == 3
    # every leaf: homogeneous, or p ≤ θ, or ≤ min_objects objects, or no test left
    for theta, mo in [(0.005, 1), (0.25, 1), (0.005, 3)]:
        est = NGIClassifier(method="ec4.5", theta=theta, min_objects=mo).fit(X, y)
        t = est.tree_
        depth = t.node_depths()
        for i in np.flatnonzero(t.is_leaf):
            homogeneous = np.count_nonzero(t.value[i]) <= 1
            small = t.value[i].sum() <= theta + 1e-7
            n_obj = sum(1 for r in range(8) if t.apply(TOY_X[r:r + 1].astype(float))[0] == i)
            assert homogeneous or small or n_obj <= mo or depth[i] == 4
        for i in np.flatnonzero(~t.is_leaf):  # internal nodes break no rule
            assert np.count_nonzero(t.value[i]) > 1 and t.value[i].sum() > theta
        # a test is used at most once on a path
        def walk(i, used):
            if t.feature[i] < 0:
                return
            assert t.feature[i] not in used
            walk(t.left[i], used | {t.feature[i]})
            walk(t.right[i], used | {t.feature[i]})
        walk(0, frozenset())


def test_homogeneous_data_is_one_leaf():
    X = np.array([[0, 1], [1, 0], [1, 1]], dtype=float)
    est = NGIClassifier().fit(X, [4, 4, 4])
    assert est.tree_.n_nodes == 1
    assert est.expected_cost_ == 0.0


def test_bal_authors_takes_non_splitting_tests_and_empty_branches_predict_like_parent():
    # column 0 is constant: the authors' BAL picks it (max − min of one branch = 0)
    X = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]] * 2, dtype=float)
    y = np.array([0, 1, 1, 0] * 2)
    bal = NGIClassifier(method="bal").fit(X, y)
    fixed = NGIClassifier(method="bal-fixed").fit(X, y)
    assert bal.tree_.feature[0] == 0 and fixed.tree_.feature[0] != 0
    assert bal.expected_cost_ == pytest.approx(fixed.expected_cost_ + 1.0)
    check_tree(bal.tree_)
    # a row taking the empty branch gets the node's distribution
    probe = np.array([[1, 0, 0]], dtype=float)
    np.testing.assert_allclose(bal.predict_proba(probe), [[0.5, 0.5]])
    assert bal.predict(probe)[0] == 0


# ---------------------------------------------------------------------------- costs
@pytest.mark.parametrize("method", ["ec4.5", "ecart", "asr", "ip", "cc4.5", "ccart"])
def test_cost_aware_methods_prefer_the_cheap_copy(method):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (40, 3)).astype(float)
    y = (X[:, 0] != X[:, 1]).astype(int) | X[:, 2].astype(int)
    Xd = np.hstack([X, X])  # columns 3..5 copy 0..2
    costs = np.array([5, 5, 5, 1, 1, 1], dtype=float)
    est = NGIClassifier(method=method, test_costs=costs).fit(Xd, y)
    assert set(est.tree_.feature[est.tree_.feature >= 0]) <= {3, 4, 5}
    unit = NGIClassifier(method=method).fit(Xd, y)
    assert set(unit.tree_.feature[unit.tree_.feature >= 0]) <= {0, 1, 2}  # ties: first column


@pytest.mark.parametrize("method", ["c4.5", "cart"])
def test_plain_baselines_ignore_costs(method):
    X, y = toy_rows()
    a = NGIClassifier(method=method).fit(X, y)
    b = NGIClassifier(method=method, test_costs=[9, 1, 1, 1]).fit(X, y)
    assert a.tree_ == b.tree_


def test_costs_from_the_fit_context():
    X, y = toy_rows()
    costs = np.array([3.0, 1.0, 2.0, 4.0])
    a = NGIClassifier(method="ecart", test_costs=costs).fit(X, y)
    b = NGIClassifier(method="ecart").fit(X, y, context=FitContext(feature_costs=costs))
    assert a.tree_ == b.tree_
    np.testing.assert_array_equal(b.test_costs_, costs)
    np.testing.assert_array_equal(NGIClassifier().fit(X, y).test_costs_, np.ones(4))


def test_expected_cost_equals_direct_path_walk():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, (200, 8)).astype(float)
    y = (X[:, :3].sum(axis=1) + (rng.random(200) < 0.2)) % 3
    costs = rng.integers(1, 11, 8).astype(float)
    for method in ("ecart", "ec4.5", "bal", "ip"):
        est = NGIClassifier(method=method, test_costs=costs).fit(X, y)
        walk = [naive.naive_ngi_path_cost(est.tree_, x, costs) for x in X]
        # coalesced objects' probabilities are multiplicities / n: the mean over training rows
        assert est.expected_cost_ == pytest.approx(np.mean(walk), abs=1e-12)
        assert est.expected_cost(X) == pytest.approx(np.mean(walk), abs=1e-12)
        if np.all(costs == 1):
            assert est.expected_cost(X) == pytest.approx(est.tree_.expected_tests(X))


# ---------------------------------------------------------------------------- pruning
@pytest.mark.parametrize("method", ["ecart", "ec4.5", "ip", "cart"])
@pytest.mark.parametrize("seed", range(4))
def test_pruning_equals_naive_and_is_monotone(method, seed):
    rng = np.random.default_rng(50 + seed)
    X = rng.integers(0, 2, (30, 5)).astype(float)
    y = rng.integers(0, 3, 30)
    rows, labels, probs = naive.naive_ngi_coalesce(X.tolist(), y.tolist())
    full = naive.naive_ngi_tree(rows, labels, probs, 3, method, lam=1.0)
    sizes = []
    for alpha in (0.0, 1e-3, 1e-2, 0.05, 0.1, 0.5, 1.0, 100.0):
        est = NGIClassifier(method=method, ccp_alpha=alpha).fit(X, y)
        ref = naive.naive_ngi_prune(full, alpha, PRUNE_IMPURITY[method])
        assert [f for f, _ in tree_preorder(est.tree_)] == [
            f for f, _ in naive.naive_ngi_preorder(ref)
        ]
        check_tree(est.tree_)
        sizes.append(est.tree_.n_nodes)
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-1] == 1  # a huge α collapses the root
    assert sizes[0] == NGIClassifier(method=method).fit(X, y).tree_.n_nodes


# ---------------------------------------------------------------------------- metrics
def test_multiclass_auc_equals_scikit_learn_on_indicator_matrix():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, (120, 6)).astype(float)
    y = (X[:, 0] + 2 * X[:, 1] + (rng.random(120) < 0.3)) % 3
    est = NGIClassifier(method="ecart", theta=0.05).fit(X[:80], y[:80])
    proba = est.predict_proba(X[80:])
    ref = roc_auc_score(label_binarize(y[80:], classes=[0, 1, 2]), proba)
    assert metrics.roc_auc(y[80:], proba, est.classes_) == pytest.approx(ref, abs=1e-12)


# ---------------------------------------------------------------------------- API
def test_registry_names_and_fixed_methods():
    X, y = toy_rows()
    for method, name in REGISTRY_NAMES.items():
        entry = ALGORITHMS.get(name)
        assert "method" not in entry.parameters()
        est = entry.create(lam=0.5)
        assert est.method == method
        ref = NGIClassifier(method=method, lam=0.5).fit(X, y)
        assert est.fit(X, y).tree_ == ref.tree_
    assert ALGORITHMS.get("ngi").obj is NGIClassifier
    assert REGISTRY_NAMES["cart"] == "ngi-cart"  # `cart` is scikit-learn's CART


@pytest.mark.parametrize(
    "params, match",
    [
        ({"test_costs": [1, -1, 1, 1]}, "positive"),
        ({"test_costs": [1, 1, 1]}, "one cost per column"),
        ({"theta": 0.0}, "theta"),
        ({"theta": 1.0}, "theta"),
        ({"method": "id3"}, "method"),
    ],
)
def test_bad_inputs_give_one_clear_sentence(params, match):
    X, y = toy_rows()
    with pytest.raises(ValueError, match=match) as err:
        NGIClassifier(**params).fit(X, y)
    assert "\n" not in str(err.value)


def test_non_binary_features_are_refused():
    X, y = toy_rows()
    with pytest.raises(ValueError, match="0/1"):
        NGIClassifier().fit(X + 0.5, y)


@pytest.mark.parametrize("m", [0, 1, 7, 8, 63, 64, 65, 130])
def test_unique_rows_equals_numpy_unique(m):
    from treebench.algorithms.ngi import unique_rows

    rng = np.random.default_rng(m)
    X = (rng.random((300, m)) < 0.3).astype(np.uint8)
    X[100:200] = X[:100]  # duplicates
    rep, inv = unique_rows(X)
    ref_u, ref_inv = np.unique(X, axis=0, return_inverse=True)
    np.testing.assert_array_equal(X[rep], ref_u)
    np.testing.assert_array_equal(inv, ref_inv.reshape(-1))


def test_authors_d_term_rewards_a_cheap_test_that_does_not_split():
    """With absolute masses in D, a cheap non-splitting test wins below the root."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, (200, 5)).astype(float)
    y = ((X[:, 0] + X[:, 1] + X[:, 2]) % 2).astype(int)
    X[:, 3] = X[:, 0]  # two cheap copies of column 0: the root splits on column 3, and
    X[:, 4] = X[:, 0]  # below it column 4 is constant, cheap, and scores highest
    costs = np.array([1.0, 1.0, 1.0, 0.01, 0.01])
    kw = dict(method="ecart", lam=10.0, test_costs=costs)
    authors = NGIClassifier(d_term="authors", **kw).fit(X, y)
    paper = NGIClassifier(d_term="paper", **kw).fit(X, y)
    t = authors.tree_
    # some node tests a column that sends all of its rows one way (an empty child)
    empty = [i for i in range(t.n_nodes) if t.feature[i] >= 0
             and min(t.value[t.left[i]].sum(), t.value[t.right[i]].sum()) == 0]
    assert empty
    assert authors.expected_cost_ > paper.expected_cost_
    pt = paper.tree_
    assert all(min(pt.value[pt.left[i]].sum(), pt.value[pt.right[i]].sum()) > 0
               for i in range(pt.n_nodes) if pt.feature[i] >= 0)
    check_tree(t)
