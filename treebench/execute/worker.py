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
    output_dtype: str = "|u1"  # the binarizer's own output type (matrices may be float32 instead)
    values_exact: bool | None = None  # every value a float32 exactly (None: not checked)


def learner_float32_policy(algorithm: str) -> str:
    """The learner's ``float32_input`` declaration (`treebench.execute.precision`)."""
    from treebench.execute.precision import float32_policy
    from treebench.registry import ALGORITHMS

    return float32_policy(ALGORITHMS.get(algorithm).obj)


def _wanted_dtype(prep: Prepared, policy: str) -> np.dtype:
    """The matrix type a cell of ``policy`` needs from the prepared fold ``prep``."""
    from treebench.execute.precision import float32_exact, matrix_dtype

    def exact() -> bool:
        if prep.values_exact is not None:
            return prep.values_exact
        if prep.X_train.dtype != np.float64:
            return False  # unknown from rounded values: prepared again, checked then
        return all(float32_exact(M) for M in (prep.X_train, prep.X_test, prep.X_val) if M is not None)

    return matrix_dtype(np.dtype(prep.output_dtype), policy, exact)


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
    from treebench.execute.precision import float32_exact, matrix_dtype, numeric_part

    policy = learner_float32_policy(cell.algorithm)
    if key in _PREPARED:
        cached = _PREPARED[key]
        if cached.X_train.dtype == _wanted_dtype(cached, policy):
            _PREPARED.move_to_end(key)
            return cached
        # the same fold in the other float type: replaced, never kept beside it
        del _PREPARED[key], cached
        release_freed_memory()
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
    parts = (split.train, split.test, split.valid)
    X_all = None
    if getattr(binz, "fit_on", "train") == "all":  # faithful reproduction of papers that did so
        binz, X_all, shared_seconds = _binarized_on_all(key[1], binz, ds, y)
    else:
        binz = _fit_on_train(binz, ds, y, split.train, key[1])
    output_dtype = np.dtype(getattr(binz, "output_dtype_", np.uint8))
    exact: list[bool] = []

    def values_exact() -> bool:
        exact.append(float32_exact(numeric_part(ds.X, binz)))
        return exact[0]

    dtype = matrix_dtype(output_dtype, policy, values_exact)
    mats = None if X_all is not None else from_prepared_cache(ds, binz, parts, dtype)
    if mats is None:
        mats = transform_splits(binz, ds.X, parts, dtype=dtype, X_all=X_all)
    X_train, X_test, X_val = mats
    seconds = time.perf_counter() - t0 if X_all is None else shared_seconds
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
        output_dtype=output_dtype.str,
        values_exact=exact[0] if exact else None,
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


#: binarizers fitted on every row (``fit_on: all``) and their transform of every row, per
#: (dataset, binarizer): the same for every fold, so a fold takes its rows from it
#: (keyed by the dataset object itself, which the entry holds: a reshipped or reloaded dataset
#: is binarized afresh)
_ALL_ROWS: OrderedDict[tuple[int, str], tuple[Any, Any, np.ndarray, float]] = OrderedDict()
ALL_ROWS_CACHE_SIZE = 2


def _binarized_on_all(binz_key: str, binz: Any, ds: Any, y: np.ndarray) -> tuple[Any, Any, float]:
    """``fit_on: all``: the binarizer is fitted on every row, so it and its transform of every
    row do not depend on the fold; they are computed once per (dataset, binarizer) and each
    fold indexes its rows (a Top-k Figure 2 sweep has 10 folds x many parameter values per
    dataset; on a cluster each worker meets most folds). Returns the fitted binarizer, its
    transform of every row and the seconds the (shared) binarization took. Large datasets
    keep the chunked, one-fold-at-a-time path (`transform_splits`): ``(binz, None, 0.0)``."""
    if ds.X.shape[0] * max(ds.X.shape[1], 1) > CHUNKED_ABOVE:
        binz.fit(ds.X, y)
        return binz, None, 0.0
    data_key = (id(ds), binz_key)
    hit = _ALL_ROWS.get(data_key)
    if hit is None or hit[0] is not ds:  # (an id is reused only once its dataset is gone)
        t0 = time.perf_counter()
        binz.fit(ds.X, y)
        X_all = np.asarray(binz.transform(ds.X))
        hit = _ALL_ROWS[data_key] = (ds, binz, X_all, time.perf_counter() - t0)
        while len(_ALL_ROWS) > ALL_ROWS_CACHE_SIZE:
            _ALL_ROWS.popitem(last=False)
    _ALL_ROWS.move_to_end(data_key)
    _, fitted, X_all, seconds = hit
    return fitted, X_all, seconds


