"""The criteria's forms (`treebench.search.criteria`): the compiled clamped-sum impurities are
the NumPy form bit for bit, row by row, and NGI's risk of the pairs criterion is p·φ."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.search import criteria as cr

pytestmark = pytest.mark.kernels  # also run under NUMBA_DISABLE_JIT=1 (make test-nojit)


def _counts(seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed % 5
    c = rng.integers(0, 6, size=(60, k)).astype(np.float64)
    if seed % 2:
        c *= rng.random((60, k)) * 3.0  # weighted masses
    c[0] = 0.0
    return c


@pytest.mark.parametrize("seed", range(8))
def test_compiled_clamped_forms_are_the_numpy_form_bit_for_bit(seed):
    c = _counts(seed)
    ent = cr.impurity_np(c, cr.ENTROPY)
    gin = cr.impurity_np(c, cr.GINI)
    for r in range(c.shape[0]):
        tot = c[r].sum()
        assert cr.entropy_sum(c[r], tot) == ent[r]
        assert cr.gini_sum(c[r], tot) == gin[r]


@pytest.mark.parametrize("seed", range(4))
def test_pairs_risk_is_mass_times_heterogeneous_pairs(seed):
    rng = np.random.default_rng(seed)
    objcount = rng.integers(0, 5, size=(30, 3)).astype(np.float64)
    value = objcount * rng.random((30, 3))
    risk = cr.node_risk_np(value, objcount, cr.PAIRS)
    for r in range(30):
        assert risk[r] == pytest.approx(value[r].sum() * cr.hetero_pairs(objcount[r],
                                                                         objcount[r].sum()))
    assert np.array_equal(cr.node_risk_np(value, objcount, cr.GINI),
                          value.sum(axis=1) * cr.impurity_np(value, cr.GINI))


def test_codes_are_distinct_and_named():
    assert len(set(cr.CODES.values())) == len(cr.CODES)
    with pytest.raises(ValueError, match="unknown criterion"):
        cr.impurity_np(np.ones((1, 2)), cr.MSE)
