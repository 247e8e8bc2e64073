"""Read a results directory and group its rows into settings.

A *setting* is one point of the experiment grid: (dataset, split, split params, binarizer,
binarizer params, algorithm, ``param_*`` and ``bparam_*`` values). Its rows are the folds and
seeds of that point: two splits of one kind (5 folds and 3 folds, test sizes 0.2 and 0.5) are
two settings, never pooled; ``split_label`` names each split by its kind and the parameters
that tell it from the other splits of that kind.
This module only counts and averages metrics that the worker already computed (mean, sample
standard deviation, counts by status); it never computes a metric itself. Metrics are averaged
over the rows with status ``ok``; the other rows are counted by status, never dropped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_numeric_dtype
from pydantic import ValidationError

from treebench.config.schema import ReportSpec, check_entry_labels
from treebench.errors import UserError
from treebench.report import OPTION_FLAGS
from treebench.execute.experiments import MISSING, absent_cells, cell_ids, records, stale_cells
from treebench.results import schema
from treebench.results.defined import check_records
from treebench.results.values import NA, normalize_value, sort_key, value_token
from treebench.results.store import current_table, read_table
from treebench import metrics as registry
from treebench.results.schema import UNIT_INTERVAL
from treebench.report.student_t import t975

# Parameters that only pick replicates (like folds) and never define a grid point.
REPLICATE_PARAMS = frozenset({"random_state", "seed"})
# Columns that distinguish lines in a figure without ever being an x axis.
LINE_ONLY = ("split_label", "binarizer")
FAILED_STATUSES = schema.FAILED_STATUSES


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt_value(v: Any) -> str:
    """How a parameter value is printed in tables, legends and file names."""
    if v is NA:
        return ""
    if v is None:
        return "None"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def column_label(col: str) -> str:
    """``param_max_depth`` -> ``max_depth``; ``bparam_n_bins`` -> ``bin.n_bins``."""
    if col == "split_label":
        return "split"
    if col.startswith(schema.BPARAM_PREFIX):
        return "bin." + col[len(schema.BPARAM_PREFIX):]
    if col.startswith(schema.PARAM_PREFIX):
        return col[len(schema.PARAM_PREFIX):]
    return col


@dataclass
class Results:
    """A results directory: the conformed table, its manifest and the settings."""

    directory: Path
    table: pd.DataFrame
    manifest: dict[str, Any]
    experiment: str
    settings: pd.DataFrame = field(default_factory=pd.DataFrame)
    key_columns: list[str] = field(default_factory=list)  # param_*/bparam_* grid columns
    metrics: list[str] = field(default_factory=list)  # metrics with at least one value
    notes: list[str] = field(default_factory=list)
    #: the claims' verdicts, computed once by `treebench.report.reproduction.verification`
    claims: Any = None
    #: the figures' file-name stems by dataset, computed once by
    #: `treebench.report.figures.results_stems` (every figure kind asks for them)
    stems: dict[str, str] | None = None
    #: report options given when the report is written (`treebench report
    #: --reference-solver ...`), over those the run recorded (`check_report_options`)
    options: dict[str, Any] = field(default_factory=dict)


def experiment_config(results: Results) -> dict[str, Any]:
    """The experiment's config as the manifest keeps it ({} when absent or not a mapping)."""
    cfg = results.manifest.get("config") if isinstance(results.manifest, dict) else None
    return cfg if isinstance(cfg, dict) else {}


def report_option(results: Results, key: str) -> Any:
    """The experiment's ``report: {key: ...}`` option: as given when the report is written
    (``results.options``), else as its run recorded it (None when absent)."""
    if key in results.options:
        return results.options[key]
    rep = experiment_config(results).get("report")
    return rep.get(key) if isinstance(rep, dict) else None


