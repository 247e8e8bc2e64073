"""Binarizer interface.

A binarizer is a scikit-learn transformer fitted on the training fold only:
``fit(X: DataFrame, y, sample_weight=None)`` then ``transform(X) -> np.ndarray`` of 0/1
(``uint8``). After ``fit`` it exposes ``columns_``: one `BinaryColumn` per output column that says
which original feature it tests and how, so trees print as readable rules and per-feature costs
can be charged.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from treebench.tree.columns import BinaryColumn  # noqa: F401 (re-exported: plug-in binarizers import it here)


class Binarizer(TransformerMixin, BaseEstimator):
    """Base class; subclasses implement ``fit`` (setting ``columns_``) and ``transform``."""

    def get_feature_names_out(self, input_features=None):
        return np.asarray([c.true_text() for c in self.columns_], dtype=object)

    def fit_transform(self, X, y=None, sample_weight=None, **_):
        return self.fit(X, y, sample_weight=sample_weight).transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are a category / fall in no bucket
        tags.transformer_tags.preserves_dtype = []  # output is uint8 0/1 (float64 for `raw`)
        return tags
