"""Numba kernels that write threshold and one-hot columns straight into a C-ordered 0/1 matrix.

Each kernel fills ``out[r, col0 : col0 + k]`` for every row ``r`` of one feature; missing values
(NaN, code -1) leave the row's block at 0. Naive twins live in ``tests/naive.py`` (section
"binarize") and ``tests/binarize/test_kernels.py`` compares them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def fill_ge(x, thresholds, out, col0):
    """Column j = 1 iff ``x >= thresholds[j]`` (thresholds ascending): the first c columns of the
    row's block are 1, c = number of thresholds <= x (binary search)."""
    k = thresholds.shape[0]
    for r in range(x.shape[0]):
        v = x[r]
        if v != v:  # NaN
            continue
        lo, hi = 0, k
        while lo < hi:
            mid = (lo + hi) // 2
            if thresholds[mid] <= v:
                lo = mid + 1
            else:
                hi = mid
        for j in range(lo):
            out[r, col0 + j] = 1


@njit(cache=True)
def fill_le(x, thresholds, out, col0):
    """Column j = 1 iff ``x <= thresholds[j]`` (thresholds ascending): the columns from s on are 1,
    s = number of thresholds < x."""
    k = thresholds.shape[0]
    for r in range(x.shape[0]):
        v = x[r]
        if v != v:
            continue
        lo, hi = 0, k
        while lo < hi:
            mid = (lo + hi) // 2
            if thresholds[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        for j in range(lo, k):
            out[r, col0 + j] = 1


@njit(cache=True)
def fill_codes(codes, out, col0):
    """One-hot: column ``codes[r]`` of the row's block is 1 (code -1 = none)."""
    for r in range(codes.shape[0]):
        c = codes[r]
        if c >= 0:
            out[r, col0 + c] = 1


def bin_codes(x: np.ndarray, uppers: np.ndarray) -> np.ndarray:
    """Index of the interval ``[lo_i, hi_i)`` holding x, for contiguous intervals with upper bounds
    ``uppers`` (the last may be +inf); -1 for NaN or values at/after the last upper bound."""
    codes = np.searchsorted(uppers, x, side="right").astype(np.int64)
    codes[np.isnan(x) | (codes >= uppers.shape[0])] = -1
    return codes


def warm_up() -> None:
    """Compile (or load from the numba cache) every kernel for uint8 and float64 outputs."""
    x = np.array([0.0, 1.0, np.nan])
    t = np.array([0.5])
    codes = np.array([0, -1, 0], dtype=np.int64)
    for dtype in (np.uint8, np.float64):
        out = np.zeros((3, 1), dtype=dtype)
        fill_ge(x, t, out, 0)
        fill_le(x, t, out, 0)
        fill_codes(codes, out, 0)
