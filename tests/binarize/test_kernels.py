"""Numba kernels of treebench.binarize against their naive twins in tests/naive.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_bin_codes, naive_onehot_columns, naive_threshold_columns

from treebench.binarize._kernels import bin_codes, fill_codes, fill_ge, fill_le

pytestmark = pytest.mark.kernels  # also run under NUMBA_DISABLE_JIT=1 (make test-nojit)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("op,kernel", [(">=", fill_ge), ("<=", fill_le)])
def test_threshold_kernels_match_naive(seed, op, kernel):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 8, size=60).astype(float)  # ties with thresholds on purpose
    x[rng.random(60) < 0.1] = np.nan
    t = np.unique(rng.choice(np.arange(-1, 9, 0.5), size=rng.integers(1, 10), replace=False))
    out = np.zeros((60, t.size + 3), dtype=np.uint8)
    kernel(x, t, out, 2)
    np.testing.assert_array_equal(out[:, 2 : 2 + t.size], naive_threshold_columns(x.tolist(), t.tolist(), op))
    assert not out[:, :2].any() and not out[:, 2 + t.size :].any()


def test_codes_kernel_and_bins_match_naive():
    rng = np.random.default_rng(0)
    codes = rng.integers(-1, 4, size=50)
    out = np.zeros((50, 6), dtype=np.float64)
    fill_codes(codes, out, 1)
    np.testing.assert_array_equal(out[:, 1:5], naive_onehot_columns(codes.tolist(), 4))
    x = np.array([-5.0, 0.0, 0.5, 1.0, 7.0, np.nan])
    assert bin_codes(x, np.array([0.5, 2.0, np.inf])).tolist() == [0, 0, 1, 1, 2, -1]


# values with missing (NaN) and infinite entries, thresholds that may be infinite: the kernels
# must give 0 for a missing value in every column, whatever the threshold (never read it as 0)
VALUES = st.lists(st.one_of(st.floats(-5, 5, allow_nan=False), st.just(0.0), st.just(float("nan")),
                            st.just(float("inf")), st.just(float("-inf"))), min_size=1, max_size=30)
THRESHOLDS = st.lists(st.one_of(st.floats(-5, 5, allow_nan=False), st.just(0.0), st.just(float("inf")),
                                st.just(float("-inf"))), min_size=1, max_size=8, unique=True).map(sorted)


@settings(max_examples=150, deadline=None)
@given(VALUES, THRESHOLDS, st.sampled_from([">=", "<="]))
def test_threshold_kernels_match_naive_with_missing_and_infinite_values(x, t, op):
    xa, ta = np.asarray(x, dtype=np.float64), np.asarray(t, dtype=np.float64)
    out = np.zeros((xa.size, ta.size + 1), dtype=np.uint8)
    (fill_ge if op == ">=" else fill_le)(xa, ta, out, 1)
    np.testing.assert_array_equal(out[:, 1:], naive_threshold_columns(x, t, op))
    assert not out[np.isnan(xa)].any()  # a missing value is on no side of any threshold
    assert not out[:, 0].any()


@settings(max_examples=100, deadline=None)
@given(VALUES, THRESHOLDS)
def test_bin_codes_match_naive(x, uppers):
    xa = np.asarray(x, dtype=np.float64)
    got = bin_codes(xa, np.asarray(uppers, dtype=np.float64))
    assert got.tolist() == naive_bin_codes(x, uppers)
    assert (got[np.isnan(xa)] == -1).all()
