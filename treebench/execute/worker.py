"""What happens inside a cell: load (cached) → split → binarize → fit → metrics → result dict.

`prepare` runs in the warm worker process and caches datasets and binarized folds, so cells that
differ only in algorithm parameters share them. `fit_and_score` runs in the per-cell child.
Nothing here knows about YAML or the command line.
"""

from __future__ import annotations

import json
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from treebench.cells import Cell

_DATASETS: OrderedDict[str, Any] = OrderedDict()
_PREPARED: OrderedDict[tuple, Prepared] = OrderedDict()
_WARM: set[str] = set()
DATASET_CACHE_SIZE = 4
PREPARED_CACHE_SIZE = 8


@dataclass
class Prepared:
    """A binarized fold, ready for any algorithm."""

    X_train: np.ndarray
    y_train: np.ndarray  # original labels
    X_test: np.ndarray
    y_test: np.ndarray
    columns: list[dict[str, Any]]
    n_features: int
    binarize_seconds: float
    binary_columns_per_feature: dict[str, int] | None = None  # original feature -> its binary columns
    data_warnings: str | None = None  # e.g. a split that could not stay stratified


def dataset_for(cell: Cell, data_dirs: list[str] | None, offline: bool | None = True):
    """The cell's dataset, cached per process. Workers never download (``offline=True``); the
    runner's preflight passes ``None`` so that ``--offline``/``TREEBENCH_OFFLINE`` decide."""
    from treebench.cells import canonical_json
    from treebench.data.base import load_dataset

    key = canonical_json([cell.dataset_loader, cell.dataset_params])
    if key in _DATASETS:
        _DATASETS.move_to_end(key)
        return _DATASETS[key]
    ds = load_dataset(cell.dataset_loader, cell.dataset_params, data_dirs=data_dirs, offline=offline)
    _DATASETS[key] = ds
    while len(_DATASETS) > DATASET_CACHE_SIZE:
        _DATASETS.popitem(last=False)
    return ds


def prepare(cell: Cell, data_dirs: list[str] | None = None) -> Prepared:
    """Dataset, split and fitted binarizer for ``cell`` (cached per fold and binarizer)."""
    from treebench.cells import canonical_json

    key = (
        canonical_json([cell.dataset_loader, cell.dataset_params, cell.split, cell.fold, cell.seed]),
        canonical_json([cell.binarizer, cell.binarizer_params]),
    )
    if key in _PREPARED:
        _PREPARED.move_to_end(key)
        return _PREPARED[key]
    from treebench.binarize import make_binarizer
    from treebench.data.splits import make_split

    ds = dataset_for(cell, data_dirs)
    y = np.asarray(ds.y)
    sp = dict(cell.split)
    kind = sp.pop("kind")
    split = make_split(
        kind, y, fold=cell.fold, seed=cell.seed, predefined=(ds.train_index, ds.test_index), **sp
    )
    t0 = time.perf_counter()
    binz = make_binarizer(cell.binarizer, dict(cell.binarizer_params), list(ds.categorical))
    Xtr_df = ds.X.iloc[split.train]
    if getattr(binz, "fit_on", "train") == "all":  # faithful reproduction of papers that did so
        binz.fit(ds.X, y)
    else:
        binz.fit(Xtr_df, y[split.train])
    X_train = np.asarray(binz.transform(Xtr_df))
    X_test = np.asarray(binz.transform(ds.X.iloc[split.test]))
    seconds = time.perf_counter() - t0
    prep = Prepared(
        X_train=X_train,
        y_train=y[split.train],
        X_test=X_test,
        y_test=y[split.test],
        columns=[c.to_dict() for c in getattr(binz, "columns_", [])],
        n_features=ds.n_features,
        binarize_seconds=seconds,
        binary_columns_per_feature=dict(getattr(binz, "columns_per_feature_", {}) or {}),
        data_warnings="; ".join([w for w in (split.warning, *(ds.meta.get("parse_notes") or [])) if w]) or None,
    )
    _PREPARED[key] = prep
    while len(_PREPARED) > PREPARED_CACHE_SIZE:
        _PREPARED.popitem(last=False)
    return prep


