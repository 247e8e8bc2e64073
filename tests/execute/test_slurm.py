"""Sweeps through a real SLURM (slurmctld and slurmd on 127.0.0.1, 2 CPUs): the same results
as a local run, job arrays of several tasks, ``scancel`` and resume, SIGTERM preemption, a node
going down, a cell that kills its task three times, and ``--detach`` + ``status`` + rerun.
Every run goes through the command line, as a subprocess; "0 lost, 0 duplicated" is read
from the cell files: every cell has one, and none holds a replaced earlier record
(``history``)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from treebench.results.store import read_table

# `make test` runs them in a pytest process of their own: the session's cluster holds a
# machine-wide lock, which a second xdist worker would wait on until the first one's session ends
pytestmark = pytest.mark.slurm

CLI = [sys.executable, "-c", "from treebench.cli import main; main()"]


def tb(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def write(tmp: Path, name: str, algorithms: list[dict], *, seeds: int = 0, kfold: int = 0,
          cells_per_task: int = 2, time_limit: float = 30) -> Path:
    split = {"kind": "kfold", "n_splits": kfold} if kfold else \
        {"kind": "holdout", "seeds": list(range(seeds))}
    cfg = {"name": name, "seed": 0, "datasets": ["iris"], "split": split,
           "binarization": {"method": "raw"}, "algorithms": algorithms,
           "limits": {"time": time_limit},
           "execution": {"backend": "slurm",
                         "slurm": {"cells_per_task": cells_per_task, "cpus_per_task": 1}}}
    p = tmp / f"{name}.yaml"
    p.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return p


def sleepy(seconds: float) -> list[dict]:
    return [{"name": "test-sleep", "params": {"seconds": seconds}}]


def cell_records(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "cells").glob("*.json"))]


def assert_once(out: Path, n: int) -> None:
    """Every one of the ``n`` cells has one result, ok, written once."""
    recs = cell_records(out)
    assert len(recs) == n, f"{len(recs)} cell files, expected {n}"
    assert [r["row"]["status"] for r in recs] == ["ok"] * n
    assert not [r for r in recs if r.get("history")], "a cell was written twice"


def jobs(slurm) -> list[str]:
    return slurm.run("squeue", "-h", "-r", "-o", "%i|%T").split()


def wait_until(ok, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if ok():
            return
        time.sleep(0.2)
    raise AssertionError(f"gave up after {seconds} s waiting for {what}")


def n_files(out: Path) -> int:
    return len(list((out / "cells").glob("*.json"))) if (out / "cells").is_dir() else 0


def job_of(out: Path, n: int = 1) -> str:
    return json.loads((out / "slurm" / f"{n:04d}" / "submission.json").read_text())["job"]


def test_a_slurm_sweep_equals_the_same_sweep_run_locally(slurm, tmp_path):
    cfg = write(tmp_path, "same", [{"name": "cart", "params": {"max_depth": [1, 2]}}],
                kfold=3, cells_per_task=2)
    r = tb("run", str(cfg), "-o", "on-slurm", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "on SLURM job(s)" in r.stdout and "3 array task(s)" in r.stdout
    local = tb("run", str(cfg), "-o", "local", "--backend", "sequential", "--no-report",
               cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    submission = json.loads((tmp_path / "on-slurm/slurm/0001/submission.json").read_text())
    assert submission["n_tasks"] == 3 and [len(c) for c in submission["chunks"]] == [2, 2, 2]
    assert_once(tmp_path / "on-slurm", 6)

    def table(d: str):
        t = read_table(tmp_path / d / "results.parquet").sort_values("cell_id")
        keep = [c for c in t.columns if not c.endswith("_seconds") and c not in
                ("peak_rss_mb", "cell_rss_mb", "finished_at", "host", "pid")]
        return t[keep].reset_index(drop=True)

    a, b = table("on-slurm"), table("local")
    assert len(a) == 6
    assert a.equals(b), a.compare(b)


#: five moments; CI runs the first two (the other three are marked slow: `-m slurm` runs all)
MOMENTS = [pytest.param(t, marks=[pytest.mark.slow] if t >= 2 else []) for t in range(5)]


@pytest.mark.parametrize("trial", MOMENTS)
def test_scancel_at_a_random_moment_then_rerun_loses_and_duplicates_nothing(slurm, tmp_path,
                                                                            trial):
    cfg = write(tmp_path, "cancel", sleepy(0.3), seeds=12, cells_per_task=4)
    out = tmp_path / "res"
    r = tb("run", str(cfg), "-o", "res", "--detach", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    wait_until(lambda: n_files(out) >= 1 + 2 * trial, 90, "cells to finish")
    time.sleep(random.Random(trial).uniform(0.0, 1.5))
    slurm.run("scancel", job_of(out))
    wait_until(lambda: not jobs(slurm), 60, "the cancelled job to end")
    assert n_files(out) < 12  # cancelled before the end
    r = tb("run", str(cfg), "-o", "res", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_once(out, 12)


def test_a_task_preempted_by_sigterm_keeps_its_cells_and_the_rerun_runs_the_rest(slurm,
                                                                                   tmp_path):
    cfg = write(tmp_path, "preempt", sleepy(0.5), seeds=8, cells_per_task=8)
    out = tmp_path / "res"
    r = tb("run", str(cfg), "-o", "res", "--detach", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    wait_until(lambda: n_files(out) >= 1, 90, "a first cell")
    slurm.run("scancel", "--signal=TERM", "--batch", job_of(out))  # what preemption sends
    wait_until(lambda: not jobs(slurm), 60, "the preempted task to end")
    tasks = [json.loads(p.read_text()) for p in (out / "slurm/0001/tasks").glob("*.json")]
    assert [t["ended"] for t in tasks] == ["preempted"]
    kept = n_files(out)
    assert 1 <= kept < 8
    assert all(r["row"]["status"] == "ok" for r in cell_records(out))  # none taken as crashed
    r = tb("run", str(cfg), "-o", "res", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"ran {8 - kept} now" in r.stdout
    assert_once(out, 8)


def test_a_node_going_down_loses_no_cell(slurm, tmp_path):
    cfg = write(tmp_path, "down", sleepy(1.0), seeds=8, cells_per_task=4)
    out = tmp_path / "res"
    r = tb("run", str(cfg), "-o", "res", "--detach", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    wait_until(lambda: n_files(out) >= 1, 90, "a first cell")
    slurm.run("scontrol", "update", f"nodename={slurm.node}", "state=down", "reason=test")
    assert slurm.node_state().startswith("down")
    wait_until(lambda: not [j for j in jobs(slurm) if "RUNNING" in j], 60,
               "the node's tasks to stop")
    def resumed() -> bool:  # refused while the node's tasks are being cleaned up
        slurm.run("scontrol", "update", f"nodename={slurm.node}", "state=resume", check=False)
        return slurm.node_state() in ("idle", "alloc", "mix")

    wait_until(resumed, 60, "the node back")
    r = tb("run", str(cfg), "-o", "res", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_once(out, 8)


def test_a_cell_that_kills_its_task_three_times_is_recorded_crashed_with_the_reason(
        slurm, tmp_path):
    cfg = write(tmp_path, "strikes", [{"name": "test-kill-worker"},
                                      {"name": "cart", "params": {"max_depth": 1}}],
                seeds=1, cells_per_task=1)
    out = tmp_path / "res"
    r = tb("run", str(cfg), "-o", "res", "--no-report", cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr  # a crashed cell: exit 3
    rows = {r["row"]["algorithm_name"]: r["row"] for r in cell_records(out)}
    assert rows["cart"]["status"] == "ok"
    crashed = rows["test-kill-worker"]
    assert crashed["status"] == "crashed"
    assert "killed its SLURM task 3 times" in crashed["error"]
    assert "died:" in crashed["error"]  # the scheduler's account of the task's end follows
    strikes = json.loads((out / "slurm/strikes.json").read_text())
    assert [len(v) for v in strikes.values()] == [3]
    assert len(list((out / "slurm").glob("0*"))) == 3  # the first array, then two resubmissions


def test_detach_then_status_then_rerun_collects_without_resubmitting(slurm, tmp_path):
    cfg = write(tmp_path, "detach", sleepy(0.5), seeds=8, cells_per_task=4)
    out = tmp_path / "res"
    r = tb("run", str(cfg), "-o", "res", "--detach", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "submitted SLURM job" in r.stderr and "treebench status" in r.stdout
    s = tb("status", "res", cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    assert "8 cells submitted to SLURM" in s.stdout
    r = tb("run", str(cfg), "-o", "res", "--no-report", cwd=tmp_path)  # follows the live job
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(list((out / "slurm").glob("0*"))) == 1  # nothing submitted again
    assert_once(out, 8)
    s = tb("status", "res", cwd=tmp_path)
    assert "0 queued, 0 running, 8 done, 0 failed, 0 not run" in s.stdout