def check_report_options(results: Results, options: Mapping[str, Any]) -> dict[str, Any]:
    """The report options ``options`` (keys of `treebench.report.OPTION_FLAGS`; None: not
    given) checked against the experiment by the config's own rules (`ReportSpec`,
    `check_entry_labels`): a reference solver and rivals must be labels of its algorithm
    entries, the floor a finite number of seconds >= 0, the clock `wall` or `cpu`; a
    `UserError` naming the flag otherwise. Returns the options given."""
    given = {k: v for k, v in options.items() if v is not None}
    named = [(OPTION_FLAGS["reference_solver"], given["reference_solver"])] \
        if "reference_solver" in given else []
    named += [(OPTION_FLAGS["rivals"], rival) for rival in given.get("rivals") or []]
    try:
        for flag, name in named:
            if not str(name).strip():
                raise ValueError(f"{flag} has an empty label; give algorithm entries' labels")
        table = results.table.get("algorithm_label", pd.Series(dtype=object))
        # a folder without a recorded config: the labels its rows carry
        labels = entry_labels(results) or [str(v) for v in dict.fromkeys(table.dropna())]
        check_entry_labels(named, labels)
        ReportSpec.model_validate({k: given[k] for k in ("min_reference_seconds", "clock")
                                   if k in given})
    except ValidationError as exc:
        key = exc.errors()[0]["loc"][0]
        if key == "clock":
            raise UserError(f"{OPTION_FLAGS['clock']} is `wall` or `cpu` (got "
                            f"{given['clock']!r}).") from None
        raise UserError(f"{OPTION_FLAGS['min_reference_seconds']} must be a finite number of "
                        f"seconds >= 0 (got {given['min_reference_seconds']}).") from None
    except ValueError as exc:
        raise UserError(f"{exc}.") from None
    return given


def entry_labels(results: Results) -> list[str]:
    """The experiment's algorithm entries' labels (``label``, else ``name``) in config order,
    as its run recorded the config ([] without one)."""
    algs = experiment_config(results).get("algorithms")
    labels = [str(a.get("label") or a.get("name")) for a in algs
              if isinstance(a, dict) and (a.get("label") or a.get("name"))] \
        if isinstance(algs, list) else []
    return list(dict.fromkeys(labels))


def load_results(results_dir: Path) -> Results:
    """Read ``results.parquet`` and ``manifest.json`` from ``results_dir`` and aggregate them."""
    results_dir = Path(results_dir)
    path = results_dir
    if results_dir.suffix == ".parquet" and results_dir.is_file():
        results_dir = results_dir.parent
    else:
        path = results_dir / "results.parquet"
    if not path.is_file() and not (results_dir / "cells").is_dir():  # cells: built in memory
        raise UserError(
            f"No results table at {path}; run the experiment first or point the report at a "
            "results directory that contains results.parquet."
        )
    stale: list[str] = []
    usable: Any = None
    try:
        if (results_dir / "cells").is_dir() and path == results_dir / "results.parquet":
            table, stale, found = current_table(results_dir)  # the cells say what the table is
            usable = list(found.cells)
        else:
            table = read_table(path)
    except schema.SchemaError as exc:
        raise UserError(f"The results table {path} does not follow the schema: {exc}.") from None
    except Exception as exc:  # pyarrow raises many types for damaged files
        raise UserError(f"Cannot read the results table {path} ({type(exc).__name__}: {exc}); "
                        "re-run or re-consolidate the experiment to rewrite it.") from None
    manifest, notes = _read_manifest(results_dir / "manifest.json")
    leftover = stale_cells(manifest, usable if usable is not None
                           else table["cell_id"].astype(str))
    if leftover:  # cells of a config since edited: not what any experiment here defines now
        table = table[~table["cell_id"].astype(str).isin(leftover)].reset_index(drop=True)
        notes.append(f"{len(leftover)} cell(s) of this folder belong to no recorded experiment "
                     f"(left over from a config since edited or data since changed) and are "
                     f"left out of this report (results-earlier.csv lists them); `treebench "
                     f"results check {results_dir} --prune-stale` moves them to quarantine/.")
    res = Results(results_dir, table, manifest, _experiment_name(manifest, table, results_dir),
                  notes=stale + notes)
    missing = defined_missing(manifest, table)
    if missing is not None:  # parameters only missing cells have (all of a setting's cells lost)
        for c in _key_columns(missing):
            if c not in table.columns:
                table[c] = None
    res.key_columns = _key_columns(table)
    res.settings = aggregate(table, res.key_columns, missing=missing)
    recorded = [m for m in schema.METRIC_COLUMNS if f"{m}_mean" in res.settings.columns
                and res.settings[f"{m}_n"].sum() > 0]
    res.metrics = select_metrics(recorded, manifest)
    if len(res.settings) and res.settings["folds_differ"].any():
        n = int(res.settings["folds_differ"].sum())
        res.notes.append(
            f"† {n} setting(s) are averaged over fewer folds than other settings of the same "
            "dataset (some of their cells did not finish), so their means are not over the same "
            "folds; they are marked † in the ok/total columns and hollow in the figures.")
    return res


