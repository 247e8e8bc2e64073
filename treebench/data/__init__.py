"""Datasets: catalog, parsers, embedded data and generators, splits.

Library functions for the CLI: `list_datasets`, `dataset_info`, `fetch` (``treebench.data.manage``);
`load_dataset` loads any registered dataset; `coalesce` merges identical binarized rows.
"""

from treebench.data.base import Dataset, load_dataset


def __getattr__(name):  # lazy: keep `import treebench.data` light
    if name in ("list_datasets", "dataset_info", "fetch", "describe"):
        from treebench.data import manage

        return getattr(manage, name)
    if name == "coalesce":
        from treebench.data.preprocess import coalesce

        return coalesce
    raise AttributeError(name)


__all__ = ["Dataset", "coalesce", "dataset_info", "describe", "fetch", "list_datasets", "load_dataset"]