#: datasets with more values than this (rows x columns) are binarized in row chunks written
#: straight into each split's matrix (`transform_splits`)
CHUNKED_ABOVE = 1 << 22
CHUNK_ROWS = 1 << 16


def transform_splits(binz: Any, X: Any, parts: tuple, chunked: bool | None = None,
                     dtype: Any = None, X_all: Any = None) -> list:
    """The binarized rows of each index array in ``parts`` (None stays None).

    ``dtype``: the matrices' type when the binarizer's output is numeric (``raw``): ``float32``
    for learners that round their input to float32 themselves (`treebench.execute.precision`);
    0/1 output stays ``uint8``. Each value is rounded as ``astype(np.float32)`` rounds it.

    Small data: every row is transformed once and each split takes its rows from the compact
    result. Large data (over `CHUNKED_ABOVE` values, e.g. KDD Cup 99): each split's matrix is
    allocated once and the binarizer writes into it ``CHUNK_ROWS`` rows at a time
    (``binz.fill``), so neither a matrix of every row nor a DataFrame copy of a split is ever
    alive beside the splits (issue 9, item 10: the all-rows matrix was 760 MB of a kdd99 cell's
    2.2 GB preparation peak); a split that is one run of consecutive rows (a predefined split)
    is read through row slices, without copying the frame. Every part but the first (the
    training rows) is written to an unlinked temporary ``.npy`` file and memory-mapped
    read-only: its pages are read when the cell scores, not held through the fit (kdd99's test
    rows are 280 MB as float64). Binarizers transform row by row, so both ways give the same
    values."""
    if chunked is None:
        chunked = X.shape[0] * max(X.shape[1], 1) > CHUNKED_ABOVE
    out_dtype = _out_dtype(binz, dtype)
    if X_all is not None or not chunked or not hasattr(binz, "fill"):
        # ``X_all``: every row already transformed (`_binarized_on_all`)
        X_all = np.asarray(binz.transform(X)) if X_all is None else X_all
        return [None if rows is None else X_all[rows].astype(out_dtype, copy=False) for rows in parts]
    out = []
    for i, rows in enumerate(parts):
        if rows is None:
            out.append(None)
            continue
        rows = np.asarray(rows)
        n_cols = int(binz.n_columns_)
        if i == 0:
            M = np.empty((len(rows), n_cols), dtype=out_dtype)
            for s, e, frame in _row_blocks(X, rows):
                block = M[s:e]
                block.fill(0)  # touched just before it is written: one pass while in cache
                binz.fill(frame, block)
            out.append(M)
        else:
            out.append(_spilled(binz, X, rows, n_cols, out_dtype))
    return out


def _fit_on_train(binz: Any, ds: Any, y: np.ndarray, train: np.ndarray, spec: str) -> Any:
    """``binz`` fitted on the training rows; for a large dataset, the same binarizer fitted on
    the same rows by an earlier cell is read from the prepared cache instead
    (`treebench.execute.prepared.load_fitted`), and a new fit is stored there."""
    large = ds.X.shape[0] * max(ds.X.shape[1], 1) > CHUNKED_ABOVE
    if large:
        from treebench.execute import prepared

        hit = prepared.load_fitted(ds, spec, train)
        if hit is not None:
            return hit
    binz.fit(take_rows(ds.X, train), y[train])
    if large:
        prepared.store_fitted(ds, spec, train, binz)
    return binz


def from_prepared_cache(ds: Any, binz: Any, parts: tuple, dtype: Any = None) -> list | None:
    """The matrices of ``parts`` (as `transform_splits` returns them) through the
    prepared-matrix cache (`treebench.execute.prepared`), for large datasets (over
    `CHUNKED_ABOVE` values) with an identity: the dataset's rows under the fitted ``binz`` are
    binarized once into a mapped file; a run of consecutive rows (a predefined split) is a
    read-only view of it, other rows are gathered (training rows into memory, the others into
    an unlinked mapped file, as `transform_splits` spills them). None when the cache does not
    apply (small or anonymous data, cache off or not writable): prepare in memory then."""
    if not hasattr(binz, "fill") or ds.X.shape[0] * max(ds.X.shape[1], 1) <= CHUNKED_ABOVE:
        return None
    from treebench.execute import prepared

    out_dtype = _out_dtype(binz, dtype)
    n, n_cols = int(ds.X.shape[0]), int(binz.n_columns_)

    M = prepared.all_rows_matrix(
        ds, binz, out_dtype, lambda: _binarized_blocks(binz, ds.X, np.arange(n), n_cols, out_dtype))
    if M is None:
        return None
    out: list = []
    for i, rows in enumerate(parts):
        if rows is None:
            out.append(None)
            continue
        rows = np.asarray(rows)
        if _consecutive(rows):
            out.append(M[int(rows[0]) : int(rows[0]) + len(rows)])
        elif i == 0:
            out.append(prepared.gather_rows(M, rows))
        else:  # not resident through the fit (`transform_splits`)
            out.append(_spill(prepared.gather_rows(M, rows)))
    return out


