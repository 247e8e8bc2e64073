"""What happens inside a cell: load (cached) → split → binarize → fit → metrics → result dict.

`prepare` runs in the warm worker process and caches datasets and binarized folds, so cells that
differ only in algorithm parameters share them. `fit_and_score` runs in the per-cell child.
Nothing here knows about YAML or the command line.
"""

from __future__ import annotations

import json
import os
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
    X_val: np.ndarray | None = None  # validation rows (train-val-test), training-fitted binarizer
    y_val: np.ndarray | None = None
    feature_names: tuple[str, ...] = ()  # original features, in the dataset's column order
    dataset_costs: dict[str, float] | None = None  # the dataset's own per-feature test costs
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
        kind, y, fold=cell.fold, seed=cell.seed, predefined=(ds.train_index, ds.test_index),
        task=ds.meta.get("task", "classification"), **sp
    )
    t0 = time.perf_counter()
    binz = make_binarizer(cell.binarizer, dict(cell.binarizer_params), list(ds.categorical))
    if getattr(binz, "fit_on", "train") == "all":  # faithful reproduction of papers that did so
        binz.fit(ds.X, y)
    else:
        binz.fit(ds.X.iloc[split.train], y[split.train])
    X_train, X_test, X_val = transform_splits(
        binz, ds.X, (split.train, split.test, split.valid))
    seconds = time.perf_counter() - t0
    prep = Prepared(
        X_train=X_train,
        y_train=y[split.train],
        X_test=X_test,
        y_test=y[split.test],
        columns=[c.to_dict() for c in getattr(binz, "columns_", [])],
        n_features=ds.n_features,
        binarize_seconds=seconds,
        X_val=X_val,
        y_val=None if split.valid is None else y[split.valid],
        feature_names=tuple(str(c) for c in ds.X.columns),
        dataset_costs=ds.meta.get("feature_costs"),
        binary_columns_per_feature=dict(getattr(binz, "columns_per_feature_", {}) or {}),
        data_warnings="; ".join([w for w in (split.warning, *(ds.meta.get("parse_notes") or [])) if w]) or None,
    )
    _PREPARED[key] = prep
    if ds.X.shape[0] * max(ds.X.shape[1], 1) > CHUNKED_ABOVE:
        # a large dataset's frame is not kept beside its prepared fold (issue 9, item 10): the
        # fit needs only the fold's matrices, and another fold or binarizer reloads the frame
        # from the parsed cache (seconds, against minutes of fitting on such data)
        _DATASETS.pop(canonical_json([cell.dataset_loader, cell.dataset_params]), None)
        del ds
        release_freed_memory()
    while len(_PREPARED) > PREPARED_CACHE_SIZE:
        _PREPARED.popitem(last=False)
    return prep


#: datasets with more values than this (rows x columns) are binarized in row chunks written
#: straight into each split's matrix (`transform_splits`)
CHUNKED_ABOVE = 1 << 22
CHUNK_ROWS = 1 << 16


def transform_splits(binz: Any, X: Any, parts: tuple, chunked: bool | None = None) -> list:
    """The binarized rows of each index array in ``parts`` (None stays None).

    Small data: every row is transformed once and each split takes its rows from the compact
    result. Large data (over `CHUNKED_ABOVE` values, e.g. KDD Cup 99): each split's matrix is
    allocated once and filled ``CHUNK_ROWS`` rows at a time, so neither a matrix of every row
    nor a DataFrame copy of a split is ever alive beside the splits (issue 9, item 10: the
    all-rows matrix was 760 MB of a kdd99 cell's 2.2 GB preparation peak). Every part but the
    first (the training rows) is written to an unlinked temporary ``.npy`` file and memory-mapped
    read-only: its pages are read when the cell scores, not held through the fit (kdd99's test
    rows are 280 MB). Binarizers transform row by row, so both ways give the same values."""
    if chunked is None:
        chunked = X.shape[0] * max(X.shape[1], 1) > CHUNKED_ABOVE
    if not chunked:
        X_all = np.asarray(binz.transform(X))
        return [None if rows is None else X_all[rows] for rows in parts]
    out = []
    for i, rows in enumerate(parts):
        if rows is None:
            out.append(None)
            continue
        rows = np.asarray(rows)
        if len(rows) == 0:
            out.append(np.asarray(binz.transform(X.iloc[rows])))
            continue
        M = path = None
        for s in range(0, len(rows), CHUNK_ROWS):
            block = np.asarray(binz.transform(X.iloc[rows[s:s + CHUNK_ROWS]]))
            if M is None:
                shape = (len(rows), block.shape[1])
                if i == 0:
                    M = np.empty(shape, dtype=block.dtype)
                else:
                    M, path = _spill_file(shape, block.dtype)
            M[s:s + len(block)] = block
        out.append(M if path is None else _mapped(M, path))
    return out