# Always reported when recorded, whatever the config's `metrics` list says.
ALWAYS_METRICS = ("train_accuracy", "test_accuracy", "fit_seconds", "fit_seconds_spread",
                  "binarize_seconds", "prepare_seconds", "peak_rss_mb")


def select_metrics(recorded: list[str], manifest: dict[str, Any]) -> list[str]:
    """The recorded metric columns that the config's ``metrics`` list names (``accuracy``
    names ``train_accuracy``, ``val_accuracy`` and ``test_accuracy``: the metric registry's
    `treebench.metrics.columns`), plus `ALWAYS_METRICS`; every
    recorded one when the manifest has no such list."""
    cfg = manifest.get("config")
    wanted = cfg.get("metrics") if isinstance(cfg, dict) else None
    if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
        return recorded
    names = {c for w in wanted if w in registry.names() for c in registry.columns(w)}
    names |= set(wanted)  # a config may also name a column
    names |= {f"{c}_effective" for c in names}  # leaves also as merged leaves
    return [m for m in recorded if m in names or m in ALWAYS_METRICS]


def _read_manifest(path: Path) -> tuple[dict[str, Any], list[str]]:
    if not path.is_file():
        return {}, ["manifest.json is missing; provenance is taken from the results table."]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, [f"manifest.json could not be read ({exc})."]
    if not isinstance(data, dict):
        return {}, ["manifest.json does not hold a JSON object; it is ignored."]
    # damaged experiment records cannot tell which cells the report shows or counts as missing
    # (a manifest without records, `{}` or an older layout, is read as it was)
    if "experiments" in data:
        check_records(path, data, also="")
    return data, []


def _experiment_name(manifest: dict[str, Any], table: pd.DataFrame, directory: Path) -> str:
    exp = manifest.get("experiment")
    if isinstance(exp, dict):
        exp = exp.get("name")
    if isinstance(exp, str) and exp:
        return exp
    names = sorted(set(table["experiment"].dropna()))
    if names:
        return ", ".join(names)
    return directory.resolve().name


def _key_columns(table: pd.DataFrame) -> list[str]:
    cols = schema.param_columns(table) + schema.bparam_columns(table)
    return [c for c in cols if column_label(c).removeprefix("bin.") not in REPLICATE_PARAMS]


def with_not_applicable(table: pd.DataFrame, col: str, values: pd.Series) -> pd.Series:
    """Values with `NA` where the row's algorithm (binarizer) params JSON lacks the name and the
    value is null: the parameter does not exist for that row rather than being None."""
    if col.startswith(schema.BPARAM_PREFIX):
        name, source = col[len(schema.BPARAM_PREFIX):], table["binarizer_params"]
    else:
        name, source = col[len(schema.PARAM_PREFIX):], table["algorithm_params"]
    cache: dict[Any, bool] = {}

    def has(js: Any) -> bool:
        if js not in cache:
            try:
                d = json.loads(js) if isinstance(js, str) else None
            except ValueError:
                d = None
            cache[js] = isinstance(d, dict) and name in d
        return cache[js]

    # a list, not Series.map: map over a string[pyarrow] column costs more than the JSON
    present = [has(js) if js is not pd.NA else False for js in source]
    return pd.Series([v if (v is not None or p) else NA for v, p in zip(values, present)],
                     index=values.index, dtype=object)


