"""Cells per second on a real dask cluster: 1 and 2 workers, and the driver's cost.

Starts a ``dask scheduler`` and N workers (no nanny) on 127.0.0.1 as separate processes, each
in its own temporary directory with ``TREEBENCH_DATA_DIR`` unset (the driver ships the
dataset), runs a sweep through `treebench.api.run_experiment` with ``--address``, and stops
every process it started by its pid. Measured:

* **scaling**: CPU-bound Top-k cells (default: ``topk/telescope``, depth 5, k = 6, about
  0.5 s of CPU each on this machine (k = 4 is about 0.2 s, k = 8 about 1.3 s); eight
  permutation splits x five ``min_samples_leaf`` values: 40 cells)
  on 1 worker, 2 single-threaded workers and 1 worker with 2 threads, every worker warmed
  (imports, JIT) before the measurement: cells/s and the wall-clock speed-up (connection and
  tables included). Because the machine may be shared, the CPU time the worker processes and
  their cell children used is read from ``/proc/<pid>/stat`` before and after each sweep:
  *worker CPU s/cell* (the work a cell costs, whatever the load), *cores busy* (worker CPU /
  wall: how many cores the sweep actually got) and the **CPU-based speed-up**
  ``n x (CPU/cell with 1 worker) / (CPU/cell with n)``: the speed-up n idle cores would give
  if the only loss were extra work per cell. The load average is printed beside each row.
* **driver cost**: tiny cells (CART depth 1 on iris) run on 2 workers; the driver's own CPU
  time (user + sys of this process, from ``getrusage``) divided by the number of cells: what
  receiving a record, writing its cell file and updating the progress costs, i.e. the driver's
  throughput bound ``1 / cost`` cells/s. The goal is >= 200 cells/s. The run's fixed costs
  (the manifest before, the results tables after) are timed apart (CPU of the calls, wrapped
  here) and left out of *driver CPU ms/record*: the cost that grows with the number of cells,
  i.e. the bound that matters for a 100,000-cell sweep.

Usage::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/cluster_scaling.py [--tiny 400]

Times are printed as a markdown table, never asserted.
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


def start_cluster(tmp: Path, n_workers: int, nthreads: int = 1):
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
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", str(nthreads),
             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
            cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    from distributed import Client

    from treebench.execute.fit import warm

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


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` and of their waited-for children (the cells)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total / tick


FIXED_CPU = [0.0]  # CPU seconds of the run's fixed steps (manifest, tables), see `_time_fixed`


def _time_fixed() -> None:
    """Wrap the driver's once-per-run steps so that their CPU time is counted apart."""
    from treebench import api

    def timed(fn):
        def wrapper(*a, **kw):
            t0 = time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                FIXED_CPU[0] += time.process_time() - t0
        return wrapper

    for name in ("write_manifest", "consolidate", "note_cluster_run"):
        setattr(api, name, timed(getattr(api, name)))


def sweep(tmp: Path, cfg: dict, address: str, workers: list[int],
          scheduler: int | None = None) -> dict[str, float]:
    """Wall seconds, driver and worker CPU seconds, cells and load average of one sweep into
    a fresh directory."""
    from treebench import api

    path = tmp / f"{cfg['name']}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp / f"out-{cfg['name']}-{time.monotonic_ns()}"
    load0 = os.getloadavg()[0]
    w0 = cpu_seconds(workers)
    s0 = cpu_seconds([scheduler] if scheduler else [])
    f0 = FIXED_CPU[0]
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    s = api.run_experiment(path, api.RunOptions(out=out, backend="dask", address=address, progress=False,
                           report=False))
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    w1 = cpu_seconds(workers)
    s1 = cpu_seconds([scheduler] if scheduler else [])
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"wall": wall, "driver_cpu": cpu, "fixed_cpu": FIXED_CPU[0] - f0,
            "worker_cpu": w1 - w0, "scheduler_cpu": s1 - s0, "cells": s.n_ran,
            "load": (load0 + os.getloadavg()[0]) / 2,
            "threads_used": s.cluster.n_threads_used if s.cluster is not None else 0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="topk/telescope")
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--k", default="6")
    ap.add_argument("--splits", type=int, default=8, help="permutation splits (seeds)")
    ap.add_argument("--leaf", default="1,2,3,4,5", help="min_samples_leaf values (cells per split)")
    ap.add_argument("--tiny", type=int, default=400, help="tiny cells for the driver's cost")
    args = ap.parse_args()
    _time_fixed()
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
    ap_layouts = [(1, 1), (2, 1), (1, 2)]  # (workers, threads per worker)
    rows = []
    base = None
    for n, threads in ap_layouts:
        tmp = Path(tempfile.mkdtemp(prefix=f"tb-cluster{n}x{threads}-"))
        address, procs = start_cluster(tmp, n, threads)
        pids = [p.pid for p in procs[1:]]
        try:
            sweep(tmp, {**heavy, "name": "warm", "split": {**heavy["split"], "seeds": "1"},
                        "algorithms": [{**heavy["algorithms"][0], "params": {
                            **heavy["algorithms"][0]["params"], "min_samples_leaf": [1]}}]},
                  address, pids)  # the driver's own imports and first connection, not measured
            m = sweep(tmp, heavy, address, pids, procs[0].pid)
            base = base or m
            rows.append((f"Top-k {args.dataset} d={args.depth} k={k}", n, threads, m, base))
            if (n, threads) == (2, 1) and args.tiny:
                rows.append(("tiny (CART d=1, iris)", n, threads,
                             sweep(tmp, tiny, address, pids, procs[0].pid), None))
        finally:
            stop(procs)
            shutil.rmtree(tmp, ignore_errors=True)
    print("| cells | workers x threads | n | load avg | wall s | cells/s | speed-up (wall) "
          "| worker CPU s/cell | cores busy | speed-up (CPU) | driver CPU ms/cell "
          "| driver CPU ms/record | driver bound cells/s | scheduler CPU ms/cell |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, n, threads, m, b in rows:
        cells = max(m["cells"], 1)
        rate = m["cells"] / m["wall"]
        cost = m["driver_cpu"] / cells
        per_record = (m["driver_cpu"] - m["fixed_cpu"]) / cells
        bound = 1.0 / per_record if per_record > 0 else float("inf")
        per_cell = m["worker_cpu"] / cells
        sp_wall = sp_cpu = ""
        if b is not None:
            sp_wall = f"{rate / (b['cells'] / b['wall']):.2f}x"
            sp_cpu = f"{n * threads * (b['worker_cpu'] / max(b['cells'], 1)) / per_cell:.2f}x"
        print(f"| {name} | {n} x {threads} | {m['cells']} | {m['load']:.1f} | {m['wall']:.1f} "
              f"| {rate:.1f} | {sp_wall} | {per_cell:.3f} | {m['worker_cpu'] / m['wall']:.2f} "
              f"| {sp_cpu} | {cost * 1000:.2f} | {per_record * 1000:.2f} | {bound:.0f} "
              f"| {m['scheduler_cpu'] / cells * 1000:.1f} |")
    print(f"\nmachine: {os.cpu_count()} cores; load average = 1-minute average over each sweep "
          f"(all jobs on the machine, this one included)")


if __name__ == "__main__":
    main()
