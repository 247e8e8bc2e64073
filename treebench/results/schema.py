"""The results table: one row per cell (`docs/results-columns.md`).

Every column is declared (`treebench.columns.Column`: name, dtype, one line, producer) by the
code that produces it: this module declares the identity, settings, data-size, cost, outcome
and provenance columns (`CORE`); the metric registry one column per metric and split; the
learner base the solver-status columns (`treebench.algorithms.solve_info`); a learner the
solver columns of its own (``@ALGORITHMS.register(..., columns=...)``, e.g. GOSDT's
``reference_bound``). `declared` asks them each time it is called, so a plug-in metric or
learner is part of the table as soon as it is registered.

Algorithm parameters appear as ``param_<name>`` columns and binarizer parameters as
``bparam_<name>`` columns (object dtype in memory, JSON-scalar values; typed per column in
parquet, see `treebench.results.store`), so the set of those depends on the experiment, as do
the learners' own columns (present when a learner of the table declares them). The table is
closed: `validate` refuses a column nobody declared, on write and on read, naming it.

Older tables and cell files read as the current layout (`upgrade_row`, `conform`): the column
``algorithm`` (the entry's label) is ``algorithm_label`` now, and a column declared since they
were written reads as null.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from treebench.columns import Column, declare, merge
from treebench.algorithms.objectives import PROBLEM_COLUMNS, PROBLEM_OBJECTIVE_COLUMNS
from treebench.algorithms.solve_info import SOLVE_INFO_COLUMNS
from treebench.utils.ranges import INT_RANGE
from treebench.registry import ALGORITHMS

if TYPE_CHECKING:  # pandas loads when a table is handled, not when the schema is read
    import pandas as pd


STATUSES = ("ok", "timeout", "oom", "error", "crashed")
#: every status but ok (a failed cell; a rerun retries them)
FAILED_STATUSES = tuple(s for s in STATUSES if s != "ok")
#: failed for another reason than the time limit (the CLI exits 3 on them, 4 on timeouts)
ERROR_STATUSES = tuple(s for s in FAILED_STATUSES if s != "timeout")
#: environment columns of every row (`treebench.results.provenance.provenance` fills them)
PROVENANCE_COLUMNS = ("treebench_version", "git_sha", "python_version", "numpy_version",
                      "sklearn_version", "host", "cpu_count")
#: columns renamed since older results were written: old name -> new name (read on load;
#: ``where:`` filters accept the old name as an alias)
RENAMED = {"algorithm": "algorithm_label", "objective": "solver_objective",
           "objective_kind": "solver_objective_kind"}
#: names a filter (``where:`` of a claim, ``--where`` of `treebench cells`/`show`) may use
#: for a column: the renamed columns' old names and ``label``
ALIASES = {"label": "algorithm_label", **RENAMED}

_RUNNER = "the runner (`treebench.results.rows`)"
IDENTITY = declare(
    _RUNNER, "identity",
    ("experiment", "string", "the experiment's name (its config's `name:`)"),
    ("cell_id", "string", "the cell's id: a hash of what the cell is (`treebench.config.cells`)"),
    ("dataset", "string", "the dataset's name"),
    ("data_fingerprint", "string", "what the cell read (part of its id): `sha256:<hex>` of a "
     "data file (the value `sha256sum` prints; `+` joins a test file's), `catalog:<hex>` of a "
     "catalog entry's recorded checksums and parse options, `generated:<hex>` of a generator's "
     "name and parameters (`treebench.data.fingerprint`)"),
    ("split", "string", "the split kind (kfold, holdout, train-val-test, ...)"),
    ("split_params", "string", "the split's parameters besides its kind (canonical JSON: "
     "n_splits, test_size, stratify, ...); with `split` it names the split, so two splits of "
     "one kind are never pooled"),
    ("fold", "Int64", "the fold of the split"),
    ("seed", "Int64", "the split's seed"),
    ("binarizer", "string", "the binarization method"),
    ("binarizer_params", "string", "the binarizer's parameters (canonical JSON)"),
    ("algorithm_label", "string", "the learner entry's label in the config (its `label:`, "
     "else its registry name); was `algorithm` in older results"),
    ("algorithm_name", "string", "the learner's registry name (`treebench algorithms`)"),
    ("algorithm_params", "string", "the learner's parameters (canonical JSON)"),
)
SETTINGS = declare(
    _RUNNER, "settings",
    ("time_limit", "Float64", "seconds for the fit (`limits.time`); not identity: a retry "
     "with new limits keeps the cell id"),
    ("memory_limit", "Float64", "megabytes on top of the warm worker (`limits.memory`)"),
)
DATA = declare(
    "the fit (`treebench.execute.fit`)", "data",
    ("n_train", "Int64", "training rows"),
    ("n_val", "Int64", "validation rows (train-val-test splits), else 0"),
    ("n_test", "Int64", "test rows"),
    ("n_features", "Int64", "raw features"),
    ("n_binary_features", "Int64", "features after binarization (== n_features when none)"),
    ("n_classes", "Int64", "classes the learner saw"),
    ("binary_columns_per_feature", "string", "JSON {original feature: number of binary "
     "columns}"),
    ("data_warnings", "string", "data or split caveats of the cell, e.g. a split that is not "
     "stratified, or the dataset's missing values and how the cell treated them"),
    ("fit_warnings", "string", "JSON list of the distinct warnings raised during the cell's "
     "fits and scoring (`Category: message`), e.g. a peer that cannot prove its tree optimal "
     "on this data; `treebench run` prints each once with its number of cells"),
    ("missing_handling", "string", "how the cell treated missing feature values: none (there "
     "are none), indicator, impute, learner (NaN routed by the learner), learner+indicator, "
     "drop-rows (docs/missing-values.md)"),
    ("missing_values", "Int64", "missing feature values of the dataset as loaded (before "
     "`missing: drop-rows`)"),
    ("missing_per_column", "string", "JSON {column: missing values} of the dataset as loaded, "
     "for the columns that have any"),
    ("tuned_params", "string", "comma list of the parameters chosen in the cell by `tune:` "
     "(their param_* columns hold the chosen values; the trace is in the cell file)"),
)
COST = declare(
    "the runner (recorded)", "cost",
    ("fit_seconds", "Float64", "the estimator's fit, after its warm-up, without JIT "
     "compilation; with `repeat: N` in the config, the median of the N fits"),
    ("fit_seconds_repeats", "string", "with `repeat: N` (N >= 2): JSON list of the N fits' "
     "seconds, first fit first (warm, in one process; the first fit's tree is scored)"),
    ("fit_seconds_spread", "Float64", "with `repeat: N` (N >= 2): the largest minus the "
     "smallest of the N fits' seconds"),
    ("fit_cpu_seconds", "Float64", "CPU seconds of the fit (user and system time of the "
     "fitting process, every thread; less the learner's JIT compilation time, a wall-clock "
     "figure that single-threaded compilation makes close to its CPU time): unlike "
     "`fit_seconds` it does not grow while the fit waits for a core; with `repeat: N`, the "
     "median of the N fits"),
    ("fit_cpu_seconds_repeats", "string", "with `repeat: N` (N >= 2): JSON list of the N "
     "fits' CPU seconds, in the order of `fit_seconds_repeats`"),
    ("compile_seconds", "Float64", "JIT compilation inside the fit"),
    ("binarize_seconds", "Float64", "binarizer fit and transform"),
    ("prepare_seconds", "Float64", "load + split + binarize in the worker (0 when cached)"),
    ("warmup_seconds", "Float64", "the learner's declared warm-up (imports, JIT), once per "
     "worker"),
    ("wall_seconds", "Float64", "the whole cell in the worker, preparation included"),
    ("peak_rss_mb", "Float64", "peak RSS of the cell's own process, incl. pages shared with "
     "the worker"),
    ("cell_rss_mb", "Float64", "what the cell added: peak RSS minus the worker's RSS at fork"),
)
OUTCOME = declare(
    _RUNNER, "outcome",
    ("status", "string", "ok, timeout, oom, error or crashed"),
    ("error", "string", "what went wrong, one line (failed cells)"),
    ("finished_at", "string", "when the cell finished (ISO-8601 UTC)"),
    ("history", "string", "JSON list of earlier outcomes of this cell (status, limits, time)"),
)
PROVENANCE = declare(
    "the provenance manifest (`treebench.results.provenance`)", "provenance",
    ("treebench_version", "string", "treebench's version"),
    ("git_sha", "string", "treebench's git commit, when run from a checkout"),
    ("python_version", "string", "Python's version"),
    ("numpy_version", "string", "numpy's version"),
    ("sklearn_version", "string", "scikit-learn's version"),
    ("host", "string", "the machine's name"),
    ("cpu_count", "Int64", "the machine's CPUs"),
)
#: the columns this module declares (every group but metrics and solver info)
CORE = IDENTITY + SETTINGS + DATA + COST + OUTCOME + PROVENANCE


def _shared() -> tuple[Column, ...]:

    return PROBLEM_COLUMNS + PROBLEM_OBJECTIVE_COLUMNS + SOLVE_INFO_COLUMNS


def _learners_of(algorithms: Iterable[str] | None) -> list:
    """The registry entries of ``algorithms`` (None: every learner, built-in and plug-in);
    names that are no registered learner are left out."""

    if algorithms is None:
        return list(ALGORITHMS)
    return [ALGORITHMS.get(a) for a in dict.fromkeys(algorithms)
            if isinstance(a, str) and a in ALGORITHMS]


def learner_columns(algorithms: Iterable[str] | None) -> tuple[Column, ...]:
    """The columns of their own that the learners ``algorithms`` declare (None: every
    learner, built-in and plug-in). Names that are no registered learner declare nothing."""
    return tuple(c for e in _learners_of(algorithms) for c in e.columns)


def declared(algorithms: Iterable[str] | None = ()) -> dict[str, Column]:
    """name -> `Column` of the results table, in the table's order: the core columns, every
    metric's, the shared solver columns, those of the learners ``algorithms`` (None: of every
    learner), then outcome and provenance. Asked of the registries at each call (a result is
    reused while the same metric and learner entries are registered)."""
    from treebench import metrics  # loads numpy: kept off the plan cache's light path

    mets = metrics.all_metrics()
    learners = _learners_of(algorithms)
    key = (algorithms is None, tuple(map(id, mets)), tuple(map(id, learners)))
    hit = _DECLARED.get(key)
    if hit is None:
        if len(_DECLARED) > 256:
            _DECLARED.clear()
        hit = _DECLARED[key] = merge(
            IDENTITY + SETTINGS + DATA, metrics.declared_columns(), COST, _shared(),
            tuple(c for e in learners for c in e.columns), OUTCOME + PROVENANCE)
    return dict(hit)


_DECLARED: dict[tuple, dict[str, Column]] = {}


def is_declared(name: str) -> bool:
    """Whether ``name`` is a parameter column or a declared column (of any learner)."""
    if is_param(name) or name in declared():
        return True
    return name in {c.name for c in learner_columns(None)}


def dtypes(algorithms: Iterable[str] | None = ()) -> dict[str, str]:
    """name -> pandas dtype of the `declared` columns."""
    return {n: c.dtype for n, c in declared(algorithms).items()}


#: what the ``solver_objective`` column (a learner's own figure) measures, by
#: ``solver_objective_kind`` (docs/results-columns.md). Learners report different things in
#: different units, so it is comparable only between rows of the same kind (and the same data);
#: report tables and figures leave it out. ``problem_objective`` is the problem's value,
#: computed the same way for every learner (`treebench.algorithms.objectives.OBJECTIVES`).
OBJECTIVE_KINDS = {
    "errors": "weighted count of misclassified training rows (the sum of their sample weights)",
    "errors+alpha*path": "weighted training errors + alpha * sum over training rows of weight "
                         "x tests on the row's path (DPDT classification)",
    "sse+alpha*path": "weighted squared training error + alpha * sum over training rows of "
                      "weight x tests on the row's path (DPDT regression)",
    "error_rate+lambda*leaves": "misclassified share of the training weight + lambda x leaves "
                                "(GOSDT)",
    "error_rate+penalty*leaves": "misclassified share of the training weight + the solver's "
                                 "own per-leaf penalty x leaves (GOSDT with lexicographic: a "
                                 "penalty below one error for the whole tree, no parameter; "
                                 "the cell file's solve info has it as `regularization`)",
    "solver": "the peer solver's own objective, as it reports it",
}

PARAM_PREFIX = "param_"
BPARAM_PREFIX = "bparam_"


def metric_columns() -> tuple[str, ...]:
    """Metric columns (computed and recorded) in registry order; the report picks from these."""
    from treebench import metrics  # loads numpy: kept off the plan cache's light path

    return tuple(metrics.result_columns())


def unit_interval() -> tuple[str, ...]:
    """Metric columns whose values lie in [0, 1] whenever they are recorded."""
    return tuple(c for c in metric_columns()
                 if c.split("_", 1)[-1] in ("accuracy", "balanced_accuracy", "roc_auc",
                                            "roc_auc_ovo"))


def __getattr__(name: str):
    """``METRIC_COLUMNS`` and ``UNIT_INTERVAL``, asked of the metric registry when read (a
    plug-in metric registered after import is in them)."""
    if name == "METRIC_COLUMNS":
        return metric_columns()
    if name == "UNIT_INTERVAL":
        return unit_interval()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SchemaError(ValueError):
    """A results table does not follow the schema."""


def param_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith(PARAM_PREFIX)]


def bparam_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith(BPARAM_PREFIX)]


def is_param(col: str) -> bool:
    return col.startswith((PARAM_PREFIX, BPARAM_PREFIX))


def upgrade_row(row: dict) -> dict:
    """A row of an older layout in the current one, in place: renamed columns (`RENAMED`)
    take their new names."""
    for old, new in RENAMED.items():
        if old in row:
            value = row.pop(old)
            row.setdefault(new, value)
    return row


def _learners(df: pd.DataFrame) -> list[str]:
    if "algorithm_name" not in df.columns:
        return []
    return sorted({str(v) for v in df["algorithm_name"].dropna()})


def table_columns(df: pd.DataFrame) -> dict[str, Column]:
    """The declared columns of the table ``df``: the core, metric and shared solver columns,
    the columns of its learners (``algorithm_name``), and any other learner's column it holds
    (an older table without learner names). A learner's module is imported only when the
    table holds a column the core, the metrics and the shared solver columns do not declare
    (reading a table needs no learner loaded)."""
    cols = declared(())
    if all(c in cols or is_param(c) for c in df.columns):
        return cols
    cols = declared(_learners(df))
    stray = [c for c in df.columns if c not in cols and not is_param(c)]
    if stray:  # ask every learner, built-in and plug-in, before calling a column unknown
        own = {c.name for c in learner_columns(None)}
        cols = {n: c for n, c in declared(None).items()
                if n in cols or (n in own and n in df.columns)}
    return cols


def _undeclared(df: pd.DataFrame, cols: dict[str, Column]) -> None:
    unknown = [c for c in df.columns if c not in cols and not is_param(c)]
    if unknown:
        raise SchemaError(
            f"results table has unknown column(s) {', '.join(map(str, unknown))} (declared "
            f"by no metric or learner installed here: install the plug-in that wrote them)")


def _renamed(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the old names of renamed columns (`RENAMED`) replaced by the new ones; rows
    of both layouts in one frame keep their values."""
    out = df.rename(columns={o: n for o, n in RENAMED.items()
                             if o in df.columns and n not in df.columns})
    for old, new in RENAMED.items():
        if old in out.columns:  # both names: the new one where it is set, else the old one
            out[new] = out[new].where(out[new].notna(), out[old])
            out = out.drop(columns=[old])
    return out


