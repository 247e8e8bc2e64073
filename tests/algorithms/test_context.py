"""The fit context (one way in for every learner) and regression trees in `TreeArrays`."""

import time

import numpy as np
import pytest

from treebench.algorithms.base import TreeRegressorBase
from treebench.algorithms.context import FitContext
from treebench.registry import ALGORITHMS
from treebench.tree.arrays import TreeArrays, TreeBuilder, check_tree, regression_stats


class _Spy(TreeRegressorBase):
    """A regressor that records the context it was given and returns a lone mean leaf."""

    _parameter_constraints = {}

    def _fit_tree(self, X, y, ctx):
        self.seen_ = ctx
        return TreeArrays.regression_leaf(y, ctx.sample_weight), {}


def test_context_reaches_the_learner_with_validated_weights():
    X = np.zeros((4, 2))
    y = np.array([1.0, 2.0, 3.0, 6.0])
    ctx = FitContext(feature_costs=[1, 2], feature_groups=[0, 0], deadline=time.perf_counter() + 9)
    est = _Spy().fit(X, y, context=ctx)
    assert np.array_equal(est.seen_.sample_weight, np.ones(4))
    assert est.seen_.feature_costs.dtype == np.float64
    assert est.seen_.seconds_left() > 0
    # sample_weight wins over the context's; the leaf is the weighted mean
    est = _Spy().fit(X, y, sample_weight=[1, 1, 1, 3], context=ctx.replace(sample_weight=np.ones(4)))
    assert est.predict(X[:1])[0] == pytest.approx((1 + 2 + 3 + 18) / 6)


@pytest.mark.parametrize(
    "ctx, match",
    [
        (FitContext(feature_costs=[1.0]), "one entry per column"),
        (FitContext(feature_costs=[1.0, -1.0]), "non-negative"),
        (FitContext(X_val=np.zeros((2, 2))), "together"),
        (FitContext(X_val=np.zeros((2, 3)), y_val=[0, 1]), "2 columns"),
    ],
)
def test_bad_context_is_one_clear_sentence(ctx, match):
    with pytest.raises(ValueError, match=match):
        _Spy().fit(np.zeros((3, 2)), np.arange(3.0), context=ctx)


def test_deadline_for_takes_the_earlier():
    now = time.perf_counter()
    assert FitContext().deadline_for(None) is None
    assert FitContext(deadline=now + 1).deadline_for(100) == pytest.approx(now + 1, abs=0.5)
    assert FitContext(deadline=now + 100).deadline_for(1) < now + 2


def test_every_classifier_takes_a_context():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 3, dtype=float)
    y = np.array([0, 1, 1, 0] * 3)
    for entry in ALGORITHMS:
        if not entry.available or "test" in entry.tags or not hasattr(entry.obj, "_fit_tree"):
            continue
        est = entry.create().fit(X, y, context=FitContext(feature_costs=np.ones(2)))
        assert est.predict(X).shape == (12,), entry.name


def test_regression_tree_arrays_predict_and_check():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = rng.normal(size=30)
    w = rng.integers(1, 4, size=30).astype(float)
    left = X[:, 0] <= 0.1
    b = TreeBuilder(n_classes=0, task="regression")
    root = b.add_split(0, 0.1, regression_stats(y, w))
    b.set_children(root, b.add_leaf(regression_stats(y[left], w[left])),
                   b.add_leaf(regression_stats(y[~left], w[~left])))
    tree = b.build()
    check_tree(tree, X=X, y_index=y, sample_weight=w)
    pred = tree.predict_value(X)
    assert np.allclose(pred[left], np.average(y[left], weights=w[left]))
    assert np.allclose(tree.node_variance()[1], np.cov(y[left], aweights=w[left], bias=True))
    assert tree.squared_error(X, y, w) == pytest.approx(np.sum(w * (pred - y) ** 2))
    back = TreeArrays.from_dict(tree.to_dict())
    assert back == tree and back.is_regression
    with pytest.raises(AssertionError, match="differ"):
        check_tree(tree, X=X, y_index=y + 1.0, sample_weight=w)
