"""Throughput of the ``slurm`` backend on a real SLURM started on this machine: 5,000 tiny cells
(``test-sleep`` of 10 ms on iris: 100 splits x 50 durations of 10.00-10.49 ms) packed into job
array tasks, run through the command line (``treebench run --backend slurm``).

Needs Debian's ``slurm-wlm`` and ``munge`` and root (`treebench.execute.slurm_local`). The
cluster gets ``MaxArraySize`` from ``--max-array-size`` (default 21): a layout that asks for
more tasks than that is packed into fewer, larger tasks by the backend, which the table shows.

Columns: "tasks x cells" as submitted; "wall s" from the command's start to its exit (planning,
submission, queueing, every task, the results tables); "cells/s" = cells / wall; "slot s" =
the CPU slots the tasks held (sum over tasks of their run time x CPUs per task, from the task
files); "fit s" = sum of the cells' ``fit_seconds`` (the 10 ms sleeps); "in-task ms/cell" =
(slot s - fit s) / cells: what a cell costs a task beyond its fit (start-up, warm-up, data,
the per-cell limits' supervision, the record's write); "end-to-end ms/cell" = (wall x node
CPUs - fit s) / cells: everything else too (the driver, the scheduler, CPUs left idle).

    python benchmarks/slurm_throughput.py                  # 5,000 cells, two layouts
    python benchmarks/slurm_throughput.py --cells 1000 --layout 1x100
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from treebench.execute.slurm_local import LocalSlurm


def config(n_cells: int, cpus: int, cells_per_task: int) -> dict:
    durations = 50 if n_cells >= 50 else n_cells
    splits = max(1, n_cells // durations)
    return {"name": "throughput", "seed": 0, "datasets": ["iris"],
            "split": {"kind": "holdout", "seeds": list(range(splits))},
            "binarization": {"method": "raw"},
            "algorithms": [{"name": "test-sleep",
                            "params": {"seconds": [round(0.01 + i * 1e-5, 5)
                                                   for i in range(durations)]}}],
            "limits": {"time": 10},
            "execution": {"backend": "slurm",
                          "slurm": {"cpus_per_task": cpus, "cells_per_task": cells_per_task}}}


def one(cluster: LocalSlurm, root: Path, n_cells: int, cpus: int, per_task: int) -> dict:
    d = Path(tempfile.mkdtemp(prefix="throughput-", dir=root))
    cfg = d / "throughput.yaml"
    cfg.write_text(yaml.safe_dump(config(n_cells, cpus, per_task)), encoding="utf-8")
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", "from treebench.cli import main; main()", "run",
                        str(cfg), "-o", str(d / "res"), "--no-report", "-q"],
                       capture_output=True, text=True, env={**os.environ, **cluster.env}, cwd=d)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"the run failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    rows = [json.loads(p.read_text())["row"] for p in (d / "res" / "cells").glob("*.json")]
    sub = json.loads((d / "res/slurm/0001/submission.json").read_text())
    tasks = [json.loads(p.read_text()) for p in (d / "res/slurm/0001/tasks").glob("*.json")]
    slot = sum((x["finished"] - x["started"]) * x["workers"] for x in tasks)
    fit = sum(float(r["fit_seconds"] or 0.0) for r in rows)
    n = len(rows)
    return {"layout": f"{sub['n_tasks']} x {len(sub['chunks'][0])}", "cpus": cpus, "n": n,
            "ok": sum(r["status"] == "ok" for r in rows), "wall": wall, "slot": slot, "fit": fit,
            "in_task_ms": 1000 * (slot - fit) / n,
            "end_ms": 1000 * (wall * cluster.cpus - fit) / n, "asked": per_task,
            "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=5000)
    ap.add_argument("--layout", action="append",
                    help="CPUSxCELLS per task, repeatable (default: 1x1000 and 2x50)")
    ap.add_argument("--max-array-size", type=int, default=21)
    args = ap.parse_args()
    layouts = [tuple(int(x) for x in s.split("x")) for s in args.layout or ["1x1000", "2x50"]]
    root = Path(tempfile.mkdtemp(prefix="slurm-throughput-"))
    with LocalSlurm(root / "cluster", max_array_size=args.max_array_size) as cluster:
        print(f"SLURM on 127.0.0.1: {cluster.cpus} CPUs, MaxArraySize={args.max_array_size}")
        print("| cells | CPUs/task | cells/task asked | tasks x cells | load | wall s | cells/s "
              "| slot s | fit s | in-task ms/cell | end-to-end ms/cell |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for cpus, per_task in layouts:
            x = one(cluster, root, args.cells, cpus, per_task)
            print(f"| {x['n']} ({x['ok']} ok) | {cpus} | {per_task} | {x['layout']} "
                  f"| {x['load']:.1f} | {x['wall']:.1f} | {x['n'] / x['wall']:.0f} "
                  f"| {x['slot']:.1f} | {x['fit']:.1f} | {x['in_task_ms']:.1f} "
                  f"| {x['end_ms']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
