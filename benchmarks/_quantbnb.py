"""The Quant-BnB training files as plain arrays, for the benchmarks that time one search kernel
(`dpdt_numeric`, `search_cpu`): ``load(name)`` returns ``(X, y)``."""

from __future__ import annotations

import gzip
import os
import pathlib

#: the Quant-BnB training files of the data directory (``quantbnb/train/``)
FILES = ["avila", "bank", "bean", "bidding", "eeg", "fault", "htru", "magic", "occupancy",
         "page", "raisin", "rice", "room", "segment", "wilt"]


def load(name: str):
    """A Quant-BnB training file (label in column 0), or any other dataset treebench knows by
    that name (`treebench datasets`): its numeric columns, rows with a missing value dropped,
    labels numbered 0..k-1 in sorted order."""
    import numpy as np

    base = pathlib.Path(os.environ["TREEBENCH_DATA_DIR"]) / "quantbnb" / "train"
    for p in (base / f"{name}.txt", base / f"{name}.txt.gz"):
        if p.exists():
            with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as fh:
                a = np.loadtxt(fh)
            return np.ascontiguousarray(a[:, 1:]), a[:, 0].astype(np.int64)
    return _registered(name)


def _registered(name: str):
    import numpy as np
    import pandas as pd

    from treebench.data.base import load_dataset

    ds = load_dataset(name)
    X = ds.X
    if isinstance(X, pd.DataFrame):
        skip = set(ds.categorical or [])
        X = X[[c for c in X.columns
               if c not in skip and pd.api.types.is_numeric_dtype(X[c])]].to_numpy(float)
    X = np.asarray(X, dtype=float)
    keep = np.isfinite(X).all(axis=1)
    _, y = np.unique(np.asarray(ds.y)[keep], return_inverse=True)
    return np.ascontiguousarray(X[keep]), y.astype(np.int64)
