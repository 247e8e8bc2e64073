"""The float type of a cell's prepared matrices.

A numeric (``raw``) binarization is float64 by default: values are kept exactly. Two cases
allow float32, half the memory, with the same model:

* the learner rounds its input to float32 itself: scikit-learn's trees validate ``X`` with
  ``dtype=np.float32`` before fitting and before predicting, so a float64 matrix only adds a
  float32 copy beside itself (on KDD Cup 99's training rows: 466 MB plus 233 MB). Such a
  learner declares ``float32_input = "always"`` (`treebench.algorithms.cart`);
* every value of the data is a float32 exactly (``float32_exact``), and the learner works on a
  float32 matrix as it is (``compact_input``) and declares ``float32_input = "exact"``.

Anything else (``"never"``, the default, e.g. DPDT, whose candidate thresholds are float64
midpoints of the exact values) gets float64. 0/1 output stays ``uint8`` whatever the learner.
"""

from __future__ import annotations

from typing import Any

import numpy as np

POLICIES = ("always", "exact", "never")

#: rows per block of the exactness test (keeps its temporaries small on large data)
BLOCK_ROWS = 1 << 16


def float32_policy(learner: Any) -> str:
    """The learner's (class or instance) declared ``float32_input``: ``"always"``,
    ``"exact"`` or ``"never"`` (also for estimators that declare nothing)."""
    policy = getattr(learner, "float32_input", "never")
    if policy not in POLICIES:
        raise ValueError(
            f"{getattr(learner, '__name__', type(learner).__name__)}.float32_input is {policy!r}; "
            f"expected one of {', '.join(POLICIES)}."
        )
    if policy == "exact" and not getattr(learner, "compact_input", False):
        return "never"  # it would copy a float32 matrix to float64: no saving
    return policy


def float32_exact(values: Any) -> bool:
    """True when every value of the 2-D array (or DataFrame of numeric columns) ``values`` is
    a float32 exactly: ``x.astype(float32).astype(float64) == x`` (NaN counts as exact, being
    NaN in both). Checked in row blocks, so no full-size temporary is made."""
    if hasattr(values, "to_numpy") and hasattr(values, "columns"):
        frame = values
        n = frame.shape[0]
        for s in range(0, n, BLOCK_ROWS):
            block = frame.iloc[s : s + BLOCK_ROWS].to_numpy(dtype=np.float64, na_value=np.nan)
            if not _exact_block(block):
                return False
        return True
    arr = np.asarray(values)
    if arr.dtype.kind in "biu" and arr.dtype.itemsize <= 2 or arr.dtype == np.float32:
        return True  # every bool, (u)int8/16 and float32 value is a float32
    for s in range(0, arr.shape[0], BLOCK_ROWS):
        if not _exact_block(np.asarray(arr[s : s + BLOCK_ROWS], dtype=np.float64)):
            return False
    return True


def _exact_block(block: np.ndarray) -> bool:
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.array_equal(block.astype(np.float32).astype(np.float64), block, equal_nan=True))


def matrix_dtype(output_dtype: Any, policy: str, exact: Any = None) -> np.dtype:
    """The prepared matrices' type: ``output_dtype`` (the binarizer's) unless it is float64
    and the learner's ``policy`` allows float32: ``"always"``, or ``"exact"`` when ``exact()``
    (a callable, evaluated only then) says every value is a float32."""
    out = np.dtype(output_dtype)
    if out != np.float64 or policy == "never":
        return out
    if policy == "always":
        return np.dtype(np.float32)
    return np.dtype(np.float32) if exact is not None and exact() else out


def numeric_part(X: Any, binz: Any) -> Any:
    """The columns of the frame ``X`` that a fitted composite binarizer passes through as
    numbers (``raw``): the values whose exactness decides the ``"exact"`` policy. 0/1 and
    one-hot columns are exact in any float type."""
    feats = [c.feature for c in getattr(binz, "columns_", []) if c.op == "raw"]
    return X[list(dict.fromkeys(feats))]
