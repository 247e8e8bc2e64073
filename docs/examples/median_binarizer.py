"""A new binarizer: one column per numeric feature, ``x >= median`` of the training rows.

The binarizer recipe of docs/extending.md. A plug-in package names this module in its
``treebench.binarizers`` entry point; tests/docs/test_extending.py installs it that way and runs
an experiment with it (and uses it through `make_binarizer`).
"""

from __future__ import annotations

import numpy as np

from treebench.binarize._common import TableBinarizer, numeric_values
from treebench.binarize import BinaryColumn
from treebench.registry import BINARIZERS


@BINARIZERS.register("median", tags=("numeric",))
class MedianBinarizer(TableBinarizer):
    """One column per numeric feature: ``feature >= m``, m the weighted median of the fit rows."""

    name = "median"

    def __init__(self):
        pass  # no parameters; a binarizer with some stores them here and checks `_check_params`

    def _fit_columns(self, X, y, w):
        out = []
        for f in X.columns:
            x = numeric_values(X[f], str(f))
            keep = ~np.isnan(x)
            if not keep.any():
                out.append([])                            # an all-missing feature: no column
                continue
            order = np.argsort(x[keep])
            cum = np.cumsum(w[keep][order])
            median = float(x[keep][order][np.searchsorted(cum, cum[-1] / 2)])
            out.append([BinaryColumn(str(f), ">=", median)])
        return out
