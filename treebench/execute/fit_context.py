"""The runner side of the fit context: a cell's `FitContext` from its prepared fold.

* ``X_val``/``y_val``: the validation rows of a ``train-val-test`` split, binarized with the
  binarizer fitted on the training rows (`treebench.execute.fold.prepare`);
* ``feature_groups``: for every binary column, the index of the original feature it tests
  (from the binarizer's column table), so the one-hot or threshold columns of one feature share
  a group;
* ``feature_costs``: one cost per binary column from the cell's ``costs`` (`CostsSpec`):
  unit costs give ``None``; ``given`` spreads per-feature costs to the feature's columns;
  ``random`` draws an integer in ``low..high`` per column from its seed (NGI, Ma et al. 2023,
  §6: "each test cost is independently drawn from the set {1, …, 10}");
* ``deadline``: ``now + the cell's time limit``, set by the worker just before ``fit``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def feature_groups(columns: list[dict[str, Any]], feature_names: list[str], n_columns: int) -> np.ndarray:
    """Original-feature index of every binary column; without a column table (or for a column
    whose feature is not among ``feature_names``) each column is its own group."""
    index = {str(f): i for i, f in enumerate(feature_names)}
    if len(columns) != n_columns or any(str(c["feature"]) not in index for c in columns):
        return np.arange(n_columns, dtype=np.int64)
    return np.array([index[str(c["feature"])] for c in columns], dtype=np.int64)


def column_costs(
    spec: dict[str, Any] | None,
    groups: np.ndarray,
    feature_names: list[str],
    dataset_costs: dict[str, float] | None = None,
    dataset: str = "",
) -> np.ndarray | None:
    """Per-column test costs for the cell's ``costs`` spec (None for unit costs).

    Raises ValueError (one sentence) when given costs name a feature the dataset lacks or
    leave a feature without a cost.
    """
    if not spec or spec.get("kind", "unit") == "unit":
        return None
    n = len(groups)
    if spec["kind"] == "random":
        rng = np.random.default_rng(int(spec.get("seed", 0)))
        return rng.integers(int(spec.get("low", 1)), int(spec.get("high", 10)) + 1, n).astype(np.float64)
    values = spec.get("values")
    where = "costs.values" if values is not None else "the dataset's feature_costs"
    if values is None:
        values = dataset_costs
        if not values:
            raise ValueError(
                f"costs: kind `given` without `values`, but dataset `{dataset}` declares no "
                "feature_costs; list them under `costs.values` (feature name: cost)."
            )
    names = [str(f) for f in feature_names]
    unknown = sorted(set(map(str, values)) - set(names))
    if unknown:
        raise ValueError(
            f"{where} names the feature `{unknown[0]}`, which dataset `{dataset}` does not have; "
            f"its features are: {', '.join(names[:20])}{', ...' if len(names) > 20 else ''}."
        )
    default = spec.get("default")
    per_feature = np.empty(len(names))
    for i, f in enumerate(names):
        c = values.get(f, default)
        if c is None:
            raise ValueError(
                f"{where} gives no cost for feature `{f}` of dataset `{dataset}`; add it or set "
                "`costs.default`."
            )
        per_feature[i] = float(c)
    if np.any(groups < 0) or np.any(groups >= len(names)):
        raise ValueError("per-feature costs need the binarizer's column table (original features).")
    return per_feature[groups]
