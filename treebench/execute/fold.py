"""A cell's fold: its dataset, split and binarization turned into the matrices a learner fits.

This module owns the per-process in-memory caches of the preparation: loaded datasets
(`dataset_for`), binarized folds (`prepare`, keyed by dataset, split, fold, seed and
binarizer, so cells that differ only in the learner or its parameters share one fold) and the
rows of binarizers fitted on every row (``fit_on: all``). Large datasets (over `CHUNKED_ABOVE`
values) are binarized in row chunks, spilled to unlinked mapped files, or read through the
on-disk caches of `treebench.execute.prepared` (matrices) and `treebench.execute.fitted`
(fitted binarizers); numeric folds take the learner's float type
(`treebench.execute.precision`). Nothing here fits a learner or knows about YAML.
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from treebench.results.cell import Cell
from treebench.execute.precision import float32_exact, float32_policy, matrix_dtype, numeric_part
from treebench.registry import ALGORITHMS
from treebench.results.cell import canonical_json
from treebench.data.splits import SplitOptions, make_split
from treebench.errors import DataError
from treebench.execute import fitted, prepared

_DATASETS: OrderedDict[str, Any] = OrderedDict()
_PREPARED: OrderedDict[tuple, Prepared] = OrderedDict()
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
    missing: Any = None  # the dataset's missing feature values as loaded (`checks.MissingValues`)


def learner_float32_policy(algorithm: str) -> str:
    """The learner's ``float32_input`` declaration (`treebench.execute.precision`)."""
    return float32_policy(ALGORITHMS.get(algorithm).obj)


def _wanted_dtype(prep: Prepared, policy: str) -> np.dtype:
    """The matrix type a cell of ``policy`` needs from the prepared fold ``prep``."""
    def exact() -> bool:
        if prep.values_exact is not None:
            return prep.values_exact
        if prep.X_train.dtype != np.float64:
            return False  # unknown from rounded values: prepared again, checked then
        return all(float32_exact(M) for M in (prep.X_train, prep.X_test, prep.X_val) if M is not None)

    return matrix_dtype(np.dtype(prep.output_dtype), policy, exact)


def dataset_key(cell: Cell) -> str:
    """The key of the cell's dataset in this process's dataset cache: its loader, parameters
    and fingerprint (a long-lived worker never serves a file's old content after it changed)."""
    return canonical_json([cell.dataset_loader, cell.dataset_params, cell.data])


def check_fingerprint(cell: Cell, ds: Any) -> None:
    """Refuse a user's data file whose content is not the one the cell was planned on (it
    changed while the run went on): the cell's id names the data it read."""
    if cell.dataset_loader != "file" or not cell.data.startswith("sha256:"):
        return
    files = (getattr(ds, "meta", None) or {}).get("files") or []
    got = "sha256:" + "+".join(str(f.get("sha256")) for f in files)
    if got != cell.data:
        raise DataError(f"dataset `{cell.dataset}`: its data file changed after the run planned "
                        f"this cell ({cell.data[:19]}… then, {got[:19]}… now); run the same "
                        f"command again to run the cells of the new data.")


def dataset_for(cell: Cell, data_dirs: list[str] | None, offline: bool | None = True):
    """The cell's dataset, cached per process. Workers never download (``offline=True``); the
    runner's preflight passes ``None`` so that ``--offline``/``TREEBENCH_OFFLINE`` decide."""
    from treebench.data.base import load_dataset

    key = dataset_key(cell)
    if key in _DATASETS:
        _DATASETS.move_to_end(key)
        return _DATASETS[key]
    ds = load_dataset(cell.dataset_loader, cell.dataset_params, data_dirs=data_dirs, offline=offline)
    check_fingerprint(cell, ds)
    _DATASETS[key] = ds
    while len(_DATASETS) > DATASET_CACHE_SIZE:
        _DATASETS.popitem(last=False)
    return ds


def hold_dataset(key: str, ds: Any) -> None:
    """Put ``ds`` into the dataset cache under ``key`` (a dataset shipped by a cluster's
    driver), as the most recently used entry."""
    if _DATASETS.get(key) is not ds:
        _DATASETS[key] = ds
    _DATASETS.move_to_end(key)


def _large(ds: Any) -> bool:
    """Whether ``ds`` has more values than `CHUNKED_ABOVE` (rows x columns)."""
    return ds.X.shape[0] * max(ds.X.shape[1], 1) > CHUNKED_ABOVE


def fold_key(cell: Cell) -> tuple[str, str]:
    """What names ``cell``'s binarized fold in a process's cache: its data (the fingerprint
    too: a long-lived worker never reuses an old file's fold), split, fold and seed, and its
    binarizer. Cells with one key share one fold, whatever their learners."""
    return (
        canonical_json([cell.dataset_loader, cell.dataset_params, cell.data, cell.split,
                        cell.fold, cell.seed]),
        canonical_json([cell.binarizer, cell.binarizer_params]),
    )


