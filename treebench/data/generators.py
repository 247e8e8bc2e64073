"""Synthetic datasets from the papers, generated from parameters and a seed (no data directory).

Registered names: ``parity-noise`` and ``tribes-majority`` (Top-k Theorems 2 and 3), ``xor2d``
(DPDT Definition 5.3), ``friedman1`` (Friedman's regression problem, via scikit-learn), ``spiral`` (GOSDT-guesses' 2-D spiral) and ``id3-exercise`` (textbook
Exercise 18.2). Same parameters and seed, same data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from treebench.data.base import Dataset
from treebench.errors import ParameterError
from treebench.registry import DATASETS


def _check_int(gen: str, name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < lo:
        raise ParameterError(f"dataset `{gen}`: parameter `{name}` must be an integer >= {lo}, got {v!r}.")
    return int(v)


def _check_prob(gen: str, name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= float(v) <= 1.0:
        raise ParameterError(f"dataset `{gen}`: parameter `{name}` must be a probability in [0, 1], got {v!r}.")
    return float(v)


def _bits_frame(X: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(X.astype(np.float64), columns=[f"x{j}" for j in range(X.shape[1])])


def _meta(origin: str, citation: str, params: dict) -> dict:
    return {"task": "classification", "origin": origin, "citation": citation, "licence": "generated", "files": [], "params": params}


def parity_noise_labels(X: np.ndarray, h: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    """Top-k Theorem 2: parity of the first h bits w.p. 1 − ε, else a uniform bit among the rest."""
    n, d = X.shape
    parity = X[:, :h].sum(axis=1) % 2
    noisy = rng.random(n) < eps
    if d > h:
        pick = rng.integers(h, d, size=n)
        other = X[np.arange(n), pick]
    else:  # K = 1: no other bits, the noise branch falls back to a fair coin
        other = rng.integers(0, 2, size=n)
    return np.where(noisy, other, parity).astype(np.int64)


@DATASETS.register("parity-noise", tags=("generator",))
def parity_noise(n_samples: int = 1000, h: int = 3, K: int = 4, eps: float = 0.1, seed: int = 0) -> Dataset:
    """Top-k Theorem 2 distribution: d = h + K − 1 uniform bits; the label is the parity of the first
    h bits with probability 1 − ε, otherwise a uniformly chosen bit among the other K − 1."""
    g = "parity-noise"
    n, h, K = _check_int(g, "n_samples", n_samples, 1), _check_int(g, "h", h, 1), _check_int(g, "K", K, 1)
    eps = _check_prob(g, "eps", eps)
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, h + K - 1))
    y = parity_noise_labels(X, h, eps, rng)
    params = {"n_samples": n, "h": h, "K": K, "eps": eps, "seed": seed}
    return Dataset(g, _bits_frame(X), y, meta=_meta("Top-k paper, Theorem 2", "Blanc et al. 2023, NeurIPS", params))


def tribes_blocks(h: int, width: int | None = None) -> list[tuple[int, int]]:
    """Tribes on h bits: consecutive blocks of ``width`` bits (the last may be shorter).

    Without ``width``, the width whose Pr[Tribes = 1] = 1 − Π(1 − 2^−|block|) is closest to 1/2
    (the balanced Tribes of O'Donnell, Analysis of Boolean Functions §4.2).
    """
    def blocks(w):
        return [(s, min(s + w, h)) for s in range(0, h, w)]

    if width is None:
        best = min(range(1, h + 1), key=lambda w: (abs(0.5 - (1 - np.prod([1 - 2.0 ** -(b - a) for a, b in blocks(w)]))), w))
        width = best
    return blocks(width)


def tribes(X: np.ndarray, blocks: list[tuple[int, int]]) -> np.ndarray:
    """OR over blocks of the AND of the block's bits."""
    out = np.zeros(X.shape[0], dtype=bool)
    for a, b in blocks:
        out |= X[:, a:b].all(axis=1)
    return out.astype(np.int64)


def majority(X: np.ndarray) -> np.ndarray:
    """1 when more than half of the bits are 1 (ties give 0; use an odd number of bits)."""
    return (2 * X.sum(axis=1) > X.shape[1]).astype(np.int64)


@DATASETS.register("tribes-majority", tags=("generator",))
def tribes_majority(
    n_samples: int = 1000, h: int = 6, K: int = 6, eps: float = 0.1, width: int | None = None, seed: int = 0
) -> Dataset:
    """Top-k Theorem 3 (monotone) distribution: d = h + K − 1 uniform bits; the label is
    Tribes of the first h bits w.p. 1 − ε and Majority of the other K − 1 bits w.p. ε."""
    g = "tribes-majority"
    n, h, K = _check_int(g, "n_samples", n_samples, 1), _check_int(g, "h", h, 1), _check_int(g, "K", K, 2)
    eps = _check_prob(g, "eps", eps)
    if width is not None:
        width = _check_int(g, "width", width, 1)
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, h + K - 1))
    blocks = tribes_blocks(h, width)
    use_maj = rng.random(n) < eps
    y = np.where(use_maj, majority(X[:, h:]), tribes(X[:, :h], blocks))
    params = {"n_samples": n, "h": h, "K": K, "eps": eps, "width": blocks[0][1] - blocks[0][0], "seed": seed}
    return Dataset(g, _bits_frame(X), y, meta=_meta("Top-k paper, Theorem 3", "Blanc et al. 2023, NeurIPS", params))


