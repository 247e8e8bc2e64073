"""Sample weights that are all zero leave nothing to learn: every learner of treebench's own
refuses them in the shared base, with one message (scikit-learn's), before any search."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.registry import ALGORITHMS

OWN = ["cart", "topk", "gosdt", "dpdt", "greedy", "ngi", "ecart", "optimal-numeric"]


@pytest.mark.parametrize("name", OWN)
def test_all_zero_weights_are_refused_in_one_sentence(name):
    X = np.random.default_rng(0).integers(0, 2, (20, 3)).astype(float)
    y = np.arange(20) % 2
    est = ALGORITHMS.get(name).create()
    with pytest.raises(ValueError, match="^Sample weights must contain at least one non-zero"):
        est.fit(X, y, sample_weight=np.zeros(20))


@pytest.mark.parametrize("name", ["dpdt", "optimal-numeric", "cart"])
def test_weights_whose_total_overflows_are_refused_in_one_sentence(name):
    """Weights of 1e307 on 30 rows sum to inf: the objective, the training error and the
    accuracy were inf or NaN (and the fit still said optimal)."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.arange(30) % 2
    est = ALGORITHMS.get(name).create()
    with pytest.raises(ValueError, match="^sample weights sum to more than the largest float"):
        est.fit(X, y, sample_weight=np.full(30, 1e307))
