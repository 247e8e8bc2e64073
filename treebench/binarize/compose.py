"""One transformer for a whole table: numeric features with one method, categorical with another.

`make_binarizer` is what the runner calls: ``make_binarizer("quantile", {"max_splits": 100},
categorical=["color"])`` returns a `ColumnBinarizer` that binarizes numeric columns with
``quantile`` and categorical columns with ``params.get("categorical", "onehot")``. Output columns
keep the input feature order (each feature's columns together), so an all-categorical table
one-hot encodes as "raw feature order, then sorted category value".
"""

from __future__ import annotations

import time
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
    weights,
    zeroed,
)
from treebench.binarize.base import Binarizer
from treebench.errors import ConfigError, ParameterError, did_you_mean

FIT_ON = ("train", "all")


def max_output_bytes() -> float:
    """Cap on the size of one binarized matrix: ``TREEBENCH_MAX_MATRIX_GB`` (default 4)."""
    import os

    return float(os.environ.get("TREEBENCH_MAX_MATRIX_GB", "4")) * 2**30


class ColumnBinarizer(Binarizer):
    """Numeric columns through ``numeric``, categorical ones through ``categorical_binarizer``.

    A column is categorical when it is named in ``categorical`` or its dtype is not numeric
    (text, object, category). ``fit_on`` is read by the runner: ``"train"`` (default) fits on the
    training fold only, ``"all"`` on every row (faithful to the Top-k paper's encoders); the
    binarizer itself only ever sees the rows it is given. After ``fit``: ``columns_``,
    ``n_columns_`` (number of binary features), ``columns_per_feature_`` (original feature →
    number of its binary columns, in input order) and ``fit_time_`` (binarization seconds).
    """

    def __init__(self, numeric=None, categorical_binarizer=None, categorical=(), fit_on: str = "train"):
        self.numeric = numeric
        self.categorical_binarizer = categorical_binarizer
        self.categorical = categorical
        self.fit_on = fit_on

    def fit(self, X, y=None, sample_weight=None):
        t0 = time.perf_counter()
        check_choice("composite", "fit_on", self.fit_on, FIT_ON)
        X = as_frame(X)
        check_nonempty(X)
        w = weights(sample_weight, X.shape[0])
        declared = {str(c) for c in (self.categorical or ())}
        unknown = sorted(declared - set(map(str, X.columns)))
        if unknown:
            raise ParameterError(
                f"categorical feature `{unknown[0]}` is not a column of the data"
                f"{did_you_mean(unknown[0], map(str, X.columns))}."
            )
        cats = [c for c in X.columns if str(c) in declared or not is_numeric_column(X[c])]
        nums = [c for c in X.columns if c not in set(cats)]
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
        # output columns ordered by input feature; each feature's columns come from one part
        starts, j = {}, 0
        by_feature = {str(c): [] for c in X.columns}
        for part, _ in self.parts_:
            for col in part.columns_:
                by_feature[col.feature].append(col)
        for f in map(str, X.columns):
            starts[f] = j
            j += len(by_feature[f])
        self.feature_start_ = starts
        self.columns_per_feature_ = {f: len(by_feature[f]) for f in map(str, X.columns)}
        self.columns_ = [c for f in map(str, X.columns) for c in by_feature[f]]
        self.n_columns_ = len(self.columns_)
        self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self.n_features_in_ = int(X.shape[1])
        self.output_dtype_ = (
            np.float64 if any(getattr(p, "output_dtype", np.uint8) == np.float64 for p, _ in self.parts_) else np.uint8
        )
        self.fit_time_ = time.perf_counter() - t0
        return self

    def transform(self, X):
        """0/1 ``uint8`` matrix (``float64`` when numeric columns are ``raw``), C-contiguous."""
        check_is_fitted(self, "columns_")
        X = check_width(self, X)
        need = X.shape[0] * self.n_columns_ * np.dtype(self.output_dtype_).itemsize
        if need > max_output_bytes():
            raise ParameterError(
                f"binarizing {X.shape[0]} rows into {self.n_columns_} columns needs {need / 2**30:.1f} GiB, more than "
                f"the {max_output_bytes() / 2**30:.1f} GiB cap (TREEBENCH_MAX_MATRIX_GB); use fewer thresholds "
                f"(e.g. `quantile` with a smaller max_splits) or raise the cap."
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
        for part, _cols in self.parts_:  # each part reads only its own features: no X[cols] copy
            part._fill(X, out, self.feature_start_)
        return out



def _create(method: str, params: dict[str, Any]) -> Binarizer:
    from treebench.registry import BINARIZERS

    try:
        entry = BINARIZERS.get(method)
    except ConfigError as exc:
        raise ParameterError(str(exc)) from None
    known = entry.parameters()
    for key in params:
        if key not in known:
            raise ParameterError(
                f"binarizer `{method}` has no parameter `{key}`{did_you_mean(key, known)}; its parameters are: "
                f"{', '.join(sorted(known)) or 'none'} (plus `categorical`, `categorical_params` and `fit_on`)."
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
    ``params["categorical_params"]``. ``params["fit_on"]`` ("train" or "all") is stored on the
    result for the runner. Unknown methods or parameters raise `ParameterError`.
    """
    params = dict(params or {})
    cat_method = params.pop("categorical", "onehot")
    cat_params = dict(params.pop("categorical_params", None) or {})
    fit_on = params.pop("fit_on", "train")
    check_choice(method, "fit_on", fit_on, FIT_ON)
    numeric = _create(method, params)
    cat = _create(cat_method, cat_params)
    return ColumnBinarizer(numeric=numeric, categorical_binarizer=cat, categorical=list(categorical or ()), fit_on=fit_on)
