"""Datasets: catalog, parsers, embedded data and generators, splits.

Library functions for the CLI: `list_datasets`, `dataset_info`, `fetch` (``treebench.data.manage``);
`load_dataset` loads any registered dataset; `coalesce` merges identical binarized rows.
These names resolve on first use, so that importing a light submodule (``splits``) does not
load pandas or scikit-learn.
"""

from treebench.data.preprocess import coalesce


def __getattr__(name):
    if name in ("Dataset", "load_dataset"):
        from treebench.data import base

        return getattr(base, name)
    if name in ("list_datasets", "dataset_info", "fetch", "describe"):
        from treebench.data import manage

        return getattr(manage, name)
    if name == "coalesce":
        return coalesce
    raise AttributeError(name)


__all__ = ["Dataset", "coalesce", "dataset_info", "describe", "fetch", "list_datasets", "load_dataset"]
