"""The results table: one row per cell (`docs/results-columns.md`).

Fixed columns are listed in `COLUMNS` with their pandas dtype. Algorithm parameters appear as
``param_<name>`` columns and binarizer parameters as ``bparam_<name>`` columns (object dtype in
memory, JSON-scalar values; typed per column in parquet, see `treebench.results.store`), so the
set of those depends on the experiment. `validate` checks a table on
write and on read and raises `SchemaError` naming the column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from treebench import metrics as _metrics

if TYPE_CHECKING:  # pandas loads when a table is handled, not when the schema is read
    import pandas as pd


def _metric_columns(recorded: bool = False) -> dict[str, str]:
    """Results columns of the registry's metrics (computed ones; with ``recorded`` also the
    measured times and memory, which the schema lists under "cost")."""
    return {c: m.dtype for m in _metrics.all_metrics() for c in m.columns()
            if recorded or m.needs != "recorded"}


STATUSES = ("ok", "timeout", "oom", "error", "crashed")
#: every status but ok (a failed cell; a rerun retries them)
FAILED_STATUSES = tuple(s for s in STATUSES if s != "ok")
#: failed for another reason than the time limit (the CLI exits 3 on them, 4 on timeouts)
ERROR_STATUSES = tuple(s for s in FAILED_STATUSES if s != "timeout")
#: environment columns of every row (`treebench.results.provenance.provenance` fills them)
PROVENANCE_COLUMNS = ("treebench_version", "git_sha", "python_version", "numpy_version",
                      "sklearn_version", "host", "cpu_count")

# name -> pandas dtype ("string", "Int64", "Float64", "boolean" are nullable)
COLUMNS: dict[str, str] = {
    # identity
    "experiment": "string",
    "cell_id": "string",
    "dataset": "string",
    "split": "string",
    "fold": "Int64",
    "seed": "Int64",
    "binarizer": "string",
    "binarizer_params": "string",  # canonical JSON
    "algorithm": "string",
    "algorithm_params": "string",  # canonical JSON
    # execution settings (not identity: a retry with new limits keeps the cell id)
    "time_limit": "Float64",  # seconds for the fit (limits.time)
    "memory_limit": "Float64",  # megabytes on top of the warm worker (limits.memory)
    # data sizes
    "n_train": "Int64",
    "n_val": "Int64",  # validation rows (train-val-test splits), else 0
    "n_test": "Int64",
    "n_features": "Int64",  # raw features
    "n_binary_features": "Int64",  # after binarization (== n_features when none)
    "n_classes": "Int64",
    "binary_columns_per_feature": "string",  # JSON {original feature: number of binary columns}
    "data_warnings": "string",  # data/split caveats of the cell, e.g. a split that is not stratified
    "tuned_params": "string",  # comma list of parameters chosen in the cell by `tune:` (their
    # param_* columns hold the chosen values; the validation trace is in the cell file)
    # metrics: every column of the metric registry (`treebench.metrics`), by name
    **_metric_columns(),
    # cost
    "fit_seconds": "Float64",  # the estimator's fit, after its warm-up, without JIT compilation
    "compile_seconds": "Float64",
    "binarize_seconds": "Float64",
    "prepare_seconds": "Float64",  # load + split + binarize in the worker (0 when cached)
    "warmup_seconds": "Float64",  # the learner's declared warm-up (imports, JIT), once per worker
    "wall_seconds": "Float64",  # the whole cell in the worker, preparation included
    "peak_rss_mb": "Float64",  # peak RSS of the cell's own process, incl. pages shared with the worker
    "cell_rss_mb": "Float64",  # what the cell added: peak RSS minus the worker's RSS at fork
    # solver info
    "optimal": "boolean",
    "objective": "Float64",  # in the unit `objective_kind` names: never compare across kinds
    "objective_kind": "string",  # one of `OBJECTIVE_KINDS`
    "bound": "Float64",
    "gap": "Float64",
    "operations": "Int64",
    "timed_out": "boolean",
    # lower-bound guess (GOSDT): Theorem 4.3's right-hand side for the returned tree, McTavish
    # et al. 2022 (a guessed run's objective is at most this for every tree of its depth budget)
    "reference_bound": "Float64",
    # outcome
    "status": "string",
    "error": "string",
    "finished_at": "string",  # ISO-8601 UTC
    "history": "string",  # JSON list of earlier outcomes of this cell (status, limits, time)
    # provenance
    "treebench_version": "string",
    "git_sha": "string",
    "python_version": "string",
    "numpy_version": "string",
    "sklearn_version": "string",
    "host": "string",
    "cpu_count": "Int64",
}

#: what the ``objective`` column measures, by ``objective_kind`` (docs/results-columns.md).
#: Learners minimise different things in different units, so ``objective`` is comparable only
#: between rows of the same kind (and the same data); report tables and figures leave it out.
OBJECTIVE_KINDS = {
    "errors": "weighted count of misclassified training rows (the sum of their sample weights)",
    "errors+alpha*path": "weighted training errors + alpha * sum over training rows of weight "
                         "x tests on the row's path (DPDT classification)",
    "sse+alpha*path": "weighted squared training error + alpha * sum over training rows of "
                      "weight x tests on the row's path (DPDT regression)",
    "error_rate+lambda*leaves": "misclassified share of the training weight + lambda x leaves "
                                "(GOSDT)",
    "solver": "the peer solver's own objective, as it reports it",
}

PARAM_PREFIX = "param_"
BPARAM_PREFIX = "bparam_"
#: metric columns (computed and recorded) in registry order; the report picks from these
METRIC_COLUMNS = tuple(_metric_columns(recorded=True))


class SchemaError(ValueError):
    """A results table does not follow the schema."""


def param_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith(PARAM_PREFIX)]


def bparam_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith(BPARAM_PREFIX)]


def conform(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` with every schema column present (missing ones null), schema dtypes, and
    the column order: schema columns, then ``param_*``, then ``bparam_*``."""
    import pandas as pd

    out = df.copy()
    for col, dtype in COLUMNS.items():
        if col not in out.columns:
            out[col] = pd.Series([pd.NA] * len(out), dtype=dtype, index=out.index)
        else:
            out[col] = _as(out[col], dtype, col)
    extra = sorted(param_columns(out)) + sorted(bparam_columns(out))
    for c in extra:
        out[c] = pd.Series([None if _isna(v) else v for v in out[c]], dtype=object, index=out.index)
    return out[list(COLUMNS) + extra]