def warm(algorithm: str) -> None:
    """Import the algorithm's module and compile its kernels once per worker process."""
    if algorithm in _WARM:
        return
    from treebench.registry import ALGORITHMS

    entry = ALGORITHMS.get(algorithm)
    # the protocol: a `warmup()` attribute of the estimator class or of its module
    fn = getattr(entry.obj, "warmup", None)
    if fn is None:
        fn = getattr(sys.modules.get(entry.obj.__module__), "warmup", None)
    if callable(fn) and entry.available:
        fn()
    _WARM.add(algorithm)


def make_estimator(cell: Cell):
    from treebench.registry import ALGORITHMS

    entry = ALGORITHMS.get(cell.algorithm)
    params = dict(cell.algorithm_params)
    known = entry.parameters()
    if "random_state" in known and "random_state" not in params:
        params["random_state"] = cell.random_state
    tl = cell.limits.get("time")
    if tl and "time_limit" in known and params.get("time_limit") is None:
        params["time_limit"] = float(tl)
    return entry.create(**params)


def fit_and_score(cell: Cell, prep: Prepared) -> dict[str, Any]:
    """Fit the cell's estimator and compute every metric. Returns the result payload."""
    est = make_estimator(cell)
    t0 = time.perf_counter()
    est.fit(prep.X_train, prep.y_train)
    fit_seconds = time.perf_counter() - t0
    info = dict(getattr(est, "solve_info_", {}) or {})
    compile_s = float(info.pop("compile_seconds", 0.0) or 0.0)
    row: dict[str, Any] = {
        "n_train": len(prep.y_train),
        "n_test": len(prep.y_test),
        "n_features": prep.n_features,
        "n_binary_features": int(prep.X_train.shape[1]),
        "n_classes": len(est.classes_),
        "fit_seconds": max(fit_seconds - compile_s, 0.0),
        "compile_seconds": compile_s,
        "binarize_seconds": prep.binarize_seconds,
        "binary_columns_per_feature": json.dumps(prep.binary_columns_per_feature or {}),
        "data_warnings": prep.data_warnings,
    }
    row.update(_scores(est, prep.X_train, prep.y_train, "train"))
    row.update(_scores(est, prep.X_test, prep.y_test, "test"))
    tree = getattr(est, "tree_", None)
    from treebench.tree.arrays import TreeArrays

    if isinstance(tree, TreeArrays):
        row["n_leaves"] = tree.n_leaves
        row["n_nodes"] = tree.n_nodes
        row["depth"] = tree.depth
        row["expected_tests_train"] = tree.expected_tests(prep.X_train)
        row["expected_tests_test"] = tree.expected_tests(prep.X_test)
    for k in ("optimal", "objective", "bound", "gap", "operations", "timed_out"):
        if k in info and info[k] is not None:
            row[k] = info[k]
    extra_info = {k: v for k, v in info.items() if k not in row}
    return {
        "row": row,
        "tree": tree.to_dict() if isinstance(tree, TreeArrays) else None,
        "classes": [_jsonable(c) for c in est.classes_],
        "columns": prep.columns,
        "solve_info": {k: _jsonable(v) for k, v in extra_info.items()},
    }


def _scores(est, X: np.ndarray, y: np.ndarray, prefix: str) -> dict[str, Any]:
    from treebench import metrics

    if len(y) == 0:
        return {}
    pred = est.predict(X)
    out: dict[str, Any] = {
        f"{prefix}_accuracy": metrics.accuracy(y, pred),
        f"{prefix}_balanced_accuracy": metrics.balanced_accuracy(y, pred),
    }
    try:
        proba = est.predict_proba(X)
        out[f"{prefix}_roc_auc"] = metrics.roc_auc(y, proba, est.classes_)
    except (AttributeError, NotImplementedError):
        out[f"{prefix}_roc_auc"] = float("nan")
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, float | int | str | bool) or v is None:
        return v
    return str(v)
