"""Threshold binarizers on numeric features: `quantile`, `midpoints`, `bucketize`.

Each output column is ``x >= t`` for a threshold ``t`` chosen on the training rows; missing
values (NaN) give 0 in every column.
"""

from __future__ import annotations

import numpy as np

from treebench.binarize._common import TableBinarizer, check_int, numeric_values
from treebench.tree.columns import BinaryColumn
from treebench.errors import ParameterError
from treebench.registry import BINARIZERS


def distinct_values(x: np.ndarray) -> np.ndarray:
    """Sorted distinct non-missing values."""
    return np.unique(x[~np.isnan(x)])


def quantile_thresholds(distinct: np.ndarray, n_buckets: int) -> np.ndarray:
    """Top-k scheme: ``np.quantile(distinct, j / B)`` for j = 1 … B − 1 (linear interpolation)."""
    if n_buckets <= 1:
        return np.empty(0)
    q = np.arange(1, n_buckets) / n_buckets
    return np.unique(np.quantile(distinct, q, method="linear"))


def midpoints(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(a + b) / 2`` elementwise, also where ``a + b`` overflows (two values near the
    largest float, 1.6e308 and 1.7e308, summed to infinity, a threshold no value reaches):
    there ``a / 2 + b / 2``, which lies between them. Elsewhere the same floats as before."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(over="ignore"):
        s = a + b
    return np.where(np.isfinite(s), s / 2.0, a / 2.0 + b / 2.0)


def midpoint_thresholds(distinct: np.ndarray) -> np.ndarray:
    """Every midpoint between consecutive distinct values (textbook §18.2.3)."""
    return midpoints(distinct[:-1], distinct[1:])


def label_change_thresholds(x: np.ndarray, y_codes: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Midpoints between consecutive distinct values unless both carry one and the same label.

    This is the bucketization of Verwer & Zhang (2019) cited in GOSDT-guesses §4.1: a split point
    between two values whose rows all share one label can never improve a split. Rows with zero
    weight are ignored.
    """
    keep = (~np.isnan(x)) & (w > 0)
    x, yc = x[keep], y_codes[keep]
    if x.size == 0:
        return np.empty(0)
    order = np.lexsort((yc, x))
    xs, ys = x[order], yc[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    distinct = xs[starts]
    lo = np.minimum.reduceat(ys, starts)
    hi = np.maximum.reduceat(ys, starts)
    pure = lo == hi
    same = pure[:-1] & pure[1:] & (lo[:-1] == lo[1:])
    mids = midpoint_thresholds(distinct)
    return mids[~same]


class _ThresholdBinarizer(TableBinarizer):
    def _thresholds(self, X, y, w) -> list[np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def _fit_columns(self, X, y, w):
        ths = self._thresholds(X, y, w)
        return [[BinaryColumn(str(f), ">=", float(t)) for t in th] for f, th in zip(X.columns, ths, strict=True)]


DEFAULT_SPLITS_PER_FEATURE = 16


@BINARIZERS.register("quantile", tags=("numeric",))
class Quantile(_ThresholdBinarizer):
    """Quantile thresholds of each feature's distinct values: per feature, or under a total budget.

    ``max_splits`` is the number of thresholds **per feature** (as ``n_bins - 1`` of
    scikit-learn's ``KBinsDiscretizer``); ``max_columns`` is a **total** budget shared by the
    m numeric features, the Top-k paper's protocol (Blanc et al. 2023, §5: thresholds "so that
    the total number of binary features is ≈ 100"; its code used a budget of 200, 100 for avila
    and ml-prove). Feature j with k_j distinct training values gets
    B_j = min(max_splits + 1, max_columns // m + 1, k_j) buckets (a bound that is not set does
    not apply) and the thresholds ``np.quantile(distinct values, i / B_j)``, i = 1 … B_j − 1;
    each gives a column ``x >= t``. A feature with at most 2 distinct values gives a single
    indicator ``x >= max value``. ``max_splits: auto`` (the default) is
    16 per feature without ``max_columns`` and no per-feature cap with it. A total budget
    smaller than m is refused: some features would get no column at all. Fitted on the training
    rows only by default; the paper fitted on all rows (``fit_on: all`` in `make_binarizer`).
    """

    name = "quantile"

    def __init__(self, max_splits: int | str = "auto", max_columns: int | None = None):
        self.max_splits = max_splits
        self.max_columns = max_columns

    def _check_params(self):
        if self.max_splits != "auto":
            check_int(self.name, "max_splits", self.max_splits, 1)
        check_int(self.name, "max_columns", self.max_columns, 1, allow_none=True)

    def splits_per_feature(self, m: int) -> int | None:
        """Most thresholds one of ``m`` features may get (None: no cap but its distinct values)."""
        caps = []
        if self.max_splits == "auto":
            if self.max_columns is None:
                caps.append(DEFAULT_SPLITS_PER_FEATURE)
        else:
            caps.append(int(self.max_splits))
        if self.max_columns is not None:
            if self.max_columns < m:
                raise ParameterError(
                    f"binarizer `quantile`: max_columns={self.max_columns} is a total budget smaller than the "
                    f"{m} numeric features, so some features would get no column; raise max_columns to at "
                    f"least {m}, or use max_splits for a number of thresholds per feature."
                )
            caps.append(int(self.max_columns) // m)
        return min(caps) if caps else None

    def _thresholds(self, X, y, w):
        cap = self.splits_per_feature(X.shape[1])
        out = []
        for f in X.columns:
            d = distinct_values(numeric_values(X[f], str(f)))
            if d.size == 0:
                out.append(np.empty(0))
            elif d.size <= 2:
                out.append(d[-1:])
            else:
                b = d.size if cap is None else min(cap + 1, d.size)
                out.append(quantile_thresholds(d, b))
        return out


def _check_cap(name: str, counts: list[int], cap: int | None, features) -> None:
    total = int(sum(counts))
    if cap is not None and total > cap:
        worst = int(np.argmax(counts))
        raise ParameterError(
            f"binarizer `{name}` would create {total} binary columns (feature `{features[worst]}` alone "
            f"gives {counts[worst]}), more than max_columns={cap}; raise max_columns or use "
            f"`quantile` or `threshold-guess`."
        )


@BINARIZERS.register("midpoints", tags=("numeric",))
class Midpoints(_ThresholdBinarizer):
    """Every midpoint between consecutive distinct training values (textbook §18.2.3).

    GOSDT-guesses' no-guess baseline. Feature j with k_j distinct values gives k_j − 1 columns, so
    the total is Σ(k_j − 1); more than ``max_columns`` is a clear error naming the count.
    """

    name = "midpoints"

    def __init__(self, max_columns: int | None = 100_000):
        self.max_columns = max_columns

    def _check_params(self):
        check_int(self.name, "max_columns", self.max_columns, 1, allow_none=True)

    def _thresholds(self, X, y, w):
        out = [midpoint_thresholds(distinct_values(numeric_values(X[f], str(f)))) for f in X.columns]
        _check_cap(self.name, [t.size for t in out], self.max_columns, list(X.columns))
        return out


@BINARIZERS.register("bucketize", tags=("numeric",))
class Bucketize(_ThresholdBinarizer):
    """Midpoints only where the label changes between consecutive values (GOSDT-guesses §4.1)."""

    name = "bucketize"

    def __init__(self, max_columns: int | None = 100_000):
        self.max_columns = max_columns

    def _check_params(self):
        check_int(self.name, "max_columns", self.max_columns, 1, allow_none=True)

    def _thresholds(self, X, y, w):
        if y is None:
            raise ParameterError("binarizer `bucketize` needs the labels y in fit.")
        _, codes = np.unique(y, return_inverse=True)
        codes = codes.astype(np.int64)
        out = [label_change_thresholds(numeric_values(X[f], str(f)), codes, w) for f in X.columns]
        _check_cap(self.name, [t.size for t in out], self.max_columns, list(X.columns))
        return out
