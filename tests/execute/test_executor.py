"""The executor: per-cell limits, failures as rows, resume, exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from treebench import api
from treebench.errors import UserError
from treebench.results.store import read_table

from runs import tiny_config


def _run(write_config, tmp_path, algorithms, **kw):
    cfg = tiny_config(algorithms=algorithms, split={"kind": "holdout", "seeds": [0]}, **kw)
    return api.run_experiment(write_config(cfg),
                              api.RunOptions(out=tmp_path / "out", progress=False, report=False))


def _row(out: Path, algorithm: str) -> pd.Series:
    df = read_table(out / "results.parquet")
    return df[df["algorithm_label"] == algorithm].iloc[0]


def test_failures_are_rows_with_status_and_the_sweep_goes_on(write_config, tmp_path):
    s = _run(
        write_config, tmp_path,
        [
            {"name": "test-raise", "params": {"message": "solver exploded"}},
            {"name": "test-abort"},
            {"name": "test-sleep", "params": {"seconds": 30}},
            {"name": "cart", "params": {"max_depth": 2}},
        ],
        limits={"time": 1, "memory": 150},
    )
    out = s.out
    assert s.n_cells == 4 and s.n_ran == 4
    assert _row(out, "test-raise")["status"] == "error"
    assert "RuntimeError: solver exploded" in _row(out, "test-raise")["error"]
    assert _row(out, "test-abort")["status"] == "crashed"
    assert "SIGABRT" in _row(out, "test-abort")["error"]
    sleep = _row(out, "test-sleep")
    assert sleep["status"] == "timeout" and sleep["wall_seconds"] < 10
    cart = _row(out, "cart")
    assert cart["status"] == "ok" and 0.5 < cart["test_accuracy"] <= 1
    assert s.exit_code == 3
    # failed rows keep identity and provenance, and have no metrics
    assert pd.isna(_row(out, "test-raise")["test_accuracy"])
    assert _row(out, "test-raise")["treebench_version"]


def test_memory_cap_kills_a_cell_as_oom(write_config, tmp_path):
    s = _run(write_config, tmp_path, [{"name": "test-alloc", "params": {"megabytes": 600}},
                                      {"name": "test-alloc", "params": {"megabytes": 32}}],
             limits={"time": 120, "memory": 150})
    df = read_table(s.out / "results.parquet").sort_values("algorithm_params")
    assert df["status"].tolist() == ["ok", "oom"]  # {"megabytes":32} sorts before {"megabytes":600}
    assert "150 MB" in df["error"].iloc[1] or "MemoryError" in df["error"].iloc[1]
    assert df["peak_rss_mb"].iloc[0] > 0


def test_exit_codes_follow_fail_on(write_config, tmp_path):
    cfg = write_config(tiny_config(algorithms=[{"name": "test-sleep", "params": {"seconds": 20}}],
                                   split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.5}))
    s = api.run_experiment(cfg, api.RunOptions(out=tmp_path / "o", progress=False, report=False))
    assert s.counts["timeout"] == 1 and s.exit_code == 0
    s = api.run_experiment(cfg,
                           api.RunOptions(out=tmp_path / "o", progress=False, report=False, fail_on="timeout"))
    assert s.n_ran == 0 and s.exit_code == 4
    s = api.run_experiment(cfg,
                           api.RunOptions(out=tmp_path / "o", progress=False, report=False, fail_on="never"))
    assert s.exit_code == 0


def test_resume_runs_only_missing_and_retry_reruns_statuses(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": [1, 2]}},
                                  {"name": "test-raise"}])
    path = write_config(cfg)
    s1 = api.run_experiment(path, api.RunOptions(out=tmp_path / "o", progress=False, report=False))
    assert s1.n_ran == 9 and s1.exit_code == 3
    mtimes = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "o" / "cells").glob("*.json")}
    s2 = api.run_experiment(path, api.RunOptions(out=tmp_path / "o", progress=False, report=False))
    assert s2.n_ran == 0
    assert mtimes == {p.name: p.stat().st_mtime_ns for p in (tmp_path / "o" / "cells").glob("*.json")}
    s3 = api.run_experiment(path,
                            api.RunOptions(out=tmp_path / "o", progress=False, report=False, retry=("error",)))
    assert s3.n_ran == 3
    with pytest.raises(UserError, match="--overwrite"):  # never discard silently
        api.run_experiment(path,
                           api.RunOptions(out=tmp_path / "o", progress=False, report=False, force=True))
    s4 = api.run_experiment(path,
                            api.RunOptions(out=tmp_path / "o", progress=False, report=False,
                                           force=True, overwrite=True))
    assert s4.n_ran == 9
    df = read_table(tmp_path / "o" / "results.parquet")
    assert len(df) == 9 and df["cell_id"].is_unique


def test_same_config_same_table(write_config, tmp_path):
    path = write_config(tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": [1, 3]}},
                                                {"name": "random-forest", "params": {"n_estimators": 5}}]))
    a = api.run_experiment(path, api.RunOptions(out=tmp_path / "a", progress=False, report=False))
    b = api.run_experiment(path, api.RunOptions(out=tmp_path / "b", progress=False, report=False))
    ta, tb = read_table(a.out / "results.parquet"), read_table(b.out / "results.parquet")
    cols = ["cell_id", "train_accuracy", "test_accuracy", "n_leaves", "test_roc_auc", "status"]
    pd.testing.assert_frame_equal(ta[cols], tb[cols])


def test_parallel_loky_backend_matches_sequential(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": [1, 2, 3]}}])
    seq = api.run_experiment(write_config(cfg, "s.yaml"),
                             api.RunOptions(out=tmp_path / "s", progress=False, report=False))
    cfg["execution"] = {"n_jobs": 2, "backend": "loky"}
    par = api.run_experiment(write_config(cfg, "p.yaml"),
                             api.RunOptions(out=tmp_path / "p", progress=False, report=False))
    cols = ["cell_id", "test_accuracy", "n_leaves"]
    pd.testing.assert_frame_equal(read_table(seq.out / "results.parquet")[cols],
                                  read_table(par.out / "results.parquet")[cols])


def test_dry_run_counts(write_config, tmp_path):
    from typer.testing import CliRunner

    from treebench.cli import app

    path = write_config(tiny_config())
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "o"), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "already done: 0  to run: 6  skipped: 0" in r.output
    assert not (tmp_path / "o").exists(), "a dry run writes nothing"


def test_sigkill_loses_no_finished_cell_and_rerun_completes_exactly_once(write_config, tmp_path):
    n_cells = 24
    cfg = tiny_config(
        datasets=["iris"],
        split={"kind": "holdout", "seeds": list(range(n_cells))},
        algorithms=[{"name": "test-sleep", "params": {"seconds": 0.25}}],
        execution={"n_jobs": 2, "backend": "loky"},
    )
    path = write_config(cfg)
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "treebench.cli", "run", str(path), "--out", str(out), "--quiet", "--no-report"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cells = out / "cells"
    deadline = time.time() + 60
    while time.time() < deadline:
        if cells.is_dir() and len([p for p in cells.glob("*.json") if not p.name.startswith(".")]) >= 4:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.read_bytes() for p in cells.glob("*.json") if not p.name.startswith(".")}
    assert 4 <= len(finished) < n_cells, "the kill must land mid-sweep"
    for blob in finished.values():
        assert json.loads(blob)["row"]["status"] == "ok"  # every file is whole
    time.sleep(0.5)  # orphaned children die with their parents (PR_SET_PDEATHSIG)
    (cells / ".deadbeef.123.child").write_text("{")  # what a killed cell may leave behind
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not list(cells.glob(".*")), "partial files of the killed run are removed"
    after = {p.name: p.read_bytes() for p in cells.glob("*.json") if not p.name.startswith(".")}
    assert len(after) == n_cells
    assert all(after[k] == v for k, v in finished.items()), "finished cells were not rerun"
    df = read_table(out / "results.parquet")
    assert len(df) == n_cells and df["cell_id"].is_unique and (df["status"] == "ok").all()


def test_cli_exit_code_2_on_bad_config_and_nothing_written(write_config, tmp_path):
    from typer.testing import CliRunner

    from treebench.cli import app

    cfg = tiny_config()
    cfg["algorithms"][0]["name"] = "topkk"
    r = CliRunner().invoke(app, ["run", str(write_config(cfg)), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "unknown algorithm `topkk`" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


def test_kernels_compile_in_the_warm_worker_not_in_cells(write_config, tmp_path):
    """Top-k's numba kernels are compiled (or loaded from cache) once per worker by its
    `warmup()`; forked cells inherit them, so no cell pays compilation inside its fit."""
    cfg = tiny_config(
        datasets=[{"name": "parity-noise", "params": {"n_samples": 200, "h": 2, "K": 2, "eps": 0.1}}],
        binarization={"method": "none"},
        split={"kind": "holdout", "seeds": [0, 1]},
        algorithms=[{"name": "topk", "params": {"k": [1, 2], "max_depth": 2}}],
    )
    s = api.run_experiment(write_config(cfg),
                           api.RunOptions(out=tmp_path / "o", progress=False, report=False))
    df = read_table(s.out / "results.parquet")
    assert (df["status"] == "ok").all()
    assert (df["compile_seconds"] == 0).all()


def test_dask_backend_runs_the_same_cells(write_config, tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed (extra `dask`)")
    algs = [{"name": "cart", "params": {"max_depth": [1, 2]}},
            {"name": "random-forest", "params": {"n_estimators": 5, "max_depth": 2}}]
    seq = api.run_experiment(write_config(tiny_config(algorithms=algs), "s.yaml"),
                             api.RunOptions(out=tmp_path / "s", progress=False, report=False))
    cfg = tiny_config(algorithms=algs, execution={"n_jobs": 2, "backend": "dask"}, limits={"time": 60})
    # limits change cell ids, so compare by content rather than id
    das = api.run_experiment(write_config(cfg, "d.yaml"),
                             api.RunOptions(out=tmp_path / "d", progress=False, report=False))
    assert das.counts == {"ok": 9}
    cols = ["dataset", "fold", "algorithm_label", "algorithm_params", "test_accuracy", "n_leaves"]
    a = read_table(seq.out / "results.parquet")[cols].sort_values(cols[:4]).reset_index(drop=True)
    b = read_table(das.out / "results.parquet")[cols].sort_values(cols[:4]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_ctrl_c_exits_130_and_keeps_finished_cells(write_config, tmp_path):
    cfg = tiny_config(split={"kind": "holdout", "seeds": list(range(40))},
                      algorithms=[{"name": "test-sleep", "params": {"seconds": 0.3}}],
                      execution={"n_jobs": 2, "backend": "loky"})
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "treebench.cli", "run", str(write_config(cfg)), "--out", str(out),
           "--quiet", "--no-report"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "cells").glob("[!.]*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "run the same command again to resume" in stderr
    df = read_table(out / "results.parquet")
    assert 3 <= len(df) < 40 and (df["status"] == "ok").all()
    import re

    ran = int(re.search(r"ran (\d+) now", stdout).group(1))
    assert ran <= len(df)  # cells finishing during shutdown are saved but may not be counted


def test_second_run_on_the_same_directory_is_refused(write_config, tmp_path):
    import fcntl

    from treebench.errors import UserError

    out = tmp_path / "o"
    out.mkdir()
    with open(out / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running treebench holds it
        with pytest.raises(UserError, match="another treebench run is writing"):
            api.run_experiment(write_config(tiny_config()),
                               api.RunOptions(out=out, progress=False, report=False))
    s = api.run_experiment(write_config(tiny_config()),
                           api.RunOptions(out=out, progress=False, report=False))
    assert s.exit_code == 0


def test_preflight_loads_each_dataset_once_and_lets_the_environment_decide_offline(monkeypatch, write_config):
    """Downloads may happen in the runner before cells start (never in workers): the preflight
    passes offline=None (``--offline``/``TREEBENCH_OFFLINE`` decide) and loads each dataset once."""
    import treebench.data.base as base
    from treebench.config.cells import expand
    from treebench.config import load_config
    from treebench.execute import fold

    calls = []
    real = base.load_dataset

    def spy(name, params=None, **kw):
        calls.append((name, kw.get("offline")))
        return real(name, params, **kw)

    monkeypatch.setattr(base, "load_dataset", spy)
    monkeypatch.setattr(fold, "_DATASETS", type(fold._DATASETS)())
    exp = load_config(write_config(tiny_config(datasets=["iris", "wine"])))
    api.preflight_datasets(exp, expand(exp), None, None)
    assert calls == [("iris", None), ("wine", None)]
    fold.dataset_for(expand(exp)[0], None)  # a worker reuses it and would never download
    assert len(calls) == 2
