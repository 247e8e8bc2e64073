"""`none` (features already 0/1, validated) and `raw` (numeric features passed through)."""

from __future__ import annotations

import numpy as np

from treebench.binarize._common import TableBinarizer, check_binary_values, numeric_values
from treebench.binarize.base import BinaryColumn
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
        for f in X.columns:
            numeric_values(X[f], str(f))  # a clear error for text in a numeric column
        return [[BinaryColumn(str(f), "raw")] for f in X.columns]