def _isna(v) -> bool:
    import pandas as pd

    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def _as(s: pd.Series, dtype: str, col: str) -> pd.Series:
    try:
        if dtype == "boolean":
            return s.astype("object").where(s.notna(), None).astype("boolean")
        return s.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"results column `{col}` cannot be read as {dtype}: {exc}") from None


def validate(df: pd.DataFrame) -> None:
    """Raise `SchemaError` if ``df`` breaks the schema."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise SchemaError(f"results table lacks the column(s) {', '.join(missing)}")
    unknown = [
        c for c in df.columns
        if c not in COLUMNS and not c.startswith((PARAM_PREFIX, BPARAM_PREFIX))
    ]
    if unknown:
        raise SchemaError(f"results table has unknown column(s) {', '.join(unknown)}")
    for col, dtype in COLUMNS.items():
        if str(df[col].dtype) != dtype:
            raise SchemaError(f"results column `{col}` has dtype {df[col].dtype}, expected {dtype}")
    bad = set(df["status"].dropna()) - set(STATUSES)
    if bad:
        raise SchemaError(f"results column `status` has unknown value(s) {sorted(bad)}")
    if df["status"].isna().any():
        raise SchemaError("results column `status` has missing values")
    if df["cell_id"].duplicated().any():
        raise SchemaError("results table has duplicate cell ids")
    ok = df["status"] == "ok"
    for col in ("train_accuracy", "test_accuracy"):
        v = df.loc[ok, col].dropna()
        if ((v < 0) | (v > 1)).any():
            raise SchemaError(f"results column `{col}` has values outside [0, 1]")


#: columns whose values lie in [0, 1] whenever they are recorded
UNIT_INTERVAL = tuple(c for c in METRIC_COLUMNS
                      if c.split("_", 1)[-1] in ("accuracy", "balanced_accuracy", "roc_auc",
                                                 "roc_auc_ovo"))
#: counts that are never negative (times are measured differences and may round below 0)
_NON_NEGATIVE_PREFIXES = ("n_", "fold", "depth")


def check_row(row: dict) -> str | None:
    """What is wrong with one results row (a cell file's ``row``), or None: an unknown or
    missing status, a value of the wrong type for its column, an accuracy outside [0, 1], a
    negative count. The same rules as `validate`, for one row without pandas."""
    status = row.get("status")
    if status not in STATUSES:
        return f"its status {str(status)[:40]!r} is not one of {', '.join(STATUSES)}"
    for col, dtype in COLUMNS.items():
        v = row.get(col)
        if v is None or (isinstance(v, float) and v != v):
            continue
        if not _fits(v, dtype):
            return f"its `{col}` value {str(v)[:40]!r} is not a {_KIND[dtype]}"
        if dtype in ("Int64", "Float64") and v < 0 and col.startswith(_NON_NEGATIVE_PREFIXES):
            return f"its `{col}` value {v!r} is negative"
    if status == "ok":
        for col in UNIT_INTERVAL:
            v = row.get(col)
            # NaN (a metric undefined for the cell, e.g. AUC with one class in a fold) is allowed
            if isinstance(v, int | float) and not isinstance(v, bool) and v == v and not 0 <= v <= 1:
                return f"its `{col}` value {v!r} is outside [0, 1]"
    return None


_KIND = {"string": "text", "Int64": "whole number", "Float64": "number", "boolean": "true/false"}


def _fits(v, dtype: str) -> bool:
    if dtype == "string":
        return isinstance(v, str)
    if dtype == "boolean":
        return isinstance(v, bool)
    if isinstance(v, bool):
        return False
    if dtype == "Int64":
        return isinstance(v, int) or (isinstance(v, float) and v.is_integer())
    return isinstance(v, int | float)
