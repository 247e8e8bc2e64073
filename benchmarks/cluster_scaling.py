"""Cells per second on a real dask cluster (issue 15): 1 and 2 workers, and the driver's cost.

Starts a ``dask scheduler`` and N single-threaded workers (no nanny) on 127.0.0.1 as separate
processes, each in its own temporary directory with ``TREEBENCH_DATA_DIR`` unset (the driver
ships the dataset), runs a sweep through `treebench.api.run_experiment` with ``--address``,
and stops every process it started by its pid. Two measurements:

* **scaling**: CPU-bound Top-k cells (default: ``topk/kr-vs-kp``, depth 4, k = 4, eight
  permutation splits x five ``min_samples_leaf`` values: 40 cells) with 1 and 2 workers,
  every worker warmed (imports, JIT) before the measurement : cells/s and speed-up (wall clock of the sweep, connection and tables included).
* **driver cost**: tiny cells (CART depth 1 on iris) run on 2 workers; the driver's own CPU
  time (user + sys of this process, from ``getrusage``) divided by the number of cells: what
  receiving a record, writing its cell file and updating the progress costs, i.e. the driver's
  throughput bound ``1 / cost`` cells/s. The goal is >= 200 cells/s.

Usage::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/cluster_scaling.py [--tiny 400]

Times are printed as a markdown table, never asserted. On a machine shared with other jobs the
speed-up is a lower bound of what 2 idle cores give.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def start_cluster(tmp: Path, n_workers: int):
    env = {k: v for k, v in os.environ.items() if k != "TREEBENCH_DATA_DIR"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    sched_file = tmp / "scheduler.json"
    procs = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
         "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
        cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    while not sched_file.exists():
        time.sleep(0.1)
    time.sleep(0.2)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(n_workers):
        d = tmp / f"w{i}"
        d.mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
            cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    from distributed import Client

    from treebench.execute.worker import warm

    with Client(address, timeout="60s", set_as_default=False) as c:
        c.wait_for_workers(n_workers, timeout=120)
        # every worker imports and compiles the learners once, outside the measurement
        c.run(warm, "topk")
        c.run(warm, "cart")
    return address, procs


def stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def sweep(tmp: Path, cfg: dict, address: str) -> tuple[float, float, int]:
    """(wall seconds, driver CPU seconds, cells) of one sweep into a fresh directory."""
    from treebench import api

    path = tmp / f"{cfg['name']}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp / f"out-{cfg['name']}-{time.monotonic_ns()}"
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    s = api.run_experiment(path, out=out, backend="dask", address=address, progress=False,
                           report=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, s.n_ran


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="topk/kr-vs-kp")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--k", default="4")
    ap.add_argument("--splits", type=int, default=8, help="permutation splits (seeds)")
    ap.add_argument("--leaf", default="1,2,3,4,5", help="min_samples_leaf values (cells per split)")
    ap.add_argument("--tiny", type=int, default=400, help="tiny cells for the driver's cost")
    args = ap.parse_args()
    k = args.k if args.k == "all" else int(args.k)
    heavy = {
        "name": "heavy", "seed": 0, "datasets": [args.dataset],
        "split": {"kind": "permutation", "train_size": 0.8, "seeds": f"1..{args.splits}"},
        "binarization": [{"method": "quantile", "params": {"max_columns": 200, "fit_on": "all"}}],
        "algorithms": [{"name": "topk", "params": {
            "k": [k], "max_depth": [args.depth], "criterion": "entropy",
            "min_samples_leaf": [int(v) for v in args.leaf.split(",")]}}],
        "execution": {"backend": "dask", "n_jobs": -1},
    }
    n_depths = max(1, args.tiny // 10)
    tiny = {
        "name": "tiny", "seed": 0, "datasets": ["iris"],
        "split": {"kind": "kfold", "n_splits": 10},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": 1,
                                                   "min_samples_leaf": list(range(1, n_depths + 1))}}],
        "execution": {"backend": "dask", "n_jobs": -1},
    }
    rows = []
    base = None
    for n in (1, 2):
        tmp = Path(tempfile.mkdtemp(prefix=f"tb-cluster{n}-"))
        address, procs = start_cluster(tmp, n)
        try:
            sweep(tmp, {**heavy, "name": "warm", "split": {**heavy["split"], "seeds": "1"},
                        "algorithms": [{**heavy["algorithms"][0], "params": {
                            **heavy["algorithms"][0]["params"], "min_samples_leaf": [1]}}]},
                  address)  # the driver's own imports and first connection, not measured
            wall, cpu, cells = sweep(tmp, heavy, address)
            rate = cells / wall
            base = base or rate
            rows.append((f"Top-k {args.dataset} d={args.depth} k={k}", n, cells, wall, rate,
                         rate / base, cpu / max(cells, 1)))
            if n == 2:
                wall, cpu, cells = sweep(tmp, tiny, address)
                rows.append(("tiny (CART d=1, iris)", n, cells, wall, cells / wall, float("nan"),
                             cpu / max(cells, 1)))
        finally:
            stop(procs)
            shutil.rmtree(tmp, ignore_errors=True)
    print("| cells | workers | n | wall s | cells/s | speed-up | driver CPU ms/cell | driver bound cells/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, cells, wall, rate, sp, cost in rows:
        bound = 1.0 / cost if cost > 0 else float("inf")
        print(f"| {name} | {n} | {cells} | {wall:.1f} | {rate:.1f} | "
              f"{'' if sp != sp else f'{sp:.2f}x'} | {cost * 1000:.2f} | {bound:.0f} |")


if __name__ == "__main__":
    main()