def _spill_file(shape: tuple[int, int], dtype) -> tuple[np.ndarray, str]:
    import tempfile

    fd, path = tempfile.mkstemp(prefix="treebench-split-", suffix=".npy")
    os.close(fd)
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape), path


def _mapped(M: np.ndarray, path: str) -> np.ndarray:
    """``M``'s file mapped read-only afresh (so none of its pages is resident in this process
    until read) and unlinked at once (the mapping keeps the data until it is dropped)."""
    M.flush()
    del M
    try:
        return np.load(path, mmap_mode="r")
    finally:
        os.unlink(path)


def release_freed_memory() -> None:
    """Give memory freed by Python back to the system: Arrow's allocator keeps freed blocks of
    a dropped frame's string columns (300 MB of kdd99's) and the C heap keeps freed chunks, and
    both would count in the cell's resident set for the whole fit."""
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except Exception:  # pragma: no cover - an allocator without it
            pass
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def warm(algorithm: str) -> float:
    """Run the learner's declared warm-up (imports of its solver library, JIT compilation) once
    per worker process, outside any timed region (issue 8, A13). Returns the seconds it took
    (0 when this worker had already warmed the learner)."""
    if algorithm in _WARM:
        return 0.0
    from treebench.registry import ALGORITHMS

    t0 = time.perf_counter()
    entry = ALGORITHMS.get(algorithm)
    if entry.available:
        warmup_for(entry.obj)()
    _WARM.add(algorithm)
    return time.perf_counter() - t0


def warmup_for(cls: Any):
    """The warm-up a learner declares: a ``warmup`` defined on its own class, else its
    module's ``warmup()`` function, else an inherited one (`base._TreeModel.warmup` does
    nothing), else nothing."""
    fn = cls.__dict__.get("warmup") if isinstance(cls, type) else None
    if isinstance(fn, staticmethod | classmethod):
        fn = getattr(cls, "warmup")
    if fn is None:
        fn = getattr(sys.modules.get(getattr(cls, "__module__", "")), "warmup", None)
    if fn is None:
        fn = getattr(cls, "warmup", None)
    return fn if callable(fn) else _no_warmup


def _no_warmup() -> None:
    return None


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


def fit_context(cell: Cell, prep: Prepared):
    """The cell's `FitContext` (validation rows, feature groups, column costs), without its
    deadline: `fit_and_score` sets that just before ``fit``."""
    from treebench.algorithms.context import FitContext
    from treebench.execute.fit_context import column_costs, feature_groups

    groups = feature_groups(prep.columns, list(prep.feature_names), int(prep.X_train.shape[1]))
    costs = column_costs(cell.costs, groups, list(prep.feature_names), prep.dataset_costs,
                         cell.dataset)
    return FitContext(X_val=prep.X_val, y_val=prep.y_val, feature_groups=groups,
                      feature_costs=costs)


