"""Sweeps on a real cluster: a dask scheduler and two workers started here as
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

from runs import driver_process, tiny_config, wait_for_cells  # noqa: E402

pytestmark = pytest.mark.cluster

CONFIG = tiny_config(
    name="cl", split={"kind": "kfold", "n_splits": 5},
    algorithms=[{"name": "cart", "params": {"max_depth": [1, 2, 3, 4, 5, 6, 7, 8]}}],
)  # 5 folds x 8 depths = 40 cells

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


def start_dask_worker(address: str, d: Path, nthreads: int = 1,
                      nanny: bool = False) -> subprocess.Popen:
    """A ``dask worker`` process for the scheduler at ``address``, working in ``d`` (made
    here), on 127.0.0.1; without a nanny unless ``nanny`` (a nanny restarts its worker)."""
    d.mkdir()
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads",
         str(nthreads), "--nanny" if nanny else "--no-nanny", "--no-dashboard", "--host",
         "127.0.0.1"],
        cwd=d, env=_worker_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextmanager
def dask_cluster(tmp: Path, n_workers: int = 2, nthreads: int = 1, nanny: bool = False):
    """A scheduler and ``n_workers`` workers of ``nthreads`` threads, by default without
    nanny (so SIGKILL really removes a worker), each in its own directory. Yields (address,
    worker processes, dirs); a worker the test appends to that list is stopped too."""
    from distributed import Client

    procs: list[subprocess.Popen] = []
    workers: list[subprocess.Popen] = []
    dirs: list[Path] = []
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
        for i in range(n_workers):
            dirs.append(tmp / f"worker{i}")
            workers.append(start_dask_worker(address, dirs[-1], nthreads, nanny))
        if n_workers:
            with Client(address, timeout="30s", set_as_default=False) as c:
                c.wait_for_workers(n_workers, timeout=90)
        yield address, workers, dirs
    finally:
        _stop(procs + workers)


def _ctrl_c_after(drv: subprocess.Popen, cells: Path, n: int, wait: float) -> str:
    """Send the driver's process group a SIGINT (a terminal's Ctrl-C) once `n` cell files exist
    (or after `wait` seconds); returns its stderr. The driver never outlives the call."""
    try:
        wait_for_cells(drv, cells, n, wait)
        os.killpg(drv.pid, signal.SIGINT)
        _, err = drv.communicate(timeout=120)
    finally:
        if drv.poll() is None:
            drv.kill()
            drv.wait()
    return err


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


def _assert_manifest_cluster(out: Path, where: str, *, workers: int, threads: int,
                             backend: str = "dask") -> None:
    """``manifest.json`` records what ran the cells of the last run (not ``-j``): its
    ``n_jobs_used`` is the threads that returned records, ``cluster`` the workers and threads."""
    man = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for entry in (man, man["runs"][-1]):
        assert entry["n_jobs_used"] == threads, entry
        got = entry["cluster"]
        assert (got["backend"], got["where"], got["workers_used"], got["threads_used"],
                got["hosts_used"]) == (backend, where, workers, threads, 1), got
    assert man["runs"][-1]["n_jobs"] == 1


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
        # the summary names what ran the cells (both single-threaded workers), not -j
        assert f"ran 40 now on 2 dask workers (2 threads) at {address}." in r.stdout, r.stdout
        out = tmp_path / "driver" / "out"
        assert len(list((out / "cells").glob("*.json"))) == 40
        # the manifest, too, says what ran the cells (the config asks n_jobs: 1)
        _assert_manifest_cluster(out, address, workers=2, threads=2)
        # workers wrote nothing: not in their directories (where a relative `out` would land)
        assert all(_files_under(d) == [] for d in dirs)
        # each worker received iris exactly once from the driver
        from treebench.execute.cluster_worker import received_counts

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
        cmd = _driver(tmp_path, "-o", "out", "--backend", "dask", "--address", address)
        with driver_process(cmd, cwd=tmp_path / "driver", env=env) as drv:
            cells = tmp_path / "driver" / "out" / "cells"
            n_at_kill = wait_for_cells(drv, cells, 3, 120)
            os.kill(workers[0].pid, signal.SIGKILL)
            workers[0].wait(timeout=10)
            _, err = drv.communicate(timeout=300)
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
        err = _ctrl_c_after(drv, cells, 3, wait=120)
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
        by = df.groupby("algorithm_label")["status"].agg(set).to_dict()
        assert by == {"test-abort": {"crashed"}, "cart": {"ok"}}, by
        assert all(w.poll() is None for w in workers)  # no worker went down


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
        cmd = _driver(tmp_path, "-o", "out", "-q", "--backend", "dask", "--address", address,
                      config=slow)
        cells = tmp_path / "driver" / "out" / "cells"
        with driver_process(cmd, cwd=tmp_path / "driver", env=env) as drv:
            wait_for_cells(drv, cells, 3, 120)
            sched = next(p for p in _started_schedulers if p.poll() is None)
            sched.kill()
            sched.wait(timeout=10)
            _, err = drv.communicate(timeout=180)
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


def test_dask_multithreaded_worker_runs_cells_supervised_and_once(tmp_path):
    """One `dask worker --nthreads 2`: its two threads run cells at once, each cell in its own
    supervised child under the limits (a sleeper over the time limit → timeout, an allocation
    over the memory limit → oom, an aborting solver → crashed; the worker survives them all),
    and every cell is recorded exactly once."""
    import pandas as pd

    env = {**os.environ, "PYTHONPATH": _worker_env()["PYTHONPATH"]}
    cfg = {**CONFIG, "name": "mt", "split": {"kind": "holdout", "seeds": list(range(6))},
           # 3 s, not 1: on a loaded machine (CI runs the reproductions beside the suite) an
           # allocating child's start and its first 150 MB once took over a second: timeout
           "limits": {"time": 3, "memory": 150},
           "algorithms": [{"name": "test-sleep", "params": {"seconds": [0.2, 30]}},
                          {"name": "test-alloc", "params": {"megabytes": 400}},
                          {"name": "test-abort"}]}  # 6 seeds x 4 = 24 cells
    with dask_cluster(tmp_path, n_workers=1, nthreads=2) as (address, workers, dirs):
        r = subprocess.run(_driver(tmp_path, "-o", "out", "--backend", "dask", "--address", address,
                                   config=cfg),
                           cwd=tmp_path / "driver", env=env, capture_output=True, text=True,
                           timeout=300)
        assert workers[0].poll() is None, "a cell took its worker down"
    assert r.returncode == 3, r.stderr  # failed cells (oom, crashed) fail the run
    assert "(1 workers, 2 threads)" in r.stderr, r.stderr
    assert f"ran 24 now on 1 dask worker (2 threads) at {address}." in r.stdout, r.stdout
    _assert_manifest_cluster(tmp_path / "driver" / "out", address, workers=1, threads=2)
    df = pd.read_csv(tmp_path / "driver" / "out" / "results.csv")
    assert len(df) == 24 and df["cell_id"].is_unique
    assert len(list((tmp_path / "driver" / "out" / "cells").glob("*.json"))) == 24
    got = df.groupby(["algorithm_label", "param_seconds"], dropna=False)["status"].agg(set).to_dict()
    got = {(a, None if s != s else s): v for (a, s), v in got.items()}
    assert got == {("test-sleep", 0.2): {"ok"}, ("test-sleep", 30.0): {"timeout"},
                   ("test-alloc", None): {"oom"}, ("test-abort", None): {"crashed"}}, got


# ----------------------------------------------------------------------------------- ray
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _processes_under(root: int) -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every descendant of ``root``."""
    procs: dict[int, tuple[int, str]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError, ValueError):
            continue
        procs[int(d.name)] = (ppid, cmd)
    out, todo = [], [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, cmd) in procs.items():
            if ppid == parent:
                out.append((pid, ppid, cmd))
                todo.append(pid)
    return out


