"""Fitting and scoring a prepared fold: the estimator, its warm-up, its `FitContext`, the fit
(or the tuning of its parameters), every metric, and the JSON payload of the cell.

`warm` runs a learner's declared warm-up (solver imports, JIT compilation) once per process,
outside any timed region, so a fit's time never includes compilation. `fit_and_score` sets the
fit's deadline from ``limits.time`` just before ``fit`` and returns plain JSON-ready data.
Nothing here loads data (`treebench.execute.fold`) or enforces limits
(`treebench.execute.cell_run`).
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from contextlib import contextmanager
from typing import Any

import numpy as np

from treebench.results.cell import Cell
from treebench.execute.fold import Prepared
from treebench.registry import ALGORITHMS
from treebench.algorithms.context import FitContext
from treebench.execute.fit_context import column_costs, feature_groups
from treebench import metrics
from treebench.tree.arrays import TreeArrays
from treebench.algorithms.objectives import objective_of
from treebench.algorithms.solve_info import SOLVE_INFO_COLUMN, SOLVE_INFO_KEYS

_WARM: set[str] = set()

#: a row keeps at most this many distinct warnings, each cut to `WARNING_CHARS` characters
MAX_WARNINGS = 20
WARNING_CHARS = 300


def warm(algorithm: str) -> float:
    """Run the learner's declared warm-up (imports of its solver library, JIT compilation) once
    per process, outside any timed region. Returns the seconds it took (0 when this process
    had already warmed the learner)."""
    if algorithm in _WARM:
        return 0.0
    t0 = time.perf_counter()
    entry = ALGORITHMS.get(algorithm)
    if entry.available:
        warmup_for(entry)()
    _WARM.add(algorithm)
    return time.perf_counter() - t0


def warmup_for(entry: Any):
    """The warm-up of the learner's registry ``entry`` (`treebench.registry.Entry.
    warmup_function`: as declared when it registered), or a no-op."""
    return entry.warmup_function() or _no_warmup


def _no_warmup() -> None:
    return None


def make_estimator(cell: Cell):
    """The cell's estimator: its parameters, the cell's ``random_state`` and (for learners
    with a ``time_limit``) ``limits.time`` unless the parameters set them."""
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
    groups = feature_groups(prep.columns, list(prep.feature_names), int(prep.X_train.shape[1]))
    costs = column_costs(cell.costs, groups, list(prep.feature_names), prep.dataset_costs,
                         cell.dataset)
    return FitContext(X_val=prep.X_val, y_val=prep.y_val, feature_groups=groups,
                      feature_costs=costs)


def fit_and_score(cell: Cell, prep: Prepared) -> dict[str, Any]:
    """Fit the cell's estimator and compute every metric. Returns the result payload: the
    row's measured parts (``parts``: data, tuned, metrics, solver, cost; assembled by
    `treebench.results.rows.build_row`), the tree, classes, columns and further solver info.
    The warnings raised meanwhile (by the learner, its peer library or a metric) are the
    row's ``fit_warnings`` rather than lines printed by every fit (`recorded_warnings`)."""
    with recorded_warnings() as caught:
        payload = _fit_and_score(cell, prep)
    column = warnings_column(caught)
    if column is not None:
        payload["parts"]["data"]["fit_warnings"] = column
    return payload


@contextmanager
def recorded_warnings():
    """The warnings raised inside the block, recorded instead of printed, as a list of
    `warnings.WarningMessage`: under the filters in force, so what would be printed once per
    place is recorded once, and what is ignored stays ignored. Only on the process's main
    thread: the warnings module's filters are the process's, and changing them from two
    threads at once can lose them, so on any other thread (the threading backend, a dask
    worker's threads) warnings print as before and the list stays empty."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    with warnings.catch_warnings(record=True) as caught:
        yield caught


def warnings_column(caught: list) -> str | None:
    """The row's ``fit_warnings``: a JSON list of the distinct warnings ``caught``, each as
    ``Category: first line of its message`` (at most `WARNING_CHARS` characters), in the
    order first raised, at most `MAX_WARNINGS` of them; None without any."""
    seen: dict[str, None] = {}
    for w in caught:
        lines = str(w.message).strip().splitlines()
        seen[f"{w.category.__name__}: {lines[0] if lines else ''}"[:WARNING_CHARS]] = None
        if len(seen) == MAX_WARNINGS:
            break
    return json.dumps(list(seen)) if seen else None


def _fit_and_score(cell: Cell, prep: Prepared) -> dict[str, Any]:
    est = make_estimator(cell)
    ctx = fit_context(cell, prep)
    est, trace, fit_seconds, fit_cpu = _fitted(est, cell, prep, ctx)
    info = dict(getattr(est, "solve_info_", {}) or {})
    compile_s = float(info.pop("compile_seconds", 0.0) or 0.0)
    times = [max(fit_seconds - compile_s, 0.0)]
    cpu = [max(fit_cpu - compile_s, 0.0)]
    if not info.get("timed_out"):
        more = repeat_fits(cell, prep, ctx, int(cell.limits.get("repeat") or 1) - 1)
        times += [t for t, _ in more]
        cpu += [c for _, c in more]
    classes = getattr(est, "classes_", None)
    data = _fold_columns(prep, classes)
    data["binary_columns_per_feature"] = json.dumps(prep.binary_columns_per_feature or {})
    data.update(_missing_columns(cell, prep))
    splits = {"train": (prep.X_train, prep.y_train, None), "test": (prep.X_test, prep.y_test, None)}
    if prep.y_val is not None:
        splits["val"] = (prep.X_val, prep.y_val, None)
    solver = _solver_columns(cell.algorithm, info)
    solver.update(_test_columns(cell.algorithm, est, prep))
    parts = {
        "data": data,
        "tuned": _tuned_columns(info, trace),
        "metrics": metrics.score_cell(est, splits, costs=ctx.feature_costs,
                                      objective=_objective(cell, est)),
        "solver": solver,
        "cost": {**fit_times(times, cpu), "compile_seconds": compile_s,
                 "binarize_seconds": prep.binarize_seconds},
    }
    extra_info = {k: v for k, v in info.items() if SOLVE_INFO_COLUMN.get(k, k) not in solver}
    return _payload(est, parts, classes, prep, extra_info)


def repeat_fits(cell: Cell, prep: Prepared, ctx, n: int) -> list[tuple[float, float]]:
    """The (wall, CPU) seconds of ``n`` more fits of the cell (``repeat:`` in the config),
    each with a new estimator of the same parameters in this process, after the first: warm
    (the learner's warm-up ran and its kernels are compiled), each with its own deadline.
    The trees they return are not scored; the first fit's tree is the cell's."""
    out = []
    for _ in range(max(n, 0)):
        est, _, seconds, cpu = _fitted(make_estimator(cell), cell, prep, ctx)
        info = getattr(est, "solve_info_", {}) or {}
        compile_s = float(info.get("compile_seconds", 0.0) or 0.0)
        out.append((max(seconds - compile_s, 0.0), max(cpu - compile_s, 0.0)))
    return out


def fit_times(times: list[float], cpu: list[float]) -> dict[str, Any]:
    """The row's fit-time columns of the fits ``times`` (wall seconds, first fit first) and
    ``cpu`` (their CPU seconds, in the same order): ``fit_seconds`` and ``fit_cpu_seconds``
    are their medians; with two or more fits, ``fit_seconds_repeats`` and
    ``fit_cpu_seconds_repeats`` list them all (JSON) and ``fit_seconds_spread`` is the wall
    times' range (largest minus smallest)."""
    out: dict[str, Any] = {"fit_seconds": float(np.median(times)),
                           "fit_cpu_seconds": float(np.median(cpu))}
    if len(times) > 1:
        out["fit_seconds_repeats"] = json.dumps([float(t) for t in times])
        out["fit_seconds_spread"] = float(max(times) - min(times))
        out["fit_cpu_seconds_repeats"] = json.dumps([float(t) for t in cpu])
    return out


def _objective(cell: Cell, est):
    """The objective of the problem the fitted ``est`` solves (its own parameters: the cell's,
    the learner's defaults and any tuned values), or None."""
    entry = ALGORITHMS.get(cell.algorithm)
    try:
        params = est.get_params(deep=False)
    except AttributeError:  # pragma: no cover - every registered learner is an estimator
        params = {**entry.parameters(), **cell.algorithm_params}
    return objective_of(cell.algorithm, params, tuple(entry.tags))


def _missing_columns(cell: Cell, prep: Prepared) -> dict[str, Any]:
    """The row's missing-value columns and its data notes: how the cell treated the dataset's
    missing feature values (`treebench.data.checks.missing_handling`), how many there were
    per column, and the run summary's note on them in ``data_warnings``."""
    from treebench.data.checks import MissingValues, missing_handling

    miss = prep.missing or MissingValues()
    handling, note = missing_handling(cell.binarizer, dict(cell.binarizer_params),
                                      cell.algorithm, miss)
    notes = [n for n in (prep.data_warnings, note) if n]
    return {
        "missing_handling": handling,
        "missing_values": sum(miss.per_column.values()),
        "missing_per_column": json.dumps(miss.per_column),
        "data_warnings": "; ".join(notes) or None,
    }


def _fitted(est, cell: Cell, prep: Prepared, ctx) -> tuple[Any, list | None, float, float]:
    """``est`` fitted (or tuned) on the training rows, with the context's deadline counted
    from the start of the fit. Returns (estimator, tuning trace or None, wall seconds, CPU
    seconds). The CPU seconds are the process's (user and system time of all its threads,
    `time.process_time`): a fit runs alone in its process (every backend fits a cell in a
    process of its own, or in a worker that runs one cell at a time), so they are the fit's,
    its solver's threads included, and unlike wall time they do not grow while the process
    waits for a core on a loaded machine."""
    tl = cell.limits.get("time")
    fit_kw: dict[str, Any] = {}
    if _takes_context(est):
        fit_kw["context"] = ctx
    c0 = time.process_time()
    t0 = time.perf_counter()
    if "context" in fit_kw:
        fit_kw["context"] = ctx.replace(deadline=None if not tl else t0 + float(tl))
    trace = None
    if cell.tune:
        est, trace = _tuned(est, cell, prep, fit_kw)
    else:
        est.fit(prep.X_train, prep.y_train, **fit_kw)
    return est, trace, time.perf_counter() - t0, time.process_time() - c0


def _fold_columns(prep: Prepared, classes: Any) -> dict[str, Any]:
    """The row's columns that describe the fold: its sizes and feature counts."""
    return {
        "n_train": len(prep.y_train),
        "n_val": 0 if prep.y_val is None else len(prep.y_val),
        "n_test": len(prep.y_test),
        "n_features": prep.n_features,
        "n_binary_features": int(prep.X_train.shape[1]),
        "n_classes": None if classes is None else len(classes),
    }


def _solver_columns(algorithm: str, info: dict[str, Any]) -> dict[str, Any]:
    """The solver's values that are results columns: the keys the learner base declares
    (`SOLVE_INFO_KEYS`; ``objective`` and ``objective_kind`` under their column names,
    `SOLVE_INFO_COLUMN`) and those the learner declares itself (its registry entry's
    ``columns``); the rest of ``info`` stays in the cell file."""

    keys = SOLVE_INFO_KEYS + tuple(c.name for c in ALGORITHMS.get(algorithm).columns)
    named = {SOLVE_INFO_COLUMN.get(k, k): v for k, v in info.items()}
    return {k: named[k] for k in keys if k in named and named[k] is not None}


def _test_columns(algorithm: str, est, prep: Prepared) -> dict[str, Any]:
    """The learner's own columns measured on the cell's test rows: what its
    ``test_columns(X_test, y_test)`` returns, where it has one (`rashomon`: the set's
    predictive multiplicity). Each name must be one of the learner's declared ``columns``
    (not a metric's or another part's, which it would overwrite): another is an error."""
    fn = getattr(est, "test_columns", None)
    if not callable(fn) or len(prep.y_test) == 0:
        return {}
    values = fn(prep.X_test, prep.y_test)
    stray = sorted(set(values) - {c.name for c in ALGORITHMS.get(algorithm).columns})
    if stray:
        raise ValueError(f"test_columns of learner `{algorithm}` returned {', '.join(stray)}, "
                         "which its registry entry does not declare in `columns`")
    return {k: v for k, v in values.items() if v is not None}


def _tuned_columns(info: dict[str, Any], trace: list | None) -> dict[str, Any]:
    """For a tuned cell, the chosen parameters as ``param_*`` columns and their names in
    ``tuned_params`` (the trace itself goes into ``info``)."""
    if trace is None:
        return {}
    from treebench.execute.tune import chosen_params

    chosen = chosen_params(trace)
    out: dict[str, Any] = {f"param_{k}": v for k, v in chosen.items()}
    out["tuned_params"] = ",".join(sorted(chosen))
    info["tune_trace"] = trace
    return out


def _payload(est, parts: dict[str, dict[str, Any]], classes: Any, prep: Prepared,
             extra_info: dict[str, Any]) -> dict[str, Any]:
    tree = getattr(est, "tree_", None)
    return {
        "parts": parts,
        "tree": tree.to_dict() if isinstance(tree, TreeArrays) else None,
        "classes": [] if classes is None else [_jsonable(c) for c in classes],
        "columns": prep.columns,
        "solve_info": {k: _jsonable_deep(v) for k, v in extra_info.items()},
    }


def _tuned(est, cell: Cell, prep: Prepared, fit_kw: dict[str, Any]):
    """Fit with the cell's tuning plan on its validation rows (`treebench.execute.tune`), every
    candidate with the cell's fit context; fit time covers every candidate fit."""
    from treebench.execute.tune import tune

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
