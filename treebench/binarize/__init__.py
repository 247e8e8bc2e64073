"""Binarizers: fitted transformers from raw features to 0/1 columns with a column table.

Registered names (``treebench.registry.BINARIZERS``): ``none``, ``raw``, ``onehot``, ``quantile``,
``midpoints``, ``bucketize``, ``kmeans``, ``threshold-guess``. Use `make_binarizer` to get one
transformer for a whole table (numeric method + categorical method).
"""

from treebench.binarize import kmeans, onehot, passthrough, threshold_guess, thresholds  # noqa: F401 (registers)
from treebench.binarize.base import Binarizer
from treebench.tree.columns import BinaryColumn
from treebench.binarize.compose import ColumnBinarizer, make_binarizer

__all__ = ["BinaryColumn", "Binarizer", "ColumnBinarizer", "make_binarizer"]
