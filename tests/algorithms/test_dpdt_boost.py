"""dpdt-adaboost: scikit-learn's AdaBoost over DPDT trees (params, clone, grid search, weights)."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from treebench.algorithms.dpdt import DPDTClassifier
from treebench.algorithms.dpdt_boost import DPDTAdaBoostClassifier
from treebench.registry import ALGORITHMS


def _data():
    rng = np.random.default_rng(0)
    X = rng.random((120, 4))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    y[rng.random(120) < 0.1] ^= 1
    return X, y


def test_registered_and_fits_with_default_dpdt_trees():
    X, y = _data()
    est = ALGORITHMS.get("dpdt-adaboost").create(n_estimators=5, max_depth=2, random_state=0)
    est.fit(X, y)
    assert all(isinstance(e, DPDTClassifier) for e in est.estimators_)
    assert est.estimators_[0].max_depth == 2
    assert est.score(X, y) > 0.8


def test_set_params_reaches_the_inner_tree_and_grid_search_works():
    X, y = _data()
    est = DPDTAdaBoostClassifier(DPDTClassifier(max_depth=1, budgets=(4,)), n_estimators=3)
    est.set_params(estimator__max_depth=2)
    est.fit(X, y)
    assert est.estimators_[0].max_depth == 2
    gs = GridSearchCV(clone(est), {"estimator__max_depth": [1, 2], "n_estimators": [2]}, cv=2)
    gs.fit(X, y)
    assert gs.best_params_["estimator__max_depth"] in (1, 2)


def test_sample_weight_reaches_the_trees():
    X, y = _data()
    w = np.where(y == 1, 3.0, 1.0)
    a = DPDTAdaBoostClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y, sample_weight=w)
    b = DPDTAdaBoostClassifier(n_estimators=2, max_depth=2, random_state=0).fit(
        np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    ta, tb = a.estimators_[0].tree_, b.estimators_[0].tree_  # AdaBoost normalises weights
    for k in ("feature", "threshold", "left", "right", "label"):
        assert np.array_equal(getattr(ta, k), getattr(tb, k))
    assert np.allclose(ta.value / ta.value[0].sum(), tb.value / tb.value[0].sum())