#: the columns that, with the parameter values, make a setting
SETTING_KEYS = ("dataset", "split", "split_params", "binarizer", "binarizer_params",
                "algorithm_label")
#: the columns `with_not_applicable` (and so `normalized_keys`) reads besides the values
KEY_SOURCES = ("algorithm_params", "binarizer_params")


def split_labels(kinds: list[Any], params: list[Any]) -> list[str]:
    """A name per split (``kind`` and ``split_params`` JSON, pairwise): its kind, followed by
    the parameters whose values differ among the splits of that kind (``kfold n_splits=3``);
    the kind alone when only one split of it is present or its parameters are unknown."""
    decoded: list[dict[str, Any]] = []
    for js in params:
        try:
            d = json.loads(js) if isinstance(js, str) and js else {}
        except ValueError:
            d = {}
        decoded.append(d if isinstance(d, dict) else {})
    varying: dict[str, list[str]] = {}
    for kind in set(map(str, kinds)):
        ds = [d for k, d in zip(kinds, decoded) if str(k) == kind]
        keys = sorted({key for d in ds for key in d})
        varying[kind] = [key for key in keys
                         if len({value_token(d.get(key)) for d in ds}) > 1]
    out = []
    for k, d in zip(kinds, decoded):
        parts = [f"{key}={fmt_value(d.get(key))}" for key in varying[str(k)] if key in d]
        out.append(" ".join([str(k)] + ([", ".join(parts)] if parts else [])))
    return out


def normalized_keys(table: pd.DataFrame, key_columns: list[str]) -> pd.DataFrame:
    """The identity columns of every row, with normalised parameter values."""
    # one frame at the end: column inserts one by one cost more
    # (a table written before a column existed, split_params, gets "" in every row)
    out: dict[str, Any] = {c: _blank_missing(table, c) for c in SETTING_KEYS}
    for c in key_columns:
        out[c] = _param_values(table, c)
    return pd.DataFrame(out, index=table.index)


def _param_values(table: pd.DataFrame, column: str) -> pd.Series:
    """A parameter column of `normalized_keys`: `normalize_value` of each value, `NA` where
    the parameter does not exist for the row (`with_not_applicable`)."""
    # a list, not Series.map: pandas would infer float64 from [None, 50] and bring NaN back
    vals = pd.Series([normalize_value(v) for v in table[column]], index=table.index,
                     dtype=object)
    return with_not_applicable(table, column, vals)


def defined_missing(manifest: dict[str, Any], table: pd.DataFrame) -> pd.DataFrame | None:
    """The cells the manifest's experiment records define that have no row in ``table`` (not
    run yet, interrupted, or their file unusable), as `experiments.absent_cells` rows; None
    when there are none or the records do not list their cells."""
    have = set(table["cell_id"].astype(str))
    parts = []
    for rec in records(manifest):
        ids = cell_ids(rec)
        absent = set(ids or []) - have
        if absent:
            parts.append(absent_cells(rec, absent))
    if not parts:
        return None
    out = pd.concat(parts, ignore_index=True).drop_duplicates("cell_id", ignore_index=True)
    if "split_params" not in table.columns:
        out["split_params"] = None
    elif "split_params" not in out.columns or out["split_params"].isna().any():
        # a record written before rows carried split_params: the split of its dataset and kind
        # when the table holds exactly one
        known = table.groupby(["dataset", "split"], dropna=False)["split_params"].unique()
        fill = [known.get((d, k), [None]) for d, k in zip(out["dataset"], out["split"])]
        given = out["split_params"] if "split_params" in out.columns else [None] * len(out)
        out["split_params"] = [g if isinstance(g, str) else (f[0] if len(f) == 1 else None)
                               for g, f in zip(given, fill)]
    return out


