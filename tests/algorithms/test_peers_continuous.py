"""Continuous-feature peers (pycontree, licketysplit): their trees translated into TreeArrays
predict exactly as the solvers themselves, depth conventions match ours (a lone leaf is depth
0, max_depth = tests per path), left is ``x <= threshold`` (points exactly on a threshold), and
ConTree's optimal trees equal DPDT with every midpoint (the exhaustive generator)."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.tree.arrays import check_tree

pycontree = pytest.importorskip("pycontree")


def _num(seed, n=60, p=3, levels=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    y = ((X[:, 0] + X[:, 1] > levels - 1) ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_contree_translation_predicts_like_contree(seed, depth):
    from pycontree import ConTree

    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(seed)
    ours = ConTreePeerClassifier(max_depth=depth).fit(X, y)
    theirs = ConTree(max_depth=depth).fit(X, y.astype(np.intc))
    check_tree(ours.tree_, max_depth=depth, X=X, y_index=y)
    assert ours.get_depth() == theirs.get_depth()
    # every threshold itself, and just above it: left is x <= t for both
    probe = [X]
    for i in np.flatnonzero(ours.tree_.feature >= 0):
        f, t = ours.tree_.feature[i], ours.tree_.threshold[i]
        for v in (t, np.nextafter(t, np.inf)):
            Z = X.copy()
            Z[:, f] = v
            probe.append(Z)
    Z = np.vstack(probe)
    assert np.array_equal(ours.predict(Z), theirs.predict(Z))


@pytest.mark.parametrize("seed", range(4))
def test_contree_equals_dpdt_exhaustive_error(seed):
    from treebench.algorithms.dpdt import DPDTClassifier
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(seed, n=50)
    for depth in (1, 2):
        c = ConTreePeerClassifier(max_depth=depth).fit(X, y)
        d = DPDTClassifier(max_depth=depth, candidates="exhaustive").fit(X, y)
        assert c.solve_info_["objective"] == d.solve_info_["training_error"]
        assert c.solve_info_["optimal"]


def test_contree_integer_weights_are_repeated_rows():
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(1, n=30)
    w = np.arange(30) % 3
    a = ConTreePeerClassifier(max_depth=2).fit(X, y, sample_weight=w.astype(float))
    b = ConTreePeerClassifier(max_depth=2).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.solve_info_["objective"] == b.solve_info_["objective"]
    with pytest.raises(ValueError, match="whole-number"):
        ConTreePeerClassifier(max_depth=2).fit(X, y, sample_weight=np.full(30, 0.5))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_licketysplit_translation_depth_and_sides(seed, depth):
    pytest.importorskip("licketysplit")
    from licketysplit import LicketySPLITClassifier

    from treebench.algorithms.peers_continuous import LicketySplitPeerClassifier

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(150, 5)).astype(float)
    y = ((X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (rng.random(150) < 0.1)).astype(int)
    ours = LicketySplitPeerClassifier(max_depth=depth, lambda_leaf=0.0).fit(X, y)
    theirs = LicketySPLITClassifier(depth_budget=depth, lambda_leaf=0.0).fit(X.astype(np.uint8), y)
    check_tree(ours.tree_, max_depth=depth, X=X, y_index=y)
    allx = np.array([[(i >> j) & 1 for j in range(5)] for i in range(32)], dtype=float)
    assert np.array_equal(ours.predict(allx), theirs.predict(allx.astype(np.uint8)))
    # its objective (λ = 0) is its training error, which our translated tree reproduces
    assert ours.tree_.training_error(X, y) == pytest.approx(theirs.objective_)
    with pytest.raises(ValueError, match="0/1"):
        ours.fit(X + 0.25, y)
