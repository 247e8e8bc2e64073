"""Small experiments for tests of every package: the tiny config most runner, results and
config tests start from, a network-log frame with values float32 cannot hold, a results
table without the columns that vary from run to run, a quiet run through the API, and a
driver running as a subprocess with a wait for its first cell files.

``tests/`` is on ``sys.path`` (tests/conftest.py): ``from runs import tiny_config``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
        # one figure of the seven: a run's report draws its figures, most of its time
        "report": {"figures": ["test_accuracy_vs_max_depth"]},
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


def run_quiet(path: Path, out: Path, **options):
    """`api.run_experiment` of the config file ``path`` into ``out`` without a progress bar
    or a report unless ``options`` ask for them; its summary."""
    options.setdefault("progress", False)
    options.setdefault("report", False)
    return api.run_experiment(path, api.RunOptions(out=out, **options))


@contextmanager
def driver_process(cmd: list[str], **popen) -> Iterator[subprocess.Popen]:
    """``cmd`` (a driver) as a subprocess in its own session, its stdout and stderr piped as
    text; its process group is SIGKILLed on leaving the block if it still runs."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_for_cells(driver: subprocess.Popen, cells: Path, n: int, timeout: float) -> int:
    """Wait (at most ``timeout`` seconds) until the folder ``cells`` holds ``n`` cell files
    while ``driver`` runs; fails the test with the driver's stderr if it has exited. How many
    cell files there are."""
    def count() -> int:
        return len(list(cells.glob("[!.]*.json"))) if cells.is_dir() else 0

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and driver.poll() is None and count() < n:
        time.sleep(0.02)
    assert driver.poll() is None, driver.communicate()[1]
    return count()


def run_folder(tmp: Path, cfg: dict) -> Path:
    """Run the config ``cfg`` (written to ``tmp/c.yaml``) into ``tmp/r`` as `treebench run
    --no-report` does; the results folder."""
    path = tmp / "c.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    summary = run_quiet(path, tmp / "r")
    assert summary.exit_code == 0, summary.failures
    return tmp / "r"


def result_rows(path: Path) -> pd.DataFrame:
    """The results table of a run directory in cell order, without the columns that vary from
    run to run (times, memory, finishing time)."""
    t = read_table(path / "results.parquet").sort_values("cell_id").reset_index(drop=True)
    return t[steady_columns(t)]