def _ray_task_workers(head_pid: int) -> list[int]:
    """The ray worker processes (children of the raylet, started under our head) that are
    running a cell now: ray titles them ``ray::cluster_cell`` (their forked cell children
    carry the same title, but their parent is the worker, not the raylet)."""
    procs = _processes_under(head_pid)
    cmd_of = {pid: cmd for pid, _, cmd in procs}
    return [pid for pid, ppid, cmd in procs
            if cmd.startswith("ray::cluster_cell") and "raylet" in cmd_of.get(ppid, "")]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """One real ray head for this module's ray tests (`ray_cluster`)."""
    with ray_cluster(tmp_path_factory.mktemp("ray")) as head:
        yield head


def _stop_ray_head(head: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop a head started by `ray_cluster` and whatever of its process group outlives it."""
    if head.poll() is None:
        os.killpg(head.pid, sig)
        try:
            head.wait(timeout=10)  # `ray start --block` does not always exit on SIGTERM
        except subprocess.TimeoutExpired:
            pass
    try:  # whatever of the group outlived the head
        os.killpg(head.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if head.poll() is None:
        head.wait(timeout=10)


@contextmanager
def ray_cluster(tmp: Path):
    """A real ray head: ``ray start --head --block`` on 127.0.0.1 with 2 CPUs, a 100 MB
    object store, a Ray Client server port, its own temp dir and working directory,
    ``TREEBENCH_DATA_DIR`` unset; stopped by its process group, which it leads (started here
    with a new session)."""
    pytest.importorskip("ray")
    import shutil
    import tempfile
    from types import SimpleNamespace

    ray_bin = shutil.which("ray", path=str(Path(sys.executable).parent))
    if ray_bin is None:
        pytest.skip("the ray command is not installed")
    env = {**_worker_env(), "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    port, client_port = _free_port(), _free_port()
    head_dir = tmp / "head"
    head_dir.mkdir()
    ray_tmp = Path(tempfile.mkdtemp(prefix="tbray"))  # short: ray's unix socket paths
    head = subprocess.Popen(
        [ray_bin, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port",
         str(port), "--ray-client-server-port", str(client_port), "--num-cpus", "2",
         "--object-store-memory", str(100 * 2**20), "--include-dashboard", "false",
         "--temp-dir", str(ray_tmp), "--disable-usage-stats"],
        cwd=head_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (_listening(port) and _listening(client_port)):
            assert head.poll() is None, "ray start --head failed"
            time.sleep(0.5)
        assert _listening(port) and _listening(client_port), "the ray head did not come up"
        drv_env = {**os.environ, "PYTHONPATH": env["PYTHONPATH"], "RAY_AUTH_MODE": "disabled",
                   "RAY_USAGE_STATS_ENABLED": "0"}
        yield SimpleNamespace(address=f"127.0.0.1:{port}", client=f"ray://127.0.0.1:{client_port}",
                              head=head, dir=head_dir, env=drv_env)
    finally:
        _stop_ray_head(head)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def _ray_run(tmp: Path, ray_head, *args: str, config: dict | None = None):
    """The driver's command line against the ray head, retried while the head still refuses
    drivers (it accepts them a few seconds after its ports open)."""
    r = None
    for _ in range(12):
        r = subprocess.run(_driver(tmp, *args, config=config), cwd=tmp / "driver", env=ray_head.env,
                           capture_output=True, text=True, timeout=300)
        if r.returncode == 0 or "cannot reach" not in r.stderr:
            break
        time.sleep(5)
    return r


@pytest.mark.slow
def test_ray_cluster_sweep_equals_sequential(tmp_path, ray_head):
    """The driver joins the head with ``--address 127.0.0.1:PORT``: the results equal a
    sequential run's, the driver alone writes, and the summary names what ran the cells."""
    seq = subprocess.run(_driver(tmp_path, "-o", "seq"), cwd=tmp_path / "driver",
                         env=ray_head.env, capture_output=True, text=True, timeout=300)
    assert seq.returncode == 0, seq.stderr
    r = _ray_run(tmp_path, ray_head, "-o", "out", "--backend", "ray", "--address", ray_head.address)
    assert r is not None and r.returncode == 0, r.stderr
    assert "running on ray at" in r.stderr and "(1 nodes, 2 CPUs)" in r.stderr, r.stderr
    assert "ray worker process" in r.stdout and "on 1 host at" in r.stdout, r.stdout
    assert len(list((tmp_path / "driver" / "out" / "cells").glob("*.json"))) == 40
    assert _files_under(ray_head.dir) == []
    import pandas as pd

    pd.testing.assert_frame_equal(_table(tmp_path / "driver" / "out" / "results.csv"),
                                  _table(tmp_path / "driver" / "seq" / "results.csv"))


_RAY_DRIVER = """
import json, sys
from treebench import api
from treebench.cli import _print_summary
from treebench.execute import cluster
s = api.run_experiment("exp.yaml", api.RunOptions(out="out", backend="ray", address=sys.argv[1],
                                                  progress=False, report=False))
_print_summary(s)
run = s.cluster
print("JSON" + json.dumps({
    "exit": s.exit_code, "shipped": dict(run.shipped), "driver_shipments": dict(cluster.SHIPMENTS),
    "received": [[h, p, k, n] for (h, p, k), n in run.received.items()],
    "used": sorted({(h, p) for h, p, _ in run.used})}))
"""


def test_ray_client_address_ships_each_dataset_once_per_worker_process(tmp_path, ray_head):
    """Through Ray Client (``ray://127.0.0.1:PORT``): the 40 cells run; the driver puts the
    dataset into the object store once, and every ray worker process that ran cells fetched
    it exactly once (counted by the workers, reported with their records); the summary names
    the worker processes used."""
    (tmp_path / "driver").mkdir()
    (tmp_path / "driver" / "exp.yaml").write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    r = None
    for _ in range(6):
        r = subprocess.run([sys.executable, "-c", _RAY_DRIVER, ray_head.client],
                           cwd=tmp_path / "driver", env=ray_head.env, capture_output=True,
                           text=True, timeout=300)
        if r.returncode == 0 or "cannot reach" not in r.stderr:
            break
        time.sleep(5)
    assert r is not None and r.returncode == 0, r.stderr
    got = json.loads(r.stdout.split("JSON", 1)[1])
    assert got["exit"] == 0
    assert len(list((tmp_path / "driver" / "out" / "cells").glob("*.json"))) == 40
    assert list(got["shipped"].values()) == [1] and got["driver_shipments"] == got["shipped"]
    (key,) = got["shipped"]
    received = {(h, p): n for h, p, k, n in got["received"] if k == key}
    used = {(h, p) for h, p in got["used"]}
    assert used and set(received) == used and set(received.values()) == {1}, got
    n = len(used)
    noun = "ray worker process" if n == 1 else "ray worker processes"
    assert f"ran 40 now on {n} {noun} on 1 host at {ray_head.client}." in r.stdout, r.stdout


@pytest.mark.slow
def test_ray_worker_killed_mid_sweep_every_cell_once_and_failures_recorded(tmp_path, ray_head):
    """A ray worker process SIGKILLed while it runs a cell: ray re-runs the cell (bounded
    retries), the sweep completes with every cell exactly once; a cell whose process aborts is
    ``crashed`` without harm to its worker; a cell that kills every worker it runs on is
    ``crashed`` once the retries are spent, with ray's reason."""
    import pandas as pd

    cfg = {**CONFIG, "name": "rk", "split": {"kind": "holdout", "seeds": list(range(12))},
           "algorithms": [{"name": "test-sleep", "params": {"seconds": 0.3}},
                          {"name": "test-abort"}]}  # 24 cells
    cfg_kill = {**cfg, "split": {"kind": "holdout", "seeds": [0]},
                "algorithms": [{"name": "test-kill-worker"}]}
    _ray_run(tmp_path, ray_head, "-o", "warm", "-q", "--backend", "ray", "--address",
             ray_head.address, config={**cfg, "split": {"kind": "holdout", "seeds": [0]}})
    drv = subprocess.Popen(_driver(tmp_path, "-o", "out", "--backend", "ray", "--address",
                                   ray_head.address, config=cfg),
                           cwd=tmp_path / "driver", env=ray_head.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    cells = tmp_path / "driver" / "out" / "cells"
    killed = None
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and killed is None:
            if cells.exists() and len(list(cells.glob("*.json"))) >= 3:
                busy = _ray_task_workers(ray_head.head.pid)
                if busy:
                    killed = busy[0]
                    os.kill(killed, signal.SIGKILL)
            time.sleep(0.02)
        assert killed is not None, "no ray worker was seen running a cell"
        n_at_kill = len(list(cells.glob("*.json")))
        out, err = drv.communicate(timeout=300)
    finally:
        if drv.poll() is None:
            drv.kill()
            drv.wait()
    assert drv.returncode == 3, err  # crashed cells fail the run (--fail-on error)
    assert n_at_kill < 24
    df = pd.read_csv(tmp_path / "driver" / "out" / "results.csv")
    assert len(df) == 24 and df["cell_id"].is_unique
    assert len(list(cells.glob("*.json"))) == 24
    by = df.groupby("algorithm_label")["status"].agg(set).to_dict()
    assert by == {"test-sleep": {"ok"}, "test-abort": {"crashed"}}, by
    r = _ray_run(tmp_path, ray_head, "-o", "kill", "--backend", "ray", "--address",
                 ray_head.address, config=cfg_kill)
    row = pd.read_csv(tmp_path / "driver" / "kill" / "results.csv").iloc[0]
    assert row["status"] == "crashed", r.stderr
    assert "Worker" in row["error"] or "died" in row["error"], row["error"]


@pytest.mark.slow
def test_ray_ctrl_c_cancels_keeps_cells_and_a_rerun_resumes(tmp_path, ray_head):
    """Ctrl-C (SIGINT to the driver's group) → exit 130, the finished cells kept, no cell
    left running on the cluster; the same command then runs only the rest."""
    import pandas as pd

    slow = {**CONFIG, "name": "rc", "split": {"kind": "holdout", "seeds": list(range(40))},
            "algorithms": [{"name": "test-sleep", "params": {"seconds": 0.3}}]}
    _ray_run(tmp_path, ray_head, "-o", "warm", "-q", "--backend", "ray", "--address",
             ray_head.address, config={**slow, "split": {"kind": "holdout", "seeds": [0]}})
    drv = subprocess.Popen(_driver(tmp_path, "-o", "out", "-q", "--backend", "ray", "--address",
                                   ray_head.address, config=slow),
                           cwd=tmp_path / "driver", env=ray_head.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    cells = tmp_path / "driver" / "out" / "cells"
    err = _ctrl_c_after(drv, cells, 3, wait=180)
    assert drv.returncode == 130, err
    assert "Traceback" not in err, err
    n_kept = len(list(cells.glob("*.json")))
    assert 3 <= n_kept < 40
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _ray_task_workers(ray_head.head.pid):
        time.sleep(0.5)
    assert not _ray_task_workers(ray_head.head.pid), "cells left running after Ctrl-C"
    r = _ray_run(tmp_path, ray_head, "-o", "out", "--backend", "ray", "--address",
                 ray_head.address, config=slow)
    assert r.returncode == 0, r.stderr
    assert f"ran {40 - n_kept} now" in r.stdout, r.stdout
    df = pd.read_csv(tmp_path / "driver" / "out" / "results.csv")
    assert len(df) == 40 and df["cell_id"].is_unique and set(df["status"]) == {"ok"}


@pytest.mark.slow
@pytest.mark.parametrize("via", ["client", "address"])
def test_ray_driver_losing_the_cluster_keeps_cells_and_a_rerun_resumes(tmp_path, via):
    """The ray head (GCS, raylet, Ray Client server) is killed mid-sweep: the driver stops with
    one sentence and exit 2, every cell it had received is on disk, and the same command
    against a new head runs only the rest. Its own head: the module's is left alone."""
    import pandas as pd

    slow = {**CONFIG, "name": "rl", "split": {"kind": "holdout", "seeds": list(range(40))},
            "algorithms": [{"name": "test-sleep", "params": {"seconds": 0.3}}]}
    (tmp_path / "one").mkdir()
    with ray_cluster(tmp_path / "one") as head:
        address = head.client if via == "client" else head.address
        warm = _ray_run(tmp_path, head, "-o", "warm", "-q", "--backend", "ray", "--address",
                        address, config={**slow, "split": {"kind": "holdout", "seeds": [0]}})
        assert warm.returncode == 0, warm.stderr  # the head accepts drivers now
        cmd = _driver(tmp_path, "-o", "out", "-q", "--backend", "ray", "--address", address,
                      config=slow)
        cells = tmp_path / "driver" / "out" / "cells"
        with driver_process(cmd, cwd=tmp_path / "driver", env=head.env) as drv:
            wait_for_cells(drv, cells, 3, 180)
            _stop_ray_head(head.head, signal.SIGKILL)
            _, err = drv.communicate(timeout=240)
    assert drv.returncode == 2, err
    assert "lost the connection to the ray cluster" in err, err
    assert "finished cells are saved" in err and "Traceback" not in err, err
    n_kept = len(list(cells.glob("*.json")))
    assert 3 <= n_kept < 40
    assert not list(cells.glob(".*.tmp"))  # no half-written cell file
    (tmp_path / "two").mkdir()
    with ray_cluster(tmp_path / "two") as head:
        address = head.client if via == "client" else head.address
        r = _ray_run(tmp_path, head, "-o", "out", "--backend", "ray", "--address", address,
                     config=slow)
    assert r.returncode == 0, r.stderr
    assert f"ran {40 - n_kept} now" in r.stdout, r.stdout
    df = pd.read_csv(tmp_path / "driver" / "out" / "results.csv")
    assert len(df) == 40 and df["cell_id"].is_unique and set(df["status"]) == {"ok"}