def _out_dtype(binz: Any, dtype: Any) -> np.dtype:
    """The binarizer's output type, ``dtype`` instead when both are floats (`transform_splits`)."""
    out_dtype = np.dtype(getattr(binz, "output_dtype_", np.uint8))
    if dtype is not None and out_dtype.kind == "f":
        out_dtype = np.dtype(dtype)
    return out_dtype


def _consecutive(rows: np.ndarray) -> bool:
    """True when ``rows`` is one ascending run ``a, a+1, ..., b`` (a predefined split)."""
    n = len(rows)
    return n > 0 and int(rows[-1]) - int(rows[0]) == n - 1 and bool(np.all(np.diff(rows) == 1))


def take_rows(X: Any, rows: Any) -> Any:
    """``X.iloc[rows]``, as a row slice (a view, no copy of the frame) when ``rows`` is one
    ascending run of consecutive rows."""
    rows = np.asarray(rows)
    if _consecutive(rows):
        return X.iloc[int(rows[0]) : int(rows[0]) + len(rows)]
    return X.iloc[rows]


def _row_blocks(X: Any, rows: np.ndarray):
    """``(start, end, frame)`` for each block of `CHUNK_ROWS` of ``rows``: ``frame`` holds the
    rows ``rows[start:end]`` of ``X``, a row slice (a view) when they are consecutive."""
    n = len(rows)
    consecutive = _consecutive(rows)
    for s in range(0, n, CHUNK_ROWS):
        e = min(s + CHUNK_ROWS, n)
        if consecutive:
            lo = int(rows[0]) + s
            yield s, e, X.iloc[lo : lo + (e - s)]
        else:
            yield s, e, X.iloc[rows[s:e]]


def _spilled(binz: Any, X: Any, rows: np.ndarray, n_cols: int, dtype: np.dtype) -> np.ndarray:
    """The binarized ``rows`` of ``X`` written block by block to an unlinked temporary
    ``.npy`` file and memory-mapped read-only (none of its pages is resident in this process
    until read). Plain writes, not a writable mapping: no dirty pages to flush synchronously."""
    shape = (len(rows), n_cols)
    if len(rows) == 0:
        return np.zeros(shape, dtype=dtype)
    return _spilled_blocks(shape, np.dtype(dtype), _binarized_blocks(binz, X, rows, n_cols, dtype))


def _binarized_blocks(binz: Any, X: Any, rows: np.ndarray, n_cols: int, dtype: Any):
    """The binarized ``rows`` of ``X`` in blocks of at most `CHUNK_ROWS` rows, each written
    into one reused buffer (valid until the next block is drawn)."""
    buf = np.empty((min(CHUNK_ROWS, len(rows)), n_cols), dtype=dtype)
    for s, e, frame in _row_blocks(X, rows):
        block = buf[: e - s]
        block.fill(0)
        binz.fill(frame, block)
        yield block


def _spill(M: np.ndarray) -> np.ndarray:
    """``M`` moved to an unlinked temporary mapped file (`_spilled`); ``M`` itself is freed
    when the caller drops it."""
    if M.shape[0] == 0:
        return M
    return _spilled_blocks(M.shape, M.dtype, (M[s : s + CHUNK_ROWS] for s in range(0, M.shape[0], CHUNK_ROWS)))


def _spilled_blocks(shape: tuple, dtype: np.dtype, blocks) -> np.ndarray:
    import tempfile

    fd, path = tempfile.mkstemp(prefix="treebench-split-", suffix=".npy")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.lib.format.write_array_header_1_0(
                fh, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape})
            for block in blocks:
                fh.write(memoryview(np.ascontiguousarray(block)).cast("B"))
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

