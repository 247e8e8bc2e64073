"""Registry-wide contract: every learner × depth 0..3 × binary / multi-class /
weighted data returns a valid `TreeArrays` (`check_tree` with the training data: structure,
depth budget, and class counts equal to the data's) whose predictions, computed by an
independent row-by-row walk, equal the estimator's ``predict`` and ``predict_proba``."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.registry import ALGORITHMS, accepts
from treebench.tree.arrays import TreeArrays, check_tree


def _learners():
    out = []
    for e in ALGORITHMS:
        if "test" in e.tags or not e.available or "blackbox" in e.tags:
            continue  # test doubles; missing optional solvers; ensembles have no single tree
        if accepts(e, "regression"):
            continue  # regressors (no classes_): checked in their own test modules
        out.append(e.name)
    return out


def _data(kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    n, d = 48, 6
    X = (rng.random((n, d)) < 0.5).astype(float)
    if kind == "multiclass":
        y = (X[:, 0] + X[:, 1] + X[:, 2] * (rng.random(n) < 0.7)).astype(int)  # 0..3
    else:
        y = ((X[:, 0] + X[:, 3] + (rng.random(n) < 0.25)) >= 2).astype(int)
    w = None
    if kind == "weighted":
        w = rng.integers(1, 4, n).astype(float)
    return X, y, w


def _walk(tree: TreeArrays, x: np.ndarray) -> int:
    """The leaf one row reaches, by the convention: left when x[feature] <= threshold."""
    i = 0
    while tree.feature[i] >= 0:
        i = tree.left[i] if x[tree.feature[i]] <= tree.threshold[i] else tree.right[i]
    return i


CASES = [(name, depth, kind) for name in _learners() for depth in range(4)
         for kind in ("binary", "multiclass", "weighted")]


@pytest.mark.parametrize("name, depth, kind", CASES)
def test_every_learner_returns_a_valid_tree(name, depth, kind):
    entry = ALGORITHMS.get(name)
    if kind == "multiclass" and not accepts(entry, "multiclass"):
        pytest.skip(f"{name} declares no multiclass input")
    params = entry.parameters()
    if "max_depth" not in params:
        pytest.skip(f"{name} has no depth budget")
    est = entry.create(max_depth=depth)
    if "random_state" in params:
        est.set_params(random_state=0)
    X, y, w = _data(kind)
    try:
        est.fit(X, y, sample_weight=w)
    except ValueError as exc:  # a learner may refuse a depth it does not define
        if depth == 0 and "max_depth" in str(exc):
            pytest.skip(f"{name}: {exc}")
        raise
    tree = est.tree_
    assert isinstance(tree, TreeArrays)
    y_index = np.searchsorted(est.classes_, y)
    check_tree(tree, n_features=X.shape[1], max_depth=depth, X=X, y_index=y_index,
               sample_weight=w)
    leaves = np.array([_walk(tree, x) for x in X])
    assert np.array_equal(est.apply(X), leaves)
    assert np.array_equal(est.predict(X), est.classes_[tree.label[leaves]])
    v = tree.value[leaves]
    assert np.allclose(est.predict_proba(X), v / v.sum(axis=1, keepdims=True))


def test_a_raw_array_to_a_0_1_learner_says_which_transformer_to_use():
    import numpy as np
    import pytest

    from treebench import TopKClassifier

    X = np.array([[0.5, 1.0], [2.0, 0.0], [1.5, 1.0], [0.2, 0.0]])
    with pytest.raises(ValueError, match=r"make_pipeline\(treebench\.binarize\.make_binarizer"):
        TopKClassifier(k=1, max_depth=1).fit(X, [0, 1, 1, 0])
