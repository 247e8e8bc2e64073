"""The job arrays of the ``slurm`` backend: what a submission asks for (cells per task, time,
memory, CPUs; the cluster's ``MaxArraySize`` and ``MaxJobCount`` respected), the batch script,
and the submission folder ``<results>/slurm/<nnnn>/`` (`treebench.execute.slurm` drives them,
`treebench.execute.slurm_task` runs one task).
"""

from __future__ import annotations

import math
import pickle
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from treebench.utils.atomic import read_json_object, write_json
from treebench.results.cell import Cell
from treebench.config import SlurmSpec
from treebench.errors import UserError
from treebench.execute import slurm_jobs as sj
from treebench.execute.slurm_task import PAYLOAD, file_key

#: seconds a task is given on top of its cells' limits: interpreter, imports, warm-up, data
STARTUP_SECONDS = 300
#: a task's default request holds as many cells as fit in this many hours of their limits
TASK_HOURS = 4.0
#: seconds before its time limit that SLURM sends a task SIGTERM (``--signal=B:TERM@...``)
SIGNAL_SECONDS = 120
#: megabytes a task asks for besides its cells' ``limits.memory`` (the worker itself)
WORKER_MB = 1024
#: cells per task when the cells have no time limit and none is configured
UNTIMED_CELLS_PER_TASK = 100
SUBMISSIONS = "slurm"


@dataclass(frozen=True)
class Request:
    """What one submission asks SLURM for: ``n_tasks`` array tasks of ``cells_per_task``
    cells, each with ``time`` (SLURM's format; None: the partition's default), ``memory_mb``
    (None: the partition's default) and ``cpus`` CPUs; ``packed`` says why the cells per task
    were raised above the configured or derived number (a cluster limit), else None."""

    n_cells: int
    n_tasks: int
    cells_per_task: int
    cpus: int
    time: str | None
    memory_mb: float | None
    packed: str | None = None

    def describe(self) -> str:
        parts = [f"--cpus-per-task={self.cpus}"]
        parts.append(f"--time={self.time}" if self.time else "--time: the partition's default")
        if self.memory_mb:
            parts.append(f"--mem={math.ceil(self.memory_mb)}M")
        text = (f"1 job array of {self.n_tasks} task(s) x up to {self.cells_per_task} cell(s) "
                f"({self.n_cells} cells), each task {' '.join(parts)}")
        return text + (f"; {self.packed}" if self.packed else "")


def cell_seconds(cells: list[Cell]) -> float | None:
    """The longest a cell may take: its fit's limit plus the kill's grace period (10 %, at
    least 2 s) and its preparation's limit; None when a cell has no time limit."""
    worst = 0.0
    for c in cells:
        t = c.limits.get("time")
        if t is None:
            return None
        t = float(t)
        worst = max(worst, t + max(2.0, 0.1 * t) + float(c.limits.get("prepare") or 0.0))
    return worst


