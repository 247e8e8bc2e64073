"""Statistics and determinism of the paper generators."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treebench.data import load_dataset
from treebench.data.generators import majority, tribes, tribes_blocks
from treebench.errors import ParameterError


@pytest.mark.parametrize("eps", [0.0, 0.2, 0.5])
def test_parity_noise_agrees_with_parity_at_rate_one_minus_half_eps(eps):
    n = 20000
    ds = load_dataset("parity-noise", {"n_samples": n, "h": 3, "K": 5, "eps": eps, "seed": 1})
    X = ds.X.to_numpy().astype(int)
    assert X.shape == (n, 3 + 5 - 1) and set(np.unique(X)) == {0, 1}
    parity = X[:, :3].sum(axis=1) % 2
    rate = np.mean(parity == ds.y)
    sd = np.sqrt(0.25 / n)
    assert abs(rate - (1 - eps / 2)) < 5 * sd + 1e-12
    # wrong labels always copy one of the K - 1 other bits
    wrong = parity != ds.y
    assert np.all((X[wrong, 3:] == ds.y[wrong, None]).any(axis=1))


def test_generators_are_deterministic_per_seed():
    a = load_dataset("parity-noise", {"seed": 3})
    b = load_dataset("parity-noise", {"seed": 3})
    c = load_dataset("parity-noise", {"seed": 4})
    assert a.X.equals(b.X) and np.array_equal(a.y, b.y)
    assert not a.X.equals(c.X)


def test_tribes_majority_mixture():
    h, K = 6, 6
    clean = load_dataset("tribes-majority", {"n_samples": 5000, "h": h, "K": K, "eps": 0.0, "seed": 0})
    X = clean.X.to_numpy().astype(int)
    blocks = tribes_blocks(h)
    np.testing.assert_array_equal(clean.y, tribes(X[:, :h], blocks))
    assert 0.35 < clean.y.mean() < 0.65  # balanced Tribes
    maj = load_dataset("tribes-majority", {"n_samples": 5000, "h": h, "K": K, "eps": 1.0, "seed": 0})
    np.testing.assert_array_equal(maj.y, majority(maj.X.to_numpy().astype(int)[:, h:]))
    # exact Tribes on a tiny example: OR of ANDs of blocks of 2
    Z = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]])
    assert tribes(Z, [(0, 2), (2, 4)]).tolist() == [1, 0, 1]


def test_xor2d_labels():
    ds = load_dataset("xor2d", {"n_samples": 500, "seed": 2})
    P = ds.X.to_numpy()
    assert P.min() >= 0 and P.max() < 1
    np.testing.assert_array_equal(ds.y, (np.floor(2 * P[:, 0]) + np.floor(2 * P[:, 1])).astype(int) % 2)
    assert 0.4 < ds.y.mean() < 0.6


def test_spiral_shape_and_reference_file():
    ds = load_dataset("spiral")
    assert ds.X.shape == (100, 2) and np.bincount(ds.y).tolist() == [50, 50]
    np.testing.assert_allclose(ds.X.iloc[50:].to_numpy(), -ds.X.iloc[:50].to_numpy(), atol=1e-12)
    d = os.environ.get("TREEBENCH_DATA_DIR", "").split(os.pathsep)[0]
    ref = Path(d) / "papers/gosdt/spiral.csv" if d else None
    if ref is not None and ref.is_file():
        f = pd.read_csv(ref)
        np.testing.assert_allclose(ds.X.to_numpy(), f[["feat1", "feat2"]].to_numpy(), atol=1e-9)
        np.testing.assert_array_equal(ds.y, f["target"].to_numpy().astype(int))


def _depth2_trees(n_features):
    """Every depth-2 tree on 0/1 features: (root, left feature, right feature, 4 leaf labels)."""
    for r, a, b in itertools.product(range(n_features), repeat=3):
        for leaves in itertools.product((0, 1), repeat=4):
            yield r, a, b, leaves


def test_id3_exercise_has_a_perfect_depth2_tree():
    ds = load_dataset("id3-exercise")
    X, y = ds.X.to_numpy().astype(int), ds.y
    assert X.shape == (4, 3)

    def predict(t, x):
        r, a, b, leaves = t
        f = a if x[r] == 0 else b
        return leaves[2 * x[r] + x[f]]

    errors = [sum(predict(t, x) != yy for x, yy in zip(X, y, strict=True)) for t in _depth2_trees(3)]
    assert min(errors) == 0


def test_generator_parameter_errors():
    with pytest.raises(ParameterError, match="eps"):
        load_dataset("parity-noise", {"eps": 1.5})
    with pytest.raises(ParameterError, match="`h`"):
        load_dataset("tribes-majority", {"h": 0})
