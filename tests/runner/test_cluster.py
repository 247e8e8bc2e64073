"""Sweeps on a real cluster (issue 15): a dask scheduler and two workers started here as
separate processes on 127.0.0.1, each worker in its own working directory with
``TREEBENCH_DATA_DIR`` unset, and the driver (the CLI) in a third directory.

Checked: the results table equals a sequential run's (timings aside); every cell file comes
from the driver (workers write nothing, in their directories or elsewhere); each dataset is
shipped to and received by each worker once; a worker SIGKILLed mid-sweep leaves every cell
run exactly once; a rerun has nothing to do. Every process started here is stopped by its pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

pytest.importorskip("distributed")

pytestmark = pytest.mark.cluster

CONFIG = {
    "name": "cl",
    "seed": 0,
    "datasets": ["iris"],
    "split": {"kind": "kfold", "n_splits": 5},
    "binarization": {"method": "raw"},
    "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2, 3, 4, 5, 6, 7, 8]}}],
    "execution": {"n_jobs": 1, "backend": "sequential"},
}  # 5 folds x 8 depths = 40 cells

_started_schedulers: list[subprocess.Popen] = []  # so that a test can kill its scheduler

VOLATILE = ("seconds", "_at", "rss", "host", "pid", "started", "finished")


def _worker_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TREEBENCH_DATA_DIR"}
    # the workers import the treebench under test (this checkout), nothing else of the driver's
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


@contextmanager
def dask_cluster(tmp: Path, n_workers: int = 2):
    """A scheduler and ``n_workers`` single-threaded workers without nanny (so SIGKILL really
    removes a worker), each in its own directory. Yields (address, worker processes, dirs)."""
    from distributed import Client

    procs: list[subprocess.Popen] = []
    sched_file = tmp / "scheduler.json"
    env = _worker_env()
    try:
        (tmp / "scheduler").mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
            cwd=tmp / "scheduler", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _started_schedulers.append(procs[-1])
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), "the dask scheduler did not start"
        time.sleep(0.2)  # the file is written in one go, but be safe
        address = json.loads(sched_file.read_text())["address"]
        workers, dirs = [], []
        for i in range(n_workers):
            d = tmp / f"worker{i}"
            d.mkdir()
            dirs.append(d)
            w = subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(w)
            workers.append(w)
        with Client(address, timeout="30s", set_as_default=False) as c:
            c.wait_for_workers(n_workers, timeout=90)
        yield address, workers, dirs
    finally:
        _stop(procs)


def _driver(tmp: Path, *args: str, config: dict | None = None) -> list[str]:
    (tmp / "driver").mkdir(exist_ok=True)
    cfg = tmp / "driver" / "exp.yaml"
    cfg.write_text(yaml.safe_dump(config or CONFIG), encoding="utf-8")
    return [sys.executable, "-m", "treebench.cli", "run", "exp.yaml", "--no-report", *args]


def _table(path: Path):
    import pandas as pd

    df = pd.read_csv(path)
    keep = [c for c in df.columns if not any(v in c for v in VOLATILE)]
    return df[keep].sort_values("cell_id").reset_index(drop=True)


def _files_under(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if p.is_file()]


def test_dask_cluster_sweep_equals_sequential_and_driver_writes(tmp_path):
    from distributed import Client

    env = {**os.environ, "PYTHONPATH": _worker_env()["PYTHONPATH"]}
    seq = subprocess.run(_driver(tmp_path, "-o", "seq"), cwd=tmp_path / "driver", env=env,
                         capture_output=True, text=True, timeout=300)
    assert seq.returncode == 0, seq.stderr
    with dask_cluster(tmp_path) as (address, workers, dirs):
        r = subprocess.run(_driver(tmp_path, "-o", "out", "--backend", "dask", "--address", address),
                           cwd=tmp_path / "driver", env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        assert f"running on dask scheduler {address} (2 workers, 2 threads)" in r.stderr
        out = tmp_path / "driver" / "out"
        assert len(list((out / "cells").glob("*.json"))) == 40
        # workers wrote nothing: not in their directories (where a relative `out` would land)
        assert all(_files_under(d) == [] for d in dirs)
        # each worker received iris exactly once from the driver
        from treebench.execute.cluster import received_counts

        with Client(address, timeout="30s", set_as_default=False) as c:
            got = c.run(received_counts)
        assert len(got) == 2
        assert all(list(v.values()) == [1] for v in got.values()), got
        # a rerun has nothing to do
        before = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
        r2 = subprocess.run(_driver(tmp_path, "-o", "out", "--backend", "dask", "--address", address),
                            cwd=tmp_path / "driver", env=env, capture_output=True, text=True,
                            timeout=300)
        assert r2.returncode == 0, r2.stderr
        assert "ran 0 now" in r2.stdout or "nothing to do" in r2.stdout.lower(), r2.stdout
        assert before == {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    a, b = _table(tmp_path / "driver" / "out" / "results.csv"), _table(tmp_path / "driver" / "seq" / "results.csv")
    assert list(a.columns) == list(b.columns)
    import pandas as pd

    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
def test_dask_worker_killed_mid_sweep_every_cell_once(tmp_path):
    import pandas as pd

    env = {**os.environ, "PYTHONPATH": _worker_env()["PYTHONPATH"]}
    with dask_cluster(tmp_path) as (address, workers, dirs):
        drv = subprocess.Popen(_driver(tmp_path, "-o", "out", "--backend", "dask", "--address", address),
                               cwd=tmp_path / "driver", env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        try:
            cells = tmp_path / "driver" / "out" / "cells"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and (not cells.exists() or len(list(cells.glob("*.json"))) < 3):
                time.sleep(0.01)
            n_at_kill = len(list(cells.glob("*.json")))
            assert drv.poll() is None, "the sweep finished before the kill"
            os.kill(workers[0].pid, signal.SIGKILL)
            workers[0].wait(timeout=10)
            _, err = drv.communicate(timeout=300)
        finally:
            if drv.poll() is None:
                drv.kill()
                drv.wait()
        assert drv.returncode == 0, err
        assert n_at_kill < 40
        df = pd.read_csv(tmp_path / "driver" / "out" / "results.csv")
        assert len(df) == 40 and df["cell_id"].is_unique
        assert set(df["status"]) == {"ok"}, df["status"].value_counts()
        assert len(list(cells.glob("*.json"))) == 40


@pytest.mark.slow
def test_dask_ctrl_c_cancels_pending_and_a_crashing_cell_spares_its_worker(tmp_path):
    """Ctrl-C (SIGINT to the driver's group) → exit 130, finished cells kept, nothing left
    running on the cluster; then a cell whose process aborts is recorded `crashed` and the
    worker that ran it serves the next cells."""
    import pandas as pd
    from distributed import Client

    env = {**os.environ, "PYTHONPATH": _worker_env()["PYTHONPATH"]}
    slow = {**CONFIG, "split": {"kind": "holdout", "seeds": list(range(40))},
            "algorithms": [{"name": "test-sleep", "params": {"seconds": 0.3}}]}
    with dask_cluster(tmp_path) as (address, workers, dirs):
        drv = subprocess.Popen(_driver(tmp_path, "-o", "out", "-q", "--backend", "dask", "--address",
                                       address, config=slow),
                               cwd=tmp_path / "driver", env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
        cells = tmp_path / "driver" / "out" / "cells"
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and (not cells.exists() or len(list(cells.glob("*.json"))) < 3):
                time.sleep(0.02)
            os.killpg(drv.pid, signal.SIGINT)
            _, err = drv.communicate(timeout=120)
        finally:
            if drv.poll() is None:
                drv.kill()
                drv.wait()
        assert drv.returncode == 130, err
        n_kept = len(list(cells.glob("*.json")))
        assert 3 <= n_kept < 40
        with Client(address, timeout="30s", set_as_default=False) as c:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(c.processing().values()):
                time.sleep(0.2)
            assert not any(c.processing().values()), "tasks left running after Ctrl-C"
        crash = {**CONFIG, "name": "crash", "algorithms": [
            {"name": "test-abort"}, {"name": "cart", "params": {"max_depth": [1, 2]}}]}
        r = subprocess.run(_driver(tmp_path, "-o", "crash", "--backend", "dask", "--address", address,
                                   config=crash),
                           cwd=tmp_path / "driver", env=env, capture_output=True, text=True, timeout=300)
        df = pd.read_csv(tmp_path / "driver" / "crash" / "results.csv")
        assert len(df) == 15, r.stderr
        by = df.groupby("algorithm")["status"].agg(set).to_dict()
        assert by == {"test-abort": {"crashed"}, "cart": {"ok"}}, by
        assert all(w.poll() is None for w in workers)  # no worker went down


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_ray_cluster_sweep_equals_sequential(tmp_path):
    """A real ray head (`ray start --head --block` on 127.0.0.1, its own temp dir and working
    directory) and the driver connecting with ``--address``; stopped by its pid (``--block``
    keeps the head's processes under that one)."""
    pytest.importorskip("ray")
    import shutil

    ray_bin = shutil.which("ray", path=str(Path(sys.executable).parent))
    if ray_bin is None:
        pytest.skip("the ray command is not installed")
    env = {**_worker_env(), "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    seq = subprocess.run(_driver(tmp_path, "-o", "seq"), cwd=tmp_path / "driver",
                         env={**os.environ, "PYTHONPATH": env["PYTHONPATH"]},
                         capture_output=True, text=True, timeout=300)
    assert seq.returncode == 0, seq.stderr
    port = _free_port()
    head_dir = tmp_path / "head"
    head_dir.mkdir()
    # ray limits the temp dir's path length (unix sockets): a short one under /tmp
    import tempfile

    ray_tmp = Path(tempfile.mkdtemp(prefix="tbray"))
    head = subprocess.Popen(
        [ray_bin, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
         "--num-cpus", "2", "--include-dashboard", "false", "--temp-dir", str(ray_tmp),
         "--disable-usage-stats"],
        cwd=head_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        time.sleep(8)
        assert head.poll() is None, "ray start --head failed"
        drv_env = {**os.environ, "PYTHONPATH": env["PYTHONPATH"], "RAY_AUTH_MODE": "disabled"}
        r = None
        for _ in range(6):  # the head takes a few seconds to accept drivers
            r = subprocess.run(_driver(tmp_path, "-o", "out", "--backend", "ray", "--address",
                                       f"127.0.0.1:{port}"),
                               cwd=tmp_path / "driver", env=drv_env, capture_output=True,
                               text=True, timeout=300)
            if r.returncode == 0 or "cannot reach" not in r.stderr:
                break
            time.sleep(5)
        assert r is not None and r.returncode == 0, r.stderr
        assert "running on ray at" in r.stderr
        assert len(list((tmp_path / "driver" / "out" / "cells").glob("*.json"))) == 40
        assert _files_under(head_dir) == []
    finally:
        if head.poll() is None:
            os.killpg(head.pid, signal.SIGTERM)  # the session `ray start` leads, started here
            try:
                head.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(head.pid, signal.SIGKILL)
                head.wait(timeout=10)
        shutil.rmtree(ray_tmp, ignore_errors=True)
    import pandas as pd

    pd.testing.assert_frame_equal(_table(tmp_path / "driver" / "out" / "results.csv"),
                                  _table(tmp_path / "driver" / "seq" / "results.csv"))


@pytest.mark.slow
def test_dask_driver_losing_the_scheduler_keeps_cells_and_a_rerun_resumes(tmp_path):
    """The scheduler dies mid-sweep: the driver stops with one sentence (exit 2) and the cells
    it had received are on disk; the same command against a new cluster runs only the rest."""
    import pandas as pd

    env = {**os.environ, "PYTHONPATH": _worker_env()["PYTHONPATH"]}
    slow = {**CONFIG, "split": {"kind": "holdout", "seeds": list(range(40))},
            "algorithms": [{"name": "test-sleep", "params": {"seconds": 0.3}}]}
    (tmp_path / "one").mkdir()
    with dask_cluster(tmp_path / "one") as (address, workers, dirs):
        drv = subprocess.Popen(_driver(tmp_path, "-o", "out", "-q", "--backend", "dask", "--address",
                                       address, config=slow),
                               cwd=tmp_path / "driver", env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        cells = tmp_path / "driver" / "out" / "cells"
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and (not cells.exists() or len(list(cells.glob("*.json"))) < 3):
                time.sleep(0.02)
            sched = next(p for p in _started_schedulers if p.poll() is None)
            sched.kill()
            sched.wait(timeout=10)
            _, err = drv.communicate(timeout=180)
        finally:
            if drv.poll() is None:
                drv.kill()
                drv.wait()
    assert drv.returncode == 2, err
    assert "finished cells are saved" in err and "Traceback" not in err, err
    n_kept = len(list(cells.glob("*.json")))
    assert 3 <= n_kept < 40
    (tmp_path / "two").mkdir()
    with dask_cluster(tmp_path / "two") as (address, workers, dirs):
        r = subprocess.run(_driver(tmp_path, "-o", "out", "--backend", "dask", "--address", address,
                                   config=slow),
                           cwd=tmp_path / "driver", env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "driver" / "out" / "results.csv")
    assert len(df) == 40 and df["cell_id"].is_unique and set(df["status"]) == {"ok"}
