"""Peer solvers (pydl8.5, pystreed, gosdt) through their adapters: conventions and optimality."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.registry import ALGORITHMS
from treebench.tree.arrays import check_tree

pytestmark = pytest.mark.peers


def _data(seed: int, n: int = 300, d: int = 7):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = ((X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (X[:, 2].astype(int) & X[:, 3].astype(int)))
    flip = rng.random(n) < 0.1
    return X, np.where(flip, 1 - y, y)


def _walk(describe, root, x):
    node = root
    while True:
        d = describe(node)
        if d[0] == "leaf":
            return d[1]
        node = d[3] if x[d[1]] == 1 else d[2]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_dl85_adapter_matches_its_own_predict(seed, depth):
    pytest.importorskip("pydl85")
    from pydl85 import DL85Classifier

    X, y = _data(seed)
    ours = ALGORITHMS.get("dl85").create(max_depth=depth).fit(X, y)
    ref = DL85Classifier(max_depth=depth).fit(X.astype(np.int32), y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X.astype(np.int32)))
    check_tree(ours.tree_, X=X, y_index=y, max_depth=depth)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_streed_adapter_matches_its_own_predict(seed, depth):
    pytest.importorskip("pystreed")
    from pystreed import STreeDClassifier

    X, y = _data(seed)
    ours = ALGORITHMS.get("streed").create(max_depth=depth).fit(X, y)
    ref = STreeDClassifier(max_depth=depth, cost_complexity=0).fit(X.astype(np.int32), y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X.astype(np.int32)))
    check_tree(ours.tree_, X=X, y_index=y, max_depth=depth)


@pytest.mark.parametrize("seed", range(3))
def test_gosdt_adapter_follows_true_left(seed):
    pytest.importorskip("gosdt")
    import warnings

    import pandas as pd
    from gosdt import GOSDTClassifier

    from treebench.tree.adapters import describe_gosdt

    X, y = _data(seed)
    ours = ALGORITHMS.get("gosdt-ref").create(regularization=0.01, max_depth=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GOSDTClassifier(regularization=0.01, allow_small_reg=True, depth_budget=3).fit(
            pd.DataFrame(X.astype(np.int8)), y)
    # gosdt 1.0.4's own predict fails under scikit-learn >= 1.8: walk its tree by its documented rule
    expected = [_walk(describe_gosdt, ref.trees_[0].tree, x) for x in X]
    np.testing.assert_array_equal(ours.predict(X), ref.classes_[expected])
    check_tree(ours.tree_, X=X, y_index=y, max_depth=3)


def test_gosdt_depth_budget_counts_like_us():
    pytest.importorskip("gosdt")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (200, 4)).astype(float)
    y = X[:, 0].astype(int)
    stump = ALGORITHMS.get("gosdt-ref").create(regularization=0.01, max_depth=1).fit(X, y)
    assert stump.tree_.depth == 1 and stump.score(X, y) == 1.0
    leaf = ALGORITHMS.get("gosdt-ref").create(regularization=0.01, max_depth=0).fit(X, y)
    assert leaf.tree_.depth == 0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [2, 3])
def test_optimal_solvers_agree_with_topk_all(seed, depth):
    pytest.importorskip("pydl85")
    pytest.importorskip("pystreed")
    X, y = _data(seed, n=250, d=8)
    errs = {}
    for name, params in (("dl85", {}), ("dl85", {"paper_search": True}), ("streed", {}), ("topk", {"k": "all"})):
        est = ALGORITHMS.get(name).create(max_depth=depth, **params).fit(X, y)
        errs[(name, str(params))] = est.tree_.training_error(X, y)
    assert len(set(errs.values())) == 1, errs


@pytest.mark.parametrize("name", ["dl85", "streed", "gosdt-ref"])
def test_integer_weights_are_repeated_rows_and_others_refused(name):
    entry = ALGORITHMS.get(name)
    if not entry.available:
        pytest.skip(f"{name} needs {entry.missing}")
    X, y = _data(5, n=120, d=6)
    w = np.random.default_rng(0).integers(0, 4, len(y)).astype(float)
    params = {"max_depth": 2} if name != "gosdt-ref" else {"max_depth": 2, "regularization": 0.02}
    weighted = entry.create(**params).fit(X, y, sample_weight=w)
    keep = w > 0
    repeated = entry.create(**params).fit(np.repeat(X[keep], w[keep].astype(int), axis=0),
                                          np.repeat(y[keep], w[keep].astype(int)))
    assert weighted.tree_.training_error(X, y, w) == repeated.tree_.training_error(X, y, w)
    check_tree(weighted.tree_, X=X, y_index=y, sample_weight=w)
    with pytest.raises(ValueError, match="whole-number sample weights"):
        entry.create(**params).fit(X, y, sample_weight=w + 0.5)
