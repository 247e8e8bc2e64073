"""`none` (features already 0/1, validated) and `raw` (numeric features passed through)."""

from __future__ import annotations

import numpy as np

from treebench.binarize._common import (
    TableBinarizer, check_binary_values, is_numeric_dtype, numeric_values,
)
from treebench.tree.columns import BinaryColumn
from treebench.registry import BINARIZERS


@BINARIZERS.register("none", tags=("numeric",))
class NoBinarizer(TableBinarizer):
    """Input already 0/1: each feature becomes one column; any other value is a clear error."""

    name = "none"

    def _fit_columns(self, X, y, w):
        out = []
        for f in X.columns:
            check_binary_values(numeric_values(X[f], str(f)), str(f))
            out.append([BinaryColumn(str(f), "is")])
        return out


@BINARIZERS.register("raw", tags=("numeric",), outputs="numeric")
class RawPassthrough(TableBinarizer):
    """Numeric features unchanged, as float64 (for learners on raw features such as CART).

    Columns are ``BinaryColumn(feature, "raw")``; a tree prints them as ``feature <= threshold``.
    """

    name = "raw"
    output_dtype = np.float64

    def _fit_columns(self, X, y, w):
        numeric = {t: is_numeric_dtype(t) for t in set(X.dtypes)}  # by dtype: not per column
        for f, t in zip(X.columns, X.dtypes):
            if not numeric[t]:
                numeric_values(X[f], str(f))  # a clear error for text in a numeric column
        return [[BinaryColumn(str(f), "raw")] for f in X.columns]

    def _fill(self, X, out, starts):
        """Every feature's values at once when all are numeric dtypes (one 2-D conversion and
        one scatter into ``out`` instead of a strided column write per feature); the same
        float64 values (NaN for missing) as `numeric_values` gives column by column."""
        feats = [f for f, cols in self._blocks if cols]
        dtypes = dict(zip(X.columns, X.dtypes))  # a column lookup each took seconds on 100,000
        if not feats or any(f not in dtypes for f in feats) or not all(
            is_numeric_dtype(dtypes[f]) for f in feats
        ):
            return super()._fill(X, out, starts)
        values = X[feats].to_numpy(dtype=np.float64, na_value=np.nan)
        pos = np.asarray([starts[f] for f in feats])
        if pos.size and np.array_equal(pos, np.arange(pos[0], pos[0] + pos.size)):
            out[:, pos[0] : pos[0] + pos.size] = values
        else:
            out[:, pos] = values
