"""The Student t quantiles of the error bars: SciPy's numbers, without SciPy where kept."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from scipy.special import stdtrit

from treebench.report.student_t import T975, t975


def test_every_kept_value_is_scipys_bit_for_bit():
    df = np.arange(1, len(T975) + 1, dtype=float)
    assert np.array_equal(T975, stdtrit(df, 0.975))
    assert np.array_equal(t975(df), stdtrit(df, 0.975))


def test_values_past_the_table_are_asked_of_scipy():
    df = np.array([1.0, 100.0, 101.0, 250.0, 10_000.0])
    assert np.array_equal(t975(df), stdtrit(df, 0.975))
    assert t975(np.array([101.0]))[0] < T975[-1]  # the quantile falls with the freedom


def test_error_bars_of_ten_folds_need_no_scipy():
    """Drawing a report's error bars over 10 folds imports no SciPy (0.3 s per drawing
    process), and gives the half-width of the t interval."""
    code = (
        "import sys, pandas as pd\n"
        "from treebench.report.aggregate import error_bars\n"
        "rows = pd.DataFrame({'test_accuracy_mean': [0.5, 0.9], 'test_accuracy_std': [0.1, 0.2],"
        " 'test_accuracy_n': [10, 1]})\n"
        "b = error_bars(rows, 'test_accuracy')\n"
        "print(repr(float(b[0, 0])), repr(float(b[1, 1])), 'scipy.special' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert float(out[0]) == stdtrit(9, 0.975) * 0.1 / np.sqrt(10)
    assert float(out[1]) == 0.0  # one value: no bar
    assert out[2] == "False"