@DATASETS.register("xor2d", tags=("generator",))
def xor2d(n_samples: int = 1000, seed: int = 0) -> Dataset:
    """DPDT Definition 5.3: x, y ~ U([0, 1]²) i.i.d.; label (⌊2x⌋ + ⌊2y⌋) mod 2."""
    n = _check_int("xor2d", "n_samples", n_samples, 1)
    rng = np.random.default_rng(seed)
    P = rng.random((n, 2))
    y = (np.floor(2 * P[:, 0]) + np.floor(2 * P[:, 1])).astype(np.int64) % 2
    X = pd.DataFrame(P, columns=["x", "y"])
    return Dataset("xor2d", X, y, meta=_meta("DPDT paper, Definition 5.3", "Kohler et al. 2025, KDD (DPDT)", {"n_samples": n, "seed": seed}))


@DATASETS.register("spiral", tags=("generator",))
def spiral(n_samples: int = 100, noise: float = 0.0, seed: int = 0, decimals: int | None = 3) -> Dataset:
    """GOSDT-guesses' 2-D spiral: two interleaved arms of n/2 points each.

    Point i of arm 0 has angle i·π/16 and radius 0.5·(1 − i/(m + 2)) (m points per arm); arm 1 is
    arm 0 rotated by π. With the defaults (100 points, no noise, 3 decimals) this reproduces the
    paper repository's ``spiral.csv``. ``noise`` adds Gaussian jitter of that standard deviation.
    """
    n = _check_int("spiral", "n_samples", n_samples, 2)
    if not isinstance(noise, int | float) or noise < 0:
        raise ParameterError(f"dataset `spiral`: parameter `noise` must be a number >= 0, got {noise!r}.")
    m0 = (n + 1) // 2
    rng = np.random.default_rng(seed)
    pts, labels = [], []
    for c, m in ((0, m0), (1, n - m0)):
        i = np.arange(m)
        theta = i * np.pi / 16 + c * np.pi
        r = 0.5 * (1 - i / (m0 + 2))
        pts.append(np.column_stack([r * np.cos(theta), r * np.sin(theta)]))
        labels.append(np.full(m, c))
    P = np.vstack(pts)
    if noise:
        P = P + rng.normal(scale=noise, size=P.shape)
    if decimals is not None:
        P = np.round(P, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    X = pd.DataFrame(P, columns=["feat1", "feat2"])
    y = np.concatenate(labels).astype(np.int64)
    params = {"n_samples": n, "noise": noise, "seed": seed, "decimals": decimals}
    return Dataset("spiral", X, y, meta=_meta("GOSDT-guesses paper, spiral dataset", "McTavish et al. 2022, AAAI", params))


@DATASETS.register("id3-exercise", tags=("generator",))
def id3_exercise() -> Dataset:
    """Textbook Exercise 18.2 (suboptimality of ID3): 4 points in {0,1}³ where depth-2 ID3 errs
    on at least 1/4 of them but some depth-2 tree has zero training error."""
    X = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]])
    y = np.array([1, 1, 0, 0])
    return Dataset(
        "id3-exercise",
        pd.DataFrame(X.astype(np.float64), columns=["x1", "x2", "x3"]),
        y,
        meta=_meta("Shalev-Shwartz & Ben-David, Understanding Machine Learning, Exercise 18.2", "Shalev-Shwartz & Ben-David 2014", {}),
    )


@DATASETS.register("friedman1", tags=("generator", "regression"))
def friedman1(n_samples: int = 1000, n_features: int = 10, noise: float = 1.0, seed: int = 0) -> Dataset:
    """Friedman (1991), first problem: a regression target: x ~ U([0, 1]^p) (p >= 5), y = 10 sin(π x0 x1)
    + 20 (x2 − 0.5)² + 10 x3 + 5 x4 + noise · N(0, 1); the other features are irrelevant.
    Generated by scikit-learn's ``make_friedman1`` with ``random_state=seed``."""
    from sklearn.datasets import make_friedman1

    g = "friedman1"
    n = _check_int(g, "n_samples", n_samples, 1)
    p = _check_int(g, "n_features", n_features, 5)
    if isinstance(noise, bool) or not isinstance(noise, int | float) or noise < 0:
        raise ParameterError(f"dataset `{g}`: parameter `noise` must be a number >= 0, got {noise!r}.")
    X, y = make_friedman1(n_samples=n, n_features=p, noise=float(noise), random_state=seed)
    params = {"n_samples": n, "n_features": p, "noise": float(noise), "seed": seed}
    meta = _meta("Friedman 1991, problem 1 (sklearn.datasets.make_friedman1)", "Friedman 1991, Ann. Statist.", params)
    meta["task"] = "regression"
    return Dataset(g, _bits_frame(X), np.asarray(y, dtype=np.float64), meta=meta)
