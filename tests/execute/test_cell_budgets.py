"""What a cell's worker measures and grants: a warm-up outside the fit's time limit, a
preparation budget of its own, the memory and times each row records, ``n_jobs`` as joblib
reads it, and the fork backend's results equal the sequential ones."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pandas as pd

from treebench import api
from treebench.results.store import read_table

from runs import tiny_config


def _run(path, out, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("report", False)
    return api.run_experiment(path, api.RunOptions(out=out, **kw))


def test_negative_n_jobs_follow_joblib():
    from treebench.execute.executor import effective_n_jobs

    n = os.cpu_count() or 1
    assert effective_n_jobs(-1) == n
    assert effective_n_jobs(-2) == max(n - 1, 1)
    assert effective_n_jobs(-1000) == 1
    assert effective_n_jobs(3) == 3


def test_rows_record_runner_measurements_truthfully(write_config, tmp_path):
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0]}, limits={"time": 60, "memory": 2000})
    out = tmp_path / "o"
    _run(write_config(cfg), out)
    df = read_table(out / "results.parquet")
    assert (df["peak_rss_mb"] > 0).all() and (df["cell_rss_mb"] >= 0).all()
    assert (df["cell_rss_mb"] < df["peak_rss_mb"]).all()  # the worker's pages are not the cell's
    assert (df["prepare_seconds"] >= 0).all() and (df["warmup_seconds"] >= 0).all()
    assert (df["time_limit"] == 60).all() and (df["memory_limit"] == 2000).all()


def test_time_limit_counts_the_fit_not_the_warmup(write_config, tmp_path, monkeypatch):
    """A learner whose warm-up takes longer than the cell's limit still gets its whole limit
    for the fit; the warm-up is reported apart."""
    from treebench.algorithms.base import TreeClassifierBase
    from treebench.registry import ALGORITHMS
    from treebench.tree.arrays import TreeArrays

    class SlowWarmup(TreeClassifierBase):
        _parameter_constraints: dict = {}

        @staticmethod
        def warmup():
            time.sleep(2.0)

        def _fit_tree(self, X, y_index, sample_weight):
            return TreeArrays.leaf(np.bincount(y_index, minlength=len(self.classes_))), {}

    ALGORITHMS.register("test-slow-warmup", tags=("test",))(SlowWarmup)
    try:
        cfg = tiny_config(algorithms=[{"name": "test-slow-warmup"}],
                          split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.5},
                          execution={"n_jobs": 1, "backend": "sequential"})
        s = _run(write_config(cfg), tmp_path / "o")
        rec = json.loads(next((tmp_path / "o" / "cells").glob("*.json")).read_text())
        assert s.counts == {"ok": 1}, rec["row"]["error"]
        row = read_table(tmp_path / "o" / "results.parquet").iloc[0]
        assert row["warmup_seconds"] >= 2.0 and row["fit_seconds"] < 0.5
    finally:
        ALGORITHMS._entries.pop("test-slow-warmup", None)


def test_data_preparation_has_its_own_budget(write_config, tmp_path, monkeypatch):
    from treebench.execute import fold

    real = fold.prepare

    def slow(cell, data_dirs=None):
        time.sleep(1.0)
        return real(cell, data_dirs)

    monkeypatch.setattr(fold, "prepare", slow)
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.5, "prepare": 0.2},
                      algorithms=[{"name": "cart", "params": {"max_depth": 1}}])
    s = _run(write_config(cfg), tmp_path / "o")
    row = read_table(tmp_path / "o" / "results.parquet").iloc[0]
    assert s.counts == {"timeout": 1} and "limits.prepare" in row["error"]
    assert row["prepare_seconds"] >= 1.0
    cfg["limits"] = {"time": 0.5}  # without a preparation budget the fit gets its 0.5 s
    s = _run(write_config(cfg, "b.yaml"), tmp_path / "p")
    assert s.counts == {"ok": 1}


def test_fork_backend_matches_sequential(write_config, tmp_path):
    cfg = tiny_config()
    a = _run(write_config(cfg, "a.yaml"), tmp_path / "a", backend="sequential")
    b = _run(write_config(cfg, "b.yaml"), tmp_path / "b", backend="fork", n_jobs=2)
    assert a.counts == b.counts == {"ok": 6} and b.n_jobs == 2
    cols = ["cell_id", "test_accuracy", "train_accuracy", "n_leaves", "n_leaves_effective"]
    ta = read_table(tmp_path / "a" / "results.parquet")[cols]
    tb = read_table(tmp_path / "b" / "results.parquet")[cols]
    pd.testing.assert_frame_equal(ta, tb)
