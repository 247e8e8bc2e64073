"""Checks of a loaded dataset against the split it will get, before anything runs.

The runner's preflight calls `check_dataset_split` once per (dataset, split): what would give
wrong numbers with exit code 0 is refused with one sentence (`DataError`, exit code 2), what only
needs saying is returned as warnings for the run summary:

* a label with a single class: nothing to learn, every accuracy is 1;
* a predefined test file whose labels the training rows never have: those rows can never
  be predicted, so accuracy is silently low (adult's test file writes ``<=50K.`` with a dot);
  ``label_map:`` fixes the spelling, ``unseen_test_labels: allow`` accepts them knowingly
  (KDD Cup 99's test file adds attack types on purpose);
* ``split: predefined`` on a dataset without a test file;
* a stratified split that cannot stay stratified: a warning, or a refusal with
  ``split.unstratifiable: error``;
* a regression target (``meta["task"] == "regression"``) has no classes: only a constant
  target is refused, and its splits are never stratified;
* values read as missing because they were no numbers (``bad_values: missing``): a warning;
* missing and infinite feature values (`check_missing`, docs/missing-values.md): infinite
  values, ``missing: error`` and learners that cannot take NaN on ``raw`` features are refused;
  the missing values per column, and how the cells treat them, are a warning. Each result row
  says the same for its cell (`missing_values`, `missing_handling`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from treebench.data.base import Dataset
from treebench.data.splits import SplitOptions, stratification_problem
from treebench.errors import DataError
from treebench.utils.text import MAX_CHARS, MAX_VALUES, clip, show
from treebench.registry import ALGORITHMS, binarizer_output
from treebench.data.base import missing_per_column


def _show(v: Any) -> str:
    return show(v)  # clipped: a label value may be a whole line of a file


def _test_file(ds: Dataset) -> str:
    for f in ds.meta.get("files", []) or []:
        if f.get("role") == "test":
            return str(f.get("found_at") or f.get("path"))
    return "its test part"


def check_labels(ds: Dataset, name: str) -> None:
    """Refuse a label with fewer than two classes, or of numbers that are not all whole: every
    classifier checks its target with scikit-learn's ``check_classification_targets``, which
    refuses such a "continuous" target, so every cell would fail."""
    from sklearn.utils.multiclass import type_of_target

    y = np.asarray(ds.y)
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        only = f"the single class {_show(classes[0])}" if classes.size else "no rows"
        raise DataError(
            f"dataset `{name}`: the label has {only} in all {ds.n_samples} rows, so there is nothing to "
            f"learn; check its `label` column (or `label_map`) and the rows it keeps."
        )
    if type_of_target(y).startswith("continuous"):
        odd = next(v for v in classes if float(v) != round(float(v)))
        raise DataError(
            f"dataset `{name}`: the label holds numbers that are not whole ({classes.size} "
            f"distinct values in {ds.n_samples} rows, e.g. {_show(odd)}), a continuous target "
            f"that every classifier refuses; check that `label` names the column of classes, or "
            f"map its values to classes with `label_map`."
        )


def check_target(ds: Dataset, name: str) -> None:
    """Refuse a regression target that is constant (R² is undefined, nothing to learn)."""
    y = np.asarray(ds.y, dtype=np.float64)
    if y.size == 0 or np.all(y == y[0]):
        raise DataError(
            f"dataset `{name}`: the regression target is constant in all {ds.n_samples} rows, so there is "
            f"nothing to learn; check its `label` column and the rows it keeps."
        )


def check_predefined(ds: Dataset, name: str) -> None:
    """Refuse a predefined split that is missing, single-class in training, or whose test file
    has labels the training file never has (unless the dataset says ``unseen_test_labels: allow``)."""
    if ds.train_index is None or ds.test_index is None:
        raise DataError(
            f"dataset `{name}` has no test file, so `split: {{kind: predefined}}` cannot apply; give it a "
            f"`test_path` or choose another split kind."
        )
    if len(ds.test_index) == 0:
        raise DataError(f"dataset `{name}` has no test rows, so `split: {{kind: predefined}}` cannot apply; choose another split kind.")
    y = np.asarray(ds.y)
    ytr, yte = y[ds.train_index], y[ds.test_index]
    train_classes = np.unique(ytr)
    if train_classes.size < 2:
        raise DataError(
            f"dataset `{name}`: its training file has the single class {_show(train_classes[0]) if train_classes.size else 'none'}, "
            f"so there is nothing to learn; check its `label` column."
        )
    unseen, counts = np.unique(yte[~np.isin(yte, train_classes)], return_counts=True)
    if unseen.size and ds.meta.get("unseen_test_labels", "error") != "allow":
        shown = ", ".join(f"{_show(u)} ({int(k)} rows)" for u, k in zip(unseen[:MAX_VALUES], counts[:MAX_VALUES], strict=True))
        more = f" and {unseen.size - MAX_VALUES} more" if unseen.size > MAX_VALUES else ""
        known = [str(c) for c in train_classes]
        pairs = []
        for u in unseen[:3]:
            close = difflib.get_close_matches(str(u), known, n=1, cutoff=0.6) if len(str(u)) <= 4 * MAX_CHARS else []
            pairs.append(f"'{clip(u)}': '{clip(close[0] if close else known[0])}'")
        raise DataError(
            f"the test file `{_test_file(ds)}` of dataset `{name}` has label(s) {shown}{more} that the training rows "
            f"never have, so they could never be predicted; map them to training labels with `label_map:` "
            f"(e.g. `label_map: {{{', '.join(pairs)}}}`) or, if they are meant to be unseen, set "
            f"`unseen_test_labels: allow`."
        )


def check_folds(ds: Dataset, name: str, split: dict[str, Any]) -> None:
    """A ``kfold`` split has no more folds than the dataset has rows (scikit-learn's KFold
    would refuse it in every cell)."""
    n_splits, n_rows = int(split.get("n_splits", 5)), len(ds.y)
    if split.get("kind", "kfold") == "kfold" and n_splits > n_rows:
        raise DataError(
            f"dataset `{name}` has {n_rows} rows, fewer than the {n_splits} folds of "
            f"`split.n_splits`; give at most {n_rows} folds (or another split kind)."
        )


def check_dataset_split(ds: Dataset, name: str, split: dict[str, Any]) -> list[str]:
    """Refuse what would give wrong numbers for ``ds`` under ``split`` (a `SplitSpec` dump);
    return the warnings to report (e.g. a split that is not stratified)."""
    notes = [f"dataset `{name}`: {n}." for n in ds.meta.get("parse_notes", []) or []]
    kind = split.get("kind", "kfold")
    if ds.meta.get("task") == "regression":
        check_target(ds, name)
        check_folds(ds, name, split)
        if kind == "predefined" and (ds.train_index is None or ds.test_index is None or len(ds.test_index) == 0):
            raise DataError(
                f"dataset `{name}` has no test file, so `split: {{kind: predefined}}` cannot apply; give it a "
                f"`test_path` or choose another split kind."
            )
        return notes
    check_labels(ds, name)
    if kind == "predefined":
        check_predefined(ds, name)
        return notes
    check_folds(ds, name, split)
    problem = stratification_problem(
        kind, np.asarray(ds.y), n_splits=int(split.get("n_splits", 5)),
        stratify=bool(split.get("stratify", True)),
        test_size=float(split.get("test_size", SplitOptions.test_size)),
    )
    if problem is None:
        return notes
    if split.get("unstratifiable", "warn") == "error":
        raise DataError(
            f"dataset `{name}`: the {kind} split would be {problem}; merge or drop the small classes, use "
            f"fewer folds, or set `split.unstratifiable: warn` to run it unstratified."
        )
    return [*notes, f"dataset `{name}`: {problem}."]


# ------------------------------------------------------------------ missing and infinite values


def _numeric_blocks(X: pd.DataFrame):
    """The numeric (not boolean) columns of ``X`` as float64 blocks of about 4 million values
    at most: (their positions, the 2-D block). A Python step per column took minutes on a
    table of a hundred thousand columns."""
    numeric = {t: pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
               for t in set(X.dtypes)}
    cols = [j for j, t in enumerate(X.dtypes) if numeric[t]]
    step = max(1, (1 << 22) // max(1, X.shape[0]))
    for start in range(0, len(cols), step):
        part = cols[start:start + step]
        yield part, X.iloc[:, part].to_numpy(dtype=np.float64, na_value=np.nan)


def infinite_per_column(X) -> dict[str, int]:
    """Infinite values (inf, -inf) per numeric column of ``X``, for the columns that have any."""
    out = {}
    for part, block in _numeric_blocks(X):
        for j, k in zip(part, np.isinf(block).sum(axis=0)):
            if k:
                out[str(X.columns[j])] = int(k)
    return out


#: the largest float32: scikit-learn's trees read features as float32, beyond it a value is inf
FLOAT32_MAX = float(np.finfo(np.float32).max)


def reads_float32(algorithm: str) -> bool:
    """Whether the learner reads numeric features as float32, so that a value beyond
    `FLOAT32_MAX` becomes infinite: it declares ``float32_input = "always"`` (treebench's CART),
    or it is one of scikit-learn's trees or tree ensembles (they validate ``X`` as float32)."""
    from sklearn.ensemble import (
        ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
        GradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor,
    )
    from sklearn.tree import BaseDecisionTree

    obj = ALGORITHMS.get(algorithm).obj
    if getattr(obj, "float32_input", "never") == "always":
        return True
    trees = (BaseDecisionTree, ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
             RandomForestRegressor, GradientBoostingClassifier, GradientBoostingRegressor)
    return isinstance(obj, type) and issubclass(obj, trees)


def check_float32_range(ds: Dataset, name: str,
                        uses: list[tuple[str, dict[str, Any], str]]) -> None:
    """Refuse a numeric feature value beyond the float32 range (about ±3.4e38) when a learner
    that reads its features as float32 (`reads_float32`) gets them as numbers (a ``numeric``
    binarization such as ``raw``): the value would become infinite inside the learner, which
    then fails every cell saying the data holds infinity, which it does not."""
    pair = next(((m, a) for m, _, a in uses
                 if binarizer_output(m) == "numeric" and reads_float32(a)), None)
    if pair is None:
        return
    method, learner = pair
    for part, block in _numeric_blocks(ds.X):
        with np.errstate(invalid="ignore"):
            big = np.abs(block) > FLOAT32_MAX
        cols = np.flatnonzero(big.any(axis=0))
        if cols.size:
            j = int(cols[0])
            value = block[np.flatnonzero(big[:, j])[0], j]
            raise DataError(
                f"dataset `{name}`: column `{ds.X.columns[part[j]]}` holds {value:.4g}, beyond "
                f"the float32 range (±{FLOAT32_MAX:.4g}) in which `{learner}` reads `{method}` "
                f"features, so it would become infinite there; rescale the column (e.g. take "
                f"its logarithm), or give `{learner}` a binarization such as `quantile`."
            )


@dataclass(frozen=True)
class MissingValues:
    """The missing feature values of a dataset as loaded: their number per column (the columns
    that have any) over its ``rows`` rows; ``dropped``: their rows were removed before the
    split (``missing: drop-rows``); ``categorical``: those columns that are categorical."""

    per_column: dict[str, int] = field(default_factory=dict)
    rows: int = 0
    dropped: bool = False
    categorical: tuple[str, ...] = ()


def missing_values(ds: Dataset) -> MissingValues:
    """The `MissingValues` of ``ds``; after ``missing: drop-rows``, those of the rows as loaded
    (which made the dropped rows go), as the loader recorded them."""
    categorical = set(map(str, ds.categorical))
    dropped = ds.meta.get("missing_dropped")
    if dropped:
        counts, rows = dict(dropped["per_column"]), int(dropped["rows"])
    else:
        counts, rows = missing_per_column(ds.X), ds.n_samples
    return MissingValues(counts, rows, bool(dropped), tuple(c for c in counts if c in categorical))


def missing_note(counts: dict[str, int], rows: int, ways: list[str]) -> str:
    """The note on missing values: their number per column over ``rows`` rows and how the
    cells treat them (``ways``), the run summary's words (without the dataset's name)."""
    shown = ", ".join(f"{c} {n}" for c, n in list(counts.items())[:10])
    more = f", ... ({len(counts) - 10} more columns)" if len(counts) > 10 else ""
    return f"missing values per column ({rows} rows): {shown}{more}; {'; '.join(ways)}"


def missing_handling(method: str, params: dict[str, Any], algorithm: str,
                     miss: MissingValues) -> tuple[str, str | None]:
    """How one cell (binarizer ``method`` with ``params``, learner ``algorithm``) treats the
    missing values ``miss`` of its dataset: a word for the row's ``missing_handling``
    (``none``: there are none; ``drop-rows``; ``impute``; ``indicator``: an ``is missing``
    column per feature; ``learner``: passed as NaN to a learner that routes them;
    ``learner+indicator``: both, e.g. numeric features routed and categorical ones with an
    ``is missing`` column) and its note for the row's ``data_warnings`` (None when the data
    notes already say it: dropped rows are a load note)."""
    if miss.dropped:
        return "drop-rows", None
    if not miss.per_column:
        return "none", None
    policy = params.get("missing")
    how = _how(method, policy, algorithm) or (
        f"an `is missing` column per categorical feature (`{method}`)")
    note = missing_note(miss.per_column, miss.rows, [how])
    if policy == "impute":
        return "impute", note
    if binarizer_output(method) != "numeric":
        return "indicator", note
    numeric = [c for c in miss.per_column if c not in miss.categorical]
    if not numeric:
        return "indicator", note
    both = policy == "indicator" or len(numeric) < len(miss.per_column)
    return ("learner+indicator" if both else "learner"), note


def _how(method: str, policy: str | None, algorithm: str) -> str | None:
    """How a cell treats missing values, or None when it would fail on them."""
    if policy == "impute":
        return f"imputed from the training rows (`{method}`)"
    raw = binarizer_output(method) == "numeric"
    if not raw:
        return f"an `is missing` column per feature (`{method}`)"
    if "missing" in ALGORITHMS.get(algorithm).inputs:
        return f"routed by `{algorithm}` itself on `{method}` features"
    return None


def check_missing(ds: Dataset, name: str, uses: list[tuple[str, dict[str, Any], str]]) -> list[str]:
    """Refuse, before anything runs, what missing or infinite feature values would break for
    the cells of ``ds``; ``uses`` holds each cell's (binarizer method, binarizer params,
    algorithm). Infinite values are refused (no learner or binarizer reads them as a value);
    ``missing: error`` refuses missing values; a learner that does not declare the input kind
    ``missing`` is refused on ``raw`` features with missing values (it would fail in every
    cell); so are values beyond the float32 range for learners that read float32
    (`check_float32_range`). Returns the note for the run summary: the missing values per
    column and how the cells treat them."""
    inf = infinite_per_column(ds.X)
    if inf:
        col, k = next(iter(inf.items()))
        raise DataError(
            f"dataset `{name}`: column `{col}` has {k} infinite value(s) (inf or -inf), which treebench does not "
            f"read as a feature value; fix the data, or read them as missing by listing their spelling as a "
            f"missing-value token (e.g. `missing_tokens: [inf, -inf]` for a file)."
        )
    check_float32_range(ds, name, uses)
    counts = missing_per_column(ds.X)
    if not counts:
        return []
    col, k = next(iter(counts.items()))
    others = f" (and {len(counts) - 1} more column(s) have some)" if len(counts) > 1 else ""
    numeric = {c: n for c, n in counts.items() if c not in set(map(str, ds.categorical))}
    ways: list[str] = []
    for method, params, algorithm in uses:
        policy = params.get("missing")
        if policy == "error":
            raise DataError(
                f"dataset `{name}`: column `{col}` has {k} missing value(s){others}, and `missing: error` refuses "
                f"them; set `missing:` to indicator, impute or drop-rows on the dataset entry, or fix the data."
            )
        how = _how(method, policy, algorithm)
        if how is None and numeric:  # (categorical features get `is missing` columns even with raw)
            col, k = next(iter(numeric.items()))
            others = f" (and {len(numeric) - 1} more numeric column(s) have some)" if len(numeric) > 1 else ""
            raise DataError(
                f"dataset `{name}`: numeric column `{col}` has {k} missing value(s){others}, which `{algorithm}` cannot "
                f"take on `{method}` features (it does not route missing values); set `missing: impute` or "
                f"`missing: drop-rows` on the dataset entry, or give `{algorithm}` a binarization such as "
                f"`quantile`."
            )
        how = how or f"an `is missing` column per categorical feature (`{method}`)"
        if how not in ways:
            ways.append(how)
    return [f"dataset `{name}`: {missing_note(counts, ds.n_samples, ways)}."]
