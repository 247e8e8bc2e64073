"""Datasets that need no data directory: scikit-learn's bundled datasets."""

from __future__ import annotations

import numpy as np
import pandas as pd

from treebench.data.base import Dataset
from treebench.registry import DATASETS


def _sklearn_bunch(name: str, loader_name: str, task: str = "classification") -> Dataset:
    import sklearn.datasets as skd

    bunch = getattr(skd, loader_name)()
    cols = [str(c) for c in getattr(bunch, "feature_names", [])] or [
        f"x{j}" for j in range(bunch.data.shape[1])
    ]
    X = pd.DataFrame(np.asarray(bunch.data, dtype=np.float64), columns=cols)
    y = np.asarray(bunch.target, dtype=np.float64 if task == "regression" else None)
    names = getattr(bunch, "target_names", None)
    if task == "classification" and names is not None and len(names) == len(np.unique(y)):
        y = np.asarray(names)[y]
    return Dataset(
        name=name,
        X=X,
        y=y,
        meta={"origin": f"sklearn.datasets.{loader_name}", "task": task},
    )


@DATASETS.register("breast_cancer", tags=("embedded",))
def breast_cancer() -> Dataset:
    """Wisconsin diagnostic breast cancer (569 × 30, 2 classes), bundled with scikit-learn; not
    the catalog's ``breast-cancer`` (hyphen, alias ``breast-cancer-ljubljana``: 286 × 9
    categorical)."""
    return _sklearn_bunch("breast_cancer", "load_breast_cancer")


@DATASETS.register("wine", tags=("embedded",))
def wine() -> Dataset:
    """UCI wine recognition (178 × 13, 3 classes), bundled with scikit-learn."""
    return _sklearn_bunch("wine", "load_wine")


@DATASETS.register("iris", tags=("embedded",))
def iris() -> Dataset:
    """Fisher's iris (150 × 4, 3 classes), bundled with scikit-learn."""
    return _sklearn_bunch("iris", "load_iris")


@DATASETS.register("digits", tags=("embedded",))
def digits() -> Dataset:
    """8×8 handwritten digits (1797 × 64, 10 classes), bundled with scikit-learn."""
    return _sklearn_bunch("digits", "load_digits")


@DATASETS.register("diabetes", tags=("embedded", "regression"))
def diabetes() -> Dataset:
    """Efron et al.'s diabetes progression (442 × 10, continuous target), bundled with
    scikit-learn; a regression dataset (features as scikit-learn scales them)."""
    return _sklearn_bunch("diabetes", "load_diabetes", task="regression")