def format_time(seconds: float) -> str:
    """SLURM's ``D-HH:MM:SS`` (``HH:MM:SS`` under a day), rounded up to the minute."""
    minutes = math.ceil(seconds / 60)
    d, rest = divmod(minutes, 24 * 60)
    h, m = divmod(rest, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:00"


def request_for(cells: list[Cell], spec: SlurmSpec,
                limits: sj.ClusterLimits | None) -> Request:
    """The array for ``cells`` under ``spec`` and the cluster's ``limits`` (None: not known)."""
    n = len(cells)
    cpus = spec.cpus_per_task
    per_cell = cell_seconds(cells)
    if spec.cells_per_task is not None:
        cpt = spec.cells_per_task
    elif per_cell is None:
        cpt = UNTIMED_CELLS_PER_TASK
    else:
        cpt = max(1, int(TASK_HOURS * 3600 * cpus // per_cell))
    cpt = max(1, min(cpt, n))
    packed = None
    if limits is not None:
        most = max(1, min(limits.max_array_size, limits.max_job_count))
        if math.ceil(n / cpt) > most:
            cpt = math.ceil(n / most)
            packed = (f"packed into {math.ceil(n / cpt)} tasks: the cluster allows "
                      f"MaxArraySize={limits.max_array_size}, MaxJobCount={limits.max_job_count}")
    n_tasks = math.ceil(n / cpt) if n else 0
    time_req = spec.time
    if time_req is None and per_cell is not None:
        time_req = format_time(math.ceil(cpt / cpus) * per_cell + STARTUP_SECONDS)
    mem = spec.memory
    mems = [c.limits.get("memory") for c in cells]
    if mem is None and mems and all(m is not None for m in mems):
        mem = cpus * max(float(m) for m in mems) + WORKER_MB
    return Request(n, n_tasks, cpt, cpus, time_req, mem, packed)


def plan_lines(cells: list[Cell], spec: SlurmSpec) -> list[str]:
    """What ``--dry-run`` says a SLURM run of ``cells`` would submit."""
    try:
        limits: sj.ClusterLimits | None = sj.cluster_limits()
        where = f"MaxArraySize={limits.max_array_size}, MaxJobCount={limits.max_job_count}"
    except UserError as exc:  # no SLURM here: the plan says so
        limits, where = None, f"the cluster's array limits were not read: {exc}"
    req = request_for(cells, spec, limits)
    return [f"slurm: {req.describe()} ({where})"]


# ----------------------------------------------------------------------------- submissions
def submissions(out: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The submission folders of ``out`` with their ``submission.json``, oldest first."""
    root = out / SUBMISSIONS
    found = []
    for d in sorted(root.glob("[0-9]*")):
        try:
            found.append((d, read_json_object(d / "submission.json")))
        except (OSError, ValueError):
            continue  # a submission that never reached sbatch
    return found


def _script(sub: Path, req: Request, spec: SlurmSpec, name: str) -> str:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={shlex.quote('treebench-' + name)}"]
    throttle = f"%{spec.max_running}" if spec.max_running else ""
    lines.append(f"#SBATCH --array=0-{req.n_tasks - 1}{throttle}")
    lines.append(f"#SBATCH --cpus-per-task={req.cpus}")
    if req.time:
        lines.append(f"#SBATCH --time={req.time}")
    if req.memory_mb:
        lines.append(f"#SBATCH --mem={math.ceil(req.memory_mb)}M")
    if spec.partition:
        lines.append(f"#SBATCH --partition={spec.partition}")
    if spec.account:
        lines.append(f"#SBATCH --account={spec.account}")
    lines.append(f"#SBATCH --output={sub / 'logs' / '%A_%a.out'}")
    lines.append("#SBATCH --open-mode=append")
    lines.append(f"#SBATCH --chdir={Path.cwd()}")
    lines.append(f"#SBATCH --signal=B:TERM@{SIGNAL_SECONDS}")
    lines += [f"#SBATCH {x}" for x in spec.sbatch]
    lines += list(spec.setup)
    python = spec.python or sys.executable
    lines.append(f"exec {shlex.quote(python)} -m treebench.execute.slurm_task "
                 f"{shlex.quote(str(sub))}")
    return "\n".join(lines) + "\n"


def submit(out: Path, cells: list[Cell], spec: SlurmSpec, *, data_dirs: list[str] | None,
           context: dict[str, Any], name: str) -> tuple[str, Request]:
    """Write a submission folder for ``cells`` and submit its array; (job id, request)."""
    req = request_for(cells, spec, sj.cluster_limits())
    root = out / SUBMISSIONS
    root.mkdir(parents=True, exist_ok=True)
    number = 1 + max([int(p.name) for p in root.glob("[0-9]*") if p.name.isdigit()] or [0])
    sub = (root / f"{number:04d}").resolve()
    (sub / "logs").mkdir(parents=True)
    ids = [c.id for c in cells]
    chunks = [ids[i:i + req.cells_per_task] for i in range(0, len(ids), req.cells_per_task)]
    payload = {"out": str(out.resolve()), "cells": cells, "chunks": chunks,
               "before": {i: file_key(out, i) for i in ids}, "context": context,
               "data_dirs": [str(Path(d).resolve()) for d in data_dirs or []] or None,
               "cpus_per_task": req.cpus}
    with open(sub / PAYLOAD, "wb") as fh:
        pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
    script = sub / "submit.sh"
    script.write_text(_script(sub, req, spec, name))
    job = sj.submit(str(script))
    write_json(sub / "submission.json", {"job": job, "n_tasks": req.n_tasks, "chunks": chunks,
                                         "submitted": time.time(), "request": req.describe()})
    return job, req
