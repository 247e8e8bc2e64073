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

from treebench import envvars
from treebench.data.locate import data_dirs_from_env  # noqa: F401 - where loaders look
from treebench.registry import DATASETS
from treebench.errors import DataError, ParameterError


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


def offline_from_env() -> bool:
    """``TREEBENCH_OFFLINE`` (`treebench.envvars.flag`: 1/true/yes/on or 0/false/no/off)."""
    return envvars.flag("TREEBENCH_OFFLINE")


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
    entry = DATASETS.get(name)
    kwargs = dict(params or {})
    policy = kwargs.pop("missing_policy", None)  # the config's `missing: drop-rows`
    if policy not in (None, "drop-rows"):
        raise ParameterError(f"dataset `{name}`: `missing_policy` can only be drop-rows, got {policy!r}.")
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
    return drop_missing_rows(ds) if policy == "drop-rows" else ds


def missing_per_column(X: pd.DataFrame) -> dict[str, int]:
    """Missing values (NaN, None) per column of ``X``, for the columns that have any."""
    n = X.isna().sum()
    return {str(c): int(k) for c, k in n.items() if k}


def drop_missing_rows(ds: Dataset) -> Dataset:
    """``ds`` without the rows that have a missing feature value (``missing: drop-rows``),
    before any split; a predefined split keeps its remaining rows. How many rows went, and
    which columns made them go, is a parse note (it reaches the run summary and every row)."""
    counts = missing_per_column(ds.X)
    if not counts:
        return ds
    gone = ds.X.isna().any(axis=1).to_numpy()
    n_gone, n = int(gone.sum()), ds.n_samples
    cols = ", ".join(f"{c} {k}" for c, k in counts.items())
    if n_gone == n:
        worst = max(counts, key=counts.get)
        raise DataError(
            f"dataset `{ds.name}`: every one of its {n} rows has a missing value (column `{worst}` alone misses "
            f"{counts[worst]}), so `missing: drop-rows` leaves nothing; drop that column (`drop_columns:`) or "
            f"use `missing: impute` or `missing: indicator`."
        )
    keep = np.flatnonzero(~gone)
    new_pos = np.full(n, -1, dtype=np.int64)
    new_pos[keep] = np.arange(keep.size)

    def remap(index: np.ndarray | None) -> np.ndarray | None:
        if index is None:
            return None
        moved = new_pos[np.asarray(index, dtype=np.int64)]
        return moved[moved >= 0]

    meta = dict(ds.meta)
    meta["parse_notes"] = [
        *(meta.get("parse_notes") or []),
        f"{n_gone} of {n} rows dropped because they have missing values (`missing: drop-rows`; missing values "
        f"per column: {cols})",
    ]
    meta["missing_dropped"] = {"per_column": counts, "rows": n}  # what each result row counts
    if meta.get("data_key"):  # other rows: another identity for the prepared-matrix cache
        meta["data_key"] = f"{meta['data_key']}:drop-missing-rows"
    return Dataset(
        name=ds.name, X=ds.X.iloc[keep].reset_index(drop=True), y=np.asarray(ds.y)[keep],
        categorical=list(ds.categorical), train_index=remap(ds.train_index), test_index=remap(ds.test_index),
        meta=meta,
    )