def conform(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` with every declared column of the table present (missing ones null),
    their dtypes, and the column order: declared columns, then ``param_*``, then
    ``bparam_*``. Renamed columns of older tables take their new names; a column nobody
    declares raises `SchemaError`."""
    import pandas as pd

    out = _renamed(df)
    cols = table_columns(out)
    _undeclared(out, cols)
    # the columns are gathered and the frame built once: setting a hundred columns one by one
    # cost about 0.3 ms each (most of a small table's reading); a column that already has its
    # declared dtype (a table this package wrote) is kept as it is
    have = dict(out.items())
    data: dict[str, pd.Series] = {}
    for col, c in cols.items():
        s = have.get(col)
        if s is None:
            data[col] = pd.Series([pd.NA] * len(out), dtype=c.dtype, index=out.index)
        else:
            data[col] = s if str(s.dtype) == c.dtype else _as(s, c.dtype, col)
    for c in sorted(param_columns(out)) + sorted(bparam_columns(out)):
        data[c] = pd.Series([None if _isna(v) else v for v in have[c]], dtype=object,
                            index=out.index)
    return pd.DataFrame(data, index=out.index)


def _isna(v) -> bool:
    import pandas as pd

    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def _as(s: pd.Series, dtype: str, col: str) -> pd.Series:
    try:
        if dtype == "boolean":
            return s.astype("object").where(s.notna(), None).astype("boolean")
        return s.astype(dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise SchemaError(f"results column `{col}` cannot be read as {dtype}: {exc}") from None


def validate(df: pd.DataFrame) -> None:
    """Raise `SchemaError` if ``df`` breaks the schema: a declared column missing (a learner's
    own columns belong to tables holding that learner), an undeclared one, a wrong dtype or
    an impossible value."""
    cols = table_columns(df)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise SchemaError(f"results table lacks the column(s) {', '.join(missing)}")
    _undeclared(df, cols)
    dtypes = {col: str(t) for col, t in df.dtypes.items()}  # not a column taken out per name
    for col, c in cols.items():
        if col in dtypes and dtypes[col] != c.dtype:
            raise SchemaError(f"results column `{col}` has dtype {dtypes[col]}, expected {c.dtype}")
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


#: counts that are never negative (times are measured differences and may round below 0)
_NON_NEGATIVE_PREFIXES = ("n_", "fold", "depth")


def check_row(row: dict) -> str | None:
    """What is wrong with one results row (a cell file's ``row``), or None: an unknown or
    missing status, an integer outside 64 bits (in any column: a table holds no larger one, in
    pandas or parquet), text that is not UTF-8, a column nobody declares, a value of the wrong
    type for its column (`value_problem`: a whole-number column holds whole numbers up to
    2**53), an accuracy outside [0, 1], a negative count. The same rules as `conform` and
    `validate`, for one row without pandas: a row that passes builds a table."""
    status = row.get("status")
    if status not in STATUSES:
        return f"its status {shown(status)!r} is not one of {', '.join(STATUSES)}"
    for col, v in row.items():  # a table holds 64-bit integers (pandas Int64, parquet int64)
        lo, hi = INT_RANGE
        if isinstance(v, int) and not isinstance(v, bool) and not lo <= v <= hi:
            return (f"its `{shown(col)}` value {str(v)[:40]} is outside the 64-bit integer "
                    f"range a results table holds")
        for text in (col, v):  # parquet and CSV hold UTF-8: a lone surrogate is none
            if isinstance(text, str) and not _utf8(text):
                what = "name" if text is col else "value"
                return (f"the {what} of its column `{shown(col)}` is not valid text (it holds "
                        f"a lone UTF-16 surrogate, which no table file can store)")
    cols = declared(())  # no learner imported unless the row holds a column of its own
    if any(k not in cols and not is_param(k) for k in row):
        name = row.get("algorithm_name")
        cols = declared([name] if isinstance(name, str) else [])
    if any(k not in cols and not is_param(k) for k in row):  # an older row: every learner
        cols = declared(None)
    unknown = [k for k in row if k not in cols and not is_param(k)]
    if unknown:
        return (f"its column `{shown(unknown[0])}` is declared by no metric or learner "
                f"installed here (install the plug-in that wrote it)")
    for col, c in cols.items():
        problem = value_problem(row.get(col), c.dtype)
        if problem:
            return f"its `{col}` value {problem}"
        v = row.get(col)
        if c.dtype in ("Int64", "Float64") and v is not None and v < 0 \
                and col.startswith(_NON_NEGATIVE_PREFIXES):
            return f"its `{col}` value {v!r} is negative"
    if status == "ok":
        for col in unit_interval():
            v = row.get(col)
            # NaN (a metric undefined for the cell, e.g. AUC with one class in a fold) is allowed
            if isinstance(v, int | float) and not isinstance(v, bool) and v == v and not 0 <= v <= 1:
                return f"its `{col}` value {v!r} is outside [0, 1]"
    return None


#: the largest whole number a whole-number (Int64) column holds: pandas builds the column of a
#: table through 64-bit floats when a row lacks the value (a failed cell has no ``n_leaves``),
#: and floats hold every whole number only up to 2**53; 1e19, 9.3e18 or 1e308 fit no int64
#: at all
MAX_WHOLE = 2**53


def value_problem(v, dtype: str) -> str | None:
    """Why the JSON value ``v`` cannot be read into a table column of pandas type ``dtype``
    (the end of a sentence: ``1e+19 is beyond 2**53 ...``), or None when it can (None
    and NaN are missing values, which every column holds)."""
    if v is None or (isinstance(v, float) and v != v):
        return None
    if not _fits(v, dtype):
        return f"{shown(v)!r} is not a {_KIND[dtype]}"
    if dtype == "Int64" and not -MAX_WHOLE <= v <= MAX_WHOLE:
        return (f"{shown(v)} is beyond 2**53 ({MAX_WHOLE:,}), the largest whole number a "
                f"whole-number column holds exactly")
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(v, n: int = 40) -> str:
    """``v`` as printable text of at most ``n`` characters (lone surrogates escaped)."""
    return str(v)[:n].encode("utf-8", "backslashreplace").decode("utf-8")


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
