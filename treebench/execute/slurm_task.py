"""One task of a ``slurm`` job array, on a compute node: ``python -m
treebench.execute.slurm_task SUBMISSION_DIR`` (the array's batch script runs it).

The task reads the submission's payload (its cells, written by the driver), takes its own
slice (``SLURM_ARRAY_TASK_ID``), leaves out every cell whose file changed since the driver
submitted it (a requeued task, or another run, finished it), and runs the rest exactly as the
local ``fork`` backend does (`treebench.execute.pool.run_pool`: ``SLURM_CPUS_PER_TASK``
long-lived workers, each cell under its time and memory limits, a crash is a row). Each record
is written to the results folder as it arrives (`treebench.results.store.write_cell`: atomic,
with its content hash), so a task that dies keeps every cell it finished.

A task file ``tasks/<job>_<task>.<restart>.json`` in the submission says which cells the task
set out to run, where, and how it ended: ``finished``, or ``preempted`` when SIGTERM (SLURM's
preemption, ``scancel``, the ``--signal`` sent before the time limit) stopped it; the cell
that was running then is not written, i.e. counted as not run, and the task exits 143 so that
``--requeue`` or a rerun resumes. A task file with no end belongs to a task that died (node
failure, the scheduler's OOM kill): the driver counts that against its running cells
(`treebench.execute.slurm`).
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from treebench.utils.atomic import read_json_object, stat_key, write_json
from treebench.execute.lifetime import TERMINATED, Terminated, sigterm_as_interrupt
from treebench.execute.pool import run_pool
from treebench.results.cellfile import cells_dir
from treebench.results.store import write_cell

PAYLOAD = "payload.pkl"
TASKS = "tasks"


def file_key(out: Path, cell_id: str) -> list[int] | None:
    """The `treebench.utils.atomic.stat_key` of a cell's file in ``out``, None when it has none."""
    try:
        return stat_key(os.stat(cells_dir(out) / f"{cell_id}.json"))
    except OSError:
        return None


def task_file(sub: Path, job: str, task: int, restart: int) -> Path:
    return sub / TASKS / f"{job}_{task}.{restart}.json"


def read_task_files(sub: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The task files of submission ``sub`` with their content (unreadable ones left out)."""
    out = []
    for p in sorted((sub / TASKS).glob("*.json")):
        try:
            out.append((p, read_json_object(p)))
        except (OSError, ValueError):
            continue
    return out


def _preempted_cell(record: dict[str, Any]) -> bool:
    """Whether ``record`` is a cell whose worker SIGTERM killed: SLURM signals every process
    of a task, so a worker can die of it before this process handles its own SIGTERM."""
    row = record.get("row") or {}
    return row.get("status") == "crashed" and "SIGTERM" in str(row.get("error") or "")


def run_task(sub: Path, task: int) -> int:
    """Run task ``task`` of submission ``sub``; the process's exit code."""
    with open(sub / PAYLOAD, "rb") as fh:
        payload = pickle.load(fh)  # written by this user's driver, on the shared file system
    out = Path(payload["out"])
    before: dict[str, list[int] | None] = payload["before"]
    by_id = {c.id: c for c in payload["cells"]}
    todo = [by_id[i] for i in payload["chunks"][task] if file_key(out, i) == before.get(i)]
    job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or "0"
    restart = int(os.environ.get("SLURM_RESTART_COUNT") or 0)
    workers = max(1, int(os.environ.get("SLURM_CPUS_PER_TASK") or payload["cpus_per_task"]))
    me = task_file(sub, job, task, restart)
    state: dict[str, Any] = {"job": job, "task": task, "restart": restart,
                             "host": socket.gethostname(), "pid": os.getpid(),
                             "started": time.time(), "workers": workers,
                             "cells": [c.id for c in todo], "ended": None, "written": 0}
    me.parent.mkdir(parents=True, exist_ok=True)
    write_json(me, state)

    def take(record: dict[str, Any]) -> None:
        if _preempted_cell(record):
            raise Terminated()
        write_cell(out, record)
        state["written"] += 1

    code = 0
    with sigterm_as_interrupt():
        try:
            if todo:
                run_pool(todo, min(workers, len(todo)), payload["data_dirs"],
                         payload["context"], take)
            state["ended"] = "finished"
        except KeyboardInterrupt:  # SIGTERM: preemption, scancel, --signal before the limit
            state["ended"] = "preempted"
            code = TERMINATED
    state["finished"] = time.time()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the task file is written whatever comes
    write_json(me, state)
    return code


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or "SLURM_ARRAY_TASK_ID" not in os.environ:
        print("usage: SLURM_ARRAY_TASK_ID=i python -m treebench.execute.slurm_task "
              "SUBMISSION_DIR (run by the array's batch script)", file=sys.stderr)
        return 2
    return run_task(Path(args[0]), int(os.environ["SLURM_ARRAY_TASK_ID"]))


if __name__ == "__main__":
    sys.exit(main())
