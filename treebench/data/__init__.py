"""Datasets: catalog, parsers, embedded data and generators, splits."""

from treebench.data.base import Dataset, load_dataset

__all__ = ["Dataset", "load_dataset"]
