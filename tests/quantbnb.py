"""The shared datasets of the data directory, for tests: the Quant-BnB training files (for the
numeric solver) and any catalog dataset; a test whose file is missing is skipped."""

from __future__ import annotations

import gzip
import os
import pathlib

import numpy as np
import pytest


def load_quantbnb(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and integer labels (the first column) of ``quantbnb/train/<name>.txt[.gz]``
    under ``TREEBENCH_DATA_DIR``; the test is skipped when the file is not there."""
    base = pathlib.Path(os.environ.get("TREEBENCH_DATA_DIR", "")) / "quantbnb" / "train"
    for p in (base / f"{name}.txt", base / f"{name}.txt.gz"):
        if p.exists():
            with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as fh:
                a = np.loadtxt(fh)
            return a[:, 1:], a[:, 0].astype(int)
    pytest.skip(f"quantbnb/train/{name} not in TREEBENCH_DATA_DIR")


def catalog_dataset(name: str, dtype=float) -> tuple[np.ndarray, np.ndarray]:
    """Features (as ``dtype``) and integer labels of the catalog dataset ``name``; the test is
    skipped when its file is not in the data directory."""
    from treebench.data.base import load_dataset
    from treebench.errors import DataError

    try:
        ds = load_dataset(name, offline=True)
    except DataError:
        pytest.skip(f"{name} is not in TREEBENCH_DATA_DIR")
    return np.asarray(ds.X, dtype=dtype), np.asarray(ds.y).astype(int)
