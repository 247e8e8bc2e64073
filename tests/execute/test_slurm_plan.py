"""Planning a SLURM run without a scheduler: the array's size and per-task request (the
cluster's array limits respected), the dry run's cost lines on every backend, and the options
that are refused in one sentence."""

from __future__ import annotations

from types import SimpleNamespace

import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.config import SlurmSpec
from treebench.execute.slurm_submit import format_time, request_for
from treebench.execute.slurm_jobs import ClusterLimits

runner = CliRunner()


def cells(n: int, time: float | None = 60.0, memory: float | None = None) -> list:
    return [SimpleNamespace(id=f"c{i}", limits={"time": time, "memory": memory})
            for i in range(n)]


def test_the_request_covers_the_cells_limits_plus_start_up():
    req = request_for(cells(10, time=600, memory=2000), SlurmSpec(cells_per_task=4), None)
    assert (req.n_tasks, req.cells_per_task, req.cpus) == (3, 4, 1)
    # 4 cells x (600 s + 60 s grace) + 300 s of start-up = 2,940 s, rounded up to 49 minutes
    assert req.time == "00:49:00"
    assert req.memory_mb == 2000 + 1024


def test_two_cpus_per_task_run_two_cells_at_once_and_the_default_fills_four_hours():
    req = request_for(cells(1000, time=600), SlurmSpec(cpus_per_task=2), None)
    assert req.cells_per_task == 43  # 4 h x 2 CPUs / 660 s
    assert req.time == format_time(22 * 660 + 300)


def test_more_tasks_than_the_cluster_allows_are_packed_into_fewer():
    limits = ClusterLimits(max_array_size=10, max_job_count=10000)
    req = request_for(cells(100), SlurmSpec(cells_per_task=1), limits)
    assert (req.n_tasks, req.cells_per_task) == (10, 10)
    assert "MaxArraySize=10" in req.describe()
    req = request_for(cells(100), SlurmSpec(cells_per_task=1), ClusterLimits(1001, 25))
    assert req.n_tasks == 25


def test_format_time():
    assert format_time(59) == "00:01:00"
    assert format_time(25 * 3600 + 1) == "1-01:01:00"


def _config(tmp_path, **execution) -> str:
    cfg = {"name": "plan", "seed": 0, "datasets": ["iris"],
           "split": {"kind": "kfold", "n_splits": 3}, "binarization": {"method": "raw"},
           "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2]}}],
           "limits": {"time": 600}, "execution": {"n_jobs": 1, **execution}}
    p = tmp_path / "plan.yaml"
    p.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(p)


def test_the_dry_run_prints_the_cost_and_the_slurm_array(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = _config(tmp_path, backend="slurm", slurm={"cells_per_task": 2, "partition": "short"})
    r = runner.invoke(app, ["run", cfg, "-o", "res", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "cost: 6 cell(s) to run; worst case 1.0 CPU-hours" in r.output
    assert "estimate: no earlier results of these cells in res" in r.output
    assert "slurm: 1 job array of 3 task(s) x up to 2 cell(s) (6 cells)" in r.output
    assert "--time=00:27:00" in r.output  # 2 x 660 s + 300 s


def test_the_dry_run_estimates_from_earlier_results_on_any_backend(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = _config(tmp_path, backend="sequential")
    assert runner.invoke(app, ["run", cfg, "-o", "res", "--no-report", "-q"]).exit_code == 0
    r = runner.invoke(app, ["run", cfg, "-o", "res", "--dry-run", "--force", "--overwrite"])
    assert r.exit_code == 0, r.output
    assert "cost: 6 cell(s) to run; worst case 1.0 CPU-hours" in r.output
    assert "estimate: earlier results of 6 of these cells in res took" in r.output
    assert "slurm:" not in r.output


def test_detach_is_refused_without_the_slurm_backend(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", _config(tmp_path, backend="sequential"), "--detach"])
    assert r.exit_code == 2
    assert "--detach is for --backend slurm (got 'sequential')" in r.output


def test_status_of_a_folder_without_submissions_is_one_sentence(tmp_path):
    r = runner.invoke(app, ["status", str(tmp_path)])
    assert r.exit_code == 2
    assert "no SLURM submission here" in r.output


def test_a_cell_file_stamped_just_before_the_planning_is_taken_as_this_runs_result():
    # the kernel stamps files from a coarse clock: a file written just after the planning can
    # carry a time a few ms before it, and must not count as an earlier result
    from treebench.execute.slurm import MTIME_LAG_NS, _key_at_planning

    planned = 10**18
    assert _key_at_planning([1, 2, planned - 5_000_000], planned) is None
    assert _key_at_planning([1, 2, planned + 1], planned) is None
    old = [1, 2, planned - 2 * MTIME_LAG_NS]
    assert _key_at_planning(old, planned) == old
    assert _key_at_planning([1, 2, planned], 0) == [1, 2, planned]
    assert _key_at_planning(None, planned) is None