def fit_and_score(cell: Cell, prep: Prepared) -> dict[str, Any]:
    """Fit the cell's estimator and compute every metric. Returns the result payload."""
    from treebench import metrics

    est = make_estimator(cell)
    ctx = fit_context(cell, prep)
    tl = cell.limits.get("time")
    fit_kw: dict[str, Any] = {}
    if _takes_context(est):
        fit_kw["context"] = ctx
    t0 = time.perf_counter()
    if "context" in fit_kw:
        fit_kw["context"] = ctx.replace(deadline=None if not tl else t0 + float(tl))
    trace = None
    if cell.tune:
        est, trace = _tuned(est, cell, prep, fit_kw)
    else:
        est.fit(prep.X_train, prep.y_train, **fit_kw)
    fit_seconds = time.perf_counter() - t0
    info = dict(getattr(est, "solve_info_", {}) or {})
    compile_s = float(info.pop("compile_seconds", 0.0) or 0.0)
    classes = getattr(est, "classes_", None)
    row: dict[str, Any] = {
        "n_train": len(prep.y_train),
        "n_val": 0 if prep.y_val is None else len(prep.y_val),
        "n_test": len(prep.y_test),
        "n_features": prep.n_features,
        "n_binary_features": int(prep.X_train.shape[1]),
        "n_classes": None if classes is None else len(classes),
        "fit_seconds": max(fit_seconds - compile_s, 0.0),
        "compile_seconds": compile_s,
        "binarize_seconds": prep.binarize_seconds,
        "binary_columns_per_feature": json.dumps(prep.binary_columns_per_feature or {}),
        "data_warnings": prep.data_warnings,
    }
    splits = {"train": (prep.X_train, prep.y_train, None), "test": (prep.X_test, prep.y_test, None)}
    if prep.y_val is not None:
        splits["val"] = (prep.X_val, prep.y_val, None)
    row.update(metrics.score_cell(est, splits, costs=ctx.feature_costs))
    tree = getattr(est, "tree_", None)
    from treebench.tree.arrays import TreeArrays

    from treebench.algorithms.base import SOLVE_INFO_KEYS

    for k in SOLVE_INFO_KEYS:
        if k in info and info[k] is not None:
            row[k] = info[k]
    if trace is not None:  # the chosen values are the cell's parameters; the trace is kept
        from treebench.tune import chosen_params

        chosen = chosen_params(trace)
        for k, v in chosen.items():
            row[f"param_{k}"] = v
        row["tuned_params"] = ",".join(sorted(chosen))
        info["tune_trace"] = trace
    extra_info = {k: v for k, v in info.items() if k not in row}
    return {
        "row": row,
        "tree": tree.to_dict() if isinstance(tree, TreeArrays) else None,
        "classes": [] if classes is None else [_jsonable(c) for c in classes],
        "columns": prep.columns,
        "solve_info": {k: _jsonable_deep(v) for k, v in extra_info.items()},
    }


def _tuned(est, cell: Cell, prep: Prepared, fit_kw: dict[str, Any]):
    """Fit with the cell's tuning plan on its validation rows (`treebench.tune`), every
    candidate with the cell's fit context; fit time covers every candidate fit."""
    from treebench.tune import tune

    if prep.X_val is None or prep.y_val is None or len(prep.y_val) == 0:
        raise ValueError("`tune` selects on validation rows; use `split: {kind: train-val-test}`.")
    return tune(est, prep.X_train, prep.y_train, prep.X_val, prep.y_val, cell.tune,
                fit_kwargs=fit_kw)


def _takes_context(est) -> bool:
    """Whether ``est.fit`` accepts a ``context`` (treebench's learners); scikit-learn's own
    estimators (the black-box references) do not."""
    import inspect

    cls = type(est)
    if cls not in _TAKES_CONTEXT:  # one signature read per estimator class and process
        try:
            _TAKES_CONTEXT[cls] = "context" in inspect.signature(est.fit).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            _TAKES_CONTEXT[cls] = False
    return _TAKES_CONTEXT[cls]


_TAKES_CONTEXT: dict[type, bool] = {}


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, float | int | str | bool) or v is None:
        return v
    return str(v)


def _jsonable_deep(v: Any) -> Any:
    """`_jsonable` inside lists and dicts too (e.g. a tuning trace)."""
    if isinstance(v, dict):
        return {str(k): _jsonable_deep(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable_deep(x) for x in v]
    return _jsonable(v)

