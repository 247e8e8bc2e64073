"""The `Dataset` every loader returns, and the one entry point `load_dataset`.

A loader is a function registered in `treebench.registry.DATASETS`; it takes its own keyword
parameters (e.g. a generator's ``n_samples`` and ``seed``) plus ``data_dirs`` and ``offline``
and returns a `Dataset`. Users' own files are loaded through the ``file`` loader from
`treebench.data.files` (``path``, ``format``, ``label``, ``categorical``...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


@dataclass
class Dataset:
    """Raw features and labels, before any binarization.

    ``X`` keeps original values: numeric columns as floats (NaN for missing values) and
    categorical columns (named in ``categorical``) as pandas ``category`` or object dtype.
    ``train_index``/``test_index`` are set when the dataset comes with a predefined split.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    categorical: list[str] = field(default_factory=list)
    train_index: np.ndarray | None = None
    test_index: np.ndarray | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


def data_dirs_from_env(extra: list[str | Path] | None = None) -> list[Path]:
    """Data directories in lookup order: explicit ones, then ``TREEBENCH_DATA_DIR`` (a path list)."""
    import os

    dirs: list[Path] = [Path(p) for p in (extra or [])]
    env = os.environ.get("TREEBENCH_DATA_DIR", "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    return dirs


def offline_from_env() -> bool:
    import os

    return os.environ.get("TREEBENCH_OFFLINE", "").lower() in ("1", "true", "yes")


def load_dataset(
    name: str,
    params: dict[str, Any] | None = None,
    *,
    data_dirs: list[str | Path] | None = None,
    offline: bool | None = None,
) -> Dataset:
    """Load the registered dataset ``name`` with loader ``params``.

    Raises `treebench.errors.DataError` (one clear sentence) when files are missing or broken.
    """
    from treebench.registry import DATASETS

    entry = DATASETS.get(name)
    kwargs = dict(params or {})
    fn = entry.obj
    import inspect

    sig = inspect.signature(fn).parameters
    if "data_dirs" in sig:
        kwargs["data_dirs"] = data_dirs_from_env(list(data_dirs or []))
    if "offline" in sig:
        kwargs["offline"] = offline_from_env() if offline is None else offline
    ds = fn(**kwargs)
    if not isinstance(ds, Dataset):  # pragma: no cover - programming error in a loader
        raise TypeError(f"dataset loader `{name}` returned {type(ds).__name__}, not Dataset")
    return ds
