"""A new dataset source: a generator registered as a dataset loader.

The dataset recipe of docs/extending.md. A plug-in package names this module in its
``treebench.datasets`` entry point; tests/docs/test_extending.py installs it that way and runs
an experiment on it (and loads it through the registry).
"""

from __future__ import annotations

import pandas as pd

from treebench.data.base import Dataset
from treebench.registry import DATASETS


@DATASETS.register("two-moons", tags=("generator",))
def two_moons(n_samples: int = 500, noise: float = 0.2, seed: int = 0) -> Dataset:
    """scikit-learn's two interleaving half circles; same parameters and seed, same data."""
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=n_samples, noise=noise, random_state=seed)
    frame = pd.DataFrame(X, columns=["x0", "x1"])
    meta = {"task": "classification", "origin": "sklearn.datasets.make_moons",
            "params": {"n_samples": n_samples, "noise": noise, "seed": seed}}
    return Dataset("two-moons", frame, y, meta=meta)
