"""One transformer for a whole table: numeric features with one method, categorical with another.

`make_binarizer` is what the runner calls: ``make_binarizer("quantile", {"max_splits": 100},
categorical=["color"])`` returns a `ColumnBinarizer` that binarizes numeric columns with
``quantile`` and categorical columns with ``params.get("categorical", "onehot")``. Output columns
keep the input feature order (each feature's columns together), so an all-categorical table
one-hot encodes as "raw feature order, then sorted category value".
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from sklearn.utils.validation import check_is_fitted

from treebench.binarize._common import (
    as_frame,
    check_choice,
    check_nonempty,
    check_out,
    check_width,
    is_numeric_column,
    is_numeric_dtype,
    weights,
    zeroed,
)
from treebench.binarize.base import Binarizer
from treebench.tree.columns import BinaryColumn
from treebench.errors import ConfigError, DataError, ParameterError, did_you_mean
from treebench import envvars
from treebench.registry import BINARIZERS

FIT_ON = ("train", "all")
#: what a binarizer does with missing values (docs/missing-values.md): ``indicator`` (the
#: default for 0/1 output) adds a ``<feature> is missing`` column, ``impute`` fills them with
#: the fit rows' median (numeric) or most frequent value (categorical), ``error`` refuses them;
#: None (the default) is ``indicator`` for 0/1 output and NaN passed on for ``raw``
MISSING = ("error", "indicator", "impute")


def max_output_bytes() -> float:
    """Cap on the size of one binarized matrix: ``TREEBENCH_MAX_MATRIX_GB`` (default 4)."""
    return envvars.number("TREEBENCH_MAX_MATRIX_GB") * 2**30


_UNITS = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "bytes"))


def sizes_apart(larger: float, smaller: float) -> tuple[str, str]:
    """Two sizes in bytes as text, each in its unit (bytes, KiB, MiB, GiB or TiB) with 3
    significant digits, or more where fewer would make the larger read as no larger than the
    smaller (4.0001 GiB and 4 GiB, or 1 GiB and 1024 MiB)."""
    def text(n: float, digits: int) -> tuple[str, float]:
        scale, name = next((u for u in _UNITS if n >= u[0]), _UNITS[-1])
        x = n / scale
        if x < 1:  # a cap below one byte
            shown = f"{x:.{digits}g}"
        else:
            shown = f"{x:.{max(digits - len(str(int(x))), 0)}f}"
            shown = shown.rstrip("0").rstrip(".") if "." in shown else shown
        return f"{shown} {name}", float(shown) * scale

    for digits in range(3, 18):
        (a, va), (b, vb) = text(larger, digits), text(smaller, digits)
        if va > vb:
            break
    return a, b


class ColumnBinarizer(Binarizer):
    """Numeric columns through ``numeric``, categorical ones through ``categorical_binarizer``.

    A column is categorical when it is named in ``categorical`` or its dtype is not numeric
    (text, object, category). ``fit_on`` is read by the runner: ``"train"`` (default) fits on the
    training fold only, ``"all"`` on every row (faithful to the Top-k paper's encoders); the
    binarizer itself only ever sees the rows it is given.

    ``missing`` (`MISSING`; docs/missing-values.md): a feature with missing values in the fit
    rows gets, with ``indicator`` (the default for 0/1 output), one more column ``<feature> is
    missing`` after its own, and its other columns say "or missing" on their 0 side; ``impute``
    fills missing values with the fit rows' median or most frequent value (`fit_imputer`),
    for the fit rows and every row transformed later; ``error`` refuses them. By default ``raw``
    output keeps NaN for learners that route missing values themselves.

    After ``fit``: ``columns_``, ``n_columns_`` (number of binary features),
    ``columns_per_feature_`` (original feature → number of its binary columns, in input order),
    ``missing_counts_`` (feature → missing values in the fit rows), ``fill_values_`` (feature →
    imputed value) and ``fit_time_`` (binarization seconds).
    """

    def __init__(self, numeric=None, categorical_binarizer=None, categorical=(), fit_on: str = "train",
                 missing: str | None = None):
        self.numeric = numeric
        self.categorical_binarizer = categorical_binarizer
        self.categorical = categorical
        self.fit_on = fit_on
        self.missing = missing

    def _missing_policy(self) -> str:
        """``missing`` resolved: None is ``indicator`` for 0/1 output and ``pass`` (NaN kept
        for the learner) when numeric columns are passed through (``raw``)."""
        if self.missing is not None:
            check_choice("composite", "missing", self.missing, MISSING)
            return self.missing
        raw = getattr(self.numeric, "output_dtype", np.uint8) == np.float64
        return "pass" if raw else "indicator"

    def fit(self, X, y=None, sample_weight=None):
        t0 = time.perf_counter()
        check_choice("composite", "fit_on", self.fit_on, FIT_ON)
        policy = self._missing_policy()
        X = as_frame(X)
        check_nonempty(X)
        w = weights(sample_weight, X.shape[0])
        counts = missing_counts(X)
        self.missing_counts_ = counts
        if policy == "error":
            refuse_missing(counts, "fitted on")
        self.fill_values_ = fit_imputer(X, w, counts) if policy == "impute" else {}
        X = impute(X, self.fill_values_)
        declared = {str(c) for c in (self.categorical or ())}
        unknown = sorted(declared - set(map(str, X.columns)))
        if unknown:
            raise ParameterError(
                f"categorical feature `{unknown[0]}` is not a column of the data"
                f"{did_you_mean(unknown[0], map(str, X.columns))}."
            )
        numeric = [is_numeric_dtype(t) for t in X.dtypes]  # by dtype: a column lookup each
        cats = [c for c, num in zip(X.columns, numeric) if str(c) in declared or not num]
        in_cats = set(cats)
        nums = [c for c in X.columns if c not in in_cats]
        self.categorical_features_ = [str(c) for c in cats]
        self.numeric_features_ = [str(c) for c in nums]
        from sklearn.base import clone

        self.parts_ = []
        for cols, proto in ((nums, self.numeric), (cats, self.categorical_binarizer)):
            if not cols:
                continue
            if proto is None:
                raise ParameterError("ColumnBinarizer needs a binarizer for both numeric and categorical columns.")
            self.parts_.append((clone(proto).fit(X[cols], y, sample_weight=w), [str(c) for c in cols]))
        self._lay_out([str(c) for c in X.columns], policy, counts)
        self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self.n_features_in_ = int(X.shape[1])
        self.output_dtype_ = (
            np.float64 if any(getattr(p, "output_dtype", np.uint8) == np.float64 for p, _ in self.parts_) else np.uint8
        )
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _lay_out(self, features: list[str], policy: str, counts: dict[str, int]) -> None:
        """The output columns, ordered by input feature (each feature's columns come from one
        part, then its ``is missing`` column when it has one): ``columns_``, ``feature_start_``,
        ``columns_per_feature_``, ``indicators_`` (feature -> position of that column)."""
        by_feature: dict[str, list[BinaryColumn]] = {f: [] for f in features}
        for part, _ in self.parts_:
            for col in part.columns_:
                by_feature[col.feature].append(col)
        starts, j = {}, 0
        self.indicators_ = {}
        for f in features:
            starts[f] = j
            # `raw` keeps NaN in numeric features for the learner; categorical ones are 0/1 columns
            wants = policy == "indicator" or (policy == "pass" and f in self.categorical_features_)
            if wants and counts.get(f):
                # the 0 side of the feature's tests includes its missing values: say so
                by_feature[f] = [replace(c, missing=True) for c in by_feature[f]]
                by_feature[f].append(BinaryColumn(f, "missing"))
                self.indicators_[f] = j + len(by_feature[f]) - 1
            j += len(by_feature[f])
        self.feature_start_ = starts
        self.columns_per_feature_ = {f: len(by_feature[f]) for f in features}
        self.columns_ = [c for f in features for c in by_feature[f]]
        self.n_columns_ = len(self.columns_)

    def transform(self, X):
        """0/1 ``uint8`` matrix (``float64`` when numeric columns are ``raw``), C-contiguous."""
        check_is_fitted(self, "columns_")
        X = check_width(self, X)
        need = X.shape[0] * self.n_columns_ * np.dtype(self.output_dtype_).itemsize
        if need > max_output_bytes():
            need_text, cap_text = sizes_apart(need, max_output_bytes())
            raise ParameterError(
                f"binarizing {X.shape[0]} rows into {self.n_columns_} columns needs "
                f"{need_text}, more than the {cap_text} cap (TREEBENCH_MAX_MATRIX_GB); use fewer "
                f"thresholds (e.g. `quantile` with a smaller max_splits) or raise the cap."
            )
        out = zeroed((X.shape[0], self.n_columns_), self.output_dtype_)
        return self.fill(X, out)

    def fill(self, X, out: np.ndarray) -> np.ndarray:
        """Write the binarized rows of ``X`` into ``out``, a zeroed C-ordered matrix of
        ``len(X)`` x ``n_columns_`` (e.g. a block of rows of a larger matrix), and return it.
        ``out`` may be ``float32`` when the output is numeric (``raw``): each value is then
        rounded to the nearest float32, exactly as ``astype(np.float32)`` rounds it."""
        check_is_fitted(self, "columns_")
        X = check_width(self, X)
        check_out(out, X.shape[0], self.n_columns_)
        if self.missing == "error":
            refuse_missing(missing_counts(X), "asked to transform")
        X = impute(X, getattr(self, "fill_values_", {}))
        for part, _cols in self.parts_:  # each part reads only its own features: no X[cols] copy
            part._fill(X, out, self.feature_start_)
        for f, j in getattr(self, "indicators_", {}).items():
            out[:, j] = X[f].isna().to_numpy()
        return out


def missing_counts(X) -> dict[str, int]:
    """Missing values per feature of ``X``, for the features that have any."""
    n = X.isna().sum()
    return {str(f): int(k) for f, k in n.items() if k}


def refuse_missing(counts: dict[str, int], what: str) -> None:
    """`DataError` naming the first feature with missing values (``missing: error``)."""
    if counts:
        f, k = next(iter(counts.items()))
        more = f" (and {len(counts) - 1} other feature(s))" if len(counts) > 1 else ""
        raise DataError(
            f"feature `{f}` has {k} missing value(s) in the rows the binarizer is {what}{more}, and "
            f"`missing: error` refuses them; set `missing:` to indicator, impute or drop-rows."
        )


def fit_imputer(X, w: np.ndarray, counts: dict[str, int]) -> dict[str, Any]:
    """Fill value of every feature with missing values in ``X`` (the fit rows: the training
    fold, never the test rows), from scikit-learn's `SimpleImputer`: the median of a numeric
    feature, the most frequent value of a categorical one. Rows of zero weight do not count."""
    from sklearn.impute import SimpleImputer

    keep = w > 0
    fills: dict[str, Any] = {}
    for f in counts:
        col = X[f][keep]
        numeric = is_numeric_column(col)
        vals = col.to_numpy(dtype=np.float64, na_value=np.nan) if numeric else col.astype(object).to_numpy()
        if numeric and np.isnan(vals).all() or not numeric and col.isna().all():
            raise DataError(
                f"feature `{f}` is missing in every row the binarizer is fitted on, so `missing: impute` has "
                f"no value to fill it with; drop the column (`drop_columns:`) or choose `missing: indicator`."
            )
        imp = SimpleImputer(strategy="median" if numeric else "most_frequent",
                            missing_values=np.nan if numeric else None)
        if not numeric:
            vals = np.where(col.isna().to_numpy(), None, vals)
        imp.fit(vals.reshape(-1, 1))
        v = imp.statistics_[0]
        fills[f] = v.item() if isinstance(v, np.generic) else v
    return fills


def impute(X, fills: dict[str, Any]):
    """``X`` with the missing values of the features in ``fills`` filled (a new frame; ``X``
    itself when there is nothing to fill)."""
    todo = {f: v for f, v in fills.items() if f in X.columns and X[f].isna().any()}
    if not todo:
        return X
    return X.assign(**{f: X[f].fillna(v) for f, v in todo.items()})


def _create(method: str, params: dict[str, Any]) -> Binarizer:
    try:
        entry = BINARIZERS.get(method)
    except ConfigError as exc:
        raise ParameterError(str(exc)) from None
    known = entry.parameters()
    for key in params:
        if key not in known:
            raise ParameterError(
                f"binarizer `{method}` has no parameter `{key}`{did_you_mean(key, known)}; its parameters are: "
                f"{', '.join(sorted(known)) or 'none'} (plus `categorical`, `categorical_params`, `fit_on` and `missing`)."
            )
    est = entry.obj(**params)
    check = getattr(est, "_check_params", None)
    if check is not None:
        check()
    return est


def make_binarizer(method: str, params: dict[str, Any] | None = None, categorical=()) -> ColumnBinarizer:
    """One transformer for the whole DataFrame.

    Numeric columns use ``method`` with ``params``; categorical columns (``categorical`` plus any
    non-numeric column) use ``params["categorical"]`` (default ``"onehot"``) with
    ``params["categorical_params"]``. ``params["missing"]`` is the missing-value policy (`MISSING`;
    ``drop-rows`` belongs to the dataset). ``params["fit_on"]`` ("train" or "all") is stored on the
    result for the runner. Unknown methods or parameters raise `ParameterError`.
    """
    params = dict(params or {})
    cat_method = params.pop("categorical", "onehot")
    cat_params = dict(params.pop("categorical_params", None) or {})
    fit_on = params.pop("fit_on", "train")
    check_choice(method, "fit_on", fit_on, FIT_ON)
    missing = params.pop("missing", None)
    if missing == "drop-rows":
        raise ParameterError(
            "binarizer `missing: drop-rows` cannot drop rows after the split; set `missing: drop-rows` on the "
            "dataset entry instead, or use indicator, impute or error here."
        )
    if missing is not None:
        check_choice(method, "missing", missing, MISSING)
    numeric = _create(method, params)
    cat = _create(cat_method, cat_params)
    return ColumnBinarizer(numeric=numeric, categorical_binarizer=cat, categorical=list(categorical or ()),
                           fit_on=fit_on, missing=missing)
