"""Binarizers: fitted transformers from raw features to 0/1 columns with a column table."""

from treebench.binarize.base import BinaryColumn, Binarizer

__all__ = ["BinaryColumn", "Binarizer"]
