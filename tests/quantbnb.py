"""The Quant-BnB training files of the data directory, for tests of the numeric solver."""

from __future__ import annotations

import gzip
import os
import pathlib

import numpy as np
import pytest


def load_quantbnb(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and integer labels (the first column) of ``quantbnb/train/<name>.txt[.gz]``
    under ``TREEBENCH_DATA_DIR``; the test is skipped when the file is not there."""
    base = pathlib.Path(os.environ.get("TREEBENCH_DATA_DIR", "")) / "quantbnb" / "train"
    for p in (base / f"{name}.txt", base / f"{name}.txt.gz"):
        if p.exists():
            with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as fh:
                a = np.loadtxt(fh)
            return a[:, 1:], a[:, 0].astype(int)
    pytest.skip(f"quantbnb/train/{name} not in TREEBENCH_DATA_DIR")
