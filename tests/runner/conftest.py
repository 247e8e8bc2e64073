"""Fixtures for runner tests: small configs written to a temporary directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from treebench.results.store import read_table


@pytest.fixture
def write_config(tmp_path: Path):
    def _write(cfg: dict | str, name: str = "exp.yaml") -> Path:
        p = tmp_path / name
        p.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg), encoding="utf-8")
        return p

    return _write


def tiny_config(**over) -> dict:
    cfg = {
        "name": "tiny",
        "seed": 0,
        "datasets": ["iris"],
        "split": {"kind": "kfold", "n_splits": 3},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2]}}],
        "execution": {"n_jobs": 1, "backend": "sequential"},
    }
    cfg.update(over)
    return cfg


def net_frame(rng, m: int) -> pd.DataFrame:
    """``m`` rows of a small network-log table with values float32 cannot hold (integers above
    2**24, two-decimal rates), a text column ``proto`` and a two-class ``label``."""
    df = pd.DataFrame({
        "bytes": rng.integers(2**24, 2**24 + 40, m).astype(float),
        "rate": np.round(rng.uniform(0, 1, m), 2),
        "proto": rng.choice(["tcp", "udp", "icmp"], m),
        "count": rng.integers(0, 9, m).astype(float),
    })
    df["label"] = np.where((df["bytes"] % 3 == 0) ^ (df["rate"] > 0.37) | (df["proto"] == "icmp"), "a", "b")
    return df


def result_rows(path: Path) -> pd.DataFrame:
    """The results table of a run directory in cell order, without the columns that vary from
    run to run (times, memory, finishing time)."""
    t = read_table(path / "results.parquet").sort_values("cell_id").reset_index(drop=True)
    cols = [c for c in t.columns if not c.endswith("_seconds") and c not in
            ("peak_rss_mb", "cell_rss_mb", "finished_at")]
    return t[cols]
