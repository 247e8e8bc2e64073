"""A cell whose binarized matrix exceeds TREEBENCH_MAX_MATRIX_GB fails with a message whose
two sizes never contradict it (a tiny cap used to print "needs 0.0 GiB, more than the 0.0 GiB
cap")."""

from __future__ import annotations

import re
from collections import OrderedDict

import pytest
import yaml

from treebench.binarize.compose import sizes_apart
from treebench.execute import fold
from treebench.results.store import read_table

from runs import run_quiet, tiny_config

_SIZE = re.compile(r"needs ([0-9.e+-]+) (bytes|KiB|MiB|GiB|TiB), more than the "
                   r"([0-9.e+-]+) (bytes|KiB|MiB|GiB|TiB) cap")
_BYTES = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _bytes(number: str, unit: str) -> float:
    return float(number) * _BYTES[unit]


def test_a_tiny_cap_fails_the_cells_with_sizes_that_agree(tmp_path, monkeypatch):
    monkeypatch.setenv("TREEBENCH_MAX_MATRIX_GB", "1e-12")
    monkeypatch.setattr(fold, "_PREPARED", OrderedDict())  # folds binarized by earlier tests
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    summary = run_quiet(cfg, tmp_path / "r")
    assert summary.exit_code == 3
    errors = set(read_table(tmp_path / "r" / "results.parquet")["error"])
    assert len(errors) == 1
    error = errors.pop()
    m = _SIZE.search(error)
    assert m, error
    # iris: 150 rows of 4 raw float64 columns; the cap is 1e-12 GiB
    assert m.group(1, 2) == ("4.69", "KiB") and m.group(3, 4) == ("0.00107", "bytes"), error


@pytest.mark.parametrize("larger, smaller", [
    (600, 1e-12 * 2**30), (2**32 + 1, 2**32), (2**30, 2**30 - 1), (5 * 2**30, 4 * 2**30),
    (1023.9, 1023.5), (4.0004 * 2**30, 4.0001 * 2**30), (2**41 + 5, 2**30), (1536, 1e-40),
])
def test_the_larger_size_always_reads_larger(larger, smaller):
    a, b = sizes_apart(larger, smaller)
    (na, ua), (nb, ub) = a.split(), b.split()
    assert _bytes(na, ua) > _bytes(nb, ub), (a, b)
    assert "e+" not in na, a
    assert len(na.replace(".", "").lstrip("0")) <= 3 or ua == ub, a  # 3 digits unless needed