def aggregate(table: pd.DataFrame, key_columns: list[str],
              missing: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per setting: identity (and ``split_label``), counts by status (and
    ``n_solver_timed_out``: ok rows
    whose solver stopped at its own time limit), and ``<metric>_mean/_std/_n`` (sample standard
    deviation) over the ``ok`` rows. ``missing`` (`defined_missing`): the cells the experiment
    defines that have no row; each setting counts its own in ``n_missing``, and ``n_total``
    includes them (``4/5``: one of five folds has no result). Rows are sorted by dataset,
    split, algorithm, binarizer, then parameter values."""
    metrics = [m for m in schema.METRIC_COLUMNS if m in table.columns]
    missing = missing if missing is not None and not missing.empty else None
    values = _metric_values(table, missing, metrics)
    # the columns read below only (the table may have a hundred, each concatenated and taken)
    used = {"status", "timed_out", *SETTING_KEYS, *KEY_SOURCES, *key_columns}
    table = table[[c for c in table.columns if c in used]]
    if missing is not None:
        # the missing cells join the groups as rows of their own status: a setting all of whose
        # cells are missing still gets its row (0/n, n missing) instead of vanishing
        table = pd.concat([table, missing.reindex(columns=table.columns)], ignore_index=True)
    keys = normalized_keys(table, key_columns)
    ident = list(keys.columns)
    columns = ident + ["split_label", "n_total", "n_missing"] + [
        f"n_{s}" for s in schema.STATUSES] + [
        "n_failed", "n_solver_timed_out", "folds_differ"] + [
        f"{m}_{k}" for m in metrics for k in ("mean", "std", "n")]
    if keys.empty:
        return pd.DataFrame(columns=columns)
    cols = [[value_token(v) for v in keys[c]] for c in ident]
    tokens = ["\x1f".join(parts) for parts in zip(*cols)]
    codes, uniques = pd.factorize(pd.Series(tokens, dtype=object), sort=False)
    n_groups = len(uniques)
    first = np.full(n_groups, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(codes[mask], minlength=n_groups)

    cols: dict[str, Any] = {}  # made into one frame: inserting columns one by one costs more
    for c in ident:  # object columns: keep None, NA and ints as they are (no float NaN)
        vals = keys[c].to_numpy(dtype=object)
        cols[c] = pd.Series([vals[i] for i in first], dtype=object)
    cols["split_label"] = split_labels(list(cols["split"]), list(cols["split_params"]))
    status = table["status"].astype(str).to_numpy()
    cols["n_total"] = np.bincount(codes, minlength=n_groups)
    for st in schema.STATUSES:
        cols[f"n_{st}"] = count(status == st)
    cols["n_missing"] = count(status == MISSING)
    cols["n_failed"] = cols["n_total"] - cols["n_ok"] - cols["n_missing"]
    ok = status == "ok"
    timed_out = table["timed_out"].fillna(False).to_numpy(dtype=bool)
    cols["n_solver_timed_out"] = count(ok & timed_out)
    out = pd.DataFrame(cols, index=range(n_groups))
    stats: dict[str, np.ndarray] = {}  # joined at once: many single inserts fragment the frame
    for m in metrics:
        v = values[m]
        valid = ok & np.isfinite(v)
        g, x = codes[valid], v[valid]
        n = np.bincount(g, minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.bincount(g, weights=x, minlength=n_groups) / n
            ss = np.bincount(g, weights=(x - mean[g]) ** 2, minlength=n_groups)
            std = np.where(n >= 2, np.sqrt(ss / (n - 1)), np.nan)
        stats[f"{m}_mean"] = np.where(n > 0, mean, np.nan)
        stats[f"{m}_std"] = std
        stats[f"{m}_n"] = n
    # a setting averaged over fewer folds than another setting of the same dataset and split
    # is not comparable fold for fold: flagged in tables and figures
    group = (out["dataset"].astype(str) + "\x1f" + out["split"].astype(str) + "\x1f"
             + out["split_params"].astype(str))
    # (a setting with no finished cell is not "averaged over fewer folds": it has no mean)
    stats["folds_differ"] = ((out["n_ok"] > 0)
                             & (out["n_ok"] < out.groupby(group)["n_ok"].transform("max"))).to_numpy()
    out = pd.concat([out, pd.DataFrame(stats, index=out.index)], axis=1)[columns]
    return out.iloc[_setting_order(out, key_columns)].reset_index(drop=True)


def _numbers(values: pd.Series) -> np.ndarray:
    """``values`` as floats, NaN where missing or not a number (``pd.to_numeric`` with
    ``errors="coerce"``, which leaves a column of numbers as it is)."""
    if not is_numeric_dtype(values.dtype):
        values = pd.to_numeric(values, errors="coerce")
    return values.to_numpy(dtype=float, na_value=np.nan)


def _metric_values(table: pd.DataFrame, missing: pd.DataFrame | None,
                   metrics: list[str]) -> dict[str, np.ndarray]:
    """Each metric's values in ``table`` (`_numbers`) followed by those of the ``missing`` rows
    (NaN where ``missing`` lacks the column, as ``missing.reindex`` fills it): what the metric
    columns of the two frames concatenated hold, without concatenating them."""
    out = {}
    for m in metrics:
        v = _numbers(table[m])
        if missing is not None:
            more = (_numbers(missing[m]) if m in missing.columns
                    else np.full(len(missing), np.nan))
            v = np.concatenate([v, more])
        out[m] = v
    return out


def _setting_order(out: pd.DataFrame, key_columns: list[str]) -> list[int]:
    """The positions of ``out``'s settings sorted by dataset, split, split parameters,
    algorithm, binarizer, binarizer parameters, then parameter values (`sort_key`)."""
    # the columns read once (a cell at a time, each read built a Series)
    names = [out[c].tolist() for c in ("dataset", "split", "split_params", "algorithm_label",
                                       "binarizer", "binarizer_params")]
    params = [out[c].tolist() for c in key_columns]
    keys = [(*(str(col[i]) for col in names), tuple(sort_key(col[i]) for col in params))
            for i in range(len(out))]
    return sorted(range(len(out)), key=keys.__getitem__)


def distinct(values: Any) -> list[Any]:
    """Distinct values in `sort_key` order."""
    seen: dict[str, Any] = {}
    for v in values:
        seen.setdefault(value_token(v), v)
    return sorted(seen.values(), key=sort_key)


def varying_columns(settings: pd.DataFrame, columns: list[str]) -> list[str]:
    """The columns of ``columns`` that take more than one value in ``settings``."""
    return [c for c in columns if c in settings and _several(settings[c])]


def _several(values: Any) -> bool:
    """Whether ``values`` hold more than one distinct value (`distinct`), read up to the
    second one (the displays ask for every parameter column each time)."""
    first = None
    for v in values:
        token = value_token(v)
        if first is None:
            first = token
        elif token != first:
            return True
    return False


def sweep_axes(settings: pd.DataFrame, key_columns: list[str]) -> dict[str, list[str]]:
    """For each algorithm, its ``param_*``/``bparam_*`` columns with more than one applicable
    value among the given settings (the caller picks them, e.g. one dataset's)."""
    axes: dict[str, list[str]] = {}
    for alg, sub in settings.groupby("algorithm_label", sort=True):
        axes[str(alg)] = [c for c in key_columns
                          if len([v for v in distinct(sub[c]) if v is not NA]) > 1]
    return axes


def failures(results: Results) -> pd.DataFrame:
    """The rows whose status is not ``ok``, with their identity (the split's fold and seed: the
    holdout cells of ten seeds share fold 0) and error."""
    t, cols = results.table, results.key_columns
    # the rows and, of the table's hundred columns, those read below, taken at once
    used = {"cell_id", "fold", "seed", "status", "error", "dataset", "algorithm_label",
            *KEY_SOURCES, *cols}
    rows = np.flatnonzero((t["status"] != "ok").to_numpy(dtype=bool, na_value=False))
    bad = t.iloc[rows, [i for i, c in enumerate(t.columns) if c in used]]
    # the columns of `normalized_keys` read here only, the parameters' as lists
    params = [list(_param_values(bad, c)) for c in cols]
    out = pd.DataFrame({
        "cell_id": bad["cell_id"].astype(str),
        "dataset": _blank_missing(bad, "dataset"),
        "algorithm_label": _blank_missing(bad, "algorithm_label"),
        "params": [params_text(dict(zip(cols, r)), cols)
                   for r in (zip(*params) if params else [()] * len(bad))],
        "fold": _blanked(bad["fold"]),
        "seed": _blank_missing(bad, "seed"),
        "status": bad["status"].astype(str),
        "error": _blanked(bad["error"]),
    })
    out = out.sort_values(["dataset", "algorithm_label", "cell_id"], kind="stable")
    return out.reset_index(drop=True)


def _blank_missing(rows: pd.DataFrame, column: str) -> pd.Series:
    """A column's values with missing ones (and a column older results lack) as ``""``."""
    if column not in rows:
        return pd.Series([""] * len(rows), index=rows.index, dtype=object)
    return _blanked(rows[column])


def _blanked(values: pd.Series) -> pd.Series:
    """``values`` as objects (``Series.astype(object)``), with the missing ones as ``""``."""
    # an object array filled in place: astype(object).where(notna, "") costs four times more
    out = values.to_numpy(dtype=object, copy=True)
    out[values.isna().to_numpy(dtype=bool)] = ""
    return pd.Series(out, index=values.index, dtype=object, name=values.name)


def params_text(row: Mapping[str, Any], columns: list[str]) -> str:
    """``k=2, max_depth=3`` for the applicable parameters of a row."""
    return ", ".join(f"{column_label(c)}={fmt_value(row[c])}" for c in columns
                     if c in row and row[c] is not NA)


def status_counts(table: pd.DataFrame) -> dict[str, int]:
    # counted once, not compared once per status
    counts = Counter(table["status"].astype(str).tolist())
    return {s: int(counts[s]) for s in schema.STATUSES}


#: what every error bar of the report's figures is (said in each figure's note)
ERROR_BAR_NOTE = "bars: 95 % CI of the mean over folds (Student t), clipped to the metric's range"


def metric_range(metric: str) -> tuple[float, float]:
    """The values a metric column can take: [0, 1] for accuracies and AUCs, [0, ∞) for
    counts, sizes and times, else the whole line."""
    if metric in UNIT_INTERVAL:
        return 0.0, 1.0
    if metric.startswith(("n_", "depth", "expected_")) or metric.endswith(("_seconds", "_mb")):
        return 0.0, float("inf")
    return float("-inf"), float("inf")


def error_bars(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """(2, n) lower and upper error-bar lengths of ``rows``' means of ``metric``: the 95 %
    confidence interval of the mean (Student t with n - 1 degrees of freedom, from the
    settings' ``_std`` and ``_n``), clipped so that no bar leaves the metric's range; 0 where a
    setting has fewer than two values."""
    # the quantile SciPy gives (`scipy.special.stdtrit`, what `scipy.stats.t.ppf` evaluates),
    # without importing SciPy in each drawing process for the usual numbers of folds
    mean = rows[f"{metric}_mean"].to_numpy(dtype=float)
    std = rows[f"{metric}_std"].to_numpy(dtype=float)
    n = rows[f"{metric}_n"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(n >= 2, n - 1, 1.0)  # counts: whole numbers (NaN: no bar below)
        half = np.where(n >= 2, t975(df) * std / np.sqrt(n), 0.0)
    half = np.nan_to_num(half, nan=0.0)
    lo, hi = metric_range(metric)
    lower = np.clip(np.minimum(half, mean - lo), 0.0, None)
    upper = np.clip(np.minimum(half, hi - mean), 0.0, None)
    return np.nan_to_num(np.vstack([lower, upper]), nan=0.0)