def prepare(cell: Cell, data_dirs: list[str] | None = None) -> Prepared:
    """Dataset, split and fitted binarizer for ``cell`` (cached per fold and binarizer)."""
    key = fold_key(cell)
    policy = learner_float32_policy(cell.algorithm)
    if key in _PREPARED:
        cached = _PREPARED[key]
        if cached.X_train.dtype == _wanted_dtype(cached, policy):
            _PREPARED.move_to_end(key)
            return cached
        # the same fold in the other float type: replaced, never kept beside it
        del _PREPARED[key], cached
        release_freed_memory()
    ds = dataset_for(cell, data_dirs)
    prep = _binarized_fold(cell, ds, key[1], policy)
    _PREPARED[key] = prep
    if _large(ds):
        # a large dataset's frame is not kept beside its prepared fold: the fit needs only the
        # fold's matrices, and another fold or binarizer reloads the frame from the parsed
        # cache (seconds, against minutes of fitting on such data)
        _DATASETS.pop(dataset_key(cell), None)
        del ds
        release_freed_memory()
    while len(_PREPARED) > PREPARED_CACHE_SIZE:
        _PREPARED.popitem(last=False)
    return prep


def _split(cell: Cell, ds: Any, y: np.ndarray):
    """The cell's split of ``ds`` (`treebench.data.splits.make_split`)."""
    return make_split(
        SplitOptions(**cell.split), y, fold=cell.fold, seed=cell.seed,
        predefined=(ds.train_index, ds.test_index), task=ds.meta.get("task", "classification"),
    )


def _binarized_fold(cell: Cell, ds: Any, binz_key: str, policy: str) -> Prepared:
    """The cell's fold of ``ds``: split, binarizer fitted (on the training rows, or on every
    row for ``fit_on: all``), matrices in the type ``policy`` asks for."""
    from treebench.binarize import make_binarizer
    y = np.asarray(ds.y)
    split = _split(cell, ds, y)
    t0 = time.perf_counter()
    binz = make_binarizer(cell.binarizer, dict(cell.binarizer_params), list(ds.categorical))
    parts = (split.train, split.test, split.valid)
    X_all = None
    if getattr(binz, "fit_on", "train") == "all":  # faithful reproduction of papers that did so
        binz, X_all, shared_seconds = _binarized_on_all(binz_key, binz, ds, y)
    else:
        binz = _fit_on_train(binz, ds, y, split.train, binz_key)
    if int(getattr(binz, "n_columns_", 1)) == 0:
        raise DataError(
            f"binarization `{cell.binarizer}` made no column of {cell.dataset}'s training rows "
            f"(every feature is constant there, so it has no threshold to offer): no tree can "
            f"split them; `quantile` and `kmeans` keep such a feature as a constant column.")
    output_dtype = np.dtype(getattr(binz, "output_dtype_", np.uint8))
    exact: list[bool] = []

    def values_exact() -> bool:
        exact.append(float32_exact(numeric_part(ds.X, binz)))
        return exact[0]

    dtype = matrix_dtype(output_dtype, policy, values_exact)
    mats = None if X_all is not None else from_prepared_cache(ds, binz, parts, dtype)
    if mats is None:
        mats = transform_splits(binz, ds.X, parts, dtype=dtype, X_all=X_all)
    seconds = time.perf_counter() - t0 if X_all is None else shared_seconds
    return _assembled(ds, y, split, binz, mats, seconds, output_dtype.str, exact[0] if exact else None)


def _assembled(ds: Any, y: np.ndarray, split: Any, binz: Any, mats: list, seconds: float,
               output_dtype: str, values_exact: bool | None) -> Prepared:
    """The `Prepared` fold from its matrices ``mats`` (train, test, validation)."""
    from treebench.data.checks import missing_values  # loads pandas, as ``ds`` already has

    X_train, X_test, X_val = mats
    notes = [w for w in (split.warning, *(ds.meta.get("parse_notes") or [])) if w]
    return Prepared(
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
        data_warnings="; ".join(notes) or None,
        output_dtype=output_dtype,
        values_exact=values_exact,
        missing=missing_values(ds),
    )


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
    if _large(ds):
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
    alive beside the splits (the all-rows matrix was 760 MB of a kdd99 cell's 2.2 GB
    preparation peak); a split that is one run of consecutive rows (a predefined split)
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
    (`treebench.execute.fitted.load_fitted`), and a new fit is stored there."""
    large = _large(ds)
    if large:
        hit = fitted.load_fitted(ds, spec, train)
        if hit is not None:
            return hit
    binz.fit(take_rows(ds.X, train), y[train])
    if large:
        fitted.store_fitted(ds, spec, train, binz)
    return binz


def from_prepared_cache(ds: Any, binz: Any, parts: tuple, dtype: Any = None) -> list | None:
    """The matrices of ``parts`` (as `transform_splits` returns them) through the
    prepared-matrix cache (`treebench.execute.prepared`), for large datasets (over
    `CHUNKED_ABOVE` values) with an identity: the dataset's rows under the fitted ``binz`` are
    binarized once into a mapped file; a run of consecutive rows (a predefined split) is a
    read-only view of it, other rows are gathered (training rows into memory, the others into
    an unlinked mapped file, as `transform_splits` spills them). None when the cache does not
    apply (small or anonymous data, cache off or not writable): prepare in memory then."""
    if not hasattr(binz, "fill") or not _large(ds):
        return None
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

