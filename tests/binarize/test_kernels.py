"""Numba kernels of treebench.binarize against their naive twins in tests/naive.py."""

from __future__ import annotations

import numpy as np
import pytest
from naive import naive_onehot_columns, naive_threshold_columns

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
