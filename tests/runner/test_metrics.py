"""treebench.metrics equals scikit-learn's metrics."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

from treebench import metrics


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("seed", range(6))
def test_metrics_match_sklearn(n_classes, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 200))
    classes = np.array(sorted(rng.choice(100, n_classes, replace=False)))
    y = classes[np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])]
    pred = classes[rng.integers(0, n_classes, n)]
    # coarse probabilities create many ties, as tree leaves do
    proba = rng.integers(0, 4, (n, n_classes)).astype(float) + 1e-3
    proba /= proba.sum(axis=1, keepdims=True)
    assert metrics.accuracy(y, pred) == pytest.approx(accuracy_score(y, pred))
    assert metrics.balanced_accuracy(y, pred) == pytest.approx(balanced_accuracy_score(y, pred))
    ref = roc_auc_score(y, proba[:, 1]) if n_classes == 2 else roc_auc_score(
        y, proba, multi_class="ovr", labels=classes)
    assert metrics.roc_auc(y, proba, classes) == pytest.approx(ref)


def test_auc_undefined_when_a_class_is_missing():
    y = np.array([0, 0, 0])
    assert np.isnan(metrics.roc_auc(y, np.full((3, 2), 0.5), np.array([0, 1])))
