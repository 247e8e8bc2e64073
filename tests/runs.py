"""Small experiments for tests of every package: the tiny config most runner, results and
config tests start from, a network-log frame with values float32 cannot hold, and a results
table without the columns that vary from run to run.

``tests/`` is on ``sys.path`` (tests/conftest.py): ``from runs import tiny_config``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from treebench import api
from treebench.results.store import read_table


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


#: columns that vary from run to run besides the ``*_seconds`` ones: memory, the finishing
#: time and the clock readings of a search's anytime trace
VARYING = ("peak_rss_mb", "cell_rss_mb", "finished_at", "time_to_best", "time_to_proof",
           "primal_integral")


def steady_columns(t: pd.DataFrame) -> list[str]:
    """The columns of ``t`` that two runs of the same cells must agree on."""
    return [c for c in t.columns if not c.endswith("_seconds") and c not in VARYING]


def run_folder(tmp: Path, cfg: dict) -> Path:
    """Run the config ``cfg`` (written to ``tmp/c.yaml``) into ``tmp/r`` as `treebench run
    --no-report` does; the results folder."""
    path = tmp / "c.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    summary = api.run_experiment(path, api.RunOptions(out=tmp / "r", progress=False,
                                                      report=False))
    assert summary.exit_code == 0, summary.failures
    return tmp / "r"


def result_rows(path: Path) -> pd.DataFrame:
    """The results table of a run directory in cell order, without the columns that vary from
    run to run (times, memory, finishing time)."""
    t = read_table(path / "results.parquet").sort_values("cell_id").reset_index(drop=True)
    return t[steady_columns(t)]
